#!/usr/bin/python3
"""Figures of normdyn runs, from the HDF5 files alone (run with /usr/bin/python3).

    plot_run.py RUN.h5 [RUN2.h5 ...] [--output-dir DIR] [--kind KIND ...] [--frames F ...]
                [--labels L ...] [--log-time]

Reads the run file (trajectory, configuration) and its observables: /observables and the analysis
report /analysis@report_json, written by `normdyn analyze RUN.h5` into the run file, or into
RUN.observables.h5 beside it when the run file is read-only. Writes PNG files (Agg backend):

    <stem>_overview.png   cluster count (plateaus shaded) and normalized energy E/(n^2 e^beta) against t
    <stem>_decay.png      1 - mean cosine (and Var) on log axes with the fitted law over its window
    <stem>_heatmap.png    pairwise-cosine matrices at chosen frames (tokens ordered by final cluster)
    <stem>_tokens.png     d = 2: angles against t and snapshots on the circle; d = 3: snapshots on
                          the sphere; d > 3: snapshots projected on the top 3 principal directions
    compare.png           1 - mean cosine and mean angular speed of all runs on one figure

Exit codes: 0 ok, 2 bad input (missing observables: run `normdyn analyze` first), 3 I/O failure.
"""
import argparse
import json
import os
import sys

import h5py
import numpy as np

plt = None  # matplotlib.pyplot, imported once the inputs are known to be good (it is slow to import)

KINDS = ("overview", "decay", "heatmap", "tokens", "compare")


class InputProblem(Exception):
    pass


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def sibling_path(run):
    stem = run[:-3] if run.endswith(".h5") else run
    return stem + ".observables.h5"


class Run:
    """A run file and its observables."""

    def __init__(self, path, label=None):
        self.path = path
        self.stem = os.path.splitext(os.path.basename(path))[0]
        with h5py.File(path, "r") as f:
            if "particles/tokens/direction/value" not in f:
                raise InputProblem(f"{path}: not a normdyn run file")
            self.theta = f["particles/tokens/direction/value"][:]
            self.t = f["particles/tokens/direction/time"][:]
            model = f["parameters/model"].attrs
            self.scheme = _text(model["scheme"])
            self.beta = float(model["beta"])
            self.n, self.d = self.theta.shape[1], self.theta.shape[2]
            # Runs write a few observables themselves; the analysis marks its file with /analysis.
            analyzed_here = "analysis" in f
        obs_file = path if analyzed_here else sibling_path(path)
        if not os.path.exists(obs_file):
            raise InputProblem(f"{path}: no observables; run `normdyn analyze {path}` first")
        self.obs = {}
        with h5py.File(obs_file, "r") as f:
            if "observables" not in f or "analysis" not in f:
                raise InputProblem(f"{obs_file}: not analyzed; run `normdyn analyze {path}` first")
            for name in f["observables"]:
                self.obs[name] = f[f"observables/{name}/value"][:]
            self.obs_time = f["observables/one_minus_mean_cosine/time"][:]
            report = f["analysis"].attrs.get("report_json") if "analysis" in f else None
        self.report = json.loads(_text(report)) if report is not None else {}
        self.label = label or f"{self.scheme} ({self.stem})"

    def frame_indices(self, requested, count=4):
        frames = len(self.t)
        if requested:
            out = []
            for f in requested:
                i = f if f >= 0 else frames + f
                if not 0 <= i < frames:
                    raise InputProblem(f"--frames: frame {f} is outside 0..{frames - 1}")
                out.append(i)
            return out
        if log_spaced(self.t):
            # Frames spread evenly in log t, plus the first.
            positive = np.flatnonzero(self.t > 0)
            picks = np.unique(np.round(np.linspace(0, len(positive) - 1, count - 1)).astype(int))
            return [0] + [int(positive[p]) for p in picks]
        return [int(i) for i in np.unique(np.round(np.linspace(0, frames - 1, count)).astype(int))]


def log_spaced(t):
    positive = t[t > 0]
    return len(positive) > 2 and positive[-1] / positive[0] > 1e3


def time_axis(ax, run_or_t, log_time):
    t = run_or_t.t if isinstance(run_or_t, Run) else run_or_t
    if log_time or log_spaced(t):
        ax.set_xscale("log")
    ax.set_xlabel("t (depth)")


def positive_time(t, *series, log):
    """Drops t <= 0 on a log axis."""
    keep = t > 0 if log else np.ones_like(t, dtype=bool)
    return (t[keep],) + tuple(s[keep] for s in series)


def law_value(law, log_c, parameter, correction, t):
    g = {"exponential": t, "power": np.log(t), "stretched_exponential": np.sqrt(t)}[law]
    h = {"exponential": 0.0 * t, "power": 1.0 / t, "stretched_exponential": 1.0 / np.sqrt(t)}[law]
    return np.exp(log_c - parameter * g + correction * h)


