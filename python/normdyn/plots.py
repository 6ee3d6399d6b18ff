"""Figures of normdyn runs, ensembles, sweeps and mean-field runs, in one style, from the HDF5
files alone.

Every ``*_figure`` function returns a :class:`matplotlib.figure.Figure` (made without pyplot, so it
works in notebooks and scripts alike) sized for a journal: the keyword width is "column" (3.4 in),
"page" (7.0 in) or a width in inches; text is 8 pt, with mathtext labels and the schemes' names
as the paper writes them. The function save writes PNG (300 dpi), PDF or SVG by the file's
extension; animate renders a run as MP4 or GIF. The commands normdyn plot and normdyn animate call
these functions through scripts/plot_run.py and scripts/animate_run.py.

    from normdyn import plots            # or load this file directly (scripts/ do that)
    run = plots.load_run("runs/post.h5")  # analyzed with `normdyn analyze` first
    fig = plots.decay_figure(run, width="column")
    plots.save(fig, "post_decay.pdf")

Conventions: categorical values (schemes, any string axis) get qualitative colours (Okabe-Ito),
ordered numeric values a sequential map, clusters a palette that stays distinguishable for dozens
of them (:func:`cluster_colours`); overlapping curves stay visible through distinct line styles and
markers; a rate fit is drawn only when the analysis marks it fit to cite (``problem`` null,
positive parameter), and the axes are scaled by the data, never by a fitted curve.
"""
import json
import math
import os
import warnings

import h5py
import numpy as np
from matplotlib.colors import LogNorm

from ._style import (COLUMN_WIDTH, FORMATS, PAGE_WIDTH, QUALITATIVE, SCHEME_NAMES, cluster_colours, label,
                     new_figure, scheme_colour, scheme_name, styled, width_inches)
from ._style import output_paths, save_figure

__all__ = [
    "InputProblem", "Run", "MeanField", "Ensemble", "GroupCurves", "load_run", "load_meanfield", "load_ensemble",
    "load_group_curves", "overview_figure", "decay_figure", "heatmap_figure", "tokens_figure", "trajectory_figure",
    "compare_figure", "meanfield_figure", "phase_figure", "sweep_clusters_figure", "sweep_sync_figure",
    "sweep_phase_figure", "sweep_median_figure", "sweep_group_table", "citable_fit", "label_warnings", "save",
    "animate", "style", "scheme_colour", "scheme_name", "cluster_colours", "width_inches", "FORMATS",
    "COLUMN_WIDTH", "PAGE_WIDTH", "SCHEME_NAMES",
]

SCHEMES = tuple(SCHEME_NAMES)
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
    """Line properties of curve k of `count`: distinct colour, line style and marker (a dict for
    ``ax.plot``); categorical: Okabe-Ito colours, else viridis over the `count` curves."""
    if categorical:
        color = QUALITATIVE[k % len(QUALITATIVE)]
    else:
        import matplotlib

        color = matplotlib.colormaps["viridis"](0.9 * k / max(count - 1, 1))
    return {"color": color, "linestyle": LINESTYLES[k % len(LINESTYLES)], "marker": MARKERS[k % len(MARKERS)],
            "markevery": 0.1, "markersize": 3, "linewidth": 1.4 if k == 0 else 1.1}



def _time_axis(ax, log):
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(label("time"))


def _keep(t, log):
    return t > 0 if log else np.ones_like(t, dtype=bool)


def _math(x):
    """A number for a mathtext label: 1e-05 as 10^{-5}, 2.5e+07 as 2.5 x 10^{7}."""
    text = f"{x:.3g}"
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    power = f"10^{{{int(exponent)}}}"
    return power if mantissa == "1" else rf"{mantissa}\times{power}"


def _clusters(count):
    return f"{count} cluster" + ("" if count == 1 else "s")


def _title(run):
    return rf"{run.label}: $n={run.n}$, $d={run.d}$, $\beta={_math(run.beta)}$"


# ---- Loading ---------------------------------------------------------------------------------------


