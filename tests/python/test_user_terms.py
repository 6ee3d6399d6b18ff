"""The user's terms (normdyn.run(..., terms=[...])): a Python callable and a numba cfunc against a numpy
integration of U = A + f in every scheme; ensembles on two threads against single runs; terms that
raise, return NaN or the wrong shape; the run file's record, resume and repeats with and without the term."""
import json
import warnings

import numpy as np
import pytest

import normdyn

numba = pytest.importorskip("numba")

N, D, BETA, DT, T_END = 7, 3, 1.5, 0.05, 1.0
TAU = 0.5  # mix: the regime switch, on a step
ALPHA = 0.8  # ngpt
SCHEMES = ["post", "pre", "mix", "peri", "ngpt", "cod"]


def drift(t, theta, r):
    """A drift toward e_0 that grows with t and with the radius, and a pull toward the origin."""
    out = -0.2 * theta
    out[:, 0] += 0.3 * (1.0 + t) * r
    return out


@numba.cfunc("void(float64, CPointer(float64), CPointer(float64), CPointer(float64), int64, int64, voidptr)")
def drift_compiled(t, theta, r, out, n, d, user):
    for i in range(n):
        for k in range(d):
            out[i * d + k] += -0.2 * theta[i * d + k]
        out[i * d] += 0.3 * (1.0 + t) * r[i]


def config(scheme, method="rk4", **more):
    c = {"model": {"scheme": scheme, "n": N, "d": D, "beta": BETA},
         "init": {"kind": "uniform", "seed": 3, "r0": 1.3},
         "solver": {"method": method, "dt": DT, "t_end": T_END}, "output": {"samples": 5}}
    if scheme == "mix":
        c["model"]["tau"] = TAU
    if scheme == "ngpt":
        c["model"]["alpha"] = ALPHA
    for key, value in more.items():
        section, name = key.split(".")
        c.setdefault(section, {})[name] = value
    return c


def velocity(scheme, t, t_regime, theta, r):
    """dθ/dt and dr/dt of the scheme with U = A + drift (identity Q, K, V; softmax attention)."""
    w = np.exp(BETA * theta @ theta.T)
    a = (w / w.sum(axis=1, keepdims=True)) @ theta + drift(t, theta, r)
    dot = np.einsum("ij,ij->i", theta, a)
    norm = np.linalg.norm(a, axis=1)
    if scheme == "post":
        s, rho = np.ones(N), np.zeros(N)
    elif scheme == "pre":
        s, rho = r, dot
    elif scheme == "mix":
        s, rho = (r, dot) if t_regime > TAU else (np.ones(N), np.zeros(N))
    elif scheme == "peri":
        s, rho = r * norm, dot / norm
    elif scheme == "ngpt":
        s, rho = norm / ALPHA, np.zeros(N)
    elif scheme == "cod":
        s, rho = np.full(N, np.sqrt(t + 1.0)), np.zeros(N)
    return (a - dot[:, None] * theta) / s[:, None], rho


def reference(scheme, x0):
    """Classical RK4 of step DT with the directions renormalized after every step (solver.project)."""
    theta, r = x0.direction.values.copy(), x0.radius.values.copy()
    t = 0.0
    for _ in range(round(T_END / DT)):
        middle = t + 0.5 * DT  # the regime of the step's piece
        k1 = velocity(scheme, t, middle, theta, r)
        k2 = velocity(scheme, t + DT / 2, middle, theta + DT / 2 * k1[0], r + DT / 2 * k1[1])
        k3 = velocity(scheme, t + DT / 2, middle, theta + DT / 2 * k2[0], r + DT / 2 * k2[1])
        k4 = velocity(scheme, t + DT, middle, theta + DT * k3[0], r + DT * k3[1])
        theta = theta + DT / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        r = r + DT / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        theta /= np.linalg.norm(theta, axis=1, keepdims=True)
        t += DT
    return theta, r


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("kind", ["python", "compiled"])
def test_a_term_against_a_numpy_integration(scheme, kind):
    term = drift if kind == "python" else normdyn.Term(drift_compiled, name="drift")
    ds = normdyn.run(config(scheme), terms=[term])
    assert ds.attrs["status"] == "ok", ds.attrs["message"]
    theta, r = reference(scheme, ds.isel(time=0))
    np.testing.assert_allclose(ds.direction.values[-1], theta, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ds.radius.values[-1], r, rtol=0, atol=1e-12)
    # The term moves the tokens: without it the run is elsewhere.
    plain = normdyn.run(config(scheme))
    assert np.abs(plain.direction.values[-1] - theta).max() > 1e-3


