"""Figures of `normdyn reproduce`: DIR/symmetric_start.json (the reduced ODE of Theorem 4.1),
DIR/reproduction.json (the Theorem 4.2 grid), DIR/random_weights.json (the random-weight networks)
and DIR/metastability.json (staircases, the phase diagram, Peri-LN against Post-LN), in the style
of normdyn.plots (page width, 8 pt, mathtext): each as PNG (300 dpi) and PDF.
Usage: plot_reproduction.py DIR. Exit 4 if matplotlib cannot be imported (the caller then notes that
the figures were skipped)."""
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import _load_plots

    STYLE = _load_plots.load_style()
    matplotlib.rcParams.update(STYLE.RC)
except ImportError as e:  # pragma: no cover
    print(f"matplotlib is missing: {e}", file=sys.stderr)
    sys.exit(4)

WIDE = (STYLE.PAGE_WIDTH, 0.33 * STYLE.PAGE_WIDTH)  # three panels across the page


def _save(fig, path: Path) -> None:
    """PNG at 300 dpi and the same figure as PDF beside it."""
    fig.savefig(path, dpi=STYLE.PNG_DPI)
    fig.savefig(path.with_suffix(".pdf"))
    plt.close(fig)

TITLES = {"post": "Post-LN", "pre": "Pre-LN", "mix": "Mix-LN", "peri": "Peri-LN", "ngpt": "nGPT", "cod": "LN-Scaling"}


def main(out: Path) -> None:
    # A partial reproduction (`--only`) writes the inputs of the groups it ran only.
    if (out / "symmetric_start.json").exists():
        symmetric_start_figure(out, json.loads((out / "symmetric_start.json").read_text()))
    theorem_4_2_figure(out)
    if (out / "random_weights.json").exists():
        random_weights_figure(out, json.loads((out / "random_weights.json").read_text()))
    if (out / "metastability.json").exists():
        metastability_figure(out, json.loads((out / "metastability.json").read_text()))


def symmetric_start_figure(out: Path, sym) -> None:
    p = sym["parameters"]
    fig, axes = plt.subplots(1, 3, figsize=WIDE, layout="constrained")
    for key, s in sym["schemes"].items():
        label = TITLES.get(key, key)
        colour = STYLE.scheme_colour(key)
        axes[0].plot(s["t"], s["gamma"], label=label, color=colour)
        axes[1].semilogy(s["t"], [max(u, 1e-300) for u in s["one_minus_gamma"]], label=label, color=colour)
        axes[2].plot(s["t"], s["r"], label=label, color=colour)
    axes[0].set_ylabel(r"$\gamma$ (pairwise cosine)")
    axes[1].set_ylabel(r"$1-\gamma$")
    axes[1].set_ylim(1e-30, 2)
    axes[2].set_ylabel(r"radius $r$")
    for ax in axes:
        ax.set_xlabel(r"$t$ (depth)")
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.suptitle(
        rf"Theorem 4.1, symmetric start (reduced ODE): $n={p['n']:g}$, $\beta={p['beta']:g}$, $r_0={p['r0']:g}$, "
        rf"$\alpha={p['alpha']:g}$, $\tau={p['tau']:g}$"
    )
    _save(fig, out / "symmetric_start.png")


def theorem_4_2_figure(out: Path) -> None:
    rep = json.loads((out / "reproduction.json").read_text())
    grid = rep.get("theorem_4_2_grid", [])
    if grid:
        fig, ax = plt.subplots(figsize=(STYLE.COLUMN_WIDTH, 0.8 * STYLE.COLUMN_WIDTH), layout="constrained")
        for hyp, marker in ((True, "o"), (False, "x")):
            pts = [g for g in grid if g["hypotheses"] == hyp]
            ax.loglog([g["bound"] for g in pts], [g["max_attention"] for g in pts], marker, linestyle="",
                      label="hypotheses met" if hyp else "hypotheses not met")
            for g in pts:
                ax.annotate(f"n={g['n']}, d={g['d']}", (g["bound"], g["max_attention"]), fontsize=5)
        lo = min(g["bound"] for g in grid)
        hi = max(g["bound"] for g in grid)
        ax.loglog([lo, hi], [lo, hi], "k--", lw=0.8, label="C = 1")
        ax.set_xlabel(r"$\sqrt{\log n/n}+\log n/d$")
        ax.set_ylabel(r"$\max_j|A_j(0)|$")
        ax.set_title(r"Theorem 4.2, $Q=K=V=I$, $\beta=1$")
        ax.legend()
        _save(fig, out / "theorem_4_2.png")


