"""The one style of normdyn's figures (normdyn.plots, `normdyn plot`, `normdyn animate`).

Sizes are a journal's: `width="column"` (3.4 in, one column of a two-column page), `"page"` (7.0 in,
both columns) or a width in inches; the height follows each figure's own aspect. Text is 8 pt
(ticks and legends 7 pt) at any width, math in mathtext ($\\beta$, $\\langle\\theta_j,
\\theta_k\\rangle$), schemes by their names in the paper (Post-LN, ..., LN-Scaling). PDF fonts are
embedded as TrueType (Type 42), which journals ask for; PNG is written at 300 dpi.
"""
from __future__ import annotations

import functools
import math
import os
import warnings

import numpy as np

COLUMN_WIDTH = 3.4  # inches: one column of a two-column journal (86 mm)
PAGE_WIDTH = 7.0    # inches: the full text width (178 mm)
FORMATS = ("png", "pdf", "svg")
PNG_DPI = 300

SCHEME_NAMES = {"post": "Post-LN", "pre": "Pre-LN", "mix": "Mix-LN", "peri": "Peri-LN", "ngpt": "nGPT",
                "cod": "LN-Scaling"}

# Okabe and Ito's colour-blind safe qualitative palette (black last).
QUALITATIVE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")

RC = {
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "mathtext.fontset": "dejavusans",
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "figure.titlesize": 8.5,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.frameon": False,
    "legend.handlelength": 2.4,
    "axes.linewidth": 0.6,
    "lines.linewidth": 1.2,
    "lines.markersize": 3.5,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.minor.width": 0.4,
    "ytick.minor.width": 0.4,
    "xtick.major.size": 3,
    "ytick.major.size": 3,
    "xtick.minor.size": 1.8,
    "ytick.minor.size": 1.8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.constrained_layout.h_pad": 0.02,
    "figure.constrained_layout.w_pad": 0.02,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "savefig.dpi": PNG_DPI,
    "image.cmap": "viridis",
}
try:
    from cycler import cycler
    RC["axes.prop_cycle"] = cycler(color=list(QUALITATIVE))
except ImportError:  # matplotlib brings cycler; without it the default cycle stays
    pass


def scheme_colour(key):
    """The colour of a scheme key in every figure (the same scheme, the same colour)."""
    keys = list(SCHEME_NAMES)
    return QUALITATIVE[keys.index(key) % len(QUALITATIVE)] if key in keys else QUALITATIVE[-1]

# Axis labels of the observables (mathtext).
LABELS = {
    "time": r"$t$ (depth)",
    "one_minus_mean_cosine": r"$1-\gamma$",
    "mean_cosine": r"$\gamma$ (mean cosine)",
    "variance": r"$\mathrm{Var}=1-|\bar\theta|^2$",
    "one_minus_min_cosine": r"$1-\min_{j,k}\,\langle\theta_j,\theta_k\rangle$",
    "min_cosine": r"$\min_{j,k}\,\langle\theta_j,\theta_k\rangle$",
    "energy": r"$E$",
    "normalized_energy": r"$E/(n^2 e^{\beta})$",
    "mean_angular_speed": r"$\langle|\dot\theta_j|\rangle$",
    "mean_radius": r"$\bar r$",
    "cluster_count": "clusters",
    "cosine": r"$\langle\theta_j,\theta_k\rangle$",
    "one_minus_cosine": r"$1-\langle\theta_j,\theta_k\rangle$",
    "phi": r"$\varphi$ (rad)",
    "density": r"$\rho(t,\varphi)$",
    "mode_amplitude": r"$|c_k|/c_0$",
    "w1_to_uniform": r"$W_1$ to uniform (rad)",
    "diameter": "diameter (rad)",
    "effective_rank": "effective rank",
}


def label(name):
    """The axis label of an observable: mathtext for the known ones, else the name in words."""
    return LABELS.get(name, name.replace("_", " "))


def scheme_name(key):
    """The paper's name of a scheme key ("peri" -> "Peri-LN"); unknown keys as they are."""
    return SCHEME_NAMES.get(str(key), str(key))