def test_python_and_compiled_terms_give_the_same_bits_and_are_recorded(tmp_path):
    a = normdyn.run(config("pre"), terms=[drift], output=tmp_path / "a.h5")
    b = normdyn.run(config("pre"), terms=[normdyn.Term(drift_compiled, name="drift", params={"c": 0.3})])
    np.testing.assert_array_equal(a.direction.values, b.direction.values)
    with normdyn.load(tmp_path / "a.h5") as ds:
        recorded = json.loads(ds.attrs["terms"])
    assert recorded == [{"name": "drift", "kind": "python", "params": {}, "digest": recorded[0]["digest"], "rows": False}]
    assert len(recorded[0]["digest"]) == 16
    import h5py
    with h5py.File(tmp_path / "a.h5") as f:
        assert "def drift(t, theta, r)" in f["parameters/terms/000/source"][()].decode()
    assert json.loads(b.attrs["terms"])[0]["kind"] == "compiled"
    # The digest of a numba function is that of its Python source.
    assert len(json.loads(b.attrs["terms"])[0]["digest"]) == 16
    assert json.loads(b.attrs["terms"])[0]["params"] == {"c": 0.3}


@pytest.mark.parametrize("method", ["dopri5", "euler", "discrete"])
def test_every_method_sees_the_term(method):
    with_term = normdyn.run(config("post", method), terms=[drift])
    assert with_term.attrs["status"] == "ok"
    assert np.abs(with_term.direction.values[-1] - normdyn.run(config("post", method)).direction.values[-1]).max() > 1e-3


def test_noise_sees_the_term():
    noisy = config("post", "euler_maruyama", **{"noise.kind": "independent", "noise.sigma": 0.1})
    a = normdyn.run(noisy, terms=[drift])
    b = normdyn.run(noisy)
    assert a.attrs["status"] == "ok" and np.abs(a.direction.values[-1] - b.direction.values[-1]).max() > 1e-3


def test_rows_terms_on_blocks_equal_whole_calls():
    calls = []

    def local(t, theta, r):
        calls.append(theta.shape[0])
        return drift(t, theta, r)
    big = config("post", **{"model.n": 150})
    whole = normdyn.run(big, terms=[normdyn.Term(local, name="local")])
    assert set(calls) == {150}
    calls.clear()
    blocks = normdyn.run(big, terms=[normdyn.Term(local, name="local", rows=True)])
    assert set(calls) == {64, 22}
    np.testing.assert_array_equal(whole.direction.values, blocks.direction.values)


def test_theta_is_a_read_only_view():
    seen = []

    def look(t, theta, r):
        seen.append((theta.flags.writeable, theta.flags.owndata, r.flags.writeable))
        return np.zeros_like(theta)
    normdyn.run(config("post"), terms=[look])
    assert set(seen) == {(False, False, False)}


def test_ensemble_members_with_a_compiled_term_on_two_threads_equal_single_runs():
    term = normdyn.Term(drift_compiled, name="drift")
    base = config("pre")
    ens = normdyn.ensemble(base, axes={"init.seed": [1, 2, 3, 4]}, threads=2, terms=[term], trajectories=[0, 1, 2, 3])
    for k, seed in enumerate([1, 2, 3, 4]):
        single = normdyn.run(base, set={"init.seed": seed, "solver.threads": 1}, terms=[term])
        member = ens.sel(trajectory=k)
        np.testing.assert_array_equal(member.direction.values, single.direction.values)
        np.testing.assert_array_equal(member.radius.values, single.radius.values)
        assert int(ens.accepted_steps.sel(seed=seed)) == single.attrs["accepted_steps"]


class Boom(RuntimeError):
    pass


def test_a_term_that_raises_ends_the_run_and_is_raised_with_its_traceback(tmp_path):
    def explode(t, theta, r):
        if t > 0.5:
            raise Boom("too late")
        return drift(t, theta, r)
    with pytest.raises(Boom, match="too late") as caught:
        normdyn.run(config("post"), terms=[explode], output=tmp_path / "r.h5")
    assert any(entry.name == "explode" for entry in caught.traceback)
    ds = caught.value.dataset
    assert ds.attrs["status"] == "user_term_failed"
    assert "explode" in ds.attrs["message"] and "Boom" in ds.attrs["message"]
    assert 0 < ds.sizes["time"] < 5
    with normdyn.load(tmp_path / "r.h5") as kept:
        assert kept.attrs["status"] == "user_term_failed" and kept.sizes["time"] == ds.sizes["time"]


