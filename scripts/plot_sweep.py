#!/usr/bin/python3
"""Ensemble figures of a normdyn sweep, from its index alone (run with /usr/bin/python3).

    plot_sweep.py DIR|ENSEMBLE.h5 [--output-dir OUT] [--log-time | --linear-time] [--format png|pdf|svg ...]

Reads DIR/index.h5, written by `normdyn sweep SWEEP.toml -o DIR` (its /ensemble group holds the
statistics over the repetitions of each configuration, see README "Sweeps and ensembles"), and
writes into OUT (default DIR/plots), per format (default png):

    clusters          mean cluster count against t, with a band of one standard deviation, one curve
                      per configuration (qualitative colours for a string axis such as model.scheme)
    sync_probability  probability of synchronization by time t (every pair of tokens with
                      cosine above pair_cosine), with its binomial standard error
    medians           per group: median over its runs of 1 - mean cosine, mean radius and the angle
                      moved per layer (discrete runs; else per unit t), band 10-90 % (reads runs/)
    groups.csv        per group: laws fitted, median rate with quartiles, t_sync (also printed)
    phase_diagram     mean fraction of token pairs with cosine above pair_cosine over
                      (phase axis, t), one panel per value of the remaining axes; only when the
                      sweep has a phase axis (default model.beta)

An ensemble file of `normdyn ensemble` (ENSEMBLE.h5) gives the clusters, sync_probability and
phase_diagram figures (the phase axis: beta when it is an axis), into ENSEMBLE_plots beside it.

The time axis is logarithmic when the sample times span more than two decades (or --log-time).
Exit codes: 0 ok, 2 bad input (no index, no successful runs), 3 I/O failure.
The figures come from python/normdyn/plots.py (importable: each function returns a Figure).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _load_plots  # noqa: E402


def main(argv):
    plots = _load_plots.load()
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dir", help="the sweep directory (holds index.h5), or an ensemble file")
    p.add_argument("-o", "--output-dir", help="where the figures go (default DIR/plots)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--log-time", action="store_true")
    g.add_argument("--linear-time", action="store_true")
    p.add_argument("--format", action="append", choices=plots.FORMATS, help="output format (repeatable; default png)")
    args = p.parse_args(argv)
    try:
        ens = plots.load_ensemble(args.dir)
    except plots.InputProblem as e:
        print(f"plot_sweep.py: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"plot_sweep.py: error: {e}", file=sys.stderr)
        return 3
    is_file = os.path.isfile(args.dir)
    out = args.output_dir or (os.path.splitext(args.dir)[0] + "_plots" if is_file else os.path.join(args.dir, "plots"))
    os.makedirs(out, exist_ok=True)
    log = True if args.log_time else False if args.linear_time else ens.log_time()
    formats = args.format or ["png"]
    written = []
    for name, make in (("clusters", plots.sweep_clusters_figure), ("sync_probability", plots.sweep_sync_figure),
                       ("phase_diagram", plots.sweep_phase_figure)):
        fig = make(ens, log)
        if fig is not None:
            written.extend(plots.save(fig, os.path.join(out, name), formats))
    if is_file:
        for path in written:
            print(path)
        return 0
    curves = plots.load_group_curves(args.dir)
    written.extend(plots.save(plots.sweep_median_figure(curves, log), os.path.join(out, "medians"), formats))
    rows = plots.sweep_group_table(curves)
    table = os.path.join(out, "groups.csv")
    import csv
    with open(table + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    os.replace(table + ".tmp", table)
    written.append(table)
    for r in rows:
        print(f"  {r['configuration']}: {r['runs']} runs; laws {r['laws']}; rate {r['rate_median']:.4g} "
              f"[{r['rate_q25']:.4g}, {r['rate_q75']:.4g}]; synchronized {r['synchronized']}, "
              f"median t_sync {r['t_sync_median']:.4g}")
    for path in written:
        print(path)
    if not ens.phase_axis:
        print("plot_sweep.py: no phase axis (model.beta is not an axis; set [ensemble] phase_axis): "
              "no phase diagram", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
