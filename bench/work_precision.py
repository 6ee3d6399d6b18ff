"""Work-precision: right-hand-side evaluations and solve time needed for a given accuracy.

normdyn's adaptive methods (dopri5, cash_karp54, fehlberg78; not bulirsch_stoer, which cannot resume
bit for bit and so cannot be a default) against scipy solve_ivp RK45 and DOP853 and the fixed-step
forward Euler + renormalization of the field's scripts, on one problem each: Post-LN, beta = 1,
Q = K = V = I, t_end = 10, one Gaussian start read by all from one HDF5 file.

Each adaptive method runs at rtol = 1e-3 ... 1e-12 (atol = rtol / 100); Euler at dt = 0.1 and
halvings. The error is max over tokens of |theta_j(t_end) - theta_ref_j| against normdyn fehlberg78
at rtol = 1e-13 (checked against scipy DOP853 at the same tolerance). For each target error
(1e-3, 1e-6, 1e-9) the table gives the cost of the cheapest measured run that reaches it: its
right-hand sides, its solve time and its tolerance (Euler beyond its measured range: extrapolated
from error ~ C dt^p and the time per step, marked "~"). normdyn runs the real command line with
`output.samples` frames (default 201, as a user's run; samples shorten the steps of the methods
without dense output); its time is /summary@wall_seconds (the solver only); Python times are
perf_counter around the solver call. RHS counts do not depend on the machine's load; times do.

Run: bash bench/work_precision.sh [--problems 32x3,256x32] [--samples 201]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
from peers import make_rhs, attention  # noqa: E402  (the same vectorized numpy right-hand side)

BETA = 1.0
T_END = 10.0
TOLERANCES = [10.0 ** -k for k in range(3, 13)]
TARGETS = (1e-3, 1e-6, 1e-9)
NORMDYN_METHODS = ("dopri5", "cash_karp54", "fehlberg78")


def run_normdyn(binary, work, init_file, n, d, method, rtol, samples, tag):
    cfg = os.path.join(work, f"{tag}.toml")
    out = os.path.join(work, f"{tag}.h5")
    with open(cfg, "w") as f:
        f.write(f"""[model]
