#!/usr/bin/python3
"""Plot a mean-field run file: space-time map of the angular density and a few snapshots.

Usage: /usr/bin/python3 scripts/plot_meanfield.py RUN.h5 OUT.png
Reads /fields/density (or /fields/angular_density for schemes with a radius) with h5py alone.
"""
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np


def main(run, out):
    with h5py.File(run, "r") as f:
        name = "fields/angular_density" if "fields/angular_density" in f else "fields/density"
        rho = f[name + "/value"][:]
        t = f[name + "/time"][:]
        phi = f[name + "/phi"][:]
        model = f["parameters/model"].attrs
        title = f"{model['scheme']}-LN mean field, beta = {model['beta']:g}, M = {phi.size}"
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(9, 3.4), gridspec_kw={"width_ratios": [1.3, 1]})
    floor = 1e-3
    # Bin to at most 256 rows (mean density: mass-preserving), so that clusters one cell wide show.
    bins = max(1, phi.size // 256)
    shown = rho[:, : phi.size // bins * bins].reshape(len(t), -1, bins).mean(axis=2)
    edges = np.linspace(0.0, 2 * np.pi, shown.shape[1] + 1)
    t_edges = np.concatenate([t, [t[-1] + (t[-1] - t[-2])]])
    im = ax0.pcolormesh(t_edges, edges, np.log10(np.maximum(shown.T, floor)), shading="flat", cmap="magma",
                        vmin=np.log10(floor), rasterized=True)
    ax0.set_xlabel("t (depth)")
    ax0.set_ylabel("angle phi (rad)")
    ax0.set_title(title, fontsize=9)
    fig.colorbar(im, ax=ax0, label="log10 density per rad")
    picks = sorted({int(np.argmin(np.abs(t - x))) for x in (0.0, 0.15 * t[-1], 0.25 * t[-1], t[-1])})
    for i in picks:
        ax1.semilogy(phi, np.maximum(rho[i], 1e-8), lw=1, label=f"t = {t[i]:g}")
    ax1.set_ylim(1e-4, rho.max() * 2)
    ax1.set_xlabel("angle phi (rad)")
    ax1.set_title("snapshots", fontsize=9)
    ax1.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=90)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