class Run:
    """A particle run file and its observables (from the run file or RUN.observables.h5, written by
    `normdyn analyze`): theta [frames, n, d], t, radius, scheme, beta, n, d, obs (name -> series),
    obs_time, report (the analysis report as a dict) and label (the scheme's name unless given)."""

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
        self.label = label or scheme_name(self.scheme)

    @property
    def log(self):
        return log_spaced(self.t)

    def frame_indices(self, requested=(), count=4):
        """The frames of snapshots: `requested` (negative: from the end), else `count` spread in t
        (in log t for log-spaced frames)."""
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
    """The :class:`Run` of an analyzed particle run file; `label` names it in legends and titles."""
    return Run(path, label)


def label_warnings(runs, labels):
    """Warnings (strings) for legend labels that name a scheme other than the file's."""
    out = []
    for run, text in zip(runs, labels):
        if not text:
            continue
        lowered = str(text).lower()
        words = {w.strip("()[],:;").removesuffix("-ln") for w in lowered.replace("_", " ").split()}
        named = [s for s in SCHEMES if s in words or scheme_name(s).lower() in lowered]
        if named and run.scheme not in named:
            out.append(f"label \"{text}\" names {'/'.join(named)} but {run.path} is a {run.scheme} run")
    return out


# ---- Rate fits -------------------------------------------------------------------------------------


def citable_fit(fit):
    """The fit (the report's rate_fit) if it is one to cite (a law, a positive finite parameter, no
    problem), else None."""
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


@styled
def overview_figure(run, log_time=False, width=None):
    """The cluster count against t (plateaus shaded, labelled by their count) and the normalized
    energy E/(n^2 e^beta). width: "column" (default), "page" or inches."""
    fig = new_figure(width, 0.8)
    a, b = fig.subplots(2, 1, sharex=True)
    log = log_time or run.log
    keep = _keep(run.obs_time, log)
    t = run.obs_time[keep]
    a.step(t, run.obs["cluster_count"][keep], where="post", color=QUALITATIVE[0])
    for p in run.report.get("plateaus", []):
        a.axvspan(p["t_start"], p["t_end"], color=QUALITATIVE[2], alpha=0.15, lw=0)
        mid = math.sqrt(p["t_start"] * p["t_end"]) if log and p["t_start"] > 0 else 0.5 * (p["t_start"] + p["t_end"])
        a.text(mid, p["count"], str(p["count"]), ha="center", va="bottom", fontsize=7, color=QUALITATIVE[2])
    eps = run.report.get("options", {}).get("cluster_epsilon", 1e-3)
    a.set_ylabel(f"clusters\n" + rf"($\cos>1-{_math(eps)}$)")
    a.set_title(_title(run))
    b.plot(t, run.obs["normalized_energy"][keep], color=QUALITATIVE[1])
    b.set_ylabel(label("normalized_energy"))
    _time_axis(b, log)
    return fig


_LAW_FORMS = {"exponential": (r"\lambda", r"c\,e^{-\lambda t}"), "power": ("p", r"c\,t^{-p}"),
              "stretched_exponential": (r"\kappa", r"c\,e^{-\kappa\sqrt{t}}")}