def test_nan_and_a_wrong_shape_are_errors_naming_the_term():
    def nan(t, theta, r):
        out = drift(t, theta, r)
        out[2, 1] = np.nan if t > 0.3 else 0.0
        return out
    with pytest.raises(normdyn.TermError, match=r"'nan' returned a non-finite value \(token 2, column 1\)"):
        normdyn.run(config("post"), terms=[nan])

    def wrong(t, theta, r):
        return theta[:, :2]
    with pytest.raises(normdyn.TermError, match=r"'wrong' failed .*returned shape \[7, 2\], expected \[n, d\] = \[7, 3\]"):
        normdyn.run(config("post"), terms=[wrong])

    def nothing(t, theta, r):
        return None
    with pytest.raises(normdyn.TermError, match="'nothing'.*returned None, not an array"):
        normdyn.run(config("post"), terms=[nothing])

    @numba.cfunc("void(float64, CPointer(float64), CPointer(float64), CPointer(float64), int64, int64, voidptr)")
    def compiled_nan(t, theta, r, out, n, d, user):
        out[0] = np.nan
    with pytest.raises(normdyn.TermError, match="'compiled_nan' returned a non-finite value"):
        normdyn.run(config("post"), terms=[normdyn.Term(compiled_nan, name="compiled_nan")])


def test_bad_terms_are_refused_before_the_run():
    with pytest.raises(ValueError, match="two terms are named 'drift'"):
        normdyn.run(config("post"), terms=[drift, drift])
    with pytest.raises(ValueError, match="a term must be a callable"):
        normdyn.run(config("post"), terms=[42])


def test_compiled_params_arrive_as_user():
    # The parameters as a double array: the callback types `user` so.
    from numba import carray, cfunc, types

    @cfunc(types.void(types.float64, types.CPointer(types.float64), types.CPointer(types.float64),
                      types.CPointer(types.float64), types.int64, types.int64, types.CPointer(types.float64)))
    def scaled_drift(t, theta, r, out, n, d, user):
        p = carray(user, 2)
        for i in range(n):
            out[i * d] += p[0] * r[i] + p[1]
    a = normdyn.run(config("post"), terms=[normdyn.Term(scaled_drift, name="s", params={"a": 0.3, "b": 0.1})])

    def same(t, theta, r):
        out = np.zeros_like(theta)
        out[:, 0] = 0.3 * r + 0.1
        return out
    b = normdyn.run(config("post"), terms=[same])
    np.testing.assert_array_equal(a.direction.values, b.direction.values)


def test_a_ctypes_pointer_and_a_low_level_callable_with_its_user_data():
    # The same callback three ways: a ctypes function pointer given params, and a
    # scipy.LowLevelCallable whose user_data (a pointer to two doubles) arrives as `user`.
    import ctypes
    from numba import carray, cfunc, types
    scipy = pytest.importorskip("scipy")

    @cfunc(types.void(types.float64, types.CPointer(types.float64), types.CPointer(types.float64),
                      types.CPointer(types.float64), types.int64, types.int64, types.CPointer(types.float64)))
    def scaled(t, theta, r, out, n, d, user):
        p = carray(user, 2)
        for i in range(n):
            out[i * d] += p[0] * r[i] + p[1]

    def same(t, theta, r):
        out = np.zeros_like(theta)
        out[:, 0] = 0.3 * r + 0.1
        return out
    expected = normdyn.run(config("post"), terms=[same]).direction.values
    by_ctypes = normdyn.run(config("post"), terms=[normdyn.Term(scaled.ctypes, name="s", params={"a": 0.3, "b": 0.1})])
    np.testing.assert_array_equal(by_ctypes.direction.values, expected)
    values = np.array([0.3, 0.1])
    low_level = scipy.LowLevelCallable(scaled.ctypes, ctypes.c_void_p(values.ctypes.data))
    by_capsule = normdyn.run(config("post"), terms=[normdyn.Term(low_level, name="s", params={"a": 9.0, "b": 9.0})])
    # user_data wins over params, which are recorded only.
    np.testing.assert_array_equal(by_capsule.direction.values, expected)
    assert json.loads(by_capsule.attrs["terms"])[0]["kind"] == "compiled"


def interrupted(tmp_path, terms):
    out = tmp_path / "long.h5"
    # 80 000 calls of the term (about a second and a half): the progress callback, called every 0.2 s,
    # stops it mid-way on an idle machine too.
    long = config("pre", **{"solver.t_end": 20.0, "solver.dt": 0.001, "output.samples": 201, "output.flush_frames": 1})

    def stop(event):
        if event["frames"] > 3:
            raise KeyboardInterrupt("stopped by the test")
    with pytest.raises(KeyboardInterrupt):
        normdyn.run(long, output=out, progress=stop, terms=terms)
    return out, long


