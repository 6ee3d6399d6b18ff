"""normdyn.run and normdyn.load against the command line: same files, same numbers."""
import os

import numpy as np
import pytest
import xarray as xr

import normdyn
from conftest import run_cli
from h5compare import differences


def test_run_writes_the_command_lines_file_bit_for_bit(small_config, tmp_path):
    run_cli("run", small_config, "-o", tmp_path / "cli.h5", "--threads", "1", "--quiet")
    ds = normdyn.run(small_config, output=tmp_path / "py.h5", threads=1)
    assert ds.attrs["status"] == "ok"
    diff = differences(tmp_path / "cli.h5", tmp_path / "py.h5",
                       skip_attrs={"command_line", "created_utc", "host", "wall_seconds", "flush_seconds", "write_seconds",
                                   "flushes", "config", "config_hash", "path"})
    assert diff == []
    # The stored configurations differ only in output.path.
    import h5py
    with h5py.File(tmp_path / "cli.h5") as a, h5py.File(tmp_path / "py.h5") as b:
        ca = a["parameters"].attrs["config"].replace(str(tmp_path / "cli.h5"), "X")
        cb = b["parameters"].attrs["config"].replace(str(tmp_path / "py.h5"), "X")
        assert ca == cb


def test_in_memory_run_equals_its_file_and_load(small_config, tmp_path):
    ds = normdyn.run(small_config, output=tmp_path / "r.h5", threads=1)
    mem = normdyn.run(small_config, threads=1)
    loaded = normdyn.load(tmp_path / "r.h5")
    assert not os.path.exists(os.path.join(os.getcwd(), "run.h5")), "a run without output wrote a file"
    for other in (mem, loaded):
        assert set(other.data_vars) == set(ds.data_vars) >= {"direction", "radius", "energy", "variance", "min_cosine"}
        for name in list(ds.data_vars) + list(ds.coords):
            a, b = ds[name].values, other[name].values
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), name
            assert ds[name].dims == other[name].dims
    assert ds.direction.dims == ("time", "token", "component")
    assert ds.direction.shape == (31, 12, 3)
    assert ds.radius.dims == ("time", "token")
    assert float(ds.time[-1]) == 3.0
    assert mem.attrs["status"] == loaded.attrs["status"] == "ok"
    for k in ("accepted_steps", "rejected_steps", "rhs_evaluations", "t_reached", "frames"):
        assert mem.attrs[k] == loaded.attrs[k], k
    assert loaded.attrs["config"] == ds.attrs["config"]
    assert mem.attrs["version"] == normdyn.__version__
    for v in list(ds.data_vars) + list(ds.coords):
        assert ds[v].attrs.get("units") is not None and ds[v].attrs.get("long_name"), v


def test_the_recorders_buffer_becomes_the_array():
    result = normdyn._core.run("[model]\nn = 4\n[solver]\nt_end = 1.0\n[output]\nsamples = 5\n", "config", [],
                               None, False, 1, None, 0.2, True, "test")
    direction = result["direction"]
    assert type(direction.base).__name__ == "PyCapsule" and not direction.flags.owndata
    ds = normdyn._dataset.from_core(result)
    assert np.shares_memory(ds.direction.values, direction)


def test_load_reads_only_what_is_selected(small_config, tmp_path, monkeypatch):
    run_cli("run", small_config, "-o", tmp_path / "r.h5", "--quiet")
    reads = []
    original = normdyn._dataset._H5Array._raw

    def counting(self, key):
        out = original(self, key)
        reads.append((self.name, out.size))
        return out

    monkeypatch.setattr(normdyn._dataset._H5Array, "_raw", counting)
    ds = normdyn.load(tmp_path / "r.h5")
    assert reads == []  # opening reads no frame
    part = ds.direction.isel(time=[3, 7], token=slice(2, 5)).values
    assert part.shape == (2, 3, 3)
    assert reads == [("particles/tokens/direction/value", 2 * 3 * 3)]
    assert np.array_equal(part, normdyn.load(tmp_path / "r.h5").direction.values[[3, 7], 2:5])