@styled
def decay_figure(run, log_time=False, width=None):
    """1 - gamma (and Var) on log axes with the fitted law over its window, drawn only when the fit
    is one to cite (:func:`citable_fit`); otherwise the reason is written on the axes."""
    fit = run.report.get("rate_fit", {}) or {}
    quantity = fit.get("quantity", "one_minus_mean_cosine")
    good = citable_fit(fit)
    fig = new_figure(width, 0.72)
    ax = fig.subplots()
    log = log_time or run.log or (good is not None and good["law"] == "power")
    names = ["one_minus_mean_cosine", "variance"] + ([quantity] if quantity not in ("one_minus_mean_cosine", "variance") else [])
    shown = []
    for k, name in enumerate(names):
        if name not in run.obs:
            continue
        keep = _keep(run.obs_time, log) & (run.obs[name] > 0)
        y = run.obs[name][keep]
        ax.plot(run.obs_time[keep], y, label=label(name), **style(k))
        shown.append(y)
    if shown:
        data = np.concatenate(shown)
        # The axis follows the data only: a curve below it must not stretch it.
        ax.set_ylim(data.min() / 2, data.max() * 2)
    if good:
        t0, t1 = good["window"]
        grid = np.geomspace(t0, t1, 200) if t0 > 0 else np.linspace(t0, t1, 200)[1:]
        curve = law_value(good["law"], good["log_c"], good["parameter"], good.get("correction_coefficient") or 0.0, grid)
        symbol, form = _LAW_FORMS[good["law"]]
        err = good.get("stderr") or 0.0
        ax.plot(grid, curve, color="k", lw=1.6, ls=(0, (4, 2)), zorder=5,
                label=rf"fit ${form}$: ${symbol}={_math(good['parameter'])}\pm{_math(err)}$")
        ax.axvspan(t0, t1, color="0.92", zorder=0, label="fit window")
    elif fit.get("law") or fit.get("problem"):
        why = fit.get("problem") or ("non-positive parameter" if (fit.get("parameter") or 0) <= 0 else
                                     f"decays only by a factor {fit.get('decay_factor') or 0:.3g} over the window")
        ax.text(0.02, 0.03, f"no rate to cite: {why}"[:90], transform=ax.transAxes, fontsize=6.5,
                color=QUALITATIVE[3], va="bottom")
    ax.set_yscale("log")
    _time_axis(ax, log)
    ax.set_ylabel(label(quantity))
    ax.set_title(_title(run))
    ax.legend()
    return fig


def token_order(run, frame=-1):
    """Token indices ordered by cluster at `frame`, then by angle (the heatmaps' order)."""
    labels = run.obs["cluster_label"][frame] if "cluster_label" in run.obs else np.zeros(run.n)
    final = run.theta[frame]
    key = np.arctan2(final[:, 1], final[:, 0]) if run.d >= 2 else final[:, 0]
    return np.lexsort((key, labels))


@styled
def heatmap_figure(run, frames=(), log_one_minus_cos=False, width=None):
    """Pairwise cosines at a few frames (tokens ordered by final cluster); with log_one_minus_cos,
    log10(1 - cos), for tight clusters. width: "page" (default), "column" or inches."""
    idx = run.frame_indices(frames)
    order = token_order(run)
    w = width_inches(width, "page")
    fig = new_figure(w, 1.0 / (len(idx) + 0.45))
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
        cmap, text = "magma", label("one_minus_cosine")
    else:
        # The colour range spans the cosines present, so that no half of the map stays unused.
        lo = min(1.0 - np.nanmax(m) for m in mats)
        norm = None
        cmap, text = "viridis", label("cosine")
    im = None
    for ax, i, h in zip(axes, idx, mats):
        if log_one_minus_cos:
            im = ax.imshow(np.where(h > 0, h, np.nan), norm=norm, cmap=cmap, interpolation="nearest")
        else:
            im = ax.imshow(1.0 - h, vmin=min(lo, 0.999), vmax=1.0, cmap=cmap, interpolation="nearest")
        count = int(run.obs["cluster_count"][i]) if "cluster_count" in run.obs else None
        ax.set_title(rf"$t={_math(run.t[i])}$" + (f", {_clusters(count)}" if count is not None else ""))
        ax.set_xticks([])
        ax.set_yticks([])
        for spine in ax.spines.values():
            spine.set_visible(True)  # a matrix is framed on four sides
    fig.colorbar(im, ax=list(axes), shrink=0.85, label=text)
    fig.suptitle(f"{_title(run)}; tokens ordered by final cluster")
    return fig


def _cluster_colours(run, frame):
    labels = run.obs["cluster_label"][frame] if "cluster_label" in run.obs else np.arange(run.n)
    ids = {v: k for k, v in enumerate(sorted(set(int(x) for x in labels)))}
    palette = cluster_colours(len(ids))
    return [palette[ids[int(x)]] for x in labels], len(ids)


def _sphere_axes(fig, spec, title):
    a = fig.add_subplot(*spec, projection="3d", computed_zorder=False)
    u, v = np.mgrid[0:2 * np.pi:30j, 0:np.pi:15j]
    a.plot_wireframe(np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v), color="0.85", lw=0.3, zorder=1)
    a.set_xlim(-1, 1)
    a.set_ylim(-1, 1)
    a.set_zlim(-1, 1)
    a.set_box_aspect((1, 1, 1))  # a sphere looks like one
    a.set_axis_off()  # the sphere is the frame
    a.set_title(title)
    return a


