"""Animations of runs over time (normdyn.plots.animate, `normdyn animate`): tokens on the circle,
tokens on the sphere in a slowly turning 3-D view (d > 3: the top 3 principal directions), and the
angular density of a mean-field run, with the time shown in every frame. MP4 through matplotlib's
ffmpeg writer (Debian's ffmpeg), GIF through its Pillow writer."""
from __future__ import annotations

import os
import sys

import numpy as np

from ._style import QUALITATIVE, cluster_colours, label, new_figure, scheme_name, styled, width_inches

WRITERS = {".mp4": "ffmpeg", ".gif": "pillow"}


class _Frames:
    """What an animation shows, from a run file, a Dataset of normdyn.run / normdyn.load, or a
    plots.Run / plots.MeanField: kind ("particles" or "meanfield"), t, and theta [F, n, d] or rho
    [F, M] on phi."""

    def __init__(self, source):
        self.scheme, self.beta, self.labels = "", float("nan"), None
        if isinstance(source, (str, os.PathLike)):
            self._from_file(os.fspath(source))
        elif hasattr(source, "data_vars"):
            self._from_dataset(source)
        elif hasattr(source, "theta"):
            self.kind, self.t, self.theta = "particles", np.asarray(source.t), np.asarray(source.theta)
            self.scheme, self.beta = source.scheme, source.beta
            if "cluster_label" in getattr(source, "obs", {}):
                self.labels = np.asarray(source.obs["cluster_label"][-1])
        elif hasattr(source, "rho"):
            self.kind, self.t, self.rho, self.phi = "meanfield", np.asarray(source.t), source.rho, source.phi
            self.scheme, self.beta = source.scheme, source.beta
        else:
            raise TypeError(f"animate: expected a run file, a Dataset of normdyn.run / normdyn.load or a loaded "
                            f"run, got {type(source).__name__}")
        if len(self.t) == 0:
            raise ValueError("animate: the run has no frames")

    def _from_file(self, path):
        import h5py
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such run file")
        with h5py.File(path, "r") as f:
            if "parameters/model" in f:
                model = f["parameters/model"].attrs
                scheme = model.get("scheme", b"")
                self.scheme = scheme.decode() if isinstance(scheme, bytes) else str(scheme)
                self.beta = float(model.get("beta", np.nan))
            if "particles/tokens/direction/value" in f:
                self.kind = "particles"
                self.theta = f["particles/tokens/direction/value"][()]
                self.t = f["particles/tokens/direction/time"][()]
            elif "fields" in f:
                name = "fields/angular_density" if "fields/angular_density" in f else "fields/density"
                self.kind = "meanfield"
                self.rho, self.t, self.phi = f[name + "/value"][()], f[name + "/time"][()], f[name + "/phi"][()]
            else:
                raise ValueError(f"{path}: not a normdyn run file (no particles, no fields)")
        self.t = self.t[: (self.theta if self.kind == "particles" else self.rho).shape[0]]

    def _from_dataset(self, ds):
        import tomllib
        try:
            model = tomllib.loads(ds.attrs.get("config", "")).get("model", {})
        except tomllib.TOMLDecodeError:
            model = {}
        self.scheme, self.beta = model.get("scheme", ""), float(model.get("beta", np.nan))
        self.t = np.asarray(ds["time"].values)
        if "direction" in ds:
            self.kind, self.theta = "particles", np.asarray(ds["direction"].values)
        elif "angular_density" in ds or "density" in ds:
            field = ds["angular_density"] if "angular_density" in ds else ds["density"]
            self.kind, self.rho, self.phi = "meanfield", np.asarray(field.values), np.asarray(ds["phi"].values)
        else:
            raise ValueError("animate: the Dataset has neither direction (particles) nor density (mean field)")

    def pick(self, max_frames):
        """At most max_frames frames, evenly spread, the first and the last included."""
        count = len(self.t)
        if max_frames is None or count <= max_frames:
            return np.arange(count)
        return np.unique(np.round(np.linspace(0, count - 1, int(max_frames))).astype(int))


def final_clusters(theta, epsilon=1e-3):
    """Labels of single-linkage clusters (cosine > 1 - epsilon) of one frame [n, d], as `normdyn
    analyze` joins them; the colours of the tokens in an animation."""
    n = theta.shape[0]
    parent = np.arange(n)

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    close = np.argwhere(np.triu(theta @ theta.T > 1.0 - epsilon, 1))
    for i, j in close:
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    roots = np.array([root(i) for i in range(n)])
    return np.unique(roots, return_inverse=True)[1]


def _title(frames):
    name = scheme_name(frames.scheme) if frames.scheme else ""
    beta = rf", $\beta={frames.beta:g}$" if np.isfinite(frames.beta) else ""
    return f"{name}{beta}"


