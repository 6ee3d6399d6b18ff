#!/usr/bin/python3
"""Ensemble figures of a normdyn sweep, from its index alone (run with /usr/bin/python3).

    plot_sweep.py DIR [--output-dir OUT] [--log-time | --linear-time]

Reads DIR/index.h5, written by `normdyn sweep SWEEP.toml -o DIR` (its /ensemble group holds the
statistics over the repetitions of each configuration, see README "Sweeps and ensembles"), and
writes PNG files (Agg backend) into OUT (default DIR/plots):

    clusters.png          mean cluster count against t, with a band of one standard deviation and
                          the minimum and maximum over the runs, one curve per configuration
    sync_probability.png  probability of synchronization by time t (every pair of tokens with
                          cosine above pair_cosine), with its binomial standard error
    phase_diagram.png     mean fraction of token pairs with cosine above pair_cosine over
                          (phase axis, t), one panel per value of the remaining axes; only when the
                          sweep has a phase axis (default model.beta)

The time axis is logarithmic when the sample times span more than two decades (or --log-time).
Exit codes: 0 ok, 2 bad input (no index, no successful runs), 3 I/O failure.
"""
import argparse
import os
import sys

import h5py
import numpy as np

plt = None  # matplotlib.pyplot, imported once the inputs are known to be good


class InputProblem(Exception):
    pass


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def _label(key):
    return key.split(".")[-1]


def _value_text(v):
    if isinstance(v, (bytes, str)):
        return _text(v)
    if float(v).is_integer():
        return str(int(v))
    return f"{float(v):g}"


class Ensemble:
    def __init__(self, directory):
        path = os.path.join(directory, "index.h5")
        if not os.path.exists(path):
            raise InputProblem(f"{path}: no index; run `normdyn sweep SWEEP.toml -o {directory}` first")
        with h5py.File(path, "r") as f:
            if _text(f.attrs.get("schema", "")) != "normdyn.sweep/1":
                raise InputProblem(f"{path}: not a normdyn sweep index")
            self.over = _text(f.attrs["ensemble_over"])
            self.phase_axis = _text(f.attrs["phase_axis"])
            self.pair_cosine = float(f.attrs["pair_cosine"])
            self.cluster_epsilon = float(f.attrs["cluster_epsilon"])
            self.axes = [_text(k) for k in f["axes/key"][()]]
            e = f["ensemble"]
            self.group_axes = [k for k in self.axes if k != self.over]
            self.values = {}
            for k in self.group_axes:
                ds = e[k]
                self.values[k] = ds.asstr()[()] if h5py.check_string_dtype(ds.dtype) else ds[()]
            self.runs = e["runs"][()]
            self.runs_used = e["runs_used"][()]
            self.problem = e["problem"].asstr()[()]
            self.m = {name: e[name][()] for name in ("time", "runs_at", "cluster_mean", "cluster_std", "cluster_min",
                                                    "cluster_max", "pair_fraction_mean", "sync_probability")}
        self.groups = len(self.runs)
        self.ok = [g for g in range(self.groups) if self.runs_used[g] > 0 and not self.problem[g]]
        if not self.ok:
            raise InputProblem(f"{path}: no configuration has a successful run")

    def label(self, g, skip=()):
        parts = [f"{_label(k)} = {_value_text(self.values[k][g])}" for k in self.group_axes if k not in skip]
        return ", ".join(parts) if parts else "all runs"

    def time(self, g):
        t = self.m["time"][g]
        return t[np.isfinite(t)]


def _log_time(ens, args):
    if args.log_time:
        return True
    if args.linear_time:
        return False
    t = np.concatenate([ens.time(g) for g in ens.ok])
    positive = t[t > 0]
    return positive.size > 1 and positive.max() / positive.min() > 100


def _set_time_axis(ax, log):
    ax.set_xlabel("t (depth)")
    if log:
        ax.set_xscale("log")


def _colors(count):
    return plt.cm.viridis(np.linspace(0.0, 0.9, max(count, 1)))


def _runs_note(ens, g):
    return f" ({ens.runs_used[g]} runs)" if ens.runs_used[g] != ens.runs[g] or ens.over else ""