@styled
def tokens_figure(run, frames=(), log_time=False, width=None):
    """d = 2: angles against t and snapshots on the circle; d >= 3: snapshots on the sphere (equal
    aspect; d > 3 projected on the top 3 principal directions); tokens coloured by their cluster at
    that frame. width: "page" (default), "column" or inches."""
    idx = run.frame_indices(frames)
    w = width_inches(width, "page")
    if run.d == 2:
        fig = new_figure(w, (0.42 + 1.0 / len(idx)))
        grid = fig.add_gridspec(2, len(idx), height_ratios=[1.3, 1])
        ax = fig.add_subplot(grid[0, :])
        phi = np.arctan2(run.theta[:, :, 1], run.theta[:, :, 0])
        log = log_time or run.log
        keep = _keep(run.t, log)
        colours, _ = _cluster_colours(run, -1)
        for j in range(run.n):
            ax.plot(run.t[keep], phi[keep, j], ".", ms=1.0, color=colours[j], rasterized=True)
        ax.set_ylabel(r"angle $\varphi_j$ of $\theta_j$")
        ax.set_ylim(-np.pi, np.pi)
        ax.set_yticks([-np.pi, 0, np.pi], [r"$-\pi$", "0", r"$\pi$"])
        _time_axis(ax, log)
        ax.set_title(f"{_title(run)}; colour: final cluster")
        circle = np.linspace(0, 2 * np.pi, 200)
        for k, i in enumerate(idx):
            a = fig.add_subplot(grid[1, k])
            colours, count = _cluster_colours(run, i)
            a.plot(np.cos(circle), np.sin(circle), color="0.8", lw=0.6)
            a.scatter(run.theta[i, :, 0], run.theta[i, :, 1], s=6, c=colours, linewidths=0)
            a.set_aspect("equal")
            a.set_xlim(-1.15, 1.15)
            a.set_ylim(-1.15, 1.15)
            a.axis("off")
            a.set_title(rf"$t={_math(run.t[i])}$, {_clusters(count)}")
        return fig
    points = run.theta
    what = "on the sphere"
    if run.d > 3:
        flat = points.reshape(-1, run.d)
        _, _, vt = np.linalg.svd(flat - flat.mean(axis=0), full_matrices=False)
        points = points @ vt[:3].T
        what = "projected on the top 3 principal directions"
    fig = new_figure(w, 1.1 / len(idx))
    for k, i in enumerate(idx):
        colours, count = _cluster_colours(run, i)
        a = _sphere_axes(fig, (1, len(idx), k + 1),rf"$t={_math(run.t[i])}$, {_clusters(count)}")
        a.scatter(points[i, :, 0], points[i, :, 1], points[i, :, 2], s=7, c=colours, depthshade=False,
                  edgecolors="k", linewidths=0.2, zorder=5)
    fig.suptitle(f"{_title(run)}: tokens {what}")
    return fig


