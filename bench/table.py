#!/usr/bin/python3
"""The whole performance table in one run: the right-hand side of the default model, masked and
biased attention, heads, noise, the ensemble's memory and file, and 1 against 2 threads, each against
the DGEMM of the same run and, where the same computation exists there, against numpy, numba and
torch. Every figure is a ratio measured within this run (the contenders interleaved where the
underlying benchmark does so); the machine's load average is printed before and after, because the
development machine is shared: above 1.5 on its 2 cores other work took CPU time.

    /usr/bin/python3 bench/table.py [--build BUILD] [--quick]

Needs the build's bench programs (`cmake -B BUILD -DNORMDYN_BUILD_BENCH=ON`, targets normdyn,
normdyn_bench_attention_spec, normdyn_bench_noise; the ensemble runs build/app/normdyn, or
normdyn_bench_ensemble, the same library call without the program's other commands). OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset
for this command only (this machine sets them to values that pin OpenBLAS to a slower kernel), for
numpy's DGEMM and for every program it starts; the output says so.
"""
import os
import sys

_UNSET = [k for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if os.environ.pop(k, None) is not None]
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import argparse  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def best_of(f, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def run(args):
    out = subprocess.run(args, check=True, capture_output=True, text=True, cwd=ROOT)
    return out.stdout


def attention_table(build, n, d, rounds, threads):
    """{case: seconds} of bench_attention_spec (its cases alternate in rounds; medians)."""
    text = run([os.path.join(build, "bench", "normdyn_bench_attention_spec"), str(n), str(d), str(rounds), str(threads)])
    cases = {}
    for line in text.splitlines():
        m = re.match(r"^(.+?)\s{2,}(\d\.\d+e[-+]\d+)\s", line)
        if m:
            cases[m.group(1).strip()] = float(m.group(2))
    return cases


def dgemm_rate(threads, m=1024):
    """GFLOP/s of numpy's DGEMM (OpenBLAS) on m x m, best of 5, on `threads` threads."""
    from threadpoolctl import threadpool_limits

    a, b = np.random.default_rng(1).standard_normal((2, m, m))
    with threadpool_limits(threads):
        a @ b
        return 2.0 * m**3 / best_of(lambda: a @ b, 5) / 1e9


def peers(n, d, repeats):
    """Seconds per right-hand side (Post-LN, Q = K = V = I) of numpy, torch float64 and numba."""
    from threadpoolctl import threadpool_limits

    x = np.random.default_rng(2).standard_normal((n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    out = {}
    # numpy's right-hand side is the peer benchmark's (bench/peers/peers.py, beta = 1, Post-LN).
    sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
    from peers import make_rhs

    numpy_rhs = make_rhs(n, d, "post")
    with threadpool_limits(2):
        out["numpy"] = best_of(lambda: numpy_rhs(0.0, x.ravel()), repeats)
    try:
        import torch

        torch.set_num_threads(2)
        t = torch.from_numpy(x)

        def torch_rhs():
            w = torch.softmax(t @ t.T, dim=1)
            a = w @ t
            return a - (a * t).sum(dim=1, keepdim=True) * t

        torch_rhs()
        out["torch float64"] = best_of(torch_rhs, repeats)
    except ImportError:
        out["torch float64"] = None
    try:
        import numba

        @numba.njit(cache=False, fastmath=False)
        def numba_rhs(x, beta):
            n, d = x.shape
            out = np.empty_like(x)
            row = np.empty(n)
            for i in range(n):
                top = -np.inf
                for k in range(n):
                    s = 0.0
                    for c in range(d):
                        s += x[i, c] * x[k, c]
                    row[k] = beta * s
                    top = max(top, row[k])
                z = 0.0
                a = np.zeros(d)
                for k in range(n):
                    w = np.exp(row[k] - top)
                    z += w
                    for c in range(d):
                        a[c] += w * x[k, c]
                dot = 0.0
                for c in range(d):
                    a[c] /= z
                    dot += a[c] * x[i, c]
                for c in range(d):
                    out[i, c] = a[c] - dot * x[i, c]
            return out

        numba_rhs(x, 1.0)
        out["numba (1 thread)"] = best_of(lambda: numba_rhs(x, 1.0), repeats)
    except ImportError:
        out["numba (1 thread)"] = None
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--quick", action="store_true", help="fewer rounds and a 2000-member ensemble (a smoke run)")
    a = p.parse_args()
    rounds = 3 if a.quick else 7
    members = 2000 if a.quick else 10000
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    model = next((l.split(":", 1)[1].strip() for l in run(["lscpu"]).splitlines() if l.startswith("Model name")), "?")
    print(f"machine: {model}, {os.cpu_count()} CPUs; commit {commit}; {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())}")
    print(f"load average at the start: {load()}" + ("  (above 1.5: the machine is shared, figures are lower bounds)"
                                                   if float(load().split()[0]) > 1.5 else ""))
    print("environment: " + (", ".join(_UNSET) + " unset for this command only" if _UNSET else
                             "OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE not set") + "; OMP_WAIT_POLICY=" + os.environ["OMP_WAIT_POLICY"])

    gemm = {t: dgemm_rate(t) for t in (1, 2)}
    print(f"\nDGEMM (numpy/OpenBLAS, 1024^3, best of 5): {gemm[1]:.1f} GFLOP/s on 1 thread, {gemm[2]:.1f} on 2")

    print("\n== Attention: seconds per right-hand side (medians of interleaved rounds); rate = 4 n^2 d / time")
    tables = {}
    for n, threads in ((1024, 2), (4096, 2), (1024, 1)):
        tables[(n, threads)] = attention_table(a.build, n, 64, rounds, threads)
    print(f"{'case':28s} {'n':>5s} {'thr':>3s} {'seconds':>10s} {'x default':>10s} {'x general':>10s} {'of DGEMM':>9s}")
    for (n, threads), cases in tables.items():
        default, general = cases["default (symmetric path)"], cases["default, general path"]
        for name, s in cases.items():
            rate = 4.0 * n * n * 64 / s / 1e9
            print(f"{name:28s} {n:5d} {threads:3d} {s:10.3e} {s / default:10.3f} {s / general:10.3f} {rate / gemm[threads]:8.1%}")
    c1, c2 = tables[(1024, 1)], tables[(1024, 2)]
    print("1 vs 2 threads at n = 1024 (time on 1 / time on 2): " +
          ", ".join(f"{k} {c1[k] / c2[k]:.2f}x" for k in ("default (symmetric path)", "default, general path", "causal mask")))

    print("\n== Peers, one right-hand side of the same model (Post-LN, Q = K = V = I, beta = 1), best of 5")
    for n, d in ((1024, 64), (32, 2)):
        ours = attention_table(a.build, n, d, rounds, 2)["default (symmetric path)"]
        print(f"n = {n}, d = {d}: normdyn {ours:.3e} s; " + ", ".join(
            f"{k} {v:.3e} s = {v / ours:.2f}x normdyn" if v else f"{k} not installed" for k, v in peers(n, d, 5).items()))

    print("\n== Noise (bench_noise: a noisy step against the deterministic one)")
    for n, d in ((32, 2), (1024, 64)):
        print(run([os.path.join(a.build, "bench", "normdyn_bench_noise"), str(n), str(d), str(rounds), "20", "2"]).rstrip())

    print("\n== Ensemble: peak memory, file and 1 vs 2 threads (bench/ensemble_memory.sh)")
    ensemble = os.path.join(a.build, "app", "normdyn")
    if not os.path.exists(ensemble):  # the library's ensemble alone, called as the command calls it
        ensemble = os.path.join(a.build, "bench", "normdyn_bench_ensemble")
    print(f"({os.path.relpath(ensemble, ROOT)})")
    print(run(["sh", os.path.join(ROOT, "bench", "ensemble_memory.sh"), str(members), ensemble]).rstrip())
    print(f"\nload average at the end: {load()}")


if __name__ == "__main__":
    main()