def plot_clusters(ens, out, log):
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for color, g in zip(_colors(len(ens.ok)), ens.ok):
        t = ens.time(g)
        keep = t > 0 if log else np.ones_like(t, dtype=bool)
        f = lambda name: ens.m[name][g][: len(t)][keep]
        tt = t[keep]
        ax.plot(tt, f("cluster_mean"), color=color, lw=1.6, label=ens.label(g) + _runs_note(ens, g))
        std = np.nan_to_num(f("cluster_std"))
        # The band, kept within the observed range (a count is never below the minimum).
        low = np.maximum(f("cluster_mean") - std, f("cluster_min"))
        high = np.minimum(f("cluster_mean") + std, f("cluster_max"))
        ax.fill_between(tt, low, high, color=color, alpha=0.18, lw=0)
        ax.plot(tt, f("cluster_min"), color=color, lw=0.6, ls=":", alpha=0.7)
        ax.plot(tt, f("cluster_max"), color=color, lw=0.6, ls=":", alpha=0.7)
    _set_time_axis(ax, log)
    ax.set_ylabel(f"clusters (cosine > 1 - {ens.cluster_epsilon:g})")
    ax.set_yscale("log")
    ax.set_title("Cluster count: mean and ± one standard deviation over the runs (dotted: min, max)", fontsize=10)
    ax.legend(fontsize=7, ncol=2 if len(ens.ok) > 8 else 1)
    fig.tight_layout()
    path = os.path.join(out, "clusters.png")
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def plot_sync(ens, out, log):
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for color, g in zip(_colors(len(ens.ok)), ens.ok):
        t = ens.time(g)
        keep = t > 0 if log else np.ones_like(t, dtype=bool)
        p = ens.m["sync_probability"][g][: len(t)][keep]
        m = ens.m["runs_at"][g][: len(t)][keep]
        se = np.sqrt(p * (1 - p) / np.maximum(m, 1))
        ax.step(t[keep], p, where="post", color=color, lw=1.6, label=ens.label(g) + _runs_note(ens, g))
        ax.fill_between(t[keep], p - se, p + se, step="post", color=color, alpha=0.15, lw=0)
    _set_time_axis(ax, log)
    ax.set_ylim(-0.03, 1.03)
    ax.set_ylabel(f"P(every pair has cosine > {ens.pair_cosine:g} by t)")
    ax.set_title("Probability of synchronization by time t (band: binomial standard error)", fontsize=10)
    ax.legend(fontsize=7, ncol=2 if len(ens.ok) > 8 else 1)
    fig.tight_layout()
    path = os.path.join(out, "sync_probability.png")
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def _edges(values, log):
    v = np.asarray(values, dtype=float)
    if len(v) == 1:
        return np.array([v[0] * 0.8, v[0] * 1.25]) if log else np.array([v[0] - 0.5, v[0] + 0.5])
    w = np.log(v) if log else v
    mid = (w[1:] + w[:-1]) / 2
    e = np.concatenate([[w[0] - (mid[0] - w[0])], mid, [w[-1] + (w[-1] - mid[-1])]])
    return np.exp(e) if log else e


def plot_phase(ens, out, log):
    key = ens.phase_axis
    if not key:
        return None
    others = [k for k in ens.group_axes if k != key]
    panels = {}
    for g in ens.ok:
        panels.setdefault(tuple(_value_text(ens.values[k][g]) for k in others), []).append(g)
    count = len(panels)
    cols = min(count, 3)
    rows = (count + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols + 1.2, 4.2 * rows), squeeze=False)
    mesh = None
    for ax, (panel, groups) in zip(axes.flat, panels.items()):
        groups = sorted(groups, key=lambda g: float(ens.values[key][g]))
        ys = np.array([float(ens.values[key][g]) for g in groups])
        t = ens.time(groups[0])
        if any(len(ens.time(g)) != len(t) or not np.allclose(ens.time(g), t) for g in groups):
            ax.set_title("sample times differ between the rows")
            continue
        keep = t > 0 if log else np.ones_like(t, dtype=bool)
        z = np.array([ens.m["pair_fraction_mean"][g][: len(t)][keep] for g in groups])
        ylog = ys.min() > 0 and ys.max() / ys.min() > 10
        mesh = ax.pcolormesh(_edges(t[keep], log), _edges(ys, ylog), z, vmin=0, vmax=1, cmap="viridis",
                             shading="flat")
        if len(groups) > 1 and len(t[keep]) > 1:
            ax.contour(t[keep], ys, z, levels=[0.5], colors="white", linewidths=1.0)
        _set_time_axis(ax, log)
        if ylog:
            ax.set_yscale("log")
        ax.yaxis.set_minor_locator(plt.NullLocator())
        ax.set_yticks(ys)
        ax.set_yticklabels([_value_text(y) for y in ys])
        ax.set_ylabel(_label(key))
        title = ", ".join(f"{_label(k)} = {v}" for k, v in zip(others, panel))
        ax.set_title(title or "all runs", fontsize=9)
    for ax in list(axes.flat)[count:]:
        ax.set_visible(False)
    if mesh is not None:
        cbar = fig.colorbar(mesh, ax=axes, shrink=0.9)
        cbar.set_label(f"fraction of pairs with cosine > {ens.pair_cosine:g} (mean over runs)")
    fig.suptitle(f"Phase diagram over ({_label(key)}, t); white: fraction 0.5", fontsize=10)
    path = os.path.join(out, "phase_diagram.png")
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dir", help="the sweep directory (holds index.h5)")
    p.add_argument("-o", "--output-dir", help="where the PNGs go (default DIR/plots)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--log-time", action="store_true")
    g.add_argument("--linear-time", action="store_true")
    args = p.parse_args(argv)
    try:
        ens = Ensemble(args.dir)
    except InputProblem as e:
        print(f"plot_sweep.py: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"plot_sweep.py: error: {e}", file=sys.stderr)
        return 3
    global plt
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    plt = pyplot
    out = args.output_dir or os.path.join(args.dir, "plots")
    os.makedirs(out, exist_ok=True)
    log = _log_time(ens, args)
    written = [plot_clusters(ens, out, log), plot_sync(ens, out, log), plot_phase(ens, out, log)]
    for path in written:
        if path:
            print(path)
    if not ens.phase_axis:
        print("plot_sweep.py: no phase axis (model.beta is not an axis; set [ensemble] phase_axis): "
              "no phase diagram", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