def _even_figure(width, aspect, dpi):
    """A figure whose pixel sizes are even (H.264 in yuv420p needs them so)."""
    w = width_inches(width, "column")
    wp = 2 * round(w * dpi / 2)
    hp = 2 * round(w * aspect * dpi / 2)
    fig = new_figure(wp / dpi, hp / wp)
    fig.set_dpi(dpi)
    return fig


@styled
def _particle_scene(frames, picks, width, dpi, spin):
    theta = frames.theta
    labels = frames.labels if frames.labels is not None else final_clusters(theta[-1])
    if labels.max() > 0:
        palette = cluster_colours(int(labels.max()) + 1)
        colours = [palette[k] for k in labels]
    else:
        # One final cluster says nothing: colour by the initial angle, so that tokens can be followed.
        import matplotlib
        angle = np.arctan2(theta[0, :, 1], theta[0, :, 0])
        colours = matplotlib.colormaps["twilight_shifted"]((angle + np.pi) / (2 * np.pi))
    d = theta.shape[2]
    if d == 2:
        fig = _even_figure(width, 1.0, dpi)
        ax = fig.add_subplot()
        circle = np.linspace(0, 2 * np.pi, 300)
        ax.plot(np.cos(circle), np.sin(circle), color="0.8", lw=0.6)
        dots = ax.scatter(theta[0, :, 0], theta[0, :, 1], s=9, c=colours, linewidths=0, zorder=3)
        ax.set_aspect("equal")
        ax.set_xlim(-1.15, 1.15)
        ax.set_ylim(-1.15, 1.15)
        ax.axis("off")
        ax.set_title(_title(frames) + f", $n={theta.shape[1]}$ tokens on the circle")
        clock = ax.text(0.5, 0.5, "", transform=ax.transAxes, ha="center", va="center")

        def update(k):
            i = picks[k]
            dots.set_offsets(theta[i])
            clock.set_text(rf"$t={frames.t[i]:.4g}$")
            return dots, clock
        return fig, update
    points = theta
    what = "on the sphere"
    if d > 3:
        flat = theta.reshape(-1, d)
        _, _, vt = np.linalg.svd(flat - flat.mean(axis=0), full_matrices=False)
        points = theta @ vt[:3].T
        what = "(top 3 principal directions)"
    fig = _even_figure(width, 1.0, dpi)
    ax = fig.add_subplot(projection="3d", computed_zorder=False)
    u, v = np.mgrid[0:2 * np.pi:30j, 0:np.pi:15j]
    ax.plot_wireframe(np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v), color="0.85", lw=0.3, zorder=1)
    first = points[0]
    dots = ax.scatter(first[:, 0], first[:, 1], first[:, 2], s=9, c=colours, depthshade=False, edgecolors="k",
                      linewidths=0.2, zorder=5)
    for setter in (ax.set_xlim, ax.set_ylim, ax.set_zlim):
        setter(-1, 1)
    ax.set_box_aspect((1, 1, 1))
    ax.set_axis_off()
    ax.set_title(_title(frames) + f", $n={theta.shape[1]}$, $d={d}$ {what}")
    clock = ax.text2D(0.02, 0.02, "", transform=ax.transAxes)

    def update(k):
        i = picks[k]
        p = points[i]
        dots._offsets3d = (p[:, 0], p[:, 1], p[:, 2])
        ax.view_init(elev=20, azim=-60 + spin * k)
        clock.set_text(rf"$t={frames.t[i]:.4g}$")
        return dots, clock
    return fig, update


@styled
def _density_scene(frames, picks, width, dpi):
    rho = frames.rho
    fig = _even_figure(width, 0.62, dpi)
    ax = fig.add_subplot()
    floor = 1e-4
    line, = ax.semilogy(frames.phi, np.maximum(rho[0], floor), color=QUALITATIVE[0], lw=1.0)
    ax.axhline(1 / (2 * np.pi), color="0.7", lw=0.6, ls=":")
    ax.set_xlim(0, 2 * np.pi)
    ax.set_ylim(floor, max(float(rho.max()) * 2, 1.0))
    ax.set_xticks([0, np.pi, 2 * np.pi], ["0", r"$\pi$", r"$2\pi$"])
    ax.set_xlabel(label("phi"))
    ax.set_ylabel(label("density"))
    ax.set_title(_title(frames) + f", mean field, $M={frames.phi.size}$ (dotted: uniform)")
    clock = ax.text(0.98, 0.95, "", transform=ax.transAxes, ha="right", va="top")

    def update(k):
        i = picks[k]
        line.set_ydata(np.maximum(rho[i], floor))
        clock.set_text(rf"$t={frames.t[i]:.4g}$")
        return line, clock
    return fig, update


