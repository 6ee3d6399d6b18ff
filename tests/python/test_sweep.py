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


STUDY = """
[set]
"model.n" = 6
"model.d" = 3
"solver.t_end" = 2.0
"output.samples" = 5
[[zip]]
name = "size"
"model.n" = [6, 8]
"model.beta" = [1.0, 2.0]
[axes]
"init.seed" = [1, 2]
[[point]]
"model.scheme" = "pre"
[[point]]
"model.scheme" = "ngpt"
set = { "model.alpha" = 0.5 }
"""


def test_zipped_axes_and_point_lists_share_a_dimension(tmp_path):
    (tmp_path / "sweep.toml").write_text(STUDY.replace('"model.n" = 6\n', ""))
    run_cli("sweep", tmp_path / "sweep.toml", "-o", tmp_path / "out", "-q")
    ds = normdyn.load_sweep(tmp_path / "out")
    assert ds.attrs["schema"] == "normdyn.sweep/2"
    assert dict(ds.sizes) == {"size": 2, "seed": 2, "point": 2, "time": 5}
    assert list(ds["model.n"].values) == [6, 8] and ds["model.n"].dims == ("size",)
    assert list(ds["model.beta"].values) == [1.0, 2.0]
    assert list(ds["model.scheme"].values) == ["pre", "ngpt"] and ds["model.scheme"].dims == ("point",)
    # The ensemble statistics over init.seed carry the names of normdyn.ensemble; the per-run
    # series of the same name are run_*.
    assert ds.pair_fraction.dims == ("size", "point", "time")
    assert ds.sync_probability.dims == ("size", "point", "time")
    assert ds.cluster_count.dims == ("size", "point", "time")
    assert ds.run_pair_fraction.dims == ("size", "seed", "point", "time")
    assert np.allclose(ds.run_pair_fraction.mean("seed"), ds.pair_fraction, equal_nan=True)