@styled
def trajectory_figure(run, log_time=False, width=None):
    """The observables of the paper's figures: gamma(t), its rate (d gamma/dt, or per layer for
    discrete runs), the layer-to-layer angle, the mean radius, and the Post-LN clock."""
    log = log_time or run.log
    keep = _keep(run.obs_time, log)
    t = run.obs_time[keep]
    panels = [("mean_cosine", label("mean_cosine"), False)]
    if "mean_cosine_layer_rate" in run.obs:
        panels.append(("mean_cosine_layer_rate", r"$\Delta\gamma$ per layer", False))
    elif "mean_cosine_rate" in run.obs:
        panels.append(("mean_cosine_rate", r"$d\gamma/dt$", False))
    if "layer_angle" in run.obs:
        panels.append(("layer_angle", "angle per layer (rad)", True))
    elif "mean_angular_speed" in run.obs:
        panels.append(("mean_angular_speed", label("mean_angular_speed"), True))
    radius = "mean_radius" in run.obs and np.ptp(run.obs["mean_radius"]) > 0
    if radius:
        panels.append(("mean_radius", label("mean_radius"), False))
    if "clock_median" in run.obs:
        panels.append(("clock", r"$\int_0^t ds/s_j$", False))
    fig = new_figure(width, 0.36 * len(panels) + 0.12)
    axes = np.atleast_1d(fig.subplots(len(panels), 1, sharex=True))
    for ax, (name, ylabel, logy) in zip(axes, panels):
        if name == "clock":
            for k, (series, text) in enumerate((("clock_min", "min over tokens"), ("clock_median", "median"))):
                ax.plot(t, run.obs[series][keep], label=text, **style(k))
            top = np.nanmax(run.obs["clock_median"][keep])
            ax.plot(t, t, color="0.6", lw=0.6, label=r"$t$ (Post-LN's clock)")
            if np.isfinite(top) and top > 0:
                ax.set_ylim(0, 1.4 * top)  # the clock's shape; the line t leaves the axes
            ax.legend()
        else:
            y = run.obs[name][keep]
            ok = np.isfinite(y) & ((y > 0) if logy else True)
            ax.plot(t[ok], y[ok], **style(0))
            if logy and ok.any():
                ax.set_yscale("log")
        ax.set_ylabel(ylabel)
    growth = run.report.get("trajectory", {}).get("radius_growth") or {}
    title = _title(run)
    if radius and growth.get("exponent") is not None:
        title += rf"; $r-r(0)\sim t^{{{growth['exponent']:.3g}}}$" + (" (flagged)" if growth.get("problem") else "")
    axes[0].set_title(title)
    _time_axis(axes[-1], log)
    return fig


@styled
def compare_figure(runs, log_time=False, series=("one_minus_mean_cosine", "mean_angular_speed"), width=None):
    """Several runs on one figure, one panel per series; runs of different schemes in the schemes'
    colours. width: "page" (default), "column" or inches."""
    if len(runs) < 2:
        raise InputProblem("a comparison needs at least two runs")
    fig = new_figure(width_inches(width, "page"), 0.4)
    axes = np.atleast_1d(fig.subplots(1, len(series)))
    log = log_time or any(r.log for r in runs)
    by_scheme = len({r.scheme for r in runs}) == len(runs)
    labels = [r.label for r in runs]
    if len(set(labels)) < len(labels):  # the same name twice: add the files
        labels = [f"{r.label} ({r.stem})" for r in runs]
    for k, (r, text) in enumerate(zip(runs, labels)):
        s = style(k)
        if by_scheme:
            s["color"] = scheme_colour(r.scheme)
        for ax, name in zip(axes, series):
            if name not in r.obs:
                continue
            keep = _keep(r.obs_time, log) & (r.obs[name] > 0)
            ax.plot(r.obs_time[keep], r.obs[name][keep], label=text, **s)
    for ax, name in zip(axes, series):
        ax.set_yscale("log")
        ax.set_ylabel(label(name))
        _time_axis(ax, log)
    axes[0].legend()
    return fig


# ---- Mean-field runs -------------------------------------------------------------------------------


class MeanField:
    """A mean-field run file (the angular density rho [frames, M] on phi, at t) and, if analyzed,
    its density observables (obs) and report."""

    def __init__(self, path):
        self.path = path = os.fspath(path)
        self.stem = os.path.splitext(os.path.basename(path))[0]
        with h5py.File(path, "r") as f:
            if "fields" not in f:
                raise InputProblem(f"{path}: not a mean-field run file")
            name = "fields/angular_density" if "fields/angular_density" in f else "fields/density"
            self.rho = f[name + "/value"][:]
            self.t = f[name + "/time"][:]
            self.phi = f[name + "/phi"][:]
            # The causal mean field: the density per cursor slice [M_sigma, M] at the last frame.
            self.sigma = self.cursor = None
            if "fields/density/sigma" in f:
                self.sigma = f["fields/density/sigma"][:]
                self.cursor = f["fields/density/value"][len(self.t) - 1]
            # On the sphere S^2 (model.d = 3): the density per steradian [frames, theta, phi].
            self.theta = f[name + "/theta"][:] if name + "/theta" in f else None
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
    """The :class:`MeanField` of a mean-field run file (analyzed or not)."""
    return MeanField(path)