class _Bar:
    """The render's progress: a tqdm bar on stderr, or a callable's (done, total)."""

    def __init__(self, progress, total):
        self.callback, self.bar = None, None
        if callable(progress):
            self.callback = progress
        elif progress or (progress is None and total >= 30 and sys.stderr.isatty()):
            from tqdm.std import tqdm
            self.bar = tqdm(total=total, desc="normdyn animate", unit=" frames", file=sys.stderr, dynamic_ncols=True)

    def __call__(self, done, total):
        if self.callback is not None:
            self.callback(done + 1, total)
        if self.bar is not None:
            self.bar.update(done + 1 - self.bar.n)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def animate(source, output=None, *, fps=20, max_frames=300, width="column", dpi=150, spin=0.6, progress=None,
            force=False):
    """An animation of a run over time: its tokens on the circle (d = 2), on the sphere in a slowly
    turning 3-D view (d = 3; d > 3: the top 3 principal directions), or the angular density of a
    mean-field run, with the time t in every frame; tokens coloured by their final cluster
    (by their initial angle when they end in one).

    source: a run file, a Dataset of normdyn.run / normdyn.load, or a plots.Run /
      plots.MeanField.
    output: a .mp4 (H.264 through ffmpeg) or .gif (Pillow) file, returned when written; an existing
      file is refused (FileExistsError) unless force=True, and replaced only whole. None: the
      matplotlib FuncAnimation itself (in a notebook: IPython.display.HTML(anim.to_jshtml())).
    fps: frames per second; max_frames: at most this many frames of the run, evenly spread (None:
      all); width: "column" (3.4 in), "page" (7.0 in) or inches, at `dpi` pixels per inch; spin:
      degrees the 3-D view turns per frame.
    progress: True: a bar on stderr; None: a bar when stderr is a terminal and there are 30 frames
      or more; False: none; a callable receives (frames done, frames in all).
    """
    from matplotlib.animation import FuncAnimation
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not 0 < fps <= 120:
        raise ValueError(f"fps: expected a number in (0, 120], got {fps!r}")
    if max_frames is not None and (isinstance(max_frames, bool) or not isinstance(max_frames, int) or max_frames < 2):
        raise ValueError(f"max_frames: expected an int >= 2 or None, got {max_frames!r}")
    if isinstance(dpi, bool) or not isinstance(dpi, (int, float)) or not 20 <= dpi <= 600:
        raise ValueError(f"dpi: expected a number in [20, 600], got {dpi!r}")
    width_inches(width)  # checked before any work
    writer_name = None
    if output is not None:
        output = os.fspath(output)
        ext = os.path.splitext(output)[1].lower()
        writer_name = WRITERS.get(ext)
        if writer_name is None:
            raise ValueError(f"output: {output}: the extension must be .mp4 or .gif")
        if os.path.exists(output) and not force:
            raise FileExistsError(f"{output}: exists (force=True, or --force, replaces it)")
        folder = os.path.dirname(os.path.abspath(output))
        if not os.path.isdir(folder):
            raise FileNotFoundError(f"{output}: no such folder {folder}")
    frames = _Frames(source)
    picks = frames.pick(max_frames)
    if frames.kind == "particles":
        fig, update = _particle_scene(frames, picks, width, dpi, spin)
    else:
        fig, update = _density_scene(frames, picks, width, dpi)
    FigureCanvasAgg(fig)
    anim = FuncAnimation(fig, update, frames=len(picks), interval=1000.0 / fps, blit=False)
    if output is None:
        return anim
    import matplotlib
    from matplotlib import animation as mpl_animation
    if not mpl_animation.writers.is_available(writer_name):
        raise RuntimeError(f"{output}: matplotlib's {writer_name} writer is not available; install "
                           f"{'ffmpeg' if writer_name == 'ffmpeg' else 'python3-pil'} (bash scripts/install-deps.sh)")
    if writer_name == "ffmpeg":
        writer = mpl_animation.FFMpegWriter(fps=fps, codec="libx264", extra_args=["-pix_fmt", "yuv420p"])
    else:
        writer = mpl_animation.PillowWriter(fps=fps)
    staging = os.path.join(os.path.dirname(os.path.abspath(output)), f".{os.path.basename(output)}.{os.getpid()}"
                           f".partial{os.path.splitext(output)[1]}")
    bar = _Bar(progress, len(picks))
    try:
        from ._style import RC
        with matplotlib.rc_context(RC):
            anim.save(staging, writer=writer, dpi=dpi, progress_callback=bar)
        os.replace(staging, output)
    finally:
        bar.close()
        if os.path.exists(staging):
            os.remove(staging)
    return output
