"""Hostile input through the package: runs that cannot advance, outputs over inputs, arguments of
the wrong type, arrays that are not real numbers, files that would block a read or balloon it.
Calls that could hang run in a child process under a timeout, so that a hang fails the test."""
import os
import subprocess
import sys

import numpy as np
import pytest

import normdyn

SMALL = {"model": {"n": 8, "d": 3}, "solver": {"t_end": 5.0}, "output": {"samples": 51}}


def child(code, timeout=60):
    """Runs `code` (importing normdyn) in a child process; returns its CompletedProcess."""
    return subprocess.run([sys.executable, "-c", "import normdyn, pathlib\n" + code], capture_output=True, text=True,
                          timeout=timeout, env=os.environ)


# ---- No "ok" without the work

@pytest.mark.parametrize("set", [
    {"solver.method:": "rk4", "solver.dt": 1e-300},
    {"solver.method:": "euler", "solver.dt": 1e-300},
    {"solver.method:": "discrete", "solver.dt": 1e-300},
    {"noise.kind:": "independent", "noise.sigma": 0.1, "solver.dt": 1e-20},
    {"solver.method:": "rk4", "solver.t_end": 1e300},
])
def test_steps_that_cannot_advance_are_refused(set, tmp_path):
    with pytest.raises(ValueError, match="solver.dt.*resolution of time"):
        normdyn.run(SMALL, set=set, output=tmp_path / "x.h5")
    assert not (tmp_path / "x.h5").exists()
    with pytest.raises(ValueError, match="solver.dt"):
        normdyn.ensemble(SMALL, set=set, axes={"init.seed": [1, 2]})


# ---- Inputs never overwritten; force is a bool

def test_an_ensemble_never_replaces_its_configuration_file(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(normdyn.to_toml(SMALL))
    before = cfg.read_bytes()
    for output in (cfg, str(cfg), tmp_path / "sub" / ".." / "c.toml"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        with pytest.raises(ValueError, match="output: .*is an input of this ensemble"):
            normdyn.ensemble(cfg, axes={"init.seed": [1, 2]}, output=output, force=True)
    assert cfg.read_bytes() == before
    assert not (tmp_path / "c.toml.journal").exists()


@pytest.mark.parametrize("force", ["no", 1, 0, None, np.bool_(True)])
def test_force_must_be_a_bool(force, tmp_path):
    out = tmp_path / "r.h5"
    normdyn.run(SMALL, output=out)
    before = out.read_bytes()
    with pytest.raises(TypeError, match="force"):
        normdyn.run(SMALL, output=out, force=force)
    with pytest.raises(TypeError, match="force"):
        normdyn.ensemble(SMALL, axes={"init.seed": [1]}, output=tmp_path / "e.h5", force=force)
    assert out.read_bytes() == before
    assert not (tmp_path / "e.h5").exists()


# ---- Arrays from Python: real numbers only

@pytest.mark.parametrize("kind", ["complex", "str", "object"])
def test_arrays_that_are_not_real_numbers_are_refused_naming_the_argument(kind):
    rng = np.random.default_rng(1)
    real = rng.standard_normal((8, 3))
    bad = {"complex": real + 1j, "str": real.astype(str), "object": real.astype(object)}[kind]
    with pytest.raises(TypeError, match="tokens"):
        normdyn.run(SMALL, tokens=bad)
    eye = np.eye(3)
    bad_q = {"complex": eye + 0j, "str": eye.astype(str), "object": eye.astype(object)}[kind]
    with pytest.raises(TypeError, match="qkv: Q"):
        normdyn.run(SMALL, qkv=(bad_q, eye, eye))
    with pytest.raises(TypeError, match="feedforward: a"):
        normdyn.run(SMALL, feedforward=(bad_q, np.ones(3)))
    with pytest.raises(TypeError, match="tokens"):
        normdyn.ensemble(SMALL, axes={"init.seed": [1]}, tokens=bad)


# ---- No blocking, no unbounded reads

def test_a_fifo_or_device_as_configuration(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero"):
        r = child(f"normdyn.run(pathlib.Path({str(path)!r}))")
        assert r.returncode != 0, r.stderr
        assert "ValueError" in r.stderr and "not a regular file" in r.stderr, r.stderr


def test_a_fifo_as_a_run_file_an_index_or_observables(tmp_path):
    fifo = tmp_path / "fifo.h5"
    os.mkfifo(fifo)
    r = child(f"normdyn.load({str(fifo)!r})")
    assert "ValueError" in r.stderr and "not a regular file" in r.stderr, r.stderr
    (tmp_path / "sweep").mkdir()
    os.mkfifo(tmp_path / "sweep" / "index.h5")
    r = child(f"normdyn.load_sweep({str(tmp_path / 'sweep')!r})")
    assert "ValueError" in r.stderr and "not a regular file" in r.stderr, r.stderr
    # A FIFO where the observables file would be hides nothing of the run, and blocks nothing.
    run = tmp_path / "r.h5"
    normdyn.run(SMALL, output=run)
    os.mkfifo(tmp_path / "r.observables.h5")
    r = child(f"ds = normdyn.load({str(run)!r}); print(ds.sizes['time'])")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "51"


def test_a_run_under_a_name_that_is_not_utf8_resumes(tmp_path):
    import h5py
    out = tmp_path / os.fsdecode(b"r\xff\xfe.h5")
    ds = normdyn.run(SMALL, output=out)
    ds.close()
    with h5py.File(out, "r+") as f:
        f["summary"].attrs["status"] = "interrupted"
    resumed = normdyn.resume(out)
    assert resumed.attrs["status"] == "ok"
    assert resumed.sizes["time"] == 51
    resumed.close()


def test_a_configuration_file_whose_name_is_not_utf8_runs(tmp_path):
    # Its name reached the core as a str with surrogates, which the binding could not take (TypeError).
    config = tmp_path / os.fsdecode(b"c\xff\xfe.toml")
    config.write_text(normdyn.to_toml(SMALL))
    for given in (config, str(config)):
        ds = normdyn.run(given, threads=1)
        assert ds.attrs["status"] == "ok" and ds.sizes["time"] == 51
    members = normdyn.ensemble(config, axes={"init.seed": [1, 2]}, over=None, threads=1)
    assert list(members.status.values) == ["ok", "ok"]
    # Its errors are the configuration's, naming the key.
    config.write_text("[model]\nn = -1\n")
    with pytest.raises(ValueError, match="model.n"):
        normdyn.run(config)
