"""xarray opens every group of a run file and of a sweep index as it is (no phony_dims)."""
import h5py
import pytest
import xarray as xr

from conftest import run_cli


def _groups_with_datasets(path):
    """Groups holding datasets, and whether each has dimension scales on all its datasets' axes."""
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Group) and not name.startswith("checkpoint"):
                datasets = [v for v in obj.values() if isinstance(v, h5py.Dataset) and v.ndim >= 1]
                if datasets:
                    out[name] = all("DIMENSION_LIST" in v.attrs or "CLASS" in v.attrs for v in datasets)
        f.visititems(visit)
    return out


def _open_all(path):
    without_scales = []
    for g, scaled in _groups_with_datasets(path).items():
        try:
            with xr.open_dataset(path, group=g, engine="h5netcdf") as ds:
                if "value" in ds and "time" in ds["value"].dims:
                    assert "time" in ds.coords, g
        except Exception:
            if scaled:
                raise
            without_scales.append(g)
    if without_scales:
        pytest.xfail("no HDF5 dimension scales yet (written by another change) in: " + ", ".join(without_scales))


def test_every_group_of_a_run_file(small_config, tmp_path):
    run_cli("run", small_config, "-o", tmp_path / "r.h5", "--quiet")
    run_cli("analyze", tmp_path / "r.h5", "-q")
    _open_all(tmp_path / "r.h5")


def test_every_group_of_a_mean_field_file(tmp_path):
    (tmp_path / "mf.toml").write_text("[model]\nkind = \"meanfield\"\n")
    run_cli("run", tmp_path / "mf.toml", "--set", "model.kind=meanfield", "--set", "model.scheme=pre", "--set", "meanfield.grid=32",
            "--set", "meanfield.radial_grid=4", "--set", "init.radius_width=0.1", "--set", "solver.t_end=1",
            "--set", "output.samples=3", "-o", tmp_path / "mf.h5", "--quiet")
    _open_all(tmp_path / "mf.h5")


def test_every_group_of_a_sweep_index(tmp_path):
    (tmp_path / "s.toml").write_text('[set]\n"model.n" = 6\n"solver.t_end" = 2.0\n"output.samples" = 5\n'
                                     '[axes]\n"model.beta" = [1.0, 2.0]\n"init.seed" = [1, 2]\n')
    run_cli("sweep", tmp_path / "s.toml", "-o", tmp_path / "out", "--jobs", "2")
    _open_all(tmp_path / "out" / "index.h5")
