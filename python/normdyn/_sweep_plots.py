"""Figures of ensembles: a sweep's index (`normdyn sweep`) or an ensemble file (`normdyn ensemble`,
normdyn.ensemble), in the style of normdyn.plots (which re-exports everything here)."""
import math
import os
import warnings

import h5py
import numpy as np

from ._style import label as _obs_label, new_figure, styled, width_inches
from .plots import InputProblem, _keep, _text, _time_axis, style

_AXIS_NAMES = {"beta": r"$\beta$", "n": r"$n$", "d": r"$d$", "alpha": r"$\alpha$", "tau": r"$\tau$",
               "scheme": "scheme", "seed": "seed", "sigma": r"$\sigma$"}


def _label(key):
    """The label of a sweep axis: its last part, in mathtext for the model's symbols."""
    last = key.split(".")[-1]
    return _AXIS_NAMES.get(last, last.replace("_", " "))


def _value_text(v):
    if isinstance(v, (bytes, str)):
        from ._style import scheme_name
        return scheme_name(_text(v))
    if float(v).is_integer():
        return str(int(v))
    return f"{float(v):g}"


class Ensemble:
    """Ensemble statistics per configuration (group): from the /ensemble group of a sweep's
    index.h5 (a directory), from an ensemble file of `normdyn ensemble` (a .h5 file), or from the
    Dataset of normdyn.ensemble. Groups are the points of the axes other than `over`."""

    def __init__(self, source):
        if not isinstance(source, (str, os.PathLike)):
            self._from_grid(_grid_of_dataset(source), "the Dataset")
            return
        source = os.fspath(source)
        if os.path.isfile(source):
            self._from_grid(_grid_of_file(source), source)
            return
        path = os.path.join(source, "index.h5")
        if not os.path.exists(path):
            raise InputProblem(f"{source}: neither an ensemble file nor a sweep directory (no index.h5); "
                               f"write one with `normdyn ensemble SWEEP.toml -o FILE.h5` or "
                               f"`normdyn sweep SWEEP.toml -o {source}`")
        with h5py.File(path, "r") as f:
            schema = _text(f.attrs.get("schema", ""))
            if schema not in ("normdyn.sweep/1", "normdyn.sweep/2"):
                raise InputProblem(f"{path}: not a normdyn sweep index")
            # Version 1 named the ensemble means cluster_mean and pair_fraction_mean.
            old = {"cluster_count": "cluster_mean", "cluster_count_std": "cluster_std",
                   "cluster_count_min": "cluster_min", "cluster_count_max": "cluster_max",
                   "pair_fraction": "pair_fraction_mean"} if schema == "normdyn.sweep/1" else {}
            self.over = _text(f.attrs["ensemble_over"])
            self.phase_axis = _text(f.attrs["phase_axis"])
            self.pair_cosine = float(f.attrs["pair_cosine"])
            self.cluster_epsilon = float(f.attrs["cluster_epsilon"])
            self.axes = [_text(k) for k in f["axes/key"][()]]
            e = f["ensemble"]
            if "keys" in f["axes"]:  # version 2: every key a zipped axis or a point list sets
                self.axes = [k for ks in f["axes/keys"].asstr()[()] for k in ks.split(",")]
            self.group_axes = [k for k in self.axes if k != self.over and k in e]
            self.values = {}
            for k in self.group_axes:
                ds = e[k]
                self.values[k] = ds.asstr()[()] if h5py.check_string_dtype(ds.dtype) else ds[()]
            self.runs = e["runs"][()]
            self.runs_used = e["runs_used"][()]
            self.problem = e["problem"].asstr()[()]
            self.m = {name: e[old.get(name, name)][()]
                      for name in ("time", "runs_at", "cluster_count", "cluster_count_std", "cluster_count_min",
                                   "cluster_count_max", "pair_fraction", "sync_probability")}
        self._finish(path)

    def _from_grid(self, grid, where):
        """The groups of an ensemble file's grid: every point of its axes (all but time)."""
        dims, coords, arrays, attrs = grid
        if "pair_fraction" not in arrays:
            raise InputProblem(f"{where}: not an ensemble of normdyn (no pair_fraction)")
        axes = [d for d in dims if d != "time"]
        shape = arrays["pair_fraction"].shape[:-1]
        points = int(np.prod(shape)) if shape else 1
        index = np.unravel_index(np.arange(points), shape) if shape else ()
        self.over = ""
        self.axes = self.group_axes = axes
        self.values = {k: np.asarray(coords[k])[index[i]] for i, k in enumerate(axes)}
        numeric = [k for k in axes if np.asarray(coords[k]).dtype.kind in "fiu" and len(coords[k]) > 1]
        self.phase_axis = next((k for k in axes if k.split(".")[-1] == "beta"), numeric[0] if numeric else "")
        self.pair_cosine = float(attrs.get("pair_cosine", 0.999))
        self.cluster_epsilon = float(attrs.get("cluster_epsilon", 1e-3))
        flat = {k: np.asarray(v).reshape(points, -1) for k, v in arrays.items()}
        time = np.broadcast_to(np.asarray(coords["time"], dtype=float), (points, len(coords["time"])))
        mean = flat["cluster_count"] if "cluster_count" in flat else np.full_like(time, np.nan)
        at = flat.get("members_at", np.ones_like(time))
        self.m = {"time": time, "runs_at": at, "cluster_count": mean, "cluster_count_std": np.full_like(time, np.nan),
                  "cluster_count_min": mean, "cluster_count_max": mean, "pair_fraction": flat["pair_fraction"],
                  "sync_probability": flat.get("sync_probability", np.full_like(time, np.nan))}
        self.runs = at.max(axis=1).astype(int)
        self.runs_used = at[:, -1].astype(int) if time.shape[1] else self.runs
        self.problem = np.array([""] * points, dtype=object)
        self._finish(where)

    def _finish(self, where):
        self.groups = len(self.runs)
        self.ok = [g for g in range(self.groups) if self.runs_used[g] > 0 and not self.problem[g]]
        if not self.ok:
            raise InputProblem(f"{where}: no configuration has a successful run")

    def categorical(self):
        """Whether the configurations differ along a string axis (e.g. model.scheme)."""
        return any(isinstance(self.values[k][0], (str, bytes)) for k in self.group_axes if len(self.values[k]))

    def label(self, g, skip=()):
        parts = [(f"{_value_text(self.values[k][g])}" if k.endswith("scheme") else
                  f"{_label(k)} = {_value_text(self.values[k][g])}") for k in self.group_axes if k not in skip]
        return ", ".join(parts) if parts else "all runs"

    def time(self, g):
        t = self.m["time"][g]
        return t[np.isfinite(t)]

    def log_time(self):
        t = np.concatenate([self.time(g) for g in self.ok])
        positive = t[t > 0]
        return positive.size > 1 and positive.max() / positive.min() > 100


