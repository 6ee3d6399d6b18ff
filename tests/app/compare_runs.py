"""Compares a run file (possibly left by a killed writer) with a reference run, using h5py only.

usage: compare_runs.py RUN REFERENCE [--complete]

Opens RUN as any user would after a crash (h5py, swmr=True), and checks that every frame it holds
equals the reference's frame bit for bit: directions, radii, times, steps and observables. With
--complete, RUN must also hold every frame of the reference. Prints the number of frames.
"""
import sys

import h5py
import numpy as np

PATHS = [
    "particles/tokens/direction/value",
    "particles/tokens/direction/time",
    "particles/tokens/direction/step",
    "particles/tokens/radius/value",
    "observables/energy/value",
    "observables/variance/value",
    "observables/min_cosine/value",
]


def main():
    run, ref, complete = sys.argv[1], sys.argv[2], "--complete" in sys.argv
    with h5py.File(run, "r", swmr=True) as f, h5py.File(ref, "r") as r:
        frames = min(f[p].shape[0] for p in PATHS)
        for p in PATHS:
            a, b = f[p][:frames], r[p][:frames]
            if not np.array_equal(a, b):
                diff = np.abs(np.asarray(a, float) - np.asarray(b, float)).max()
                sys.exit(f"{p}: differs from the reference (max |difference| {diff:.3e})")
        if complete and frames != r[PATHS[0]].shape[0]:
            sys.exit(f"{frames} frames, the reference has {r[PATHS[0]].shape[0]}")
        print(frames)


if __name__ == "__main__":
    main()
