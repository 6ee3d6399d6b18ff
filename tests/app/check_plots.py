#!/usr/bin/python3
"""Checks of python/normdyn/plots.py on an analyzed run (run by tests/app/test_plots_cli.cpp):
every figure function returns a matplotlib Figure; a failed or flagged rate fit is never drawn and
does not stretch the axis; qualitative colours for schemes; label warnings."""
import copy
import importlib.util
import os
import sys

from matplotlib.figure import Figure

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("plots", os.path.join(here, os.pardir, os.pardir, "python", "normdyn", "plots.py"))
plots = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plots)

run = plots.load_run(sys.argv[1])
for make in (plots.overview_figure, plots.decay_figure, plots.heatmap_figure, plots.tokens_figure,
             plots.trajectory_figure):
    fig = make(run)
    assert isinstance(fig, Figure), make.__name__
fig = plots.heatmap_figure(run, log_one_minus_cos=True)
assert isinstance(fig, Figure)

good = {"law": "exponential", "parameter": 2.0, "stderr": 0.01, "log_c": 0.0, "window": [1.0, 5.0],
        "problem": None, "decay_factor": 1e3, "correction_coefficient": 0.0}
assert plots.citable_fit(good)
for bad in ({"problem": "metastable: ..."}, {"parameter": 6.2e-11 * -1}, {"parameter": float("nan")}, {"law": None}):
    f = dict(good, **bad)
    assert plots.citable_fit(f) is None, bad
old = dict(good)
del old["problem"]
assert plots.citable_fit(dict(old, decay_factor=1.5)) is None  # old reports: the factor-10 criterion

def lines_and_limits(fit):
    r = copy.copy(run)
    r.report = dict(run.report, rate_fit=fit)
    ax = plots.decay_figure(r).axes[0]
    labels = [l.get_label() for l in ax.get_lines()]
    return labels, ax.get_ylim()

data_labels, data_limits = lines_and_limits({})
# A fit of λ = 6.2e-11 flagged by the analysis: no line, same axis.
flagged = dict(good, parameter=6.2e-11, log_c=-80.0, problem="nothing_decays: the quantity does not decay")
labels, limits = lines_and_limits(flagged)
assert not any(l.startswith("fit") for l in labels), labels
assert limits == data_limits, (limits, data_limits)
labels, _ = lines_and_limits(good)
assert any(l.startswith("fit") for l in labels), labels

assert plots.label_warnings([run], [run.scheme]) == []
other = "pre" if run.scheme != "pre" else "post"
assert plots.label_warnings([run], [f"{other}-LN seed 1"]), "no warning for a contradicting label"
assert plots.style(0)["color"] != plots.style(1)["color"]
assert plots.style(0)["linestyle"] != plots.style(1)["linestyle"]
assert plots.scheme_colour("post") != plots.scheme_colour("pre")
print("check_plots: ok")
