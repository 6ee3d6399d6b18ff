"""The cost of the user's terms (normdyn.run(..., terms=[...])), ratios printed in one run:

1. the feed-forward perceptron F(x) = sum_m omega_m relu(<a_m, x>) a_m (M = 64) written as a numba
   cfunc term against the built-in term (feedforward=(a, omega)): a whole run of n = 1024 tokens in
   d = 64, rk4, 20 steps; the ratio of the integration times and the largest difference of the
   trajectories;
2. a Python callable term: its overhead per right-hand side at n = 32 and n = 1024 (a run with a term
   returning zeros against the same run without it, divided by the right-hand-side evaluations).

    /usr/bin/python3 bench/user_terms.py [--repeats 3] [--threads 0]

Needs the package normdyn (installed, or on PYTHONPATH) and numba (python3-numba). Times are the
integration's own (ds.attrs["wall_seconds"]), the best of --repeats.
"""
import argparse
import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
# The term runs inside one right-hand side, beside the attention kernel's threads: BLAS threads of its
# own (numba's @ calls OpenBLAS) only fight them (15 ms instead of 1.3 ms per call on two loaded cores).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from numba import carray, cfunc, types  # noqa: E402

import normdyn  # noqa: E402

M = 64
SIGNATURE = types.void(types.float64, types.CPointer(types.float64), types.CPointer(types.float64),
                       types.CPointer(types.float64), types.int64, types.int64, types.CPointer(types.float64))


def perceptron(a, omega, n):
    """The perceptron as a cfunc, two matrix products as the built-in term computes them (numba's np.dot
    calls BLAS), into scratch memory passed as `user` (a scipy.LowLevelCallable's user_data): inside a
    run, every fresh temporary of a few hundred KiB costs page faults (glibc hands such blocks back to
    the system between right-hand sides), which cost more than the products. The weights are frozen
    into the function as constants. Returns the LowLevelCallable and the scratch that must outlive it."""
    import ctypes

    from scipy import LowLevelCallable
    a = np.ascontiguousarray(a)
    a_t = np.ascontiguousarray(a.T)
    omega = np.ascontiguousarray(omega)
    m, d0 = a.shape

    @cfunc(SIGNATURE)
    def term(t, theta, r, out, n, d, user):
        x = carray(theta, (n, d))
        y = carray(out, (n, d))
        scratch = carray(user, (n * (m + d),))
        s = scratch[: n * m].reshape((n, m))
        u = scratch[n * m:].reshape((n, d))
        np.dot(x, a_t, s)  # <a_m, theta_i>
        for i in range(n):
            for k in range(m):
                s[i, k] = omega[k] * s[i, k] if s[i, k] > 0.0 else 0.0
        np.dot(s, a, u)
        for i in range(n):
            for c in range(d):
                y[i, c] += u[i, c]
    scratch = np.zeros(n * (m + a.shape[1]))
    callable_ = LowLevelCallable(term.ctypes, ctypes.c_void_p(scratch.ctypes.data))
    return callable_, scratch


def best(runs, f):
    results = [f() for _ in range(runs)]
    return min(results, key=lambda ds: ds.attrs["wall_seconds"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="threads of the attention kernel (0: all cores)")
    args = parser.parse_args()

    rng = np.random.default_rng(1)
    n, d = 1024, 64
    a = rng.standard_normal((M, d)) / np.sqrt(d)
    omega = rng.standard_normal(M) / M
    config = {"model": {"scheme": "post", "n": n, "d": d, "beta": 1.0},
              "solver": {"method": "rk4", "dt": 0.05, "t_end": 1.0, "threads": args.threads},
              "output": {"samples": 2, "observables": False}}
    compiled, scratch = perceptron(a, omega, n)
    term = normdyn.Term(compiled, name="perceptron")
    normdyn.run(config, set={"solver.t_end": 0.05}, terms=[term])  # warm-up (numba compiled it above)
    builtin = best(args.repeats, lambda: normdyn.run(config, feedforward=(a, omega)))
    compiled = best(args.repeats, lambda: normdyn.run(config, terms=[term]))
    plain = best(args.repeats, lambda: normdyn.run(config))
    difference = float(np.abs(builtin.direction.values - compiled.direction.values).max())
    tb, tc, tp = (ds.attrs["wall_seconds"] for ds in (builtin, compiled, plain))
    print(f"perceptron M = {M}, relu, n = {n}, d = {d}, rk4, 20 steps ({builtin.attrs['rhs_evaluations']} right-hand sides):")
    print(f"  built-in term {tb:.3f} s, numba cfunc term {tc:.3f} s, no term {tp:.3f} s")
    print(f"  ratio cfunc / built-in = {tc / tb:.3f} (target <= 1.2); "
          f"largest difference of the trajectories {difference:.2e}")

    def zeros(t, theta, r):
        return np.zeros_like(theta)
    for n_small in (32, 1024):
        c = {**config, "model": {**config["model"], "n": n_small},
             "solver": {**config["solver"], "t_end": 5.0 if n_small == 32 else 1.0}}
        without = best(args.repeats, lambda: normdyn.run(c))
        with_term = best(args.repeats, lambda: normdyn.run(c, terms=[zeros]))
        rhs = with_term.attrs["rhs_evaluations"]
        overhead = (with_term.attrs["wall_seconds"] - without.attrs["wall_seconds"]) / rhs
        print(f"Python term at n = {n_small}: {overhead * 1e6:.1f} us per right-hand side "
              f"({rhs} evaluations; run {without.attrs['wall_seconds']:.3f} s without, "
              f"{with_term.attrs['wall_seconds']:.3f} s with)")


if __name__ == "__main__":
    main()