def load_ensemble(source):
    """The :class:`Ensemble` of a sweep directory, an ensemble file or a Dataset of normdyn.ensemble."""
    return Ensemble(source)


def _grid_of_file(path):
    """(dims, coords, arrays, attrs) of an ensemble file, read with h5py (its dimension scales)."""
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise InputProblem(f"{path}: not an HDF5 file ({e})") from None
    with f:
        if "pair_fraction" not in f:
            if "particles" in f or "fields" in f:
                raise InputProblem(f"{path}: a run file, not an ensemble (phase diagrams come from "
                                   "`normdyn ensemble` files or sweep directories)")
            raise InputProblem(f"{path}: not an ensemble file of `normdyn ensemble` (no pair_fraction)")
        pf = f["pair_fraction"]
        dims = [pf.dims[i][0].name.rsplit("/", 1)[-1] if len(pf.dims[i]) else f"dim_{i}" for i in range(pf.ndim)]
        coords = {}
        for i, d in enumerate(dims):
            scale = pf.dims[i][0] if len(pf.dims[i]) else None
            values = scale[()] if scale is not None else np.arange(pf.shape[i])
            coords[d] = values.astype(str) if values.dtype.kind in "SO" else values
        arrays = {}
        for name in ("pair_fraction", "sync_probability", "cluster_count", "members_at"):
            if name in f and f[name].shape == pf.shape:
                arrays[name] = f[name][()]
        attrs = {k: _text(v) if isinstance(v, bytes) else v for k, v in f.attrs.items()}
    return ["time" if d == "time" else d for d in dims], coords, arrays, attrs


