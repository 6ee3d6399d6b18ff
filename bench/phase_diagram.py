#!/usr/bin/python3
"""The phase-diagram workload, three ways side by side in one process: normdyn.ensemble (adaptive
dopri5, rtol 1e-6 / atol 1e-8, one member per system), a batched numpy Euler at dt = 0.1 (all systems
of a β chunk as one tensor, as the field's scripts do) and scipy's RK45 looping over the systems.

Workload: Post-LN, Q = K = V = I, n = 32 tokens in d = 2, t in [0, 30], 200 checkpoints, 2048 seeds ×
90 values of β (linspace(0.1, 9, 90)); --slice runs every 15th β (2048 × 6 systems). At each
checkpoint every method computes the fraction of token pairs with cosine > 0.999 (the statistic
the phase diagram plots). scipy is timed on a subset of the systems and extrapolated (said so in
its line). Accuracy: the max over a subset of members of the direction error at t = 30 (max over
tokens of |θ − θ_ref|), against scipy DOP853 at rtol 1e-12 / atol 1e-14 from the same initial
state (normdyn's, frame 0 of the member's own trajectory).

    /usr/bin/python3 bench/phase_diagram.py --slice

with the package installed (the quickstart installs it), or a build's package installed into a
prefix: `cmake --install BUILD --prefix P --component python` and PYTHONPATH=P/lib/python3.11/dist-packages.
The first line printed names the package measured.
"""
import os
import sys

# OpenBLAS reads these once it is loaded: this machine sets them to values that slow it down.
_UNSET = [k for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if os.environ.pop(k, None) is not None]
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import argparse  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import scipy.integrate  # noqa: E402

import normdyn  # noqa: E402

N, D, T_END, SAMPLES, SEEDS = 32, 2, 30.0, 200, 2048
BETAS = np.linspace(0.1, 9.0, 90)
PAIR_COSINE = 0.999


def pair_fraction(x):
    """(B, n, d) unit rows → (B,) fraction of pairs j < k with cosine > PAIR_COSINE."""
    g = x @ np.swapaxes(x, 1, 2)
    iu = np.triu_indices(x.shape[1], 1)
    return np.mean(g[:, iu[0], iu[1]] > PAIR_COSINE, axis=1)


def post_ln_rhs(x, beta):
    """dθ/dt = P_θ A(θ), A_j = Σ_k softmax_k(β <θ_j, θ_k>) θ_k, batched over the first axis."""
    s = beta[:, None, None] * (x @ np.swapaxes(x, 1, 2))
    s -= s.max(axis=2, keepdims=True)
    w = np.exp(s)
    w /= w.sum(axis=2, keepdims=True)
    a = w @ x
    return a - np.sum(a * x, axis=2, keepdims=True) * x


def euler(x0, beta, dt, times):
    """Batched explicit Euler with renormalization; the pair fraction at the step nearest each time."""
    x = x0.copy()
    steps = int(round(T_END / dt))
    record = {int(round(t / dt)) for t in times}
    out = []
    for k in range(steps + 1):
        if k in record:
            out.append(pair_fraction(x))
        if k == steps:
            break
        x = x + dt * post_ln_rhs(x, beta)
        x /= np.linalg.norm(x, axis=2, keepdims=True)
    return x, np.array(out)


def flat_rhs(beta):
    def f(_t, y):
        return post_ln_rhs(y.reshape(1, N, D), np.array([beta])).ravel()
    return f


