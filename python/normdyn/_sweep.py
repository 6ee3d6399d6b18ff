"""The index of a sweep directory (index.h5 of `normdyn sweep`) as one labelled xarray Dataset."""
from __future__ import annotations

import os

import numpy as np
import xarray as xr

_RUN_LONG_NAMES = {
    "index": "point number (nested loops over the axes, the first slowest)",
    "name": "name of the point", "file": "run file, relative to the sweep directory",
    "group": "ensemble group of the point", "status": "status of the run", "action": "what the sweep did",
    "message": "message of the run", "exit_code": "exit code of the run process",
    "rank": "MPI process that ran the point", "started": "start, seconds after the sweep started",
    "finished": "end, seconds after the sweep started", "elapsed_seconds": "wall time of the job",
    "run_seconds": "integration wall time", "t_reached": "time reached", "frames": "frames recorded",
    "accepted_steps": "accepted steps", "rhs_evaluations": "right-hand side evaluations",
    "final_variance": "variance at the last frame", "final_one_minus_mean_cosine": "1 - mean cosine at the last frame",
    "final_cluster_count": "clusters at the last frame (-1: no frame)",
    "final_pair_fraction": "fraction of pairs with cosine above pair_cosine at the last frame",
    "t_sync": "first time with every pair synchronized (NaN: never)", "rate_law": "decay law of the late-time fit",
    "rate_parameter": "rate of the late-time fit", "rate_stderr": "standard error of the rate",
    "rate_problem": "why there is no fit",
    "cluster_count": "number of clusters", "pair_fraction": "fraction of pairs with cosine above pair_cosine",
    "variance": "variance 1 - |mean direction|^2", "one_minus_mean_cosine": "1 - mean pairwise cosine",
    "runs_at": "runs contributing at this time", "cluster_count_std": "sample standard deviation of the number of clusters",
    "cluster_count_min": "fewest clusters", "cluster_count_max": "most clusters",
    "pair_fraction_std": "sample standard deviation of the fraction of synchronized pairs",
    "run_cluster_count": "number of clusters of each run",
    "run_pair_fraction": "fraction of pairs with cosine above pair_cosine of each run",
    "sync_probability": "fraction of the runs synchronized by t",
    "ensemble_runs": "runs in the ensemble group", "ensemble_runs_used": "runs that ended ok or synchronized",
    "ensemble_problem": "why the group has no statistics",
}
# Version 1 of the index named the ensemble means otherwise; they read as version 2.
_V1_ENSEMBLE_NAMES = {"cluster_mean": "cluster_count", "cluster_std": "cluster_count_std",
                      "cluster_min": "cluster_count_min", "cluster_max": "cluster_count_max",
                      "pair_fraction_mean": "pair_fraction"}
_SCHEMAS = ("normdyn.sweep/1", "normdyn.sweep/2")
_UNITS = {"started": "s", "finished": "s", "elapsed_seconds": "s", "run_seconds": "s"}


def _read(ds):
    if ds.dtype.kind in "SO" or ds.dtype.kind == "U":
        return np.asarray(ds.asstr()[()], dtype=object)
    return ds[()]


def _text(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.generic):
        return v.item()
    return v


def _attrs(name, **more):
    out = {"units": _UNITS.get(name, "1"), "long_name": _RUN_LONG_NAMES.get(name, name)}
    out.update(more)
    return out


def _dim_names(keys):
    last = [k.split(".")[-1] for k in keys]
    return [k if last.count(short) > 1 else short for k, short in zip(keys, last)]


def _common_times(rows):
    """The shared sample times of NaN-padded rows, or None if the rows sample different times."""
    if rows.size == 0:
        return np.zeros(0)
    counts = np.sum(~np.isnan(rows), axis=1)
    ref = rows[int(np.argmax(counts))]
    for row, count in zip(rows, counts):
        if np.any(np.isnan(row[:count])) or not np.array_equal(row[:count], ref[:count]):
            return None
    return ref[: int(counts.max())]


def _variables(group):
    """The datasets of a group that hold values: not the netCDF-style dimensions (empty datasets
    that only name an axis for xarray)."""
    names = []
    for name in group:
        note = group[name].attrs.get("NAME", b"")
        if isinstance(note, bytes):
            note = note.decode(errors="replace")
        if str(note).startswith("This is a netCDF dimension"):
            continue
        names.append(name)
    return names


