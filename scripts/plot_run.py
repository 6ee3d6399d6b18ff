#!/usr/bin/python3
"""Figures of normdyn runs, from the HDF5 files alone (run with /usr/bin/python3).

    plot_run.py RUN.h5 [RUN2.h5 ...] [-o|--output-dir DIR] [--kind KIND ...] [--frames F ...]
                [--labels L ...] [--log-time] [--format png|pdf|svg ...] [--log-cos]
                [--width column|page|INCHES]

Reads the run file (trajectory, configuration) and its observables: /observables and the analysis
report /analysis@report_json, written by `normdyn analyze RUN.h5` into the run file, or into
RUN.observables.h5 beside it when the run file is read-only. Writes, per format (default png):

    <stem>_overview     cluster count (plateaus shaded) and normalized energy E/(n^2 e^beta) against t
    <stem>_decay        1 - mean cosine (and Var) on log axes with the fitted law over its window,
                        only if the fit is one to cite (rate_fit.problem null, positive parameter)
    <stem>_heatmap      pairwise cosines at chosen frames (tokens ordered by final cluster);
                        --log-cos: log(1 - cos)
    <stem>_tokens       d = 2: angles against t and snapshots on the circle; d >= 3: snapshots on
                        the sphere (d > 3: top 3 principal directions), coloured by cluster
    <stem>_trajectory   gamma(t), its rate, the layer-to-layer angle, the mean radius, the Post-LN clock
    compare             the runs on one figure (only with two runs or more)
    <stem>_meanfield    mean-field run files: density map, snapshots, Fourier modes, clusters, W1
    <stem>_phase        ensemble files of `normdyn ensemble`: the phase diagram (fraction of
                        synchronized pairs over beta and t)

Every figure is in the style of normdyn.plots: --width column (3.4 in), page (7.0 in) or inches
(default: each figure's own), 8 pt text, PNG at 300 dpi, PDF and SVG as vector graphics.

Exit codes: 0 ok, 2 bad input (missing observables: run `normdyn analyze` first), 3 I/O failure.
The figures come from python/normdyn/plots.py (importable: each function returns a Figure).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _load_plots  # noqa: E402

KINDS = ("overview", "decay", "heatmap", "tokens", "trajectory", "compare", "meanfield", "phase")


def file_kind(path):
    """particles, meanfield or ensemble, from the groups of the file."""
    import h5py

    with h5py.File(path, "r") as f:
        if "particles" in f:
            return "particles"
        if "fields" in f:
            return "meanfield"
        if "pair_fraction" in f:
            return "ensemble"
    return "particles"  # load_run names what is missing


def main(argv, plots):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", help="HDF5 run files, analyzed with `normdyn analyze`")
    parser.add_argument("-o", "--output-dir", help="directory of the figures (default: RUN_plots beside the first run)")
    parser.add_argument("--kind", action="append", choices=KINDS + ("all",), help="figures to draw (default: all)")
    parser.add_argument("--frames", nargs="+", type=int, default=[], help="frames of heatmaps and snapshots")
    parser.add_argument("--labels", nargs="+", default=[], help="legend labels of the runs")
    parser.add_argument("--log-time", action="store_true", help="logarithmic time axis")
    parser.add_argument("--log-cos", action="store_true", help="heatmaps of log(1 - cos) instead of cos")
    parser.add_argument("--format", action="append", choices=plots.FORMATS, help="output format (repeatable; default png)")
    parser.add_argument("--width", help="column (3.4 in), page (7.0 in) or inches (default: each figure's own)")
    args = parser.parse_args(argv)
    try:
        width = None if args.width is None else plots.width_inches(args.width)
    except ValueError as e:
        raise plots.InputProblem(f"--{e}") from None
    kinds = set(KINDS) if not args.kind or "all" in args.kind else set(args.kind)
    formats = args.format or ["png"]
    if args.labels and len(args.labels) != len(args.runs):
        raise plots.InputProblem(f"--labels: {len(args.labels)} labels for {len(args.runs)} runs")
    labels = args.labels or [None] * len(args.runs)
    runs, fields, ensembles = [], [], []
    for path, label in zip(args.runs, labels):
        if not os.path.exists(path):
            raise plots.InputProblem(f"{path}: no such file")
        kind = file_kind(path)
        if kind == "meanfield":
            fields.append(plots.load_meanfield(path))
        elif kind == "ensemble":
            ensembles.append((os.path.splitext(os.path.basename(path))[0], plots.load_ensemble(path)))
        else:
            runs.append(plots.load_run(path, label))
    for warning in plots.label_warnings(runs, [l for l, p in zip(labels, args.runs) if p in {r.path for r in runs}]):
        print(f"plot_run.py: warning: {warning}", file=sys.stderr)
    stem = runs[0].stem if runs else fields[0].stem if fields else ensembles[0][0]
    out_dir = args.output_dir or os.path.join(os.path.dirname(os.path.abspath(args.runs[0])), stem + "_plots")
    os.makedirs(out_dir, exist_ok=True)
    written = []

    def emit(fig, name):
        written.extend(plots.save(fig, os.path.join(out_dir, name), formats))

    for run in runs:
        if "overview" in kinds:
            emit(plots.overview_figure(run, args.log_time, width=width), f"{run.stem}_overview")
        if "decay" in kinds:
            emit(plots.decay_figure(run, args.log_time, width=width), f"{run.stem}_decay")
        if "heatmap" in kinds:
            emit(plots.heatmap_figure(run, args.frames, args.log_cos, width=width), f"{run.stem}_heatmap")
        if "tokens" in kinds:
            emit(plots.tokens_figure(run, args.frames, args.log_time, width=width), f"{run.stem}_tokens")
        if "trajectory" in kinds:
            emit(plots.trajectory_figure(run, args.log_time, width=width), f"{run.stem}_trajectory")
    if "meanfield" in kinds:
        for mf in fields:
            emit(plots.meanfield_figure(mf, width=width), f"{mf.stem}_meanfield")
    if "phase" in kinds:
        for name, ens in ensembles:
            fig = plots.phase_figure(ens, True if args.log_time else None, width=width)
            if fig is None:
                print(f"plot_run.py: warning: {name}: no numeric axis: no phase diagram", file=sys.stderr)
            else:
                emit(fig, f"{name}_phase")
    if "compare" in kinds:
        if len(runs) >= 2:
            emit(plots.compare_figure(runs, args.log_time, width=width), "compare")
        elif args.kind and "compare" in args.kind:
            print("plot_run.py: warning: --kind compare needs two runs or more: no compare figure", file=sys.stderr)
    if args.kind and not written:
        have = ", ".join(sorted({"particle runs" if runs else "", "mean-field runs" if fields else "",
                                 "ensemble files" if ensembles else ""} - {""}))
        print(f"plot_run.py: warning: --kind {' '.join(args.kind)}: nothing to draw for {have} "
              "(meanfield: mean-field runs; phase: ensemble files; the others: particle runs)", file=sys.stderr)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    _load_plots.run_script("plot_run.py", main)
