"""What the user sees without asking: warnings of doubtful results (normdyn.ResultWarning) from run,
load and analyze; a clear error for a Dataset whose file is closed; short xarray long_names; and the
figures and animations of normdyn.plots from Datasets."""
import os
import warnings

import numpy as np
import pytest

import normdyn

# M = 256 is too coarse for the clusters of this density from t ~ 15 (test_analysis.py uses it too).
MEANFIELD = {"model": {"kind": "meanfield", "scheme": "post", "beta": 16.0}, "meanfield": {"grid": 256},
             "init": {"kind": "von_mises", "centers": [0.5, 1.6, 2.9, 4.0, 5.3], "kappa": [1.0],
                      "weights": [1.0, 0.7, 1.3, 0.9, 1.1]},
             "solver": {"t_end": 20.0}, "output": {"samples": 41}}
SMALL = {"model": {"n": 12, "d": 3, "beta": 2.0}, "solver": {"t_end": 5.0}, "output": {"samples": 21}}


def test_under_resolved_warns_on_run_load_and_analyze(tmp_path):
    assert issubclass(normdyn.ResolutionWarning, normdyn.ResultWarning)
    assert issubclass(normdyn.FitWarning, normdyn.ResultWarning)
    assert issubclass(normdyn.ResultWarning, UserWarning)
    path = tmp_path / "mf.h5"
    with pytest.warns(normdyn.ResolutionWarning, match="under_resolved: clusters narrower than 1 grid cell") as got:
        ds = normdyn.run(MEANFIELD, output=path)
    # Pointed at the caller's line, not at the package.
    assert got[0].filename == __file__
    assert ds.attrs["status"] == "ok"
    assert ds.attrs["warnings"].startswith("under_resolved: ")
    with pytest.warns(normdyn.ResolutionWarning, match=str(path)) as got:
        normdyn.load(path).close()
    assert got[0].filename == __file__
    with pytest.warns(normdyn.ResolutionWarning, match="under_resolved") as got:
        report = normdyn.analyze(path)
    assert got[0].filename == __file__
    assert [w["code"] for w in report["warnings"]] == ["under_resolved"]
    # The program's own filter turns them into errors.
    with warnings.catch_warnings():
        warnings.simplefilter("error", normdyn.ResultWarning)
        with pytest.raises(normdyn.ResolutionWarning):
            normdyn.load(path)


