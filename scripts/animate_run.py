#!/usr/bin/python3
"""An animation of a normdyn run over time, from its HDF5 file alone (run with /usr/bin/python3).

    animate_run.py RUN.h5 -o OUT.mp4|OUT.gif [--fps N] [--max-frames N] [--width column|page|INCHES]
                   [--dpi N] [--force] [--quiet]

Particle runs: the tokens on the circle (d = 2) or on the sphere in a slowly turning 3-D view
(d = 3; d > 3: the top 3 principal directions), coloured by their final cluster. Mean-field runs:
the angular density against the angle. The time t is shown in every frame. MP4 is written by
ffmpeg (H.264), GIF by Pillow, through matplotlib's writers; a progress bar on stderr when it is a
terminal (unless --quiet). The output is written beside its place and renamed: an interrupted render
leaves no half file. `normdyn animate` runs this script; the animation is normdyn.plots.animate.

Exit codes: 0 ok, 2 bad input (not a run file, an output that exists without --force, a wrong
extension), 3 I/O failure (a writer that is not installed, a write that failed).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _load_plots  # noqa: E402


def main(argv, plots):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run", help="HDF5 run file (particles or mean field)")
    p.add_argument("-o", "--output", required=True, help="OUT.mp4 or OUT.gif")
    p.add_argument("--fps", type=float, default=20.0, help="frames per second (default 20)")
    p.add_argument("--max-frames", type=int, default=300, help="at most this many frames, evenly spread (default 300)")
    p.add_argument("--width", default="column", help="column (3.4 in), page (7.0 in) or inches")
    p.add_argument("--dpi", type=float, default=150.0, help="pixels per inch (default 150)")
    p.add_argument("--force", action="store_true", help="replace an existing output")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    path = plots.animate(args.run, args.output, fps=args.fps, max_frames=args.max_frames, width=args.width,
                         dpi=args.dpi, force=args.force, progress=False if args.quiet else None)
    print(path)
    return 0


if __name__ == "__main__":
    _load_plots.run_script("animate_run.py", main, input_errors=(ValueError, FileExistsError),
                           io_errors=(OSError, RuntimeError))
