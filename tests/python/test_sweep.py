"""normdyn.load_sweep: the axes of a `normdyn sweep` as dimensions."""
import numpy as np

import normdyn
from conftest import run_cli

SWEEP = """
[set]
"model.n" = 8
"solver.t_end" = 4.0
"output.samples" = 9
[axes]
"model.scheme" = ["post", "pre", "ngpt"]
"solver.max_steps" = [0, 2]
"init.seed" = [1, 2]
[ensemble]
over = "init.seed"
phase_axis = ""
"""


def test_axes_become_dimensions(tmp_path):
    (tmp_path / "sweep.toml").write_text(SWEEP)
    run_cli("sweep", tmp_path / "sweep.toml", "-o", tmp_path / "out", "--jobs", "2", check=False)
    ds = normdyn.load_sweep(tmp_path / "out")
    assert ds.sizes["scheme"] == 3 and ds.sizes["max_steps"] == 2 and ds.sizes["seed"] == 2
    assert list(ds.scheme.values) == ["post", "pre", "ngpt"]
    assert ds.scheme.attrs["key"] == "model.scheme" and ds.seed.attrs["key"] == "init.seed"
    assert ds.status.dims == ("scheme", "max_steps", "seed")
    ok = ds.status.sel(max_steps=0)
    assert (ok == "ok").all() or ((ok == "ok") | (ok == "synchronized")).all()
    assert (ds.status.sel(max_steps=2) == "max_steps").all()  # failed points: status ...
    # ... and NaN for what they did not reach.
    assert ds.variance.dims == ("scheme", "max_steps", "seed", "time")
    assert np.isnan(ds.variance.sel(max_steps=2).values[..., -1]).all()
    assert not np.isnan(ds.variance.sel(max_steps=0).values).any()
    assert np.array_equal(ds.time.values, np.linspace(0, 4, 9))
    # Ensemble statistics over the seeds, on the other axes; failed points are not used.
    assert ds.cluster_count.dims == ("scheme", "max_steps", "time")
    assert (ds.ensemble_runs_used.sel(max_steps=2) == 0).all()
    assert (ds.ensemble_runs_used.sel(max_steps=0) == 2).all()
    # The per-point values are those of the runs' own files.
    run = normdyn.load(tmp_path / "out" / str(ds.file.sel(scheme="pre", max_steps=0, seed=2).item()))
    assert float(ds.t_reached.sel(scheme="pre", max_steps=0, seed=2)) == run.attrs["t_reached"]
    for v in list(ds.data_vars) + list(ds.coords):
        assert "units" in ds[v].attrs and "long_name" in ds[v].attrs, v


def test_dimension_names():
    from normdyn._sweep import _dim_names, _common_times
    assert _dim_names(["model.beta", "init.seed"]) == ["beta", "seed"]
    assert _dim_names(["a.seed", "b.seed", "model.n"]) == ["a.seed", "b.seed", "n"]
    nan = np.nan
    assert np.array_equal(_common_times(np.array([[0, 1, 2], [0, 1, nan]])), [0, 1, 2])
    assert _common_times(np.array([[0, 1, 2], [0, 1.5, 3]])) is None
