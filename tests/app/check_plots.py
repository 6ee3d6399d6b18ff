#!/usr/bin/python3
"""Checks of python/normdyn/plots.py on an analyzed run (run by tests/app/test_plots_cli.cpp):
every figure function returns a matplotlib Figure; a failed or flagged rate fit is never drawn and
does not stretch the axis; qualitative colours for schemes; label warnings."""
import copy
import os
import sys
import tempfile

import numpy as np
from matplotlib.figure import Figure

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, os.pardir, os.pardir, "scripts"))
import _load_plots  # noqa: E402

plots = _load_plots.load()

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

# One style: journal widths, 8 pt text, mathtext labels, the schemes' names in titles.
fig = plots.decay_figure(run, width="column")
assert abs(fig.get_figwidth() - plots.COLUMN_WIDTH) < 1e-9, fig.get_figwidth()
assert abs(plots.decay_figure(run, width="page").get_figwidth() - plots.PAGE_WIDTH) < 1e-9
assert abs(plots.decay_figure(run, width=5.0).get_figwidth() - 5.0) < 1e-9
for bad in ("half", -1, 0.1, float("nan")):
    try:
        plots.decay_figure(run, width=bad)
    except ValueError:
        pass
    else:
        raise AssertionError(f"width={bad!r} was accepted")
ax = fig.axes[0]
assert "$" in ax.get_ylabel() and "$" in ax.get_xlabel(), (ax.get_xlabel(), ax.get_ylabel())
assert plots.scheme_name(run.scheme) in ax.get_title(), ax.get_title()
assert f"{run.scheme} ({run.stem})" not in ax.get_title(), ax.get_title()
sizes = {t.get_fontsize() for t in ax.get_xticklabels() + ax.get_yticklabels()}
assert sizes and all(6.5 <= z <= 9 for z in sizes), sizes
assert 7 <= ax.xaxis.label.get_fontsize() <= 9

# Many clusters: every colour differs from every other (Delta-E in CIELAB > 15 for 32 of them).
from normdyn_figures import _style  # noqa: E402
colours = np.array(plots.cluster_colours(32))
lab = _style._lab(colours)
gaps = np.linalg.norm(lab[:, None] - lab[None], axis=2) + np.eye(32) * 1e9
assert gaps.min() > 15, gaps.min()
assert len({tuple(c) for c in plots.cluster_colours(64)}) == 64

# Vector output by the file's extension; PNG at 300 dpi; a wrong format named.
with tempfile.TemporaryDirectory() as tmp:
    for ext, head in (("pdf", b"%PDF"), ("svg", b"<?xml"), ("png", b"\x89PNG")):
        path = os.path.join(tmp, f"decay.{ext}")
        assert plots.save(fig, path) == [path]
        with open(path, "rb") as f:
            assert f.read(5).startswith(head), ext
    with open(os.path.join(tmp, "decay.pdf"), "rb") as f:
        assert b"/FontFile2" in f.read(), "PDF fonts are not embedded as TrueType"
    import matplotlib.image
    png = matplotlib.image.imread(os.path.join(tmp, "decay.png"))
    assert abs(png.shape[1] - 300 * plots.COLUMN_WIDTH) <= 2, png.shape
    assert plots.save(fig, os.path.join(tmp, "both"), ["pdf", "svg"]) == [os.path.join(tmp, "both.pdf"),
                                                                          os.path.join(tmp, "both.svg")]
    try:
        plots.save(fig, os.path.join(tmp, "x"), ["jpg"])
    except plots.InputProblem as e:
        assert "jpg" in str(e)
    else:
        raise AssertionError("format jpg accepted")
print("check_plots: ok")
