"""normdyn.analyze, normdyn.observables, normdyn.analyze_options and normdyn.schemes.

The analysis is the C++ library of `normdyn analyze` (normdyn._core): a run file is read by it, and
a run in memory (a Dataset of normdyn.run, or of normdyn.load after a selection) is handed to it as
the Dataset's arrays, without a copy and without writing any file. Keyword arguments are the rows of
one option table, the command line's long flags with underscores.
"""
from __future__ import annotations

import json
import os

from . import _core

_SUMMARY_KEYS = ("status", "message", "t_reached", "frames", "accepted_steps", "rejected_steps", "rhs_evaluations",
                 "wall_seconds", "max_norm_drift")


def _same_run_as_file(ds, path):
    """Whether the Dataset holds every frame and token of the run file `path` (then the file is read)."""
    from ._dataset import load
    try:
        with load(path) as f:
            return dict(f.sizes) == dict(ds.sizes) and bool((f["time"].values == ds["time"].values).all())
    except (OSError, ValueError):
        return False


def _run(ds_or_path):
    """What _core reads: a path, or the arrays of a Dataset."""
    if isinstance(ds_or_path, (str, os.PathLike)):
        path = os.fspath(ds_or_path)
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such run file")
        return path
    import numpy as np
    import xarray as xr
    if not isinstance(ds_or_path, xr.Dataset):
        raise TypeError(f"ds_or_path: expected a run file or a Dataset of normdyn.run / normdyn.load, "
                        f"got {type(ds_or_path).__name__}")
    ds = ds_or_path
    if "config" not in ds.attrs or "time" not in ds.coords:
        raise ValueError("ds_or_path: not a Dataset of a normdyn run (no config attribute or time coordinate)")
    source = ds.attrs.get("source")
    if source and os.path.exists(source) and _same_run_as_file(ds, source):
        return source
    status = ds.attrs.get("status", "running")
    summary = None if status == "running" else {k: ds.attrs[k] for k in _SUMMARY_KEYS if k in ds.attrs}
    run = {
        "config": ds.attrs["config"],
        "summary": summary,
        "revision": str(ds.attrs.get("revision", "")),
        "time": np.ascontiguousarray(ds["time"].values, dtype=float),
        "step": np.ascontiguousarray(ds["step"].values, dtype=np.int64),
        "direction": None,
        "radius": None,
        "fields": {},
    }
    if "qkv_Q" in ds:
        run["qkv"] = tuple(np.ascontiguousarray(ds[f"qkv_{m}"].values, dtype=float) for m in "QKV")
    if "initial_tokens" in ds:
        run["tokens"] = np.ascontiguousarray(ds["initial_tokens"].values, dtype=float)
    if "score_bias" in ds:
        run["score_bias"] = np.ascontiguousarray(ds["score_bias"].values, dtype=float)
    if "direction" in ds:
        run["direction"] = np.ascontiguousarray(ds["direction"].values, dtype=float)
        run["radius"] = np.ascontiguousarray(ds["radius"].values, dtype=float)
    else:
        for name in ("density", "angular_density"):
            if name in ds:
                run["fields"][name] = np.ascontiguousarray(ds[name].values, dtype=float)
        if not run["fields"]:
            raise ValueError("ds_or_path: the Dataset has neither direction (particles) nor density (mean field)")
    return run


def analyze(ds_or_path, **options):
    """The report of `normdyn analyze` as a dict (the same JSON as `normdyn analyze --json`).

    ds_or_path: a run file (particles or mean field), or a Dataset of normdyn.run / normdyn.load. A
      loaded Dataset that holds the whole file is analyzed from the file; any other Dataset from its
      arrays (the report's run.file is then None).
    options: the rows of normdyn.analyze_options(), the command line's long flags with underscores:
      cluster_epsilon=1e-3, quantity="variance", law="power", fit_window=(t0, t1) or "T0:T1",
      no_velocity=True, threads=1, modes=8, ... An unknown keyword is a TypeError naming it, a value
      of the wrong type a TypeError, a value out of range a ValueError naming the option.
      Nothing is written unless asked: json=PATH writes the report, observables_file=PATH (or
      no_write=False: RUN.observables.h5 beside the run) writes the observables of a run file.

    Each entry of the report's warnings (a result the analysis flags as doubtful) is also emitted as
    a normdyn.ResultWarning: normdyn.ResolutionWarning for under_resolved, normdyn.FitWarning for
    inconclusive_fit (a fitted rate that is not one to cite).
    """
    report = json.loads(_core.analyze(_run(ds_or_path), options))
    from ._warnings import warn_report
    warn_report(report, stacklevel=2)
    return report


