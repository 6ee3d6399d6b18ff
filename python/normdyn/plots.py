"""Figures of normdyn runs, sweeps and mean-field runs, from the HDF5 files alone.

Every ``*_figure`` function returns a :class:`matplotlib.figure.Figure` (made without pyplot, so it
works in notebooks and scripts alike); :func:`save` writes one in PNG, PDF or SVG. The command-line
scripts ``scripts/plot_run.py``, ``plot_sweep.py`` and ``plot_meanfield.py`` are thin wrappers.

    from normdyn import plots            # or load this file directly (scripts/ do that)
    run = plots.load_run("runs/post.h5")  # analyzed with `normdyn analyze` first
    fig = plots.decay_figure(run)
    plots.save(fig, "post_decay", formats=("pdf", "png"))

Conventions: categorical values (schemes, any string axis) get qualitative colours (Okabe-Ito),
ordered numeric values a sequential map; overlapping curves stay visible through distinct line
styles and markers; a rate fit is drawn only when the analysis marks it fit to cite (``problem``
null, positive parameter), and the axes are scaled by the data, never by a fitted curve.
"""
import json
import math
import os
import warnings

import h5py
import numpy as np
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure

__all__ = [
    "InputProblem", "Run", "MeanField", "Ensemble", "load_run", "load_meanfield", "load_ensemble",
    "overview_figure", "decay_figure", "heatmap_figure", "tokens_figure", "trajectory_figure",
    "compare_figure", "meanfield_figure", "sweep_clusters_figure", "sweep_sync_figure",
    "sweep_phase_figure", "sweep_median_figure", "sweep_group_table", "load_group_curves", "citable_fit", "label_warnings", "save", "FORMATS",
]