def test_a_file_being_written_loads_as_swmr_reader(tmp_path):
    """While `normdyn run` writes, load() sees the flushed frames; after a kill -9 too."""
    import signal
    import subprocess
    import time

    from conftest import BINARY
    # 100 000 fixed steps: many seconds, killed long before its end.
    (tmp_path / "c.toml").write_text('[model]\nn = 64\nbeta = 4.0\n[solver]\nmethod = "rk4"\ndt = 0.01\n'
                                     't_end = 1000.0\nthreads = 1\n[output]\nsamples = 2001\nflush_seconds = 0.05\n')
    out = tmp_path / "live.h5"
    writer = subprocess.Popen([str(BINARY), "run", str(tmp_path / "c.toml"), "-o", str(out), "--quiet"])
    try:
        seen = 0
        while not out.exists() and writer.poll() is None:
            time.sleep(0.05)
        # The file appears under its name in SWMR mode (at the first flush), so a reader may open it
        # from the moment it exists.
        for _ in range(600):
            time.sleep(0.05)
            if out.exists():
                ds = normdyn.load(out)
                seen = ds.sizes["time"]
                if seen >= 3:
                    break
        assert seen >= 3, "no frames seen while the run was written"
        assert ds.attrs["status"] == "running"
        assert np.isfinite(ds.direction.isel(time=-1).values).all()
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        killed = normdyn.load(out)
        assert killed.sizes["time"] >= seen and killed.attrs["status"] == "running"
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()


def test_config_forms_give_the_same_run(small_config):
    import tomllib
    as_dict = tomllib.loads(small_config.read_text())
    a = normdyn.run(as_dict, threads=1)
    b = normdyn.run(str(small_config), threads=1)
    c = normdyn.run(small_config.read_text(), threads=1)
    d = normdyn.run(small_config, set={"model.beta": 4}, threads=1)
    for other in (b, c):
        assert other.direction.values.tobytes() == a.direction.values.tobytes()
    assert d.direction.values.tobytes() != a.direction.values.tobytes()
    assert 'beta = 4' in d.attrs["config"]


def test_toml_writer_round_trips_through_the_parser():
    config = {"model": {"scheme": "mix", "tau": 2.5, "n": 5, "qkv": "identity"},
              "init": {"kind": "von_mises", "centers": [0.1, 2.0], "kappa": [3.0], "seed": 3},
              "solver": {"rtol": 1e-9, "project": False, "t_end": 1}}
    text = normdyn.to_toml(config)
    resolved = normdyn._core.resolve_config(text, "dict", [])
    assert "tau = 2.5" in resolved and "project = false" in resolved and "centers = [0.1, 2.0]" in resolved
    assert normdyn._toml.value('a "q"\n') == '"a \\"q\\"\\n"'
    assert normdyn._toml.value(float("inf")) == "inf"
    assert normdyn._toml.value(np.float64(0.1)) == "0.1"
    assert normdyn._toml.value(np.arange(3)) == "[0, 1, 2]"
    with pytest.raises(ValueError, match="model.x"):
        normdyn.to_toml({"model": {"x": object()}})


def test_numerical_failure_is_a_status(tmp_path):
    ds = normdyn.run({"model": {"n": 6}, "solver": {"max_steps": 3, "t_end": 10.0}}, output=tmp_path / "f.h5")
    assert ds.attrs["status"] == "max_steps"
    assert ds.sizes["time"] >= 1
    assert normdyn.load(tmp_path / "f.h5").attrs["status"] == "max_steps"


