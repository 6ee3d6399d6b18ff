"""Opens every group of normdyn files with xarray + h5netcdf, as they are (no phony_dims).

usage: check_xarray_groups.py [--swmr] FILE...

For each file (a run file, an observables file or a sweep index), every HDF5 group found by h5py
must open with xarray.open_dataset(FILE, group=G, engine="h5netcdf"), with no phony dimension; the
dimension names of the known groups are checked, and in every group with a `time` axis `time` is a
coordinate holding the file's sample times, with the H5MD unit attribute. With --swmr the files are
opened as SWMR readers (a run still being written, or killed): h5netcdf on h5py's swmr=True.
Prints "ok FILE GROUPS" per file; exits non-zero with the first problem.
"""
import sys

import h5netcdf
import h5py
import numpy as np
import xarray as xr

# Dimensions of the variables of known groups, by group (leading "/" stripped) and variable.
RUN_DIMS = {
    "particles/tokens/direction": {"value": ("time", "token", "component"), "step": ("time",)},
    "particles/tokens/radius": {"value": ("time", "token"), "step": ("time",)},
    "particles/tokens": {"token": ("token",), "component": ("component",), "mass": ("token",)},
    "checksums": {"frames": ("frames",)},
    "checkpoint": {"current": ("current_entry",)},
    "checkpoint/a": {"state": ("state_entry",), "record": ("record_entry",)},
    "checkpoint/b": {"state": ("state_entry",), "record": ("record_entry",)},
    "observables/cluster_label": {"value": ("time", "token")},
    "observables/cluster_id": {"value": ("time", "cluster")},
    "observables/cluster_size": {"value": ("time", "cluster")},
    "observables/cluster_centre": {"value": ("time", "cluster", "component")},
    "fields/angular_density": {"value": ("time", "phi"), "phi": ("phi",)},
}
INDEX_DIMS = {"axes": ("axis",), "runs": ("run",), "series": ("run", "frame"), "ensemble": None}


def fail(msg):
    sys.exit(msg)


def groups_of(f):
    names = ["/"]
    f.visititems(lambda name, obj: names.append("/" + name) if isinstance(obj, h5py.Group) else None)
    return names


def open_group(path, group, swmr):
    if not swmr:
        return xr.open_dataset(path, group=group, engine="h5netcdf")
    nc = h5netcdf.File(path, "r", swmr=True)
    return xr.open_dataset(xr.backends.H5NetCDFStore(nc, group=group))


def check_dims(where, ds, expected):
    for var, dims in expected.items():
        if var not in ds.variables:
            if var == "mass":
                continue  # only weighted-particle runs have masses
            fail(f"{where}: no variable {var}")
        if ds[var].dims != dims:
            fail(f"{where}/{var}: dimensions {ds[var].dims}, expected {dims}")


def check_element(where, ds, h5group):
    """A time-dependent element: value and step on time, time a coordinate with the file's times."""
    if "time" not in ds.coords or "time" not in ds.indexes:
        fail(f"{where}: time is not a coordinate ({list(ds.coords)})")
    if ds["value"].dims[0] != "time" or ds["step"].dims != ("time",):
        fail(f"{where}: value {ds['value'].dims}, step {ds['step'].dims} not on time")
    times = h5group["time"][()]
    # A writer killed during a flush may have extended value and step but not yet time: h5netcdf
    # then pads the time coordinate to the dimension's length. The frames time holds must agree.
    n = min(ds.sizes["time"], len(times))
    if not np.array_equal(ds["time"].values[:n], times[:n]):
        fail(f"{where}: the time coordinate differs from {where}/time")
    if ds["time"].attrs.get("unit") != "1":
        fail(f"{where}/time: unit {ds['time'].attrs.get('unit')!r}, expected '1' (dimensionless depth)")


def check_run_group(where, group, ds, h5group):
    if {"value", "time", "step"} <= set(h5group.keys()):
        check_element(where, ds, h5group)
        if group.startswith("observables/") and group not in RUN_DIMS and ds["value"].dims != ("time",):
            fail(f"{where}/value: dimensions {ds['value'].dims}, expected ('time',)")
    if group in RUN_DIMS:
        check_dims(where, ds, RUN_DIMS[group])
    if group == "particles/tokens/direction":
        if ds["value"].attrs.get("unit") != "1":
            fail(f"{where}/value: unit {ds['value'].attrs.get('unit')!r}, expected '1'")
        last = h5group["value"][ds.sizes["time"] - 1]
        if not np.array_equal(ds["value"].isel(time=-1).values, last):
            fail(f"{where}: the last frame differs from h5py's")
    if group.startswith("fields/") and "value" in ds:
        dims = ds["value"].dims
        if dims == ("time",):  # a scalar per frame (the clusters' resolution)
            return
        if dims[:2] != ("time", "phi") or len(dims) > 3:
            fail(f"{where}/value: dimensions {dims}")
        if len(dims) == 3:  # the moving radial grid: centres r on (time, r_cell), a coordinate
            if dims[2] != "r_cell" or "r" not in ds.coords or ds["r"].dims != ("time", "r_cell"):
                fail(f"{where}: radial axis {dims}, coordinates {list(ds.coords)}")


def check_index_group(where, group, ds):
    if group not in INDEX_DIMS:
        return
    for name, var in ds.variables.items():
        rows = "group" if group == "ensemble" else INDEX_DIMS[group][0]
        if var.dims[0] != rows or len(var.dims) > 2 or (len(var.dims) == 2 and var.dims[1] != "frame"):
            fail(f"{where}/{name}: dimensions {var.dims}")
    if group in ("series", "ensemble"):
        if "time" not in ds.coords or ds["time"].dims != (rows, "frame"):
            fail(f"{where}: time is not a coordinate on ({rows}, frame): {list(ds.coords)}")


def check_file(path, swmr):
    with h5py.File(path, "r", swmr=True) as f:
        groups = groups_of(f)
        index = f.attrs.get("schema") in ("normdyn.sweep/1", "normdyn.sweep/2")
        for g in groups:
            where = f"{path}:{g}"
            try:
                ds = open_group(path, g, swmr)
            except Exception as e:  # h5netcdf refuses groups with unlabelled axes
                fail(f"{where}: xarray cannot open it: {type(e).__name__}: {e}")
            with ds:
                phony = [d for d in ds.dims if str(d).startswith("phony_dim")]
                if phony:
                    fail(f"{where}: phony dimensions {phony}")
                group = g.strip("/")
                if index:
                    check_index_group(where, group, ds)
                else:
                    check_run_group(where, group, ds, f[g])
    print("ok", path, len(groups))


def main():
    swmr = "--swmr" in sys.argv[1:]
    files = [a for a in sys.argv[1:] if a != "--swmr"]
    if not files:
        fail(__doc__)
    for path in files:
        check_file(path, swmr)


if __name__ == "__main__":
    main()