FORMATS = ("png", "pdf", "svg")
SCHEMES = ("post", "pre", "mix", "peri", "ngpt", "cod")
# Okabe and Ito's colour-blind safe qualitative palette (black last).
QUALITATIVE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1)), (0, (3, 1, 1, 1, 1, 1)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


class InputProblem(Exception):
    """A file that is not what a figure needs (exit code 2 in the scripts)."""


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def sibling_path(run):
    stem = run[:-3] if run.endswith(".h5") else run
    return stem + ".observables.h5"


def log_spaced(t):
    t = np.asarray(t)
    positive = t[t > 0]
    return len(positive) > 2 and positive[-1] / positive[0] > 1e3


def style(k, categorical=True, count=1):
    """Line properties of curve k of `count`: distinct colour, line style and marker."""
    if categorical:
        color = QUALITATIVE[k % len(QUALITATIVE)]
    else:
        import matplotlib

        color = matplotlib.colormaps["viridis"](0.9 * k / max(count - 1, 1))
    return {"color": color, "linestyle": LINESTYLES[k % len(LINESTYLES)], "marker": MARKERS[k % len(MARKERS)],
            "markevery": 0.1, "markersize": 4, "linewidth": 1.6 if k == 0 else 1.3}


def scheme_colour(scheme):
    return QUALITATIVE[SCHEMES.index(scheme) % len(QUALITATIVE)] if scheme in SCHEMES else QUALITATIVE[-1]


def _time_axis(ax, log):
    if log:
        ax.set_xscale("log")
    ax.set_xlabel("t (depth)")


def _keep(t, log):
    return t > 0 if log else np.ones_like(t, dtype=bool)


# ---- Loading ---------------------------------------------------------------------------------------


class Run:
    """A particle run file and its observables (from the run file or RUN.observables.h5)."""

    def __init__(self, path, label=None):
        self.path = path
        self.stem = os.path.splitext(os.path.basename(path))[0]
        with h5py.File(path, "r") as f:
            if "particles/tokens/direction/value" not in f:
                if "fields" in f:
                    raise InputProblem(f"{path}: a mean-field run (use load_meanfield / meanfield_figure)")
                raise InputProblem(f"{path}: not a normdyn run file")
            self.theta = f["particles/tokens/direction/value"][:]
            self.t = f["particles/tokens/direction/time"][:]
            self.radius = f["particles/tokens/radius/value"][:] if "particles/tokens/radius/value" in f else None
            model = f["parameters/model"].attrs
            self.scheme = _text(model["scheme"])
            self.beta = float(model["beta"])
            solver = f["parameters/solver"].attrs if "parameters/solver" in f else {}
            self.method = _text(solver.get("method", ""))
            self.n, self.d = self.theta.shape[1], self.theta.shape[2]
            analyzed_here = "analysis" in f
        obs_file = path if analyzed_here else sibling_path(path)
        if not os.path.exists(obs_file):
            raise InputProblem(f"{path}: no observables; run `normdyn analyze {path}` first")
        self.obs, self.units = {}, {}
        with h5py.File(obs_file, "r") as f:
            if "observables" not in f or "analysis" not in f:
                raise InputProblem(f"{obs_file}: not analyzed; run `normdyn analyze {path}` first")
            for name in f["observables"]:
                self.obs[name] = f[f"observables/{name}/value"][:]
                self.units[name] = _text(f[f"observables/{name}"].attrs.get("unit", ""))
            self.obs_time = f["observables/one_minus_mean_cosine/time"][:]
            report = f["analysis"].attrs.get("report_json")
        self.report = json.loads(_text(report)) if report is not None else {}
        self.label = label or f"{self.scheme} ({self.stem})"

    @property
    def log(self):
        return log_spaced(self.t)

    def frame_indices(self, requested=(), count=4):
        frames = len(self.t)
        if requested:
            out = []
            for f in requested:
                i = f if f >= 0 else frames + f
                if not 0 <= i < frames:
                    raise InputProblem(f"--frames: frame {f} is outside 0..{frames - 1}")
                out.append(i)
            return out
        if self.log:
            positive = np.flatnonzero(self.t > 0)
            picks = np.unique(np.round(np.linspace(0, len(positive) - 1, count - 1)).astype(int))
            return [0] + [int(positive[p]) for p in picks]
        return [int(i) for i in np.unique(np.round(np.linspace(0, frames - 1, count)).astype(int))]


def load_run(path, label=None):
    return Run(path, label)


def label_warnings(runs, labels):
    """Warnings for legend labels that name a scheme other than the file's."""
    out = []
    for run, label in zip(runs, labels):
        if not label:
            continue
        words = {w.strip("()[],:;").lower().removesuffix("-ln") for w in str(label).replace("_", " ").split()}
        named = [s for s in SCHEMES if s in words or f"{s}-ln" in str(label).lower()]
        if named and run.scheme not in named:
            out.append(f"label \"{label}\" names {'/'.join(named)} but {run.path} is a {run.scheme} run")
    return out


# ---- Rate fits -------------------------------------------------------------------------------------


def citable_fit(fit):
    """The fit if it is one to cite (a law, a positive finite parameter, no problem), else None."""
    if not fit or not fit.get("law") or fit.get("problem"):
        return None
    p = fit.get("parameter")
    if p is None or not math.isfinite(p) or p <= 0 or fit.get("log_c") is None:
        return None
    # Reports that predate the problem flag: the decay criterion of the analysis (a factor 10).
    if "problem" not in fit and (fit.get("decay_factor") or 0.0) < 10.0:
        return None
    return fit


def law_value(law, log_c, parameter, correction, t):
    g = {"exponential": t, "power": np.log(t), "stretched_exponential": np.sqrt(t)}[law]
    h = {"exponential": 0.0 * t, "power": 1.0 / t, "stretched_exponential": 1.0 / np.sqrt(t)}[law]
    return np.exp(log_c - parameter * g + correction * h)


# ---- Particle runs ---------------------------------------------------------------------------------


def overview_figure(run, log_time=False):
    fig = Figure(figsize=(7, 5.2), layout="constrained")
    a, b = fig.subplots(2, 1, sharex=True)
    log = log_time or run.log
    keep = _keep(run.obs_time, log)
    t = run.obs_time[keep]
    a.step(t, run.obs["cluster_count"][keep], where="post", color=QUALITATIVE[0])
    for p in run.report.get("plateaus", []):
        a.axvspan(p["t_start"], p["t_end"], color=QUALITATIVE[2], alpha=0.15, lw=0)
        mid = math.sqrt(p["t_start"] * p["t_end"]) if log and p["t_start"] > 0 else 0.5 * (p["t_start"] + p["t_end"])
        a.text(mid, p["count"], str(p["count"]), ha="center", va="bottom", fontsize=8, color=QUALITATIVE[2])
    eps = run.report.get("options", {}).get("cluster_epsilon", 1e-3)
    a.set_ylabel(f"clusters (cos > 1 - {eps:g})")
    a.set_title(f"{run.label}: n = {run.n}, d = {run.d}, beta = {run.beta:g}; plateaus shaded", fontsize=10)
    b.plot(t, run.obs["normalized_energy"][keep], color=QUALITATIVE[1])
    b.set_ylabel("E / (n^2 e^beta)")
    _time_axis(b, log)
    return fig


def decay_figure(run, log_time=False):
    fit = run.report.get("rate_fit", {}) or {}
    quantity = fit.get("quantity", "one_minus_mean_cosine")
    good = citable_fit(fit)
    fig = Figure(figsize=(7, 4.6), layout="constrained")
    ax = fig.subplots()
    log = log_time or run.log or (good is not None and good["law"] == "power")
    names = ["one_minus_mean_cosine", "variance"] + ([quantity] if quantity not in ("one_minus_mean_cosine", "variance") else [])
    shown = []
    for k, name in enumerate(names):
        if name not in run.obs:
            continue
        keep = _keep(run.obs_time, log) & (run.obs[name] > 0)
        y = run.obs[name][keep]
        ax.plot(run.obs_time[keep], y, label=name.replace("_", " "), **style(k))
        shown.append(y)
    if shown:
        data = np.concatenate(shown)
        # The axis follows the data only: a curve below it must not stretch it.
        ax.set_ylim(data.min() / 2, data.max() * 2)
    if good:
        t0, t1 = good["window"]
        grid = np.geomspace(t0, t1, 200) if t0 > 0 else np.linspace(t0, t1, 200)[1:]
        curve = law_value(good["law"], good["log_c"], good["parameter"], good.get("correction_coefficient") or 0.0, grid)
        symbol = {"exponential": "lambda", "power": "p", "stretched_exponential": "kappa"}[good["law"]]
        form = {"exponential": "c exp(-lambda t)", "power": "c t^-p", "stretched_exponential": "c exp(-kappa sqrt t)"}[good["law"]]
        err = good.get("stderr") or 0.0
        ax.plot(grid, curve, color="k", lw=2.2, ls=(0, (4, 2)), zorder=5,
                label=f"fit {form}: {symbol} = {good['parameter']:.5g} +- {err:.2g}")
        ax.axvspan(t0, t1, color="0.92", zorder=0, label="fit window")
    elif fit.get("law") or fit.get("problem"):
        why = fit.get("problem") or ("non-positive parameter" if (fit.get("parameter") or 0) <= 0 else
                                     f"decays only by a factor {fit.get('decay_factor') or 0:.3g} over the window")
        ax.text(0.02, 0.03, f"no rate to cite: {why}"[:110], transform=ax.transAxes, fontsize=8, color=QUALITATIVE[3],
                va="bottom")
    ax.set_yscale("log")
    _time_axis(ax, log)
    ax.set_ylabel(quantity.replace("_", " "))
    ax.set_title(f"{run.label}: decay", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def token_order(run, frame=-1):
    labels = run.obs["cluster_label"][frame] if "cluster_label" in run.obs else np.zeros(run.n)
    final = run.theta[frame]
    key = np.arctan2(final[:, 1], final[:, 0]) if run.d >= 2 else final[:, 0]
    return np.lexsort((key, labels))


def heatmap_figure(run, frames=(), log_one_minus_cos=False):
    """Pairwise cosines at a few frames; with log_one_minus_cos, log10(1 − cos) (tight clusters)."""
    idx = run.frame_indices(frames)
    order = token_order(run)
    fig = Figure(figsize=(2.9 * len(idx) + 1.2, 3.2), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(idx)))
    mats = []
    for i in idx:
        x = run.theta[i][order]
        c = x - x.mean(axis=0)
        sq = (c * c).sum(axis=1)
        h = np.maximum(0.5 * (sq[:, None] + sq[None, :]) - c @ c.T, 0.0)  # 1 − cos without cancellation
        np.fill_diagonal(h, np.nan)
        mats.append(h)
    if log_one_minus_cos:
        values = np.concatenate([m[np.isfinite(m) & (m > 0)] for m in mats])
        if values.size == 0:
            values = np.array([1e-16, 1.0])
        # The colour range spans the values present (round-off below 1e-16 is not shown).
        norm = LogNorm(vmin=max(values.min(), 1e-16), vmax=max(values.max(), 2e-16))
        cmap, label = "magma", "1 - <theta_j, theta_k> (log scale)"
    else:
        # The colour range spans the cosines present, so that no half of the map stays unused.
        lo = min(1.0 - np.nanmax(m) for m in mats)
        norm = None
        cmap, label = "viridis", "<theta_j, theta_k>"
    im = None
    for ax, i, h in zip(axes, idx, mats):
        if log_one_minus_cos:
            im = ax.imshow(np.where(h > 0, h, np.nan), norm=norm, cmap=cmap, interpolation="nearest")
        else:
            im = ax.imshow(1.0 - h, vmin=min(lo, 0.999), vmax=1.0, cmap=cmap, interpolation="nearest")
        count = int(run.obs["cluster_count"][i]) if "cluster_count" in run.obs else None
        ax.set_title(f"t = {run.t[i]:.4g}" + (f", {count} clusters" if count is not None else ""), fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(im, ax=list(axes), shrink=0.85, label=label)
    fig.suptitle(f"{run.label}: pairwise cosines, tokens ordered by final cluster", fontsize=10)
    return fig


def _cluster_colours(run, frame):
    labels = run.obs["cluster_label"][frame] if "cluster_label" in run.obs else np.arange(run.n)
    ids = {v: k for k, v in enumerate(sorted(set(int(x) for x in labels)))}
    return [QUALITATIVE[ids[int(x)] % len(QUALITATIVE)] for x in labels], len(ids)


def tokens_figure(run, frames=(), log_time=False):
    """d = 2: angles against t and snapshots; d ≥ 3: snapshots on the sphere (equal aspect), tokens
    coloured by their cluster at that frame; d > 3 projected on the top 3 principal directions."""
    idx = run.frame_indices(frames)
    if run.d == 2:
        fig = Figure(figsize=(2.8 * len(idx), 6.0), layout="constrained")
        grid = fig.add_gridspec(2, len(idx), height_ratios=[1.4, 1])
        ax = fig.add_subplot(grid[0, :])
        phi = np.arctan2(run.theta[:, :, 1], run.theta[:, :, 0])
        log = log_time or run.log
        keep = _keep(run.t, log)
        colours, _ = _cluster_colours(run, -1)
        for j in range(run.n):
            ax.plot(run.t[keep], phi[keep, j], ".", ms=1.5, color=colours[j])
        ax.set_ylabel("angle of theta_j (colour: final cluster)")
        ax.set_ylim(-np.pi, np.pi)
        _time_axis(ax, log)
        ax.set_title(f"{run.label}: tokens on the circle", fontsize=10)
        circle = np.linspace(0, 2 * np.pi, 200)
        for k, i in enumerate(idx):
            a = fig.add_subplot(grid[1, k])
            colours, count = _cluster_colours(run, i)
            a.plot(np.cos(circle), np.sin(circle), color="0.8", lw=0.8)
            a.scatter(run.theta[i, :, 0], run.theta[i, :, 1], s=14, c=colours)
            a.set_aspect("equal")
            a.set_xlim(-1.15, 1.15)
            a.set_ylim(-1.15, 1.15)
            a.set_xticks([])
            a.set_yticks([])
            a.set_title(f"t = {run.t[i]:.4g}, {count} clusters", fontsize=9)
        return fig
    points = run.theta
    title = "tokens on the sphere (colour: cluster)"
    if run.d > 3:
        flat = points.reshape(-1, run.d)
        _, _, vt = np.linalg.svd(flat - flat.mean(axis=0), full_matrices=False)
        points = points @ vt[:3].T
        title = "tokens projected on the top 3 principal directions (colour: cluster)"
    fig = Figure(figsize=(3.2 * len(idx), 3.6), layout="constrained")
    u, v = np.mgrid[0:2 * np.pi:30j, 0:np.pi:15j]
    for k, i in enumerate(idx):
        a = fig.add_subplot(1, len(idx), k + 1, projection="3d", computed_zorder=False)
        a.plot_wireframe(np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v), color="0.88", lw=0.4, zorder=1)
        colours, count = _cluster_colours(run, i)
        a.scatter(points[i, :, 0], points[i, :, 1], points[i, :, 2], s=14, c=colours, depthshade=False,
                  edgecolors="k", linewidths=0.3, zorder=5)
        a.set_title(f"t = {run.t[i]:.4g}, {count} clusters", fontsize=9)
        a.set_xlim(-1, 1)
        a.set_ylim(-1, 1)
        a.set_zlim(-1, 1)
        a.set_box_aspect((1, 1, 1))  # a sphere looks like one
        a.set_xticks([])
        a.set_yticks([])
        a.set_zticks([])
    fig.suptitle(f"{run.label}: {title}", fontsize=10)
    return fig


def trajectory_figure(run, log_time=False):
    """The observables of the paper's figures: gamma(t), its rate (d gamma/dt, or per layer for
    discrete runs), the layer-to-layer angle, the mean radius, and the Post-LN clock."""
    log = log_time or run.log
    keep = _keep(run.obs_time, log)
    t = run.obs_time[keep]
    panels = [("mean_cosine", "gamma (mean cosine)", False)]
    if "mean_cosine_layer_rate" in run.obs:
        panels.append(("mean_cosine_layer_rate", "d gamma per layer", False))
    elif "mean_cosine_rate" in run.obs:
        panels.append(("mean_cosine_rate", "d gamma / dt", False))
    if "layer_angle" in run.obs:
        panels.append(("layer_angle", "angle moved per layer (rad)", True))
    elif "mean_angular_speed" in run.obs:
        panels.append(("mean_angular_speed", "mean angular speed (rad / t)", True))
    radius = "mean_radius" in run.obs and np.ptp(run.obs["mean_radius"]) > 0
    if radius:
        panels.append(("mean_radius", "mean radius", False))
    if "clock_median" in run.obs:
        panels.append(("clock", "Post-LN clock int 1/s_j dt", False))
    fig = Figure(figsize=(6.5, 2.1 * len(panels) + 0.6), layout="constrained")
    axes = np.atleast_1d(fig.subplots(len(panels), 1, sharex=True))
    for ax, (name, ylabel, logy) in zip(axes, panels):
        if name == "clock":
            for k, (series, text) in enumerate((("clock_min", "min over tokens"), ("clock_median", "median"))):
                ax.plot(t, run.obs[series][keep], label=text, **style(k))
            top = np.nanmax(run.obs["clock_median"][keep])
            ax.plot(t, t, color="0.6", lw=0.8, label="t (Post-LN's own clock)")
            if np.isfinite(top) and top > 0:
                ax.set_ylim(0, 1.4 * top)  # the clock's shape; the line t leaves the axes
            ax.legend(fontsize=7)
        else:
            y = run.obs[name][keep]
            ok = np.isfinite(y) & ((y > 0) if logy else True)
            ax.plot(t[ok], y[ok], **style(0))
            if logy and ok.any():
                ax.set_yscale("log")
        ax.set_ylabel(ylabel, fontsize=8)
    growth = run.report.get("trajectory", {}).get("radius_growth") or {}
    title = f"{run.label}: paper observables"
    if radius and growth.get("exponent") is not None:
        title += f"; r - r(0) ~ t^{growth['exponent']:.3g}" + (" (flagged)" if growth.get("problem") else "")
    axes[0].set_title(title, fontsize=10)
    _time_axis(axes[-1], log)
    return fig


def compare_figure(runs, log_time=False, series=("one_minus_mean_cosine", "mean_angular_speed")):
    """Several runs on one figure; runs of different schemes get the schemes' qualitative colours."""
    if len(runs) < 2:
        raise InputProblem("a comparison needs at least two runs")
    fig = Figure(figsize=(11, 4.4), layout="constrained")
    axes = fig.subplots(1, len(series))
    log = log_time or any(r.log for r in runs)
    by_scheme = len({r.scheme for r in runs}) == len(runs)
    for k, r in enumerate(runs):
        s = style(k)
        if by_scheme:
            s["color"] = scheme_colour(r.scheme)
        for ax, name in zip(axes, series):
            if name not in r.obs:
                continue
            keep = _keep(r.obs_time, log) & (r.obs[name] > 0)
            ax.plot(r.obs_time[keep], r.obs[name][keep], label=r.label, **s)
    for ax, name in zip(axes, series):
        ax.set_yscale("log")
        ax.set_ylabel(name.replace("_", " "))
        _time_axis(ax, log)
    axes[0].legend(fontsize=8)
    return fig


# ---- Mean-field runs -------------------------------------------------------------------------------


class MeanField:
    """A mean-field run file (the angular density) and, if analyzed, its density observables."""

    def __init__(self, path):
        self.path = path
        self.stem = os.path.splitext(os.path.basename(path))[0]
        with h5py.File(path, "r") as f:
            if "fields" not in f:
                raise InputProblem(f"{path}: not a mean-field run file")
            name = "fields/angular_density" if "fields/angular_density" in f else "fields/density"
            self.rho = f[name + "/value"][:]
            self.t = f[name + "/time"][:]
            self.phi = f[name + "/phi"][:]
            model = f["parameters/model"].attrs
            self.scheme = _text(model["scheme"])
            self.beta = float(model["beta"])
            analyzed_here = "analysis" in f
        self.obs, self.report = {}, {}
        obs_file = path if analyzed_here else sibling_path(path)
        if os.path.exists(obs_file):
            with h5py.File(obs_file, "r") as f:
                if "observables" in f:
                    for n in f["observables"]:
                        self.obs[n] = f[f"observables/{n}/value"][:]
                if "analysis" in f and "report_json" in f["analysis"].attrs:
                    self.report = json.loads(_text(f["analysis"].attrs["report_json"]))


def load_meanfield(path):
    return MeanField(path)


def meanfield_figure(mf, modes=4):
    """Space-time map of the angular density and snapshots; with the analysis also the Fourier
    modes (with the linear rates of the uniform state), the cluster count and W1 to uniform."""
    analyzed = "mode_amplitude" in mf.obs
    fig = Figure(figsize=(10, 6.6 if analyzed else 3.4), layout="constrained")
    grid = fig.add_gridspec(2 if analyzed else 1, 2, width_ratios=[1.3, 1])
    ax0, ax1 = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
    floor = 1e-3
    bins = max(1, mf.phi.size // 256)
    shown = mf.rho[:, : mf.phi.size // bins * bins].reshape(len(mf.t), -1, bins).mean(axis=2)
    edges = np.linspace(0.0, 2 * np.pi, shown.shape[1] + 1)
    dt = mf.t[-1] - mf.t[-2] if len(mf.t) > 1 else 1.0
    t_edges = np.concatenate([mf.t, [mf.t[-1] + dt]])
    im = ax0.pcolormesh(t_edges, edges, np.maximum(shown.T, floor), shading="flat", cmap="magma",
                        norm=LogNorm(vmin=floor, vmax=max(shown.max(), 2 * floor)), rasterized=True)
    ax0.set_xlabel("t (depth)")
    ax0.set_ylabel("angle phi (rad)")
    ax0.set_title(f"{mf.scheme} mean field, beta = {mf.beta:g}, M = {mf.phi.size}", fontsize=9)
    fig.colorbar(im, ax=ax0, label="density per rad")
    picks = sorted({int(np.argmin(np.abs(mf.t - x))) for x in (0.0, 0.15 * mf.t[-1], 0.25 * mf.t[-1], mf.t[-1])})
    for k, i in enumerate(picks):
        s = style(k, categorical=False, count=len(picks))
        s.pop("marker")
        ax1.semilogy(mf.phi, np.maximum(mf.rho[i], 1e-8), label=f"t = {mf.t[i]:g}", **s)
    ax1.set_ylim(1e-4, mf.rho.max() * 2)
    ax1.set_xlabel("angle phi (rad)")
    ax1.set_title("snapshots", fontsize=9)
    ax1.legend(fontsize=7)
    if analyzed:
        ax2, ax3 = fig.add_subplot(grid[1, 0]), fig.add_subplot(grid[1, 1])
        amp = mf.obs["mode_amplitude"]
        rates = {m["k"]: m for m in mf.report.get("modes", [])}
        for k in range(min(modes, amp.shape[1])):
            y = amp[:, k]
            ok = y > 0
            s = style(k)
            line = ax2.semilogy(mf.t[ok], y[ok], label=f"k = {k + 1}", **s)[0]
            theory = rates.get(k + 1, {}).get("theory_rate")
            if theory is not None and ok.any() and y[ok][0] > 0:
                first = np.flatnonzero(ok)[0]
                tt = mf.t[first:]
                guide = y[first] * np.exp(theory * (tt - mf.t[first]))
                inside = guide <= 2 * y[ok].max()
                ax2.semilogy(tt[inside], guide[inside], color=line.get_color(), lw=0.8, ls=":")
        data = amp[:, :modes][amp[:, :modes] > 0]
        if data.size:
            ax2.set_ylim(data.min() / 3, min(data.max() * 3, 3.0))
        ax2.set_xlabel("t (depth)")
        ax2.set_ylabel("|c_k| / c_0")
        ax2.set_title("Fourier modes (dotted: linear rate of the uniform state)", fontsize=9)
        ax2.legend(fontsize=7)
        ax3.step(mf.t, mf.obs["density_cluster_count"], where="post", color=QUALITATIVE[0], label="clusters")
        ax3.set_ylabel("clusters (density peaks)", color=QUALITATIVE[0])
        ax3.set_xlabel("t (depth)")
        twin = ax3.twinx()
        twin.plot(mf.t, mf.obs["w1_to_uniform"], color=QUALITATIVE[1], ls="--")
        twin.set_ylabel("W1 to uniform (rad)", color=QUALITATIVE[1])
        ax3.set_title("clusters and distance to uniform", fontsize=9)
    return fig


# ---- Sweeps ----------------------------------------------------------------------------------------


def _label(key):
    return key.split(".")[-1]


def _value_text(v):
    if isinstance(v, (bytes, str)):
        return _text(v)
    if float(v).is_integer():
        return str(int(v))
    return f"{float(v):g}"


class Ensemble:
    """The /ensemble group of a sweep's index.h5."""

    def __init__(self, directory):
        path = os.path.join(directory, "index.h5")
        if not os.path.exists(path):
            raise InputProblem(f"{path}: no index; run `normdyn sweep SWEEP.toml -o {directory}` first")
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
        self.groups = len(self.runs)
        self.ok = [g for g in range(self.groups) if self.runs_used[g] > 0 and not self.problem[g]]
        if not self.ok:
            raise InputProblem(f"{path}: no configuration has a successful run")

    def categorical(self):
        """Whether the configurations differ along a string axis (e.g. model.scheme)."""
        return any(isinstance(self.values[k][0], (str, bytes)) for k in self.group_axes if len(self.values[k]))

    def label(self, g, skip=()):
        parts = [f"{_label(k)} = {_value_text(self.values[k][g])}" for k in self.group_axes if k not in skip]
        return ", ".join(parts) if parts else "all runs"

    def time(self, g):
        t = self.m["time"][g]
        return t[np.isfinite(t)]

    def log_time(self):
        t = np.concatenate([self.time(g) for g in self.ok])
        positive = t[t > 0]
        return positive.size > 1 and positive.max() / positive.min() > 100


def load_ensemble(directory):
    return Ensemble(directory)


def _runs_note(ens, g):
    return f" ({ens.runs_used[g]} runs)" if ens.runs_used[g] != ens.runs[g] or ens.over else ""


def sweep_clusters_figure(ens, log=None):
    log = ens.log_time() if log is None else log
    fig = Figure(figsize=(7.5, 4.8), layout="constrained")
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
    ax.set_ylabel(f"clusters (cosine > 1 - {ens.cluster_epsilon:g})")
    ax.set_yscale("log")
    ax.set_title("Cluster count: mean and one standard deviation over the runs", fontsize=10)
    ax.legend(fontsize=7, ncol=2 if len(ens.ok) > 8 else 1)
    return fig


def sweep_sync_figure(ens, log=None):
    log = ens.log_time() if log is None else log
    fig = Figure(figsize=(7.5, 4.8), layout="constrained")
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
    ax.set_ylabel(f"P(every pair has cosine > {ens.pair_cosine:g} by t)")
    ax.set_title("Probability of synchronization by time t (band: binomial standard error)", fontsize=10)
    ax.legend(fontsize=7, ncol=2 if len(ens.ok) > 8 else 1)
    return fig


def _edges(values, log):
    v = np.asarray(values, dtype=float)
    if len(v) == 1:
        return np.array([v[0] * 0.8, v[0] * 1.25]) if log else np.array([v[0] - 0.5, v[0] + 0.5])
    w = np.log(v) if log else v
    mid = (w[1:] + w[:-1]) / 2
    e = np.concatenate([[w[0] - (mid[0] - w[0])], mid, [w[-1] + (w[-1] - mid[-1])]])
    return np.exp(e) if log else e


def sweep_phase_figure(ens, log=None):
    """Fraction of synchronized pairs over (phase axis, t), one panel per value of the other axes,
    on a near-square grid (no empty half rows). None without a phase axis."""
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
    fig = Figure(figsize=(4.6 * cols + 1.2, 3.8 * rows), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    mesh = None
    for ax, (panel, groups) in zip(axes, panels.items()):
        groups = sorted(groups, key=lambda g: float(ens.values[key][g]))
        ys = np.array([float(ens.values[key][g]) for g in groups])
        t = ens.time(groups[0])
        if any(len(ens.time(g)) != len(t) or not np.allclose(ens.time(g), t) for g in groups):
            ax.set_title("sample times differ between the rows", fontsize=9)
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
        ax.set_title(", ".join(f"{_label(k)} = {v}" for k, v in zip(others, panel)) or "all runs", fontsize=9)
    for ax in axes[count:]:
        ax.set_visible(False)
    if mesh is not None:
        fig.colorbar(mesh, ax=list(axes[:count]), shrink=0.9,
                     label=f"pairs with cos > {ens.pair_cosine:g} (mean fraction)")
    fig.suptitle(f"Phase diagram over ({_label(key)}, t); white: fraction 0.5", fontsize=10)
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
    """Per ensemble group of a sweep: the runs' curves on their common sample times."""

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
    return GroupCurves(directory)


_MEDIAN_PANELS = (("one_minus_mean_cosine", "1 - mean cosine", True), ("mean_radius", "mean radius r", False),
                  ("angle", None, True))


def sweep_median_figure(curves, log=None, band=(0.1, 0.9)):
    """Per group: the median over its runs of 1 - mean cosine, the mean radius and the angle moved
    per layer, with the band between the quantiles `band`."""
    ens = curves.ens
    log = ens.log_time() if log is None else log
    fig = Figure(figsize=(13, 4.2), layout="constrained")
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
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Median over the runs of each group; band: quantiles {band[0]:g}-{band[1]:g}", fontsize=10)
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


# ---- Output ----------------------------------------------------------------------------------------


def save(fig, base, formats=("png",), dpi=150):
    """Writes base.<format> for each format (png, pdf, svg); returns the paths."""
    paths = []
    for fmt in formats:
        if fmt not in FORMATS:
            raise InputProblem(f"--format: {fmt} is not one of {', '.join(FORMATS)}")
        path = f"{base}.{fmt}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # constrained layout on tiny figures
            fig.savefig(path, dpi=dpi if fmt == "png" else None)
        paths.append(path)
    return paths