def test_progress_events_and_bar(capsys):
    events = []
    normdyn.run({"model": {"n": 6}, "solver": {"t_end": 2.0}}, progress=events.append)
    assert events and events[-1]["done"] and events[-1]["fraction"] == 1.0
    normdyn.run({"model": {"n": 6}, "solver": {"t_end": 2.0}}, progress=True)
    assert "normdyn.run" in capsys.readouterr().err


def test_without_ipywidgets_the_bar_is_tqdms_text_bar(monkeypatch):
    # In a notebook tqdm.auto would choose the widget and, without ipywidgets, warn before falling
    # back to this same class; the choice is made here, before tqdm.auto is asked.
    import importlib.util

    import tqdm.std
    from normdyn import _progress
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ipywidgets" else real(name, *a))
    assert _progress._tqdm_class() is tqdm.std.tqdm
    bar = _progress.ProgressBar("normdyn.run")
    bar.update({"t": 1.0, "t_begin": 0.0, "t_end": 2.0, "steps": 3, "session_steps": 3, "session_seconds": 0.1})
    bar.close()


def test_schemes_and_reference():
    schemes = normdyn.schemes()
    assert [s["key"] for s in schemes] == ["post", "pre", "mix", "peri", "ngpt", "cod"]
    mix = next(s for s in schemes if s["key"] == "mix")
    assert mix["parameters"][0]["key"] == "model.tau" and mix["parameters"][0]["default"] == 4.0
    assert set(mix["formulas"]) == {"speed", "radial_rate", "layer_map"}
    ref = {r["key"]: r for r in normdyn.config_reference()}
    assert ref["model.beta"]["default"] == "1.0" or ref["model.beta"]["default"] == "1"
    assert set(ref["model.beta"]) == {"key", "type", "default", "description"}


def test_analyze_a_file_and_a_dataset(small_config, tmp_path):
    run_cli("run", small_config, "-o", tmp_path / "r.h5", "--quiet")
    before = (tmp_path / "r.h5").read_bytes()
    from_file = normdyn.analyze(tmp_path / "r.h5", threads=1)
    assert (tmp_path / "r.h5").read_bytes() == before  # nothing written unless asked
    cli = run_cli("analyze", tmp_path / "r.h5", "--no-write", "--threads", "1", "--json", tmp_path / "cli.json", "-q")
    import json
    assert from_file == json.loads((tmp_path / "cli.json").read_text())
    from_memory = normdyn.analyze(normdyn.run(small_config), threads=1)
    for key in ("checks", "rate_fit", "clusters"):
        if key in from_file:
            assert from_memory[key] == from_file[key], key
    with pytest.raises(ValueError, match="cluster_epsilon"):
        normdyn.analyze(tmp_path / "r.h5", cluster_epsilon=5.0)
    with pytest.raises(TypeError, match="no_such_option"):
        normdyn.analyze(tmp_path / "r.h5", no_such_option=1)
    normdyn.analyze(tmp_path / "r.h5", json=tmp_path / "report.json", no_write=False)
    assert (tmp_path / "report.json").exists()
    import h5py
    # The analysis never writes the run file: its observables go to the sibling file.
    with h5py.File(tmp_path / "r.observables.h5") as f:
        assert "cluster_count" in f["observables"]
    with h5py.File(tmp_path / "r.h5") as f:
        assert "cluster_count" not in f["observables"]
    loaded = normdyn.load(tmp_path / "r.h5")  # files with the analysis' observables load too
    assert loaded.cluster_count.dims == ("time",) and loaded.cluster_label.dims == ("time", "token")


def test_the_run_file_never_replaces_its_configuration_file(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text("[model]\nn = 4\n[solver]\nt_end = 1.0\n[output]\nsamples = 5\n")
    before = config.read_bytes()
    with pytest.raises(ValueError, match="is the configuration file of this run"):
        normdyn.run(config, output=config, force=True)
    with pytest.raises(ValueError, match="is the configuration file of this run"):
        normdyn.run(str(config), output=str(config), force=True)
    assert config.read_bytes() == before