def _grid_of_dataset(ds):
    """(dims, coords, arrays, attrs) of the Dataset of normdyn.ensemble."""
    if not hasattr(ds, "data_vars") or "pair_fraction" not in ds:
        raise InputProblem("expected a sweep directory, an ensemble file or the Dataset of normdyn.ensemble")
    pf = ds["pair_fraction"]
    dims = list(pf.dims)
    coords = {d: (ds[d].values if d in ds.coords else np.arange(pf.sizes[d])) for d in dims}
    arrays = {n: ds[n].transpose(*dims).values for n in ("pair_fraction", "sync_probability", "cluster_count",
                                                         "members_at") if n in ds and set(ds[n].dims) == set(dims)}
    return dims, coords, arrays, dict(ds.attrs)


def _runs_note(ens, g):
    return f" ({ens.runs_used[g]} runs)" if ens.runs_used[g] != ens.runs[g] or ens.over else ""


@styled
def sweep_clusters_figure(ens, log=None, width=None):
    """Mean cluster count against t per configuration, with a band of one standard deviation
    (clipped to the runs' range). width: "column" (default), "page" or inches."""
    log = ens.log_time() if log is None else log
    fig = new_figure(width, 0.75)
    ax = fig.subplots()
    cat = ens.categorical()
    for k, g in enumerate(ens.ok):
        s = style(k, categorical=cat, count=len(ens.ok))
        t = ens.time(g)
        keep = _keep(t, log)
        f = lambda name: ens.m[name][g][: len(t)][keep]
        ax.plot(t[keep], f("cluster_count"), label=ens.label(g) + _runs_note(ens, g), **s)
        std = np.nan_to_num(f("cluster_count_std"))
        low = np.maximum(f("cluster_count") - std, f("cluster_count_min"))
        high = np.minimum(f("cluster_count") + std, f("cluster_count_max"))
        ax.fill_between(t[keep], low, high, color=s["color"], alpha=0.15, lw=0)
    _time_axis(ax, log)
    ax.set_ylabel(rf"clusters ($\cos>1-{ens.cluster_epsilon:g}$)")
    ax.set_yscale("log")
    ax.set_title("mean over the runs, band: one standard deviation")
    ax.legend(ncol=2 if len(ens.ok) > 6 else 1)
    return fig


@styled
def sweep_sync_figure(ens, log=None, width=None):
    """Probability that every pair of tokens has cosine > pair_cosine by t, per configuration,
    with its binomial standard error. width: "column" (default), "page" or inches."""
    log = ens.log_time() if log is None else log
    fig = new_figure(width, 0.75)
    ax = fig.subplots()
    cat = ens.categorical()
    for k, g in enumerate(ens.ok):
        s = style(k, categorical=cat, count=len(ens.ok))
        s.pop("marker")
        s.pop("markevery")
        s.pop("markersize")
        t = ens.time(g)
        keep = _keep(t, log)
        p = ens.m["sync_probability"][g][: len(t)][keep]
        m = ens.m["runs_at"][g][: len(t)][keep]
        se = np.sqrt(p * (1 - p) / np.maximum(m, 1))
        ax.step(t[keep], p, where="post", label=ens.label(g) + _runs_note(ens, g), **s)
        ax.fill_between(t[keep], p - se, p + se, step="post", color=s["color"], alpha=0.15, lw=0)
    _time_axis(ax, log)
    ax.set_ylim(-0.03, 1.03)
    ax.set_ylabel(rf"$P(\min_{{j,k}}\langle\theta_j,\theta_k\rangle>{ens.pair_cosine:g}$ by $t)$")
    ax.set_title("synchronized by $t$ (band: binomial standard error)")
    ax.legend(ncol=2 if len(ens.ok) > 6 else 1)
    return fig


def _edges(values, log):
    v = np.asarray(values, dtype=float)
    if len(v) == 1:
        return np.array([v[0] * 0.8, v[0] * 1.25]) if log else np.array([v[0] - 0.5, v[0] + 0.5])
    w = np.log(v) if log else v
    mid = (w[1:] + w[:-1]) / 2
    e = np.concatenate([[w[0] - (mid[0] - w[0])], mid, [w[-1] + (w[-1] - mid[-1])]])
    return np.exp(e) if log else e