def load_sweep(directory):
    import h5py
    directory = os.fspath(directory)
    path = os.path.join(directory, "index.h5")
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no sweep index (run `normdyn sweep` into {directory} first)")
    from . import _core
    # A regular file only, checked without blocking: h5py's open of a FIFO would hang.
    _core.require_input_file(os.fsencode(path), "sweep index")
    with h5py.File(path, "r") as f:
        schema = _text(f.attrs.get("schema", ""))
        if schema not in _SCHEMAS:
            raise ValueError(f"{path}: not a normdyn sweep index (schema {schema!r})")
        keys = [str(k) for k in _read(f["axes/key"])]
        sizes = [int(s) for s in _read(f["axes/size"])]
        if "dimension" in f["axes"]:  # version 2: zipped axes and point lists set several keys
            dims = [str(d) for d in _read(f["axes/dimension"])]
            kinds = [str(k) for k in _read(f["axes/kind"])]
            axis_keys = [str(k).split(",") for k in _read(f["axes/keys"])]
        else:
            dims = _dim_names(keys)
            kinds = ["product"] * len(keys)
            axis_keys = [[k] for k in keys]
        column_keys = [k for ks in axis_keys for k in ks]
        points = int(np.prod(sizes)) if sizes else 1
        runs = f["runs"]
        columns = {name: _read(runs[name]) for name in _variables(runs)}
        if len(columns.get("index", [])) != points:
            raise ValueError(f"{path}: {len(columns.get('index', []))} points in /runs, the axes give {points}")
        shape = tuple(sizes)

        coords = {}
        for a, dim in enumerate(dims):
            along = tuple(slice(None) if b == a else 0 for b in range(len(shape)))
            if kinds[a] == "product":
                values = np.asarray(columns[keys[a]]).reshape(shape)[along]
                coords[dim] = (dim, values, {"key": keys[a], "long_name": keys[a], "units": "1"})
                continue
            # A zipped axis or a point list: each of its keys is a coordinate along its dimension.
            coords[dim] = (dim, np.arange(sizes[a]), {"long_name": f"{kinds[a]} axis of " + ", ".join(axis_keys[a]),
                                                      "units": "1"})
            for key in axis_keys[a]:
                if key in columns:
                    coords[key] = (dim, np.asarray(columns[key]).reshape(shape)[along], {"long_name": key, "units": "1"})
        data_vars = {}
        for name, values in columns.items():
            if name in column_keys:
                continue
            data_vars[name] = (tuple(dims), np.asarray(values).reshape(shape), _attrs(name))

        # Per-run series: on `time` when every run samples the same times, else on `frame`.
        series = {name: f["series"][name][()] for name in _variables(f["series"])} if "series" in f else {}
        if "time" in series:
            times = series.pop("time")
            common = _common_times(times)
            frames = times.shape[1]
            if common is not None:
                coords["time"] = ("time", common, {"units": "1", "long_name": "time t (depth of the network)"})
                tdim, width = "time", len(common)
            else:
                tdim, width = "frame", frames
                data_vars["series_time"] = (tuple(dims) + ("frame",), times.reshape(shape + (frames,)),
                                            {"units": "1", "long_name": "sample time of each run's frame"})
            for name, values in series.items():
                data_vars[name] = (tuple(dims) + (tdim,), values[:, :width].reshape(shape + (width,)), _attrs(name))

        # Ensemble statistics: one group per configuration of the axes other than `over`.
        attrs = {k: _text(v) for k, v in f.attrs.items()}
        over = attrs.get("ensemble_over", "")
        if "ensemble" in f:
            e = f["ensemble"]
            ens_axes = [a for a, k in enumerate(keys) if k != over]
            ens_dims = tuple(dims[a] for a in ens_axes)
            ens_shape = tuple(sizes[a] for a in ens_axes)
            groups = int(np.prod(ens_shape)) if ens_shape else 1
            names = _variables(e)
            values = {(_V1_ENSEMBLE_NAMES.get(n, n) if schema == _SCHEMAS[0] else n): _read(e[n]) for n in names}
            # Groups are numbered by first appearance in point order, i.e. nested loops over the
            # remaining axes: check that against the stored axis values before reshaping.
            consistent = all(len(v) == groups for v in values.values())
            for a in ens_axes:
                if kinds[a] == "product" and keys[a] in values and consistent:
                    grid = np.asarray(values[keys[a]]).reshape(ens_shape)
                    expect = np.asarray(coords[dims[a]][1])
                    axis = ens_dims.index(dims[a])
                    expanded = np.moveaxis(np.broadcast_to(expect, ens_shape[:axis] + ens_shape[axis + 1:] + (len(expect),)),
                                           -1, axis)
                    consistent = consistent and np.array_equal(grid, expanded)
            if not consistent:
                raise ValueError(f"{path}: /ensemble groups do not follow the axes other than {over!r}")
            etime = values.pop("time", None)
            etdim = None
            if etime is not None and etime.ndim == 2:
                common = _common_times(etime)
                if common is not None and "time" in coords and np.array_equal(common, coords["time"][1][: len(common)]):
                    etdim, ewidth = "time", len(coords["time"][1])
                    pad = np.full((groups, ewidth), np.nan)
                    etime_width = min(ewidth, etime.shape[1])
                else:
                    etdim, ewidth = "ensemble_frame", etime.shape[1]
                    data_vars["ensemble_time"] = (ens_dims + (etdim,), etime.reshape(ens_shape + (ewidth,)),
                                                  {"units": "1", "long_name": "sample time of each ensemble frame"})
            for n, v in values.items():
                if n in column_keys:
                    continue
                if n in data_vars:  # a per-run series of the same name: the ensemble's keeps it
                    data_vars["run_" + n] = data_vars.pop(n)
                v = np.asarray(v)
                if v.ndim == 1:
                    vname = f"ensemble_{n}"
                    data_vars[vname] = (ens_dims, v.reshape(ens_shape), _attrs(vname))
                elif etdim == "time":
                    padded = pad.copy()
                    padded[:, :etime_width] = v[:, :etime_width]
                    data_vars[n] = (ens_dims + ("time",), padded.reshape(ens_shape + (ewidth,)), _attrs(n))
                else:
                    data_vars[n] = (ens_dims + (etdim,), v.reshape(ens_shape + (v.shape[1],)), _attrs(n))
        attrs["source"] = directory
    return xr.Dataset(data_vars=data_vars, coords=coords, attrs=attrs)