def test_resume_needs_the_term_and_then_repeats_the_run(tmp_path):
    out, long = interrupted(tmp_path, [drift])
    with pytest.raises(ValueError, match="this run used the term 'drift'; pass terms=\\[...\\]"):
        normdyn.resume(out)
    with normdyn.load(out) as ds:
        assert ds.attrs["status"] == "interrupted"

    def drift_changed(t, theta, r):
        return drift(t, theta, r)
    with pytest.raises(ValueError, match="the run has no term 'drift_changed'"):
        normdyn.resume(out, terms=[drift_changed])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resumed = normdyn.resume(out, terms=[drift])
    whole = normdyn.run(long, terms=[drift])
    np.testing.assert_array_equal(resumed.direction.values, whole.direction.values)
    resumed.close()


def test_a_changed_term_is_a_warning_naming_it(tmp_path):
    out, long = interrupted(tmp_path, [drift])

    def other(t, theta, r):
        return drift(t, theta, r) * 1.0
    with pytest.warns(UserWarning, match="the term 'drift' differs from the one the run used"):
        normdyn.resume(out, terms=[normdyn.Term(other, name="drift")]).close()


def test_a_run_repeats_from_its_dataset_and_file_with_the_term(tmp_path):
    first = normdyn.run(config("peri"), terms=[drift], output=tmp_path / "a.h5")
    with pytest.raises(ValueError, match="this run used the term 'drift'"):
        normdyn.run(first)
    again = normdyn.run(first, terms=[drift])
    np.testing.assert_array_equal(again.direction.values, first.direction.values)
    with normdyn.load(tmp_path / "a.h5") as ds:
        from_file = normdyn.run(ds, terms=[drift])
    np.testing.assert_array_equal(from_file.direction.values, first.direction.values)


PULL_C = """
#include <stdint.h>
void pull(double t, const double* theta, const double* r, double* out, int64_t n, int64_t d, void* user) {
  const double* p = (const double*)user;
  for (int64_t i = 0; i < n; ++i) out[i * d] += p[0] * r[i];
}
"""


def test_a_library_term_from_the_command_line(tmp_path):
    import shutil
    import subprocess
    from conftest import run_cli
    cc = shutil.which("cc") or pytest.skip("no C compiler")
    (tmp_path / "pull.c").write_text(PULL_C)
    subprocess.run([cc, "-O2", "-shared", "-fPIC", str(tmp_path / "pull.c"), "-o", str(tmp_path / "libpull.so")], check=True)
    toml = normdyn.to_toml(config("pre")) + f'\n[[terms]]\nlibrary = "{tmp_path / "libpull.so"}"\nsymbol = "pull"\n' \
                                             'params = { strength = 0.5 }\n'
    (tmp_path / "pull.toml").write_text(toml)
    run_cli("run", tmp_path / "pull.toml", "-o", tmp_path / "a.h5", "-q")

    def pull(t, theta, r):
        out = np.zeros_like(theta)
        out[:, 0] = 0.5 * r
        return out
    same = normdyn.run(config("pre"), terms=[pull])
    with normdyn.load(tmp_path / "a.h5") as a:
        np.testing.assert_array_equal(a.direction.values, same.direction.values)
        recorded = json.loads(a.attrs["terms"])
        assert recorded[0]["kind"] == "library" and recorded[0]["name"] == "pull"
        assert recorded[0]["params"] == {"strength": 0.5}
    run_cli("run", "--from", tmp_path / "a.h5", "-o", tmp_path / "b.h5", "-q")
    with normdyn.load(tmp_path / "a.h5") as a, normdyn.load(tmp_path / "b.h5") as b:
        np.testing.assert_array_equal(a.direction.values, b.direction.values)
    # A changed library runs with a warning naming the term; a missing one is refused.
    (tmp_path / "pull.c").write_text(PULL_C.replace("p[0] * r[i]", "p[0] * r[i] * 1.0 + 0.0 * t"))
    subprocess.run([cc, "-O0", "-shared", "-fPIC", str(tmp_path / "pull.c"), "-o", str(tmp_path / "libpull.so")], check=True)
    p = run_cli("run", "--from", tmp_path / "a.h5", "-o", tmp_path / "c.h5", "-q")
    assert "warning: the term 'pull'" in p.stderr and "differs from the library the run used" in p.stderr
    (tmp_path / "libpull.so").unlink()
    p = run_cli("run", "--from", tmp_path / "a.h5", "-o", tmp_path / "d.h5", "-q", check=False)
    assert p.returncode == 2 and "terms" in p.stderr and "does not exist" in p.stderr
    assert not (tmp_path / "d.h5").exists()