def overview(run, out, log_time):
    fig, (a, b) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    log = log_time or log_spaced(run.t)
    t, count, energy = positive_time(run.obs_time, run.obs["cluster_count"], run.obs["normalized_energy"], log=log)
    a.step(t, count, where="post", color="C0")
    for p in run.report.get("plateaus", []):
        a.axvspan(p["t_start"], p["t_end"], color="C2", alpha=0.15, lw=0)
        a.text(np.sqrt(p["t_start"] * p["t_end"]) if log and p["t_start"] > 0 else 0.5 * (p["t_start"] + p["t_end"]),
               p["count"], str(p["count"]), ha="center", va="bottom", fontsize=8, color="C2")
    eps = run.report.get("options", {}).get("cluster_epsilon", 1e-3)
    a.set_ylabel(f"clusters (cos > 1 - {eps:g})")
    a.set_title(f"{run.label}: n = {run.n}, d = {run.d}, beta = {run.beta:g}; plateaus shaded")
    b.plot(t, energy, color="C1")
    b.set_ylabel("E / (n^2 e^beta)")
    time_axis(b, run, log_time)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def decay(run, out, log_time):
    fit = run.report.get("rate_fit", {})
    quantity = fit.get("quantity", "one_minus_mean_cosine")
    fig, ax = plt.subplots(figsize=(8, 5))
    log = log_time or log_spaced(run.t) or fit.get("law") == "power"
    for name, style in (("one_minus_mean_cosine", "-"), ("variance", ":"), (quantity, "-")):
        t, y = positive_time(run.obs_time, run.obs[name], log=log)
        keep = y > 0
        ax.plot(t[keep], y[keep], style, label=name.replace("_", " "), lw=1.2)
        if name == quantity:
            break
    if fit.get("law"):
        t0, t1 = fit["window"]
        tt = run.obs_time[run.obs_time > 0]
        lo = tt[tt >= t0 * 0.25][0] if np.any(tt >= t0 * 0.25) else t0
        grid = np.geomspace(max(lo, 1e-12), tt[-1], 400) if log else np.linspace(max(lo, 1e-12), tt[-1], 400)
        law, par, err = fit["law"], fit["parameter"], fit["stderr"] or 0.0
        curve = law_value(law, fit["log_c"], par, fit.get("correction_coefficient") or 0.0, grid)
        inside = (grid >= t0) & (grid <= t1)
        symbol = {"exponential": "lambda", "power": "p", "stretched_exponential": "kappa"}[law]
        form = {"exponential": "c exp(-lambda t)", "power": "c t^-p", "stretched_exponential": "c exp(-kappa sqrt t)"}[law]
        ax.plot(grid[inside], curve[inside], "k--", lw=2,
                label=f"fit {form}: {symbol} = {par:.5g} +- {err:.2g}" + (" (with correction)" if fit.get("corrected") else ""))
        ax.plot(grid, curve, "k:", lw=0.8)
        ax.axvspan(t0, t1, color="0.9", zorder=0, label="fit window")
    ax.set_yscale("log")
    time_axis(ax, run, log)
    ax.set_ylabel(quantity.replace("_", " "))
    ax.set_title(f"{run.label}: late-time decay")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def token_order(run):
    """Tokens grouped by final cluster, then by angle (d = 2) or first coordinate."""
    labels = run.obs["cluster_label"][-1]
    final = run.theta[-1]
    key = np.arctan2(final[:, 1], final[:, 0]) if run.d >= 2 else final[:, 0]
    return np.lexsort((key, labels))


