"""The gallery page: every figure kind of normdyn.plots and one animation, made at the site's build
by the figure functions themselves from small runs (nothing pasted, nothing committed).

    ```{normdyn-gallery}
    ```

The runs (a few seconds each) and the figures go into docs/_generated/gallery/ (ignored by git);
each entry of the page shows the call that drew it. Uses the normdyn package on PYTHONPATH and the
program of $NORMDYN_BINARY (scripts/docs.sh sets both).
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import tempfile

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

SOURCE = pathlib.Path(__file__).resolve().parents[2]

# (file, title, the call shown on the page, what the figure shows)
ENTRIES = [
    ("overview", "Overview", "plots.overview_figure(plots.load_run(\"staircase.h5\"))",
     "The staircase of cluster counts of 32 tokens on the circle (Post-LN, beta = 60, "
     "data/configs/staircase_circle.toml): plateaus shaded and labelled by their count, and the energy."),
    ("tokens_circle", "Tokens on the circle", "plots.tokens_figure(circle, width=\"page\")",
     "The angle of every token against t, and snapshots; colours: clusters."),
    ("heatmap", "Pairwise cosines", "plots.heatmap_figure(circle, width=\"page\")",
     "The Gram matrix at four times, tokens ordered by their final cluster."),
    ("decay", "Decay and its rate", "plots.decay_figure(plots.load_run(\"sphere.h5\"))",
     "1 - gamma and Var of a Post-LN run on the sphere, with the fitted exponential law over its window."),
    ("tokens_sphere", "Tokens on the sphere", "plots.tokens_figure(sphere, width=\"page\")",
     "Snapshots on S^2 with an equal aspect; for d > 3 the top 3 principal directions."),
    ("trajectory", "The paper's observables", "plots.trajectory_figure(plots.load_run(\"pre.h5\"))",
     "gamma, its rate, the angular speed, the mean radius and the Post-LN clock of a Pre-LN run."),
    ("compare", "Six schemes", "plots.compare_figure([plots.load_run(f\"sym_{s}.h5\") for s in schemes])",
     "The symmetric start of Theorem 4.1 (n = d = 16, beta = 1) in every scheme."),
    ("meanfield", "Mean field", "plots.meanfield_figure(plots.load_meanfield(\"meanfield.h5\"))",
     "The angular density in (t, phi), snapshots, its Fourier modes against the linear rates, clusters and W1."),
    ("phase", "Phase diagram", "plots.phase_figure(\"ensemble.h5\")",
     "Fraction of synchronized pairs over (beta, t) from an ensemble file of `normdyn ensemble`."),
    ("clusters", "Ensemble cluster count", "plots.sweep_clusters_figure(plots.load_ensemble(\"ensemble.h5\"))",
     "Mean cluster count over 8 seeds per beta, with one standard deviation where the file has it."),
    ("sync", "Probability of synchronization", "plots.sweep_sync_figure(plots.load_ensemble(\"ensemble.h5\"))",
     "The fraction of members synchronized by t, with the binomial standard error."),
    ("medians", "Medians of a sweep", "plots.sweep_median_figure(plots.load_group_curves(\"sweep\"))",
     "Per configuration of a `normdyn sweep` directory: medians and 10-90 % bands of the runs."),
    ("animation", "Animation", "plots.animate(\"circle.h5\", \"circle.gif\", max_frames=60, fps=12)",
     "`normdyn animate circle.h5 -o circle.gif` renders the same: tokens moving into clusters."),
]

SWEEP = """base = "base.toml"
[axes]
"model.beta" = [1.0, 4.0]
"init.seed" = [1, 2, 3]
[ensemble]
over = "init.seed"
"""


def _binary():
    return os.environ.get("NORMDYN_BINARY") or shutil.which("normdyn") or "normdyn"


def generate(folder: pathlib.Path) -> None:
    """Runs the small experiments and draws every entry of ENTRIES into `folder`."""
    import warnings

    import normdyn
    from normdyn import plots
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="normdyn-gallery-") as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore", normdyn.ResultWarning)  # the gallery shows figures, not verdicts
        runs = pathlib.Path(tmp)

        def run(name, config, analyze=True):
            path = str(runs / f"{name}.h5")
            normdyn.run(config, output=path)
            if analyze:
                normdyn.analyze(path, no_write=False)
            return path

        stairs = run("staircase", SOURCE / "data" / "configs" / "staircase_circle.toml")
        circle = run("circle", {"model": {"scheme": "post", "n": 32, "d": 2, "beta": 9.0},
                                "solver": {"t_end": 200.0}, "output": {"samples": 401}})
        sphere = run("sphere", {"model": {"scheme": "post", "n": 24, "d": 3, "beta": 1.0},
                                "solver": {"t_end": 25.0}, "output": {"samples": 251}})
        pre = run("pre", {"model": {"scheme": "pre", "n": 24, "d": 3, "beta": 1.0},
                          "solver": {"t_end": 50.0}, "output": {"samples": 251}})
        schemes = ("post", "pre", "mix", "peri", "ngpt", "cod")
        sym = [run(f"sym_{s}", {"model": {"scheme": s, "n": 16, "d": 16, "beta": 1.0}, "init": {"kind": "orthonormal"},
                                "solver": {"t_end": 50.0}, "output": {"samples": 201}}) for s in schemes]
        meanfield = run("meanfield", {"model": {"kind": "meanfield", "scheme": "post", "beta": 16.0},
                                      "meanfield": {"grid": 512},
                                      "init": {"kind": "von_mises", "centers": [0.5, 1.6, 2.9, 4.0, 5.3],
                                               "kappa": [1.0], "weights": [1.0, 0.7, 1.3, 0.9, 1.1]},
                                      "solver": {"t_end": 40.0}, "output": {"samples": 161}})
        ensemble = str(runs / "ensemble.h5")
        normdyn.ensemble({"model": {"n": 16, "d": 2}, "solver": {"t_end": 30.0}, "output": {"samples": 121}},
                         axes={"model.beta": [1.0, 2.0, 4.0, 8.0], "init.seed": range(1, 9)}, output=ensemble)
        (runs / "base.toml").write_text(normdyn.to_toml({"model": {"n": 12, "d": 3}, "solver": {"t_end": 20.0},
                                                         "output": {"samples": 81}}))
        (runs / "sweep.toml").write_text(SWEEP)
        subprocess.run([_binary(), "sweep", str(runs / "sweep.toml"), "-o", str(runs / "sweep"), "-q", "--jobs", "2"],
                       check=True, cwd=runs, stdout=subprocess.DEVNULL)

        c, s = plots.load_run(circle), plots.load_run(sphere)
        ens = plots.load_ensemble(ensemble)
        figures = {
            "overview": plots.overview_figure(plots.load_run(stairs)),
            "tokens_circle": plots.tokens_figure(c, width="page"),
            "heatmap": plots.heatmap_figure(c, width="page"),
            "decay": plots.decay_figure(s),
            "tokens_sphere": plots.tokens_figure(s, width="page"),
            "trajectory": plots.trajectory_figure(plots.load_run(pre)),
            "compare": plots.compare_figure([plots.load_run(p) for p in sym]),
            "meanfield": plots.meanfield_figure(plots.load_meanfield(meanfield)),
            "phase": plots.phase_figure(ensemble),
            "clusters": plots.sweep_clusters_figure(ens),
            "sync": plots.sweep_sync_figure(ens),
            "medians": plots.sweep_median_figure(plots.load_group_curves(str(runs / "sweep"))),
        }
        for name, fig in figures.items():
            plots.save(fig, folder / f"{name}.png", dpi=150)
        target = folder / "animation.gif"
        if target.exists():
            target.unlink()
        plots.animate(circle, target, max_frames=60, fps=12, dpi=100, progress=False)


class NormdynGallery(SphinxDirective):
    """Every figure kind, drawn at the build (see the module's docstring)."""
    has_content = False

    def run(self):
        folder = pathlib.Path(self.env.srcdir) / "_generated" / "gallery"
        if not getattr(self.env, "_normdyn_gallery_done", False):
            generate(folder)
            self.env._normdyn_gallery_done = True
        result = []
        for name, title, call, text in ENTRIES:
            ext = "gif" if name == "animation" else "png"
            result += [nodes.rubric(text=title, ids=[f"gallery-{name}"]), nodes.paragraph(text=text),
                       nodes.literal_block(call, call, language="python"),
                       nodes.image(uri=f"/_generated/gallery/{name}.{ext}", alt=title)]
        return result


def setup(app):
    app.add_directive("normdyn-gallery", NormdynGallery)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