def test_run_from_a_file_with_python_terms_is_refused_on_the_command_line(tmp_path):
    from conftest import run_cli
    normdyn.run(config("post"), terms=[drift], output=tmp_path / "a.h5")
    p = run_cli("run", "--from", tmp_path / "a.h5", "-o", tmp_path / "b.h5", check=False)
    assert p.returncode == 2 and "this run used the term 'drift'" in p.stderr


def test_the_theorem_checks_are_skipped_naming_the_term(tmp_path):
    normdyn.run(config("post", **{"solver.t_end": 5.0}), terms=[drift], output=tmp_path / "t.h5")
    report = normdyn.analyze(tmp_path / "t.h5")
    reasons = {s["reason"] for s in report["skipped_checks"]}
    assert any("the term 'drift' of the user's: no gradient flow" in r for r in reasons), reasons
    assert any("the user's, whose code the file does not hold" in n for n in report["notes"])


def test_an_ensemble_file_without_the_term_is_not_taken_for_one_with_it(tmp_path):
    out = tmp_path / "e.h5"
    axes = {"init.seed": [1, 2]}
    plain = normdyn.ensemble(config("post"), axes=axes, output=out, threads=1)
    again = normdyn.ensemble(config("post"), axes=axes, output=out, threads=1)
    assert again.attrs.get("resumed") or np.array_equal(again.member_config.values, plain.member_config.values)
    with pytest.raises(ValueError):
        normdyn.ensemble(config("post"), axes=axes, output=out, threads=1, terms=[drift])
    with_term = normdyn.ensemble(config("post"), axes=axes, output=out, threads=1, terms=[drift], force=True)
    assert not np.array_equal(with_term.member_config.values, plain.member_config.values)


# Under `mpirun -n 2`: the term raises on rank 1 only (and sleeps on rank 0 at its first call, so that
# rank 1 takes members). Each process writes its outcome to a file of its own (mpirun interleaves
# the processes' output).
MPI_RAISES = """
import os, sys, time
import numpy as np
import normdyn
rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMIX_RANK", "0")))
calls = []
def flaky(t, theta, r):
    calls.append(t)
    if rank == 0 and len(calls) == 1:
        time.sleep(0.5)
    if rank == 1 and t > 0.5:
        raise RuntimeError("flaky failed on rank 1")
    return np.zeros_like(theta)
config = {"model": {"n": 8, "d": 3}, "solver": {"method": "rk4", "dt": 0.05, "t_end": 2.0}, "output": {"samples": 5}}
try:
    ds = normdyn.ensemble(config, axes={"init.seed": range(1, 7)}, over=None, threads=1, terms=[flaky],
                          output=sys.argv[1])
    line = "returned " + ("None" if ds is None else str(sorted(set(np.ravel(ds.status.values).tolist()))))
except normdyn.TermError as e:
    statuses = None if e.dataset is None else sorted(set(np.ravel(e.dataset.status.values).tolist()))
    line = f"TermError {e} {statuses}"
except RuntimeError as e:
    line = f"RuntimeError {e}"
with open(os.path.join(sys.argv[2], str(rank)), "w") as f:
    f.write(line)
"""


@pytest.mark.skipif(not __import__("os").environ.get("NORMDYN_MPIEXEC"), reason="built without MPI (no NORMDYN_MPIEXEC)")
def test_under_mpirun_a_term_raising_on_one_process_raises_on_every_process(tmp_path):
    import os
    import subprocess
    import sys
    outcomes = tmp_path / "outcomes"
    outcomes.mkdir()
    out = tmp_path / "ens.h5"
    p = subprocess.run([*os.environ["NORMDYN_MPIEXEC"].split(), "-n", "2", sys.executable, "-c", MPI_RAISES, str(out),
                        str(outcomes)], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1"))
    assert p.returncode == 0, p.stderr
    # Rank 1 raises its own exception; rank 0, which saw none, raises TermError naming rank 1, with
    # the ensemble (the members rank 1 ran ended with user_term_failed, the others are ok).
    assert (outcomes / "1").read_text() == "RuntimeError flaky failed on rank 1"
    zero = (outcomes / "0").read_text()
    assert zero.startswith("TermError a term of the user's raised on MPI process 1"), zero
    assert zero.endswith("['ok', 'user_term_failed']"), zero
    import h5py
    with h5py.File(out, "r") as f:  # the ensemble's file, written by rank 0
        names = f["status"].attrs["flag_meanings"].split()
        assert "user_term_failed" in {names[v] for v in f["status"][()].ravel()}