# The diagnostic covers every variant of the mean field: noise, the uniform normalizer, the
# semi-Lagrangian transport and causal attention (the narrowest cluster of any cursor slice).
VARIANTS = {
    "noise": {"noise": {"kind": "independent", "sigma": 0.02}, "solver": {"method": "split", "dt": 0.02, "t_end": 20.0}},
    "uniform": {"model": {"kind": "meanfield", "scheme": "post", "beta": 4.0}, "attention": {"normalizer": "uniform"},
                "solver": {"t_end": 8.0}},
    "semi_lagrangian": {"meanfield": {"grid": 256, "method": "semi_lagrangian"},
                        "solver": {"method": "split", "dt": 0.02, "t_end": 20.0}},
    "causal": {"attention": {"mask": "causal", "bias": "alibi", "alibi_slope": 1.0},
               "meanfield": {"grid": 64, "cursor_grid": 4}},
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_under_resolved_covers_every_variant(tmp_path, variant):
    config = dict(MEANFIELD, **VARIANTS[variant])
    path = tmp_path / "mf.h5"
    with pytest.warns(normdyn.ResolutionWarning, match="under_resolved"):
        ds = normdyn.run(config, output=path)
    assert ds.attrs["status"] == "ok"
    assert ds.attrs["warnings"].startswith("under_resolved: ")
    with pytest.warns(normdyn.ResolutionWarning, match="under_resolved"):
        report = normdyn.analyze(path)
    assert [w["code"] for w in report["warnings"]] == ["under_resolved"]


def test_a_resolved_run_warns_nothing(tmp_path):
    resolved = dict(MEANFIELD, solver={"t_end": 2.0}, output={"samples": 5})
    with warnings.catch_warnings():
        warnings.simplefilter("error", normdyn.ResultWarning)
        ds = normdyn.run(resolved, output=tmp_path / "ok.h5")
        normdyn.load(tmp_path / "ok.h5").close()
        normdyn.analyze(ds)
        normdyn.run(SMALL)
    assert "warnings" not in ds.attrs


def test_a_rate_not_to_cite_warns_on_analyze(tmp_path):
    # 32 tokens on the circle at beta = 9 end in four clusters: a metastable state, not the collapse.
    ds = normdyn.run({"model": {"n": 32, "d": 2, "beta": 9.0}, "solver": {"t_end": 100.0}, "output": {"samples": 201}})
    with pytest.warns(normdyn.FitWarning, match="inconclusive_fit: the decay rate fitted to one_minus_mean_cosine "
                                                "is not one to cite \\(metastable\\)"):
        report = normdyn.analyze(ds)
    assert report["rate_fit"]["problem"] == "metastable"
    assert [w["code"] for w in report["warnings"]] == ["inconclusive_fit"]
    # A citable rate: no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", normdyn.ResultWarning)
        clean = normdyn.analyze(normdyn.run({"model": {"n": 16, "d": 3, "beta": 1.0}, "solver": {"t_end": 25.0},
                                             "output": {"samples": 251}}))
    assert clean["rate_fit"]["problem"] is None and clean["warnings"] == []


def test_closed_dataset_says_how_to_get_its_values(tmp_path):
    path = tmp_path / "r.h5"
    normdyn.run(SMALL, output=path)
    with normdyn.load(path) as ds:
        kept = ds.isel(time=[0, -1]).load()
    with pytest.raises(ValueError, match=r"closed.*normdyn\.load\(.*ds\.load\(\)") as e:
        ds.direction.values
    assert str(path) in str(e.value)
    assert kept.direction.shape == (2, 12, 3)  # loaded while open: kept


def test_long_names_are_short_enough_for_plot_labels(tmp_path):
    import warnings as w
    with w.catch_warnings():
        w.simplefilter("ignore", normdyn.ResultWarning)
        datasets = [normdyn.run(SMALL), normdyn.run(MEANFIELD), normdyn.observables(normdyn.run(SMALL)),
                    normdyn.observables(normdyn.run(MEANFIELD))]
    for ds in datasets:
        for name, var in list(ds.data_vars.items()) + list(ds.coords.items()):
            long_name = var.attrs.get("long_name", "")
            assert long_name and len(long_name) <= 30, (name, long_name)
    assert datasets[0].time.attrs["long_name"] == "time t"
    assert "depth" in datasets[0].time.attrs["description"]
    assert datasets[1].density.attrs["long_name"] == "density ρ"


def test_figures_and_animations_from_datasets(tmp_path):
    from matplotlib.animation import FuncAnimation
    from matplotlib.figure import Figure
    from normdyn import plots
    circle = normdyn.run({"model": {"n": 10, "d": 2, "beta": 4.0}, "solver": {"t_end": 5.0}, "output": {"samples": 11}})
    anim = plots.animate(circle)
    assert isinstance(anim, FuncAnimation)
    seen = []
    out = plots.animate(circle, tmp_path / "c.gif", max_frames=6, progress=lambda done, total: seen.append((done, total)))
    assert out == str(tmp_path / "c.gif") and open(out, "rb").read(4) == b"GIF8"
    assert seen[-1] == (6, 6)
    with pytest.raises(FileExistsError):
        plots.animate(circle, tmp_path / "c.gif")
    with pytest.raises(ValueError, match="mp4 or .gif"):
        plots.animate(circle, tmp_path / "c.avi")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", normdyn.ResultWarning)
        mf = normdyn.run(MEANFIELD)
    plots.animate(mf, tmp_path / "mf.mp4", max_frames=5, width="page", dpi=60)
    assert open(tmp_path / "mf.mp4", "rb").read(8)[4:] == b"ftyp"
    ens = normdyn.ensemble({"model": {"n": 8, "d": 2}, "solver": {"t_end": 10.0}, "output": {"samples": 21}},
                           axes={"model.beta": [1.0, 4.0], "init.seed": [1, 2]}, threads=1)
    fig = plots.phase_figure(ens)
    assert isinstance(fig, Figure)
    assert "$\\beta$" in fig.axes[0].get_ylabel()
    assert not [f for f in os.listdir(tmp_path) if ".partial" in f]