@styled
def sweep_phase_figure(ens, log=None, width=None):
    """Fraction of synchronized pairs over (phase axis, t), one panel per value of the other axes,
    on a near-square grid (no empty half rows). None without a phase axis. width: "column" for
    one panel, else "page" (the defaults), or inches."""
    log = ens.log_time() if log is None else log
    key = ens.phase_axis
    if not key:
        return None
    others = [k for k in ens.group_axes if k != key]
    panels = {}
    for g in ens.ok:
        panels.setdefault(tuple(_value_text(ens.values[k][g]) for k in others), []).append(g)
    count = len(panels)
    cols = math.ceil(math.sqrt(count))
    rows = math.ceil(count / cols)
    fig = new_figure(width_inches(width, "column" if count == 1 else "page"), 0.8 * rows / cols)
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    mesh = None
    for ax, (panel, groups) in zip(axes, panels.items()):
        groups = sorted(groups, key=lambda g: float(ens.values[key][g]))
        ys = np.array([float(ens.values[key][g]) for g in groups])
        t = ens.time(groups[0])
        if any(len(ens.time(g)) != len(t) or not np.allclose(ens.time(g), t) for g in groups):
            ax.set_title("sample times differ between the rows")
            continue
        keep = _keep(t, log)
        z = np.array([ens.m["pair_fraction"][g][: len(t)][keep] for g in groups])
        ylog = ys.min() > 0 and ys.max() / ys.min() > 10
        mesh = ax.pcolormesh(_edges(t[keep], log), _edges(ys, ylog), z, vmin=0, vmax=1, cmap="viridis", shading="flat")
        if len(groups) > 1 and len(t[keep]) > 1 and np.nanmin(z) < 0.5 < np.nanmax(z):
            ax.contour(t[keep], ys, z, levels=[0.5], colors="white", linewidths=1.0)
        _time_axis(ax, log)
        if ylog:
            ax.set_yscale("log")
        ax.set_yticks(ys)
        ax.set_yticklabels([_value_text(y) for y in ys])
        ax.set_ylabel(_label(key))
        ax.set_title(", ".join(f"{_label(k)} = {v}" for k, v in zip(others, panel)) or "")
    for ax in axes[count:]:
        ax.set_visible(False)
    if mesh is not None:
        fig.colorbar(mesh, ax=list(axes[:count]), shrink=0.9,
                     label=rf"pairs with $\langle\theta_j,\theta_k\rangle>{ens.pair_cosine:g}$")
    if count > 1:
        fig.suptitle("white: half of the pairs synchronized")
    return fig


def _group_series(path, pair_dt):
    """1 - mean cosine, mean radius and angle moved per layer (discrete runs) or per unit t, per
    frame, from a run file's frames; the angle is between consecutive frames (NaN at the first)."""
    with h5py.File(path, "r") as f:
        theta = f["particles/tokens/direction/value"][:]
        t = f["particles/tokens/direction/time"][:]
        radius = f["particles/tokens/radius/value"][:] if "particles/tokens/radius/value" in f else None
        solver = f["parameters/solver"].attrs if "parameters/solver" in f else {}
        method = _text(solver.get("method", ""))
        dt = float(solver.get("dt", np.nan))
    n = theta.shape[1]
    mean = theta.mean(axis=1)
    omc = n / max(n - 1, 1) * (1.0 - np.sum(mean * mean, axis=1))
    r = radius.mean(axis=1) if radius is not None else np.ones(len(t))
    step = np.linalg.norm(np.diff(theta, axis=0), axis=2)
    angle = np.mean(2.0 * np.arcsin(np.clip(step / 2.0, 0.0, 1.0)), axis=1)
    per = np.diff(t) / dt if method == "discrete" and dt > 0 else np.diff(t)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.concatenate([[np.nan], angle / per])
    return t, {"one_minus_mean_cosine": omc, "mean_radius": r, "angle": rate}, method == "discrete"


class GroupCurves:
    """Per ensemble group of a sweep directory: the runs' curves on their common sample times."""

    def __init__(self, directory):
        self.ens = Ensemble(directory)
        path = os.path.join(directory, "index.h5")
        with h5py.File(path, "r") as f:
            runs = f["runs"]
            self.group = runs["group"][()]
            self.file = runs["file"].asstr()[()]
            self.status = runs["status"].asstr()[()]
            self.t_sync = runs["t_sync"][()]
            self.rate_law = runs["rate_law"].asstr()[()]
            self.rate = runs["rate_parameter"][()]
        self.curves, self.discrete = {}, False
        for g in self.ens.ok:
            members = [i for i in range(len(self.group)) if self.group[i] == g
                       and self.status[i] in ("ok", "synchronized")]
            t_ref, rows = None, []
            for i in members:
                t, series, discrete = _group_series(os.path.join(directory, self.file[i]), None)
                self.discrete = self.discrete or discrete
                if t_ref is None:
                    t_ref = t
                k = min(len(t), len(t_ref))
                if not np.allclose(t[:k], t_ref[:k]):
                    continue  # sample times differ: not on one curve
                rows.append({name: np.pad(v[:k], (0, len(t_ref) - k), constant_values=np.nan)
                             for name, v in series.items()})
            if rows:
                self.curves[g] = (t_ref, {name: np.array([r[name] for r in rows]) for name in rows[0]})


