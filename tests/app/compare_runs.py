"""Compares a run file (possibly left by a killed writer) with a reference run, using h5py only.

usage: compare_runs.py RUN REFERENCE [--complete]

Opens RUN as any user would after a crash (h5py, swmr=True), and checks that every frame it holds
equals the reference's frame bit for bit, in every per-frame dataset of the reference (directions,
radii, times, steps, observables; the fields of mean-field runs). With --complete, RUN must also
hold every frame of the reference. Prints the number of frames.
"""
import sys

import h5py
import numpy as np

def per_frame_datasets(f):
    """Paths of the extendable (per-frame) datasets that a run writes."""
    paths = []

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.maxshape and obj.maxshape[0] is None:
            if name.split("/")[0] in ("particles", "observables", "fields"):
                paths.append(name)

    f.visititems(visit)
    return sorted(paths)


def main():
    run, ref, complete = sys.argv[1], sys.argv[2], "--complete" in sys.argv
    with h5py.File(run, "r", swmr=True) as f, h5py.File(ref, "r") as r:
        paths = per_frame_datasets(r)
        if not paths:
            sys.exit(f"{ref}: no per-frame datasets")
        frames = min(f[p].shape[0] for p in paths)
        for p in paths:
            a, b = f[p][:frames], r[p][:frames]
            if not np.array_equal(a, b):
                diff = np.abs(np.asarray(a, float) - np.asarray(b, float)).max()
                sys.exit(f"{p}: differs from the reference (max |difference| {diff:.3e})")
        if complete and frames != r[paths[0]].shape[0]:
            sys.exit(f"{frames} frames, the reference has {r[paths[0]].shape[0]}")
        print(frames)


if __name__ == "__main__":
    main()