def observables(ds_or_path, **options):
    """The per-frame series of the analysis as an xarray Dataset on the run's time axis.

    Particle runs: the registry's observables the run gives (energy, variance, mean_cosine, diameter,
    effective_rank, mean_angular_speed, ...; see normdyn analyze) and cluster_count. Mean-field runs:
    mode_amplitude (time, mode), density_cluster_count, w1_to_uniform, max_density and
    narrowest_cluster_cells. Computed by the C++ code of `normdyn analyze`; options as for
    normdyn.analyze, without the ones that write files.
    """
    import numpy as np
    import xarray as xr
    series = _core.observables(_run(ds_or_path), options)
    if isinstance(ds_or_path, xr.Dataset):
        time, step = ds_or_path["time"].values, ds_or_path["step"].values
    else:
        from ._dataset import load
        with load(ds_or_path) as ds:
            time, step = ds["time"].values, ds["step"].values
    frames = len(series[0][1]) if series else len(time)
    from ._dataset import short_name
    coords = {"time": ("time", np.asarray(time)[:frames], {"units": "1", "long_name": "time t",
                                                           "description": "time t (depth of the network)"}),
              "step": ("time", np.asarray(step)[:frames], {"units": "1", "long_name": "steps",
                                                           "description": "accepted integrator steps"})}
    data = {}
    for name, values, dims, unit, description in series:
        if name == "mode_amplitude":
            coords["mode"] = ("mode", np.arange(1, values.shape[1] + 1), {"units": "1", "long_name": "mode k",
                                                                         "description": "Fourier mode k"})
        data[name] = (("time",) + tuple(dims), values, {"units": unit or "1", "long_name": short_name(name),
                                                        "description": description})
    return xr.Dataset(data, coords=coords)


def analyze_options():
    """Every option of the analysis: a list of dicts with name (the keyword), flag (of `normdyn
    analyze`), type, python (False: the command line's only), description, domain, default and, for
    choices, choices. The same table drives the command line's flags and its --help."""
    return _core.analyze_options()


def schemes():
    """Every scheme: a list of dicts with key, title, formulas (speed, radial_rate, layer_map),
    has_radius, parameters (key, default, description, lower bound) and theory: what the paper proves
    of it at its default parameters, one dict per statement (theorem, statement, law and its
    parameter for the decay of 1 - gamma at the symmetric start, hypotheses). theory_at(**params)
    gives the same list at other parameters, e.g. the nGPT entry's theory_at(alpha=0.5)."""
    return _core.schemes()


def alternatives():
    """Every list of alternatives other than the schemes, by the key that chooses from it
    ("attention.mask", "attention.bias", "attention.positions", "attention.normalizer", "noise.kind",
    "feedforward.activation"): a list of dicts with key, title, formula, parameters (key, type,
    default, description, bounds) and breaks (the traits it breaks: exchangeable, symmetric, ...)."""
    return _core.alternatives()


def _options_doc():
    rows = [o for o in _core.analyze_options() if o["python"]]
    lines = []
    for o in rows:
        extra = "; ".join(x for x in (o["domain"], "default " + o["default"] if o["type"] not in ("flag", "path")
                                      and o["default"] != "auto" else "") if x)
        lines.append(f"      {o['name']} ({o['type']}): {o['description']}" + (f" [{extra}]" if extra else ""))
    return "\n".join(lines)


analyze.__doc__ += "\n    Options:\n" + _options_doc() + "\n"