scheme = "post"
n = {n}
d = {d}
beta = {BETA}
[init]
kind = "file"
file = "{init_file}"
dataset = "theta"
[solver]
method = "{method}"
rtol = {rtol!r}
atol = {rtol / 100!r}
t_end = {T_END}
[output]
samples = {samples}
observables = false
compression = 0
""")
    subprocess.run([binary, "run", cfg, "-o", out, "--force", "-q"], check=True)
    with h5py.File(out, "r") as f:
        s = f["summary"].attrs
        th = f["particles/tokens/direction/value"][-1]
        seconds, evals = float(s["wall_seconds"]), int(s["rhs_evaluations"])
    os.remove(out)
    return seconds, th, evals


def run_scipy(theta0, method, rtol):
    n, d = theta0.shape
    f = make_rhs(n, d, "post")
    start = time.perf_counter()
    sol = solve_ivp(f, (0.0, T_END), theta0.ravel(), method=method, rtol=rtol, atol=rtol / 100, t_eval=[T_END])
    seconds = time.perf_counter() - start
    assert sol.success, sol.message
    return seconds, sol.y[:, -1].reshape(n, d), sol.nfev


def euler(theta0, steps):
    th = theta0.copy()
    h = T_END / steps
    start = time.perf_counter()
    for _ in range(steps):
        a = attention(th, BETA)
        dot = np.einsum("ij,ij->i", th, a)
        th = th + h * (a - dot[:, None] * th)
        th /= np.linalg.norm(th, axis=1, keepdims=True)
    return time.perf_counter() - start, th, steps


def cheapest(runs, target):
    """(evaluations, seconds, label) of the cheapest run with error <= target, or None."""
    ok = [r for r in runs if r[0] <= target]
    return min(ok, key=lambda r: r[1])[1:] if ok else None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--normdyn", required=True, help="path of the normdyn binary")
    p.add_argument("--problems", default="32x3,256x32", help="comma-separated n x d")
    p.add_argument("--samples", type=int, default=201, help="output.samples of the normdyn runs")
    p.add_argument("--euler-budget", type=float, default=20.0, help="seconds: longest Euler run actually made")
    args = p.parse_args()
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')} "
          f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE', '(unset)')} "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}; load average at start "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; normdyn output.samples = {args.samples}")
    with tempfile.TemporaryDirectory(prefix="normdyn_wp_") as work:
        for prob in args.problems.split(","):
            n, d = (int(v) for v in prob.split("x"))
            rng = np.random.default_rng(20251)
            x = rng.standard_normal((n, d))
            theta0 = x / np.linalg.norm(x, axis=1, keepdims=True)
            init_file = os.path.join(work, f"init_{n}_{d}.h5")
            with h5py.File(init_file, "w") as f:
                f["theta"] = theta0
            _, ref, ref_evals = run_normdyn(args.normdyn, work, init_file, n, d, "fehlberg78", 1e-13, 2, "ref")
            _, check, _ = run_scipy(theta0, "DOP853", 1e-13)
            err = lambda th: float(np.max(np.linalg.norm(th - ref, axis=1)))  # noqa: E731
            print(f"\n== Post-LN n = {n}, d = {d}, beta = {BETA:g}, t_end = {T_END:g}; reference: normdyn fehlberg78 "
                  f"rtol 1e-13 ({ref_evals} rhs); scipy DOP853 rtol 1e-13 differs by {err(check):.1e}")
            runs = {}  # method -> [(error, evals, seconds, label)]
            print(f"   {'method':18s} {'rtol / dt':>9s} {'error':>9s} {'rhs':>9s} {'time [s]':>10s}")
            for m in NORMDYN_METHODS:
                for tol in TOLERANCES:
                    s, th, ev = run_normdyn(args.normdyn, work, init_file, n, d, m, tol, args.samples, m)
                    runs.setdefault(f"normdyn {m}", []).append((err(th), ev, s, f"rtol {tol:.0e}"))
            for m in ("RK45", "DOP853"):
                for tol in TOLERANCES:
                    s, th, ev = run_scipy(theta0, m, tol)
                    runs.setdefault(f"scipy {m}", []).append((err(th), ev, s, f"rtol {tol:.0e}"))
                    if s > 30.0:
                        break  # tighter is slower still
            measured = []
            for steps in (100, 200, 400, 800, 1600, 3200):
                s, th, ev = euler(theta0, steps)
                measured.append((err(th), ev, s, f"dt {T_END / steps:.1e}"))
                if s * 2 > args.euler_budget:
                    break
            runs["numpy Euler"] = list(measured)
            for name, rs in runs.items():
                for e, ev, s, label in rs:
                    print(f"   {name:18s} {label:>9s} {e:9.2e} {ev:9d} {s:10.4g}")
            # Euler beyond the measured range: error ~ C dt^p, time proportional to the steps.
            h = np.log([T_END / m[1] for m in measured])
            order, logc = np.polyfit(h, np.log([m[0] for m in measured]), 1)
            per_step = min(m[2] / m[1] for m in measured)
            print(f"\n   cost to reach each error (rhs evaluations, time [s]; '~' extrapolated: Euler order "
                  f"{order:.2f}, {per_step * 1e6:.0f} us/step)")
            print(f"   {'method':18s}" + "".join(f" {'err <= %.0e: rhs, time, at' % t:>34s}" for t in TARGETS))
            best = {}
            for name, rs in runs.items():
                cells = []
                for t in TARGETS:
                    c = cheapest(rs, t)
                    if c is None and name == "numpy Euler":
                        steps = int(np.ceil(T_END / np.exp((np.log(t) - logc) / order)))
                        c = (steps, steps * per_step, "~")
                    if c is None:
                        cells.append(f" {'not reached':>33s}")
                        continue
                    best.setdefault(t, []).append((c[0], name))
                    label = "extrapolated" if c[2] == "~" else c[2]
                    cells.append(f" {c[0]:>10d} {c[1]:8.3g} s {label:>12s}")
                print(f"   {name:18s}" + "".join(cells))
            for t in TARGETS:
                ranked = sorted(best.get(t, []))
                nd = [r for r in ranked if r[1].startswith("normdyn")]
                print(f"   err <= {t:.0e}: fewest rhs {ranked[0][1]} ({ranked[0][0]}); among normdyn: "
                      + ", ".join(f"{nm.split()[1]} {ev}" for ev, nm in nd))
            sys.stdout.flush()
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