def _snapshots(ax1, mf):
    picks = sorted({int(np.argmin(np.abs(mf.t - x))) for x in (0.0, 0.15 * mf.t[-1], 0.25 * mf.t[-1], mf.t[-1])})
    for k, i in enumerate(picks):
        s = style(k, categorical=False, count=len(picks))
        s.pop("marker")
        ax1.semilogy(mf.phi, np.maximum(mf.rho[i], 1e-8), label=rf"$t={_math(mf.t[i])}$", **s)
    ax1.set_ylim(1e-4, mf.rho.max() * 2)
    ax1.set_xlabel(label("phi"))
    ax1.set_xticks([0, np.pi, 2 * np.pi], ["0", r"$\pi$", r"$2\pi$"])
    ax1.set_ylabel(label("density"))
    ax1.legend()


def _cursor_map(fig, ax1, mf, floor):
    """The causal mean field: the density over (cursor sigma, phi) at the last frame."""
    m_sigma = mf.sigma.size
    sigma_edges = np.linspace(0.0, 1.0, m_sigma + 1)
    phi_edges = np.linspace(0.0, 2 * np.pi, mf.phi.size + 1)
    im = ax1.pcolormesh(sigma_edges, phi_edges, np.maximum(mf.cursor.T, floor), shading="flat", cmap="magma",
                        norm=LogNorm(vmin=floor, vmax=max(mf.cursor.max(), 2 * floor)), rasterized=True)
    ax1.set_xlabel(r"cursor $\sigma$")
    ax1.set_ylabel(label("phi"))
    ax1.set_yticks([0, np.pi, 2 * np.pi], ["0", r"$\pi$", r"$2\pi$"])
    ax1.set_title(rf"$t={_math(mf.t[-1])}$, $M_\sigma={m_sigma}$")
    fig.colorbar(im, ax=ax1, label=r"$f(\sigma, \varphi)$")