def load_group_curves(directory):
    """The :class:`GroupCurves` of a sweep directory (reads its run files)."""
    return GroupCurves(directory)


def phase_figure(source, log=None, width=None):
    """The phase diagram: the mean fraction of synchronized token pairs over (phase axis, t), from
    an ensemble file of `normdyn ensemble`, the Dataset of normdyn.ensemble, a sweep directory or an
    :class:`Ensemble`. The phase axis is beta when it is an axis. None without a numeric axis."""
    ens = source if isinstance(source, Ensemble) else Ensemble(source)
    return sweep_phase_figure(ens, log, width=width)


_MEDIAN_PANELS = (("one_minus_mean_cosine", r"$1-\gamma$", True), ("mean_radius", r"$\bar r$", False),
                  ("angle", None, True))


@styled
def sweep_median_figure(curves, log=None, band=(0.1, 0.9), width=None):
    """Per group: the median over its runs of 1 - mean cosine, the mean radius and the angle moved
    per layer, with the band between the quantiles `band`. width: "page" (default) or inches."""
    ens = curves.ens
    log = ens.log_time() if log is None else log
    fig = new_figure(width_inches(width, "page"), 0.33)
    axes = fig.subplots(1, 3)
    cat = ens.categorical()
    for k, g in enumerate(sorted(curves.curves)):
        t, series = curves.curves[g]
        s = style(k, categorical=cat, count=len(curves.curves))
        s.pop("marker", None), s.pop("markevery", None), s.pop("markersize", None)
        keep = _keep(t, log)
        for ax, (name, _, ylog) in zip(axes, _MEDIAN_PANELS):
            v = series[name][:, keep]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (first angle)
                med = np.nanmedian(v, axis=0)
                lo, hi = np.nanquantile(v, band[0], axis=0), np.nanquantile(v, band[1], axis=0)
            ax.plot(t[keep], med, label=ens.label(g) + f" ({v.shape[0]} runs)", **s)
            if v.shape[0] > 1:
                ax.fill_between(t[keep], lo, hi, color=s["color"], alpha=0.15, lw=0)
    for ax, (name, label, ylog) in zip(axes, _MEDIAN_PANELS):
        _time_axis(ax, log)
        ax.set_ylabel(label or ("angle per layer (rad)" if curves.discrete else "angle moved per unit t (rad)"))
        if ylog:
            ax.set_yscale("log")
    axes[0].legend()
    fig.suptitle(f"median over the runs of each group; band: quantiles {band[0]:g} to {band[1]:g}")
    return fig


def sweep_group_table(curves):
    """Per group: runs used, the decay laws fitted (with counts), the median rate and its
    quartiles, the fraction synchronized and the median t_sync of those. A list of dicts."""
    ens = curves.ens
    rows = []
    for g in range(ens.groups):
        members = [i for i in range(len(curves.group)) if curves.group[i] == g
                   and curves.status[i] in ("ok", "synchronized")]
        laws = {}
        for i in members:
            if curves.rate_law[i]:
                laws[curves.rate_law[i]] = laws.get(curves.rate_law[i], 0) + 1
        rates = np.array([curves.rate[i] for i in members if np.isfinite(curves.rate[i])])
        sync = np.array([curves.t_sync[i] for i in members if np.isfinite(curves.t_sync[i])])
        q = np.quantile(rates, [0.25, 0.5, 0.75]) if rates.size else [np.nan] * 3
        rows.append({"group": g, "configuration": ens.label(g), "runs": len(members),
                     "laws": "; ".join(f"{law} x{c}" for law, c in sorted(laws.items())) or "none",
                     "rate_median": q[1], "rate_q25": q[0], "rate_q75": q[2],
                     "synchronized": f"{sync.size}/{len(members)}",
                     "t_sync_median": float(np.median(sync)) if sync.size else np.nan})
    return rows