def _finite(values):
    return [float("nan") if v is None else v for v in values]


def random_weights_figure(out: Path, rw) -> None:
    p = rw["parameters"]
    fig, axes = plt.subplots(1, 3, figsize=WIDE, layout="constrained")
    colours = {}
    for c in rw["curves"]:
        label = TITLES.get(c["scheme"], c["scheme"]) + (" (Gaussian norms)" if c["start"] == "gaussian" else "")
        style = "--" if c["start"] == "gaussian" else "-"
        depth = range(len(c["one_minus_mean_cosine"]))
        kw = {"color": colours.setdefault(c["scheme"], STYLE.scheme_colour(c["scheme"]))}
        (line,) = axes[0].semilogy(depth, [max(v, 1e-32) for v in c["one_minus_mean_cosine"]], style, label=label, **kw)
        colours.setdefault(c["scheme"], line.get_color())
        axes[1].plot(depth, c["mean_radius"], style, color=colours[c["scheme"]])
        axes[2].semilogy(depth, _finite(c["angle"]), style, color=colours[c["scheme"]])
    axes[0].set_ylabel(r"$1-\gamma$")
    axes[1].set_ylabel(r"$\bar r$")
    axes[2].set_ylabel("angle per layer (rad)")
    for ax in axes:
        ax.set_xlabel("layer")
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.suptitle(
        rf"Random per-layer Gaussian $Q, K, V$: $n={p['n']}$, $d={p['d']}$, $\beta=\sqrt{{d}}$, {p['seeds']} seeds "
        "(solid: unit norms, dashed: Gaussian norms)"
    )
    _save(fig, out / "random_weights.png")


def metastability_figure(out: Path, m) -> None:
    fig, axes = plt.subplots(1, 3, figsize=WIDE, layout="constrained")
    for key, name in (("s1", "$S^1$"), ("s2", "$S^2$")):
        s = m.get("staircase", {}).get(key)
        if s:
            keep = [i for i, t in enumerate(s["t"]) if t > 0]
            axes[0].semilogx([s["t"][i] for i in keep], [s["cluster_count"][i] for i in keep], drawstyle="steps-post",
                             label=rf"{name}, $\beta={s['beta']:g}$")
    axes[0].set_xlabel(r"$t$")
    axes[0].set_ylabel(r"clusters ($\cos>1-10^{-3}$)")
    axes[0].set_title(r"Post-LN staircase, $n=32$")
    axes[0].legend()
    ph = m.get("phase_diagram")
    if ph:
        keep = [i for i, t in enumerate(ph["t"]) if t > 0]  # log axis: the frame at t = 0 is left out
        im = axes[1].pcolormesh([ph["t"][i] for i in keep], range(len(ph["beta"])),
                                [[row[i] for i in keep] for row in ph["pair_fraction"]], shading="nearest", vmin=0, vmax=1)
        axes[1].set_xscale("log")
        axes[1].set_yticks(range(len(ph["beta"])), [f"{b:g}" for b in ph["beta"]])
        axes[1].set_xlabel(r"$t$")
        axes[1].set_ylabel(r"$\beta$")
        axes[1].set_title(rf"synchronized pairs, $S^1$, {ph['seeds']} seeds")
        fig.colorbar(im, ax=axes[1], label=r"pairs with $\cos>0.999$")
    for key, pv in m.get("peri_vs_post", {}).items():
        for scheme, style in (("post", "-"), ("peri", "--")):
            depth = range(len(pv[scheme]))
            axes[2].loglog([x + 1 for x in depth], [max(v, 1e-32) for v in pv[scheme]], style,
                           color=STYLE.scheme_colour(scheme), alpha=1.0 if key == "d3" else 0.55,
                           label=rf"{TITLES[scheme]}, $d={key[1:]}$")
    axes[2].set_xlabel("layer + 1")
    axes[2].set_ylabel(r"$1-\gamma$")
    axes[2].set_title(r"Peri- against Post-LN, $\beta=4$")
    axes[2].legend()
    for ax in axes:
        ax.grid(alpha=0.3)
    _save(fig, out / "metastability.png")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