@styled
def sphere_figure(mf, frames=(), width=None):
    """The density on the sphere S^2 of a mean-field run with model.d = 3, at `frames` (indices; default
    the first, two in between and the last), in the Mollweide projection (equal-area: a cluster's
    area on the page is proportional to its solid angle). width: "page" (default), "column" or inches."""
    if mf.theta is None:
        raise InputProblem(f"{mf.path}: not a mean-field run on the sphere (no theta axis)")
    n = len(mf.t)
    picks = list(frames) or sorted({0, n // 3, (2 * n) // 3, n - 1})
    picks = [i % n for i in picks]
    fig = new_figure(width_inches(width, "page"), 0.28 * ((len(picks) + 1) // 2))
    # Longitudes in (-pi, pi], latitudes pi/2 - theta; the grid closed in longitude for the mesh.
    lon = np.where(mf.phi >= np.pi, mf.phi - 2 * np.pi, mf.phi)
    order = np.argsort(lon)
    lon = np.concatenate([lon[order], [lon[order][0] + 2 * np.pi]])
    # The poles, which no Gauss-Legendre ring reaches, take the mean of the nearest ring.
    lat = np.concatenate([[np.pi / 2], np.pi / 2 - mf.theta, [-np.pi / 2]])
    top = max(float(np.max(mf.rho[picks])), 1e-12)
    for k, i in enumerate(picks):
        ax = fig.add_subplot((len(picks) + 1) // 2, 2, k + 1, projection="mollweide")
        values = mf.rho[i][:, order]
        values = np.concatenate([values, values[:, :1]], axis=1)
        values = np.concatenate([np.full((1, values.shape[1]), values[0].mean()), values,
                                 np.full((1, values.shape[1]), values[-1].mean())])
        im = ax.pcolormesh(lon, lat, np.maximum(values, 0.0), shading="gouraud", cmap="magma", vmin=0.0,
                           vmax=top, rasterized=True)
        ax.set_xticklabels([])
        ax.set_yticklabels([])
        ax.grid(True, lw=0.3, alpha=0.5)
        ax.set_title(rf"$t={_math(mf.t[i])}$")
    fig.colorbar(im, ax=fig.axes, label=r"$\mu$ (per sr)", shrink=0.8)
    fig.suptitle(rf"{scheme_name(mf.scheme)} mean field on $S^2$, $\beta={_math(mf.beta)}$ (Mollweide, equal-area)")
    return fig


@styled
def meanfield_figure(mf, modes=4, width=None):
    """Space-time map of the angular density and snapshots; with the analysis also the Fourier
    modes (with the linear rates of the uniform state), the cluster count and W1 to uniform.
    A run on the sphere S^2 is drawn by :func:`sphere_figure`.
    width: "page" (default), "column" or inches."""
    if mf.theta is not None:
        return sphere_figure(mf, width=width)
    analyzed = "mode_amplitude" in mf.obs
    fig = new_figure(width_inches(width, "page"), 0.62 if analyzed else 0.32)
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
    ax0.set_xlabel(label("time"))
    ax0.set_ylabel(label("phi"))
    ax0.set_yticks([0, np.pi, 2 * np.pi], ["0", r"$\pi$", r"$2\pi$"])
    ax0.set_title(rf"{scheme_name(mf.scheme)} mean field, $\beta={_math(mf.beta)}$, $M={mf.phi.size}$")
    fig.colorbar(im, ax=ax0, label=r"$\rho$ (per rad)")
    if getattr(mf, "sigma", None) is not None:
        _cursor_map(fig, ax1, mf, floor)
    else:
        _snapshots(ax1, mf)
    if analyzed:
        ax2, ax3 = fig.add_subplot(grid[1, 0]), fig.add_subplot(grid[1, 1])
        amp = mf.obs["mode_amplitude"]
        rates = {m["k"]: m for m in mf.report.get("modes", [])}
        for k in range(min(modes, amp.shape[1])):
            y = amp[:, k]
            ok = y > 0
            s = style(k)
            line = ax2.semilogy(mf.t[ok], y[ok], label=f"$k={k + 1}$", **s)[0]
            theory = rates.get(k + 1, {}).get("theory_rate")
            if theory is not None and ok.any() and y[ok][0] > 0:
                first = np.flatnonzero(ok)[0]
                tt = mf.t[first:]
                guide = y[first] * np.exp(theory * (tt - mf.t[first]))
                inside = guide <= 2 * y[ok].max()
                ax2.semilogy(tt[inside], guide[inside], color=line.get_color(), lw=0.6, ls=":")
        data = amp[:, :modes][amp[:, :modes] > 0]
        if data.size:
            ax2.set_ylim(data.min() / 3, min(data.max() * 3, 3.0))
        ax2.set_xlabel(label("time"))
        ax2.set_ylabel(label("mode_amplitude"))
        ax2.set_title("Fourier modes (dotted: linear rate of the uniform state)")
        ax2.legend(ncol=2)
        ax3.step(mf.t, mf.obs["density_cluster_count"], where="post", color=QUALITATIVE[0], label="clusters")
        ax3.set_ylabel("clusters (density peaks)", color=QUALITATIVE[0])
        ax3.set_xlabel(label("time"))
        twin = ax3.twinx()
        twin.spines["right"].set_visible(True)
        twin.plot(mf.t, mf.obs["w1_to_uniform"], color=QUALITATIVE[1], ls="--")
        twin.set_ylabel(label("w1_to_uniform"), color=QUALITATIVE[1])
    return fig


# ---- Ensembles and sweeps (_sweep_plots.py) ---------------------------------------------------------

from ._sweep_plots import (Ensemble, GroupCurves, load_ensemble, load_group_curves, phase_figure,  # noqa: E402
                           sweep_clusters_figure, sweep_group_table, sweep_median_figure, sweep_phase_figure,
                           sweep_sync_figure)
from ._animate import animate  # noqa: E402

# ---- Output ----------------------------------------------------------------------------------------


def save(fig, path, formats=None, dpi=300):
    """Writes a figure and returns the paths written: `path` itself when it ends in .png, .pdf or
    .svg (vector formats for .pdf and .svg), else path.<format> for each of `formats` (default
    png). PNG at `dpi` (300); PDF with TrueType fonts. A file is replaced only whole."""
    try:
        return save_figure(fig, path, formats, dpi)
    except ValueError as e:
        raise InputProblem(f"--{e}") from None