def width_inches(width, default="column"):
    """`width`: "column", "page" or inches (a positive number); None: `default`."""
    width = default if width is None else width
    if isinstance(width, str):
        if width == "column":
            return COLUMN_WIDTH
        if width == "page":
            return PAGE_WIDTH
        try:
            width = float(width)
        except ValueError:
            raise ValueError(f"width: expected \"column\", \"page\" or inches, got {width!r}") from None
    if isinstance(width, bool) or not isinstance(width, (int, float)) or not math.isfinite(width) \
            or not 0.5 <= width <= 40:
        raise ValueError(f"width: expected \"column\", \"page\" or inches in [0.5, 40], got {width!r}")
    return float(width)


def new_figure(width, aspect, default="column", **kw):
    """A Figure `width` wide (see width_inches) and `aspect` times as high, constrained layout."""
    from matplotlib.figure import Figure
    w = width_inches(width, default)
    return Figure(figsize=(w, w * aspect), layout="constrained", **kw)


def styled(fn):
    """Runs a figure function under the style, and lays the figure out while the style holds:
    matplotlib creates tick labels lazily, so a figure drawn later (a notebook) keeps these sizes."""
    @functools.wraps(fn)
    def inner(*args, **kw):
        import matplotlib
        with matplotlib.rc_context(RC):
            result = fn(*args, **kw)
            fig = result[0] if isinstance(result, tuple) else result
            if fig is not None:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)  # constrained layout on tiny figures
                    fig.draw_without_rendering()
            return result
    return inner


# ---- colours ---------------------------------------------------------------------------------------


def _lab(rgb):
    """CIELAB (D65) of sRGB colours in [0, 1], an array [..., 3]."""
    rgb = np.asarray(rgb, dtype=float)
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = lin @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


@functools.lru_cache(maxsize=None)
def _distinct_palette(count):
    """`count` colours, the Okabe-Ito ones first, then each next the candidate farthest (in CIELAB)
    from every colour chosen and from white (the paper), in the manner of Glasbey's palettes."""
    import colorsys
    from matplotlib.colors import to_rgb
    chosen = [to_rgb(c) for c in QUALITATIVE[:-1]]  # black stays for other marks
    if count <= len(chosen):
        return tuple(chosen[:count])
    candidates = np.array([colorsys.hls_to_rgb(h / 48, l, s) for h in range(48) for l in (0.3, 0.45, 0.6, 0.72)
                           for s in (0.55, 0.9)])
    cand_lab = _lab(candidates)
    near = np.min(np.linalg.norm(cand_lab[:, None, :] - _lab(np.array(chosen + [(1, 1, 1)]))[None], axis=2), axis=1)
    while len(chosen) < count:
        k = int(np.argmax(near))
        if near[k] <= 0:
            break  # every candidate used: repeat from the start
        chosen.append(tuple(candidates[k]))
        near = np.minimum(near, np.linalg.norm(cand_lab - cand_lab[k], axis=1))
    while len(chosen) < count:
        chosen.append(chosen[len(chosen) % len(candidates)])
    return tuple(chosen[:count])


def cluster_colours(count):
    """`count` colours that stay distinguishable for many clusters: Okabe-Ito's seven, then colours
    chosen farthest apart in CIELAB (the 32 first differ by more than 15 Delta-E)."""
    return list(_distinct_palette(int(count)))


# ---- output ----------------------------------------------------------------------------------------


def output_paths(path, formats=None):
    """The files `save` writes: `path` itself when it ends in .png, .pdf or .svg and no format is
    given; else path.<format> for each format (default png)."""
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    if formats is None and ext in FORMATS:
        return [path]
    for fmt in formats or ("png",):
        if fmt not in FORMATS:
            raise ValueError(f"format: {fmt!r} is not one of {', '.join(FORMATS)}")
    return [f"{path}.{fmt}" for fmt in formats or ("png",)]


def save_figure(fig, path, formats=None, dpi=PNG_DPI):
    """Writes the figure (vector for .pdf and .svg, `dpi` for .png); returns the paths written. Each
    file is written beside its place and renamed, so a failed write leaves no half file."""
    import matplotlib
    paths = output_paths(path, formats)
    for out in paths:
        fmt = os.path.splitext(out)[1].lstrip(".").lower()
        folder = os.path.dirname(os.path.abspath(out))
        staging = os.path.join(folder, f".{os.path.basename(out)}.{os.getpid()}.partial")
        try:
            with matplotlib.rc_context(RC), warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # constrained layout on tiny figures
                fig.savefig(staging, format=fmt, dpi=dpi if fmt == "png" else None)
            os.replace(staging, out)
        finally:
            if os.path.exists(staging):
                os.remove(staging)
    return paths