def scipy_run(x0, beta, method, rtol, atol, times):
    sol = scipy.integrate.solve_ivp(flat_rhs(beta), (0.0, T_END), x0.ravel(), method=method, rtol=rtol, atol=atol,
                                    t_eval=times)
    xs = sol.y.T.reshape(len(times), 1 * N, D)
    xs /= np.linalg.norm(xs, axis=2, keepdims=True)
    return xs


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--slice", action="store_true", help="every 15th beta (1/15 of the workload)")
    p.add_argument("--threads", type=int, default=0, help="normdyn members at once (0: every core)")
    p.add_argument("--scipy-systems", type=int, default=48, help="systems scipy RK45 is timed on (extrapolated)")
    p.add_argument("--check-members", type=int, default=24, help="members whose direction error is measured")
    p.add_argument("--seeds", type=int, default=SEEDS, help="seeds per beta (default 2048; fewer for a quick try)")
    p.add_argument("--normdyn-only", action="store_true",
                   help="time normdyn alone (the full workload without the hours the peers take)")
    p.add_argument("--output", default=None,
                   help="the ensemble's file (default: a temporary one, removed); its size is printed")
    args = p.parse_args()
    seeds = args.seeds
    betas = BETAS[::15] if args.slice else BETAS
    systems = len(betas) * seeds
    times = np.linspace(0.0, T_END, SAMPLES)
    print(f"normdyn {normdyn.__version__} (revision {normdyn._core.versions()['revision']}) from {os.path.dirname(normdyn.__file__)}")
    print(f"phase diagram: n={N} d={D} t={T_END:g} {SAMPLES} checkpoints, {seeds} seeds x {len(betas)} beta "
          f"= {systems} systems{' (1/15 slice)' if args.slice else ''}")
    print(f"environment: unset {', '.join(_UNSET) if _UNSET else 'nothing (OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE were not set)'}"
          f" in this process; OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}; {os.cpu_count()} cores")

    # Members whose trajectories are kept for the accuracy check: spread over the grid.
    rng = np.random.default_rng(0)
    check = sorted(rng.choice(systems, size=min(args.check_members, systems), replace=False).tolist())

    config = {"model": {"scheme": "post", "n": N, "d": D},
              "solver": {"method": "dopri5", "t_end": T_END, "rtol": 1e-6, "atol": 1e-8},
              "output": {"samples": SAMPLES}}
    scratch = tempfile.TemporaryDirectory(prefix="normdyn-phase-")
    output = args.output or os.path.join(scratch.name, "phase.h5")
    # The journal (what a rerun continues from) is watched: its largest size is the disk the run needs.
    journal, journal_peak, watching = output + ".journal", [0], threading.Event()

    def watch_journal():
        while not watching.wait(0.05):
            try:
                journal_peak[0] = max(journal_peak[0], os.path.getsize(journal))
            except OSError:
                pass
    watcher = threading.Thread(target=watch_journal, daemon=True)
    watcher.start()
    t0 = time.perf_counter()
    ds = normdyn.ensemble(config, axes={"model.beta": [float(b) for b in betas], "init.seed": range(1, seeds + 1)},
                          over="init.seed", pair_cosine=PAIR_COSINE, trajectories=check, threads=args.threads,
                          output=output)
    t_normdyn = time.perf_counter() - t0
    watching.set()
    watcher.join()
    steps = int(ds.accepted_steps.sum())
    size = os.path.getsize(output)
    full = 90 * SEEDS
    print(f"normdyn ensemble : {t_normdyn:8.2f} s  ({1e3 * t_normdyn / systems:.3f} ms/system, "
          f"{steps / systems:.0f} steps/system, status {sorted(set(ds.status.values.ravel()))})")
    print(f"ensemble file    : {size / 1e6:8.2f} MB ({size / systems:.0f} bytes/system with {len(check)} trajectories"
          f"{'' if systems == full else f'; at most about {size / systems * full / 1e6:.0f} MB at the full {full} systems, counting the fixed part per system'})")

    with h5py.File(output, "r") as f:
        figures = sum(f[k].id.get_storage_size() for k in f if k.startswith("member_") and k != "member_config")
    print(f"member figures   : {figures / 1e6:8.2f} MB of it ({figures / systems:.0f} bytes/system: what lets a later "
          f"call return or extend the file; member_figures=False leaves them out)")
    print(f"journal peak     : {journal_peak[0] / 1e6:8.2f} MB (its size polled every 50 ms; removed at the end)")
    print(f"cpu              : {time.process_time():8.2f} s in this process so far (every thread)")
    if args.normdyn_only:
        return 0

    # The batched Euler over every system, one beta at a time (a 2048-system tensor each).
    t0 = time.perf_counter()
    for b in betas:
        x0 = rng.standard_normal((seeds, N, D))
        x0 /= np.linalg.norm(x0, axis=2, keepdims=True)
        euler(x0, np.full(seeds, b), 0.1, times)
    t_euler = time.perf_counter() - t0
    print(f"numpy Euler 0.1  : {t_euler:8.2f} s  ({1e3 * t_euler / systems:.3f} ms/system)")

    # scipy RK45 on a subset, extrapolated.
    k = min(args.scipy_systems, systems)
    t0 = time.perf_counter()
    for i in range(k):
        x0 = rng.standard_normal((N, D))
        x0 /= np.linalg.norm(x0, axis=1, keepdims=True)
        xs = scipy_run(x0, float(betas[i % len(betas)]), "RK45", 1e-6, 1e-8, times)
        pair_fraction(xs)
    t_scipy = (time.perf_counter() - t0) * systems / k
    print(f"scipy RK45       : {t_scipy:8.2f} s  (extrapolated from {k} systems; {1e3 * t_scipy / systems:.3f} ms/system)")

    print(f"ratios           : numpy Euler / normdyn = {t_euler / t_normdyn:.2f}, "
          f"scipy RK45 / normdyn = {t_scipy / t_normdyn:.2f}")

    # Accuracy at t = 30 on the checked members, from normdyn's own initial states.
    err_nd, err_eu, err_rk = [], [], []
    beta_of = np.repeat(betas, seeds)
    for j, point in enumerate(check):
        x0 = ds.direction.values[j, 0]
        beta = float(beta_of[point])
        ref = scipy_run(x0, beta, "DOP853", 1e-12, 1e-14, np.array([0.0, T_END]))[-1]
        err_nd.append(np.abs(ds.direction.values[j, -1] - ref).max())
        xe, _ = euler(x0[None], np.array([beta]), 0.1, np.array([T_END]))
        err_eu.append(np.abs(xe[0] - ref).max())
        err_rk.append(np.abs(scipy_run(x0, beta, "RK45", 1e-6, 1e-8, np.array([0.0, T_END]))[-1] - ref).max())
    e_nd, e_eu, e_rk = max(err_nd), max(err_eu), max(err_rk)
    print(f"max direction error at t = {T_END:g} over {len(check)} members (vs DOP853 rtol 1e-12):")
    print(f"  normdyn {e_nd:.2e}   numpy Euler {e_eu:.2e} (median {np.median(err_eu):.2e})   scipy RK45 {e_rk:.2e}")
    print(f"  Euler error / normdyn error = {e_eu / e_nd:.3g}" if e_nd > 0 else "  normdyn error 0 (at round-off)")


if __name__ == "__main__":
    sys.exit(main())
