"""normdyn.ensemble: many systems integrated in one process, kept as ensemble statistics."""
from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping

import numpy as np
import xarray as xr

from . import _toml


def _flatten(table, prefix=""):
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _flatten(value, path + ".")
        else:
            yield path, value


def sweep_text(resolved_toml, axes, over, pair_cosine, cluster_epsilon):
    """The sweep file of a resolved configuration and axes: the configuration as [set] (without the
    axes' keys, the run-file path and the thread count), the axes, and [ensemble]."""
    if not isinstance(axes, Mapping) or not axes:
        raise ValueError("axes: expected a dict of dotted keys to lists of values, e.g. {'init.seed': range(1, 65)}")
    lines = ["[set]"]
    for key, value in _flatten(tomllib.loads(resolved_toml)):
        if key in axes or key in ("output.path", "solver.threads"):
            continue
        lines.append(f"{_toml.value(key)} = {_toml.value(value, key)}")
    lines.append("[axes]")
    for key, values in axes.items():
        if not isinstance(key, str) or "." not in key:
            raise ValueError(f"axes: {key!r}: expected a dotted key such as 'model.beta'")
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise ValueError(f"axes: {key}: expected a list of values, got {type(values).__name__}")
        values = [v.item() if isinstance(v, np.generic) else v for v in values]
        if not values:
            raise ValueError(f"axes: {key}: no values")
        lines.append(f"{_toml.value(key)} = [{', '.join(_toml.value(v, key) for v in values)}]")
    lines.append("[ensemble]")
    if over is not None and over not in axes:
        raise ValueError(f"over: {over!r} is not one of the axes ({', '.join(axes)})")
    lines.append(f"over = {_toml.value(over or '')}")
    lines.append('phase_axis = ""')
    lines.append(f"pair_cosine = {_toml.value(float(pair_cosine), 'pair_cosine')}")
    lines.append(f"cluster_epsilon = {_toml.value(float(cluster_epsilon), 'cluster_epsilon')}")
    return "\n".join(lines) + "\n"


def dataset(result):
    """The xarray Dataset of _core.ensemble's grid (the layout of the ensemble file)."""
    coords = {name: (name, values, attrs) for name, values, attrs in result["dims"]}
    data_vars = {}
    for name, dims, values, attrs in result["variables"]:
        if name in ("status", "rate_law", "rate_problem"):
            # Flags as their names (rate_law's -1, no fit, is the first name: "none").
            meanings = np.array(attrs["flag_meanings"].split(), dtype=object)
            values = meanings[np.asarray(values) + (1 if name == "rate_law" else 0)]
        data_vars[name] = (tuple(dims), values, attrs)
    attrs = dict(result["attrs"])
    attrs["status"] = result["status"]
    attrs["message"] = result["message"]
    return xr.Dataset(data_vars, coords=coords, attrs=attrs)