def heatmap(run, out, frames):
    idx = run.frame_indices(frames)
    order = token_order(run)
    fig, axes = plt.subplots(1, len(idx), figsize=(3.3 * len(idx) + 1, 3.6), squeeze=False)
    im = None
    for ax, i in zip(axes[0], idx):
        x = run.theta[i][order]
        im = ax.imshow(x @ x.T, vmin=-1, vmax=1, cmap="RdBu_r", interpolation="nearest")
        ax.set_title(f"t = {run.t[i]:.4g}, {int(run.obs['cluster_count'][i])} clusters", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8, label="<theta_j, theta_k>")
    fig.suptitle(f"{run.label}: pairwise cosines (tokens ordered by final cluster)", fontsize=10)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def tokens(run, out, frames, log_time):
    idx = run.frame_indices(frames)
    if run.d == 2:
        fig = plt.figure(figsize=(3.0 * len(idx), 6.5))
        grid = fig.add_gridspec(2, len(idx), height_ratios=[1.4, 1])
        ax = fig.add_subplot(grid[0, :])
        phi = np.arctan2(run.theta[:, :, 1], run.theta[:, :, 0])
        log = log_time or log_spaced(run.t)
        keep = run.t > 0 if log else np.ones_like(run.t, dtype=bool)
        for j in range(run.n):
            ax.plot(run.t[keep], phi[keep, j], ".", ms=1.5, color=plt.cm.hsv(j / run.n))
        ax.set_ylabel("angle of theta_j")
        ax.set_ylim(-np.pi, np.pi)
        time_axis(ax, run, log_time)
        ax.set_title(f"{run.label}: tokens on the circle")
        circle = np.linspace(0, 2 * np.pi, 200)
        for k, i in enumerate(idx):
            a = fig.add_subplot(grid[1, k])
            a.plot(np.cos(circle), np.sin(circle), color="0.8", lw=0.8)
            a.scatter(run.theta[i, :, 0], run.theta[i, :, 1], s=14, c=[plt.cm.hsv(j / run.n) for j in range(run.n)])
            a.set_aspect("equal")
            a.set_xlim(-1.15, 1.15)
            a.set_ylim(-1.15, 1.15)
            a.set_xticks([])
            a.set_yticks([])
            a.set_title(f"t = {run.t[i]:.4g}", fontsize=9)
        fig.tight_layout()
    else:
        points = run.theta
        title = "tokens on the sphere"
        if run.d > 3:
            # Top 3 principal directions of all frames together.
            flat = points.reshape(-1, run.d)
            _, _, vt = np.linalg.svd(flat - flat.mean(axis=0), full_matrices=False)
            points = points @ vt[:3].T
            title = "tokens projected on the top 3 principal directions"
        fig = plt.figure(figsize=(3.4 * len(idx), 3.8))
        u, v = np.mgrid[0:2 * np.pi:30j, 0:np.pi:15j]
        for k, i in enumerate(idx):
            a = fig.add_subplot(1, len(idx), k + 1, projection="3d")
            if run.d == 3:
                a.plot_wireframe(np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v), color="0.85", lw=0.4)
            a.scatter(points[i, :, 0], points[i, :, 1], points[i, :, 2], s=10,
                      c=[plt.cm.hsv(j / run.n) for j in range(run.n)], depthshade=False)
            a.set_title(f"t = {run.t[i]:.4g}", fontsize=9)
            # One scale for every snapshot (unit vectors and their projections lie in the unit ball).
            a.set_xlim(-1, 1)
            a.set_ylim(-1, 1)
            a.set_zlim(-1, 1)
            a.set_xticks([])
            a.set_yticks([])
            a.set_zticks([])
        fig.suptitle(f"{run.label}: {title}", fontsize=10)
        fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def compare(runs, out, log_time):
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.8))
    log = log_time or any(log_spaced(r.t) for r in runs)
    for k, r in enumerate(runs):
        t, y, speed = positive_time(r.obs_time, r.obs["one_minus_mean_cosine"], r.obs["mean_angular_speed"], log=log)
        keep = y > 0
        a.plot(t[keep], y[keep], label=r.label, color=f"C{k % 10}")
        keep = speed > 0
        b.plot(t[keep], speed[keep], label=r.label, color=f"C{k % 10}")
    a.set_yscale("log")
    a.set_ylabel("1 - mean cosine")
    b.set_yscale("log")
    b.set_ylabel("mean angular speed")
    for ax in (a, b):
        if log:
            ax.set_xscale("log")
        ax.set_xlabel("t (depth)")
    a.legend(fontsize=8)
    fig.suptitle("runs compared", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="HDF5 run files, analyzed with `normdyn analyze`")
    parser.add_argument("--output-dir", help="directory of the PNG files (default: RUN_plots beside the first run)")
    parser.add_argument("--kind", action="append", choices=KINDS + ("all",), help="figures to draw (default: all)")
    parser.add_argument("--frames", nargs="+", type=int, default=[], help="frames of heatmaps and snapshots")
    parser.add_argument("--labels", nargs="+", default=[], help="legend labels of the runs")
    parser.add_argument("--log-time", action="store_true", help="logarithmic time axis")
    args = parser.parse_args(argv)
    kinds = set(KINDS) if not args.kind or "all" in args.kind else set(args.kind)
    if args.labels and len(args.labels) != len(args.runs):
        raise InputProblem(f"--labels: {len(args.labels)} labels for {len(args.runs)} runs")
    labels = args.labels or [None] * len(args.runs)
    runs = [Run(path, label) for path, label in zip(args.runs, labels)]
    global plt
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    plt = matplotlib.pyplot
    out_dir = args.output_dir or os.path.join(os.path.dirname(os.path.abspath(args.runs[0])), runs[0].stem + "_plots")
    os.makedirs(out_dir, exist_ok=True)
    written = []

    def target(name):
        path = os.path.join(out_dir, name)
        written.append(path)
        return path

    for run in runs:
        if "overview" in kinds:
            overview(run, target(f"{run.stem}_overview.png"), args.log_time)
        if "decay" in kinds:
            decay(run, target(f"{run.stem}_decay.png"), args.log_time)
        if "heatmap" in kinds:
            heatmap(run, target(f"{run.stem}_heatmap.png"), args.frames)
        if "tokens" in kinds:
            tokens(run, target(f"{run.stem}_tokens.png"), args.frames, args.log_time)
    if "compare" in kinds:
        compare(runs, target("compare.png"), args.log_time)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except InputProblem as e:
        print(f"plot_run.py: error: {e}", file=sys.stderr)
        sys.exit(2)
    except OSError as e:
        print(f"plot_run.py: error: {e}", file=sys.stderr)
        sys.exit(3)
