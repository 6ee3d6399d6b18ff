"""Figures of `normdyn reproduce`: DIR/symmetric_start.json (the reduced ODE of Theorem 4.1) and
DIR/reproduction.json (the Theorem 4.2 grid). Usage: plot_reproduction.py DIR. Exit 4 if matplotlib
cannot be imported (the caller then notes that the figures were skipped)."""
import json
import sys
from pathlib import Path

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:  # pragma: no cover
    print(f"matplotlib is missing: {e}", file=sys.stderr)
    sys.exit(4)

TITLES = {"post": "Post-LN", "pre": "Pre-LN", "mix": "Mix-LN", "peri": "Peri-LN", "ngpt": "nGPT", "cod": "LN-Scaling"}


def main(out: Path) -> None:
    sym = json.loads((out / "symmetric_start.json").read_text())
    p = sym["parameters"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for key, s in sym["schemes"].items():
        label = TITLES.get(key, key)
        axes[0].plot(s["t"], s["gamma"], label=label)
        axes[1].semilogy(s["t"], [max(u, 1e-300) for u in s["one_minus_gamma"]], label=label)
        axes[2].plot(s["t"], s["r"], label=label)
    axes[0].set_ylabel("gamma (pairwise cosine)")
    axes[1].set_ylabel("1 - gamma")
    axes[1].set_ylim(1e-30, 2)
    axes[2].set_ylabel("radius r")
    for ax in axes:
        ax.set_xlabel("t (depth)")
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.suptitle(
        f"Theorem 4.1, symmetric start: reduced ODE, n = {p['n']:g}, beta = {p['beta']:g}, r0 = {p['r0']:g}, "
        f"alpha = {p['alpha']:g}, tau = {p['tau']:g}"
    )
    fig.tight_layout()
    fig.savefig(out / "symmetric_start.png", dpi=110)
    plt.close(fig)

    rep = json.loads((out / "reproduction.json").read_text())
    grid = rep.get("theorem_4_2_grid", [])
    if grid:
        fig, ax = plt.subplots(figsize=(5.5, 4.2))
        for hyp, marker in ((True, "o"), (False, "x")):
            pts = [g for g in grid if g["hypotheses"] == hyp]
            ax.loglog([g["bound"] for g in pts], [g["max_attention"] for g in pts], marker, linestyle="",
                      label="hypotheses met" if hyp else "hypotheses not met")
            for g in pts:
                ax.annotate(f"n={g['n']}, d={g['d']}", (g["bound"], g["max_attention"]), fontsize=7)
        lo = min(g["bound"] for g in grid)
        hi = max(g["bound"] for g in grid)
        ax.loglog([lo, hi], [lo, hi], "k--", lw=0.8, label="C = 1")
        ax.set_xlabel("sqrt(log n / n) + log n / d")
        ax.set_ylabel("max_j |A_j(0)|")
        ax.set_title("Theorem 4.2, Q = K = V = I, beta = 1")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "theorem_4_2.png", dpi=110)
        plt.close(fig)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
