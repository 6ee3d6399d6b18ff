#!/usr/bin/python3
"""Plot a mean-field run file: space-time map of the angular density and a few snapshots; after
`normdyn analyze RUN.h5` also its Fourier modes (with the linear rates of the uniform state), the
cluster count and the W1 distance to the uniform density.

Usage: /usr/bin/python3 scripts/plot_meanfield.py RUN.h5 OUT.{png,pdf,svg}
Reads /fields/density (or /fields/angular_density for schemes with a radius) with h5py alone.
The figure comes from python/normdyn/plots.py (meanfield_figure returns a Figure).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _load_plots  # noqa: E402


def main(run, out):
    plots = _load_plots.load()
    try:
        fig = plots.meanfield_figure(plots.load_meanfield(run))
        for path in plots.save(fig, out if os.path.splitext(out)[1] else out + ".png"):
            print(path)
    except plots.InputProblem as e:
        print(f"plot_meanfield.py: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"plot_meanfield.py: error: {e}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
