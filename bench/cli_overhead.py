#!/usr/bin/python3
"""Where the time of a small `normdyn run` goes, measured side by side in one command.

For each binary given (e.g. a build before and after a change), interleaved round by round so that
a change of machine load hits all alike, the medians of:
  * `normdyn --version`: process start (dynamic loading of normdyn and its libraries) and exit;
  * `normdyn run -q` of a small system (default n = 32, d = 3, 201 frames): the whole process,
    and from its run file /summary@wall_seconds (integration), @write_seconds and @flush_seconds;
  * the failed openat calls of one run under `strace -f` (library probing along the RUNPATH), if
    strace is installed.
The rest of a run (wall - start - integration - writes - flushes) is configuration, file creation,
observables and the summary.

With --floor PATH (build/bench/normdyn_bench_hdf5_floor, built with -DNORMDYN_BUILD_BENCH=ON), the
same rounds also time what HDF5 alone costs a fresh process, linked as the program links it: the
start of a process that exits at once, an empty file, and a file with as many groups, datasets
(fixed and extendable), attributes and frames as the first binary's run file (bench/hdf5_floor.c),
also without its attributes and without its extendable datasets (what those cost).

  /usr/bin/python3 bench/cli_overhead.py [--repeats 15] [--set model.d=3 ...] [--floor PATH] BINARY [BINARY ...]

Default BINARY: build/app/normdyn. OMP_WAIT_POLICY is left as found (the program defaults to
passive waiting).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import h5py


def timed(cmd, cwd):
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def failed_openat(binary, run_args, cwd):
    if not shutil.which("strace"):
        return None
    trace = os.path.join(cwd, "trace.txt")
    subprocess.run(["strace", "-f", "-e", "trace=openat", "-o", trace, binary, *run_args, "--force"], cwd=cwd,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(trace) as f:
        return sum("ENOENT" in line for line in f)


def file_shape(path):
    """Groups (besides the root), fixed and extendable datasets, attributes and frames of a run file."""
    counts = {"groups": 0, "fixed": 0, "extendable": 0, "attributes": 0}

    def visit(_, obj):
        counts["attributes"] += len(obj.attrs)
        if isinstance(obj, h5py.Group):
            counts["groups"] += 1
        elif obj.maxshape and obj.maxshape[0] is None:
            counts["extendable"] += 1
        else:
            counts["fixed"] += 1

    with h5py.File(path, "r") as f:
        counts["attributes"] = len(f.attrs)
        f.visititems(visit)
        frames = len(f["particles/tokens/direction/time"])
    return [counts["groups"], counts["fixed"], counts["extendable"], counts["attributes"], frames]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("binaries", nargs="*", default=["build/app/normdyn"])
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--set", action="append", default=[], help="extra --set for the run (default: n = 32)")
    p.add_argument("--floor", help="the HDF5 floor program (normdyn_bench_hdf5_floor), timed in the same rounds")
    a = p.parse_args()
    binaries = [os.path.abspath(b) for b in a.binaries]
    sets = ["model.n=32", *a.set]
    rows = {b: {"start": [], "run": [], "wall": [], "write": [], "flush": []} for b in binaries}
    with tempfile.TemporaryDirectory() as cwd:
        run_args = ["run", "-q", "-o", "r.h5"] + [x for s in sets for x in ("--set", s)]
        for b in binaries:  # warm the page cache
            timed([b, "--version"], cwd)
        floor_cases = {}
        if a.floor:
            a.floor = os.path.abspath(a.floor)
            timed([binaries[0], *run_args], cwd)
            groups, fixed, extendable, attributes, frames = file_shape(os.path.join(cwd, "r.h5"))
            shapes = {"empty file": (0, 0, 0, 0, 0), "run file's shape": (groups, fixed, extendable, attributes, frames),
                      "without attributes": (groups, fixed, extendable, 0, frames),
                      "without extendable datasets": (groups, fixed, 0, attributes, frames)}
            floor_cases = {"start": [a.floor]}
            floor_cases.update({k: [a.floor, "floor.h5", *map(str, v)] for k, v in shapes.items()})
            for cmd in floor_cases.values():
                timed(cmd, cwd)
        floor = {k: [] for k in floor_cases}
        for _ in range(a.repeats):
            for k, cmd in floor_cases.items():
                floor[k].append(timed(cmd, cwd))
            for b in binaries:
                rows[b]["start"].append(timed([b, "--version"], cwd))
                if os.path.exists(os.path.join(cwd, "r.h5")):
                    os.remove(os.path.join(cwd, "r.h5"))
                rows[b]["run"].append(timed([b, *run_args], cwd))
                with h5py.File(os.path.join(cwd, "r.h5"), "r") as f:
                    s = f["summary"].attrs
                    rows[b]["wall"].append(float(s["wall_seconds"]))
                    rows[b]["write"].append(float(s.get("write_seconds", float("nan"))))
                    rows[b]["flush"].append(float(s["flush_seconds"]))
        probes = {b: failed_openat(b, run_args, cwd) for b in binaries}
    load = open("/proc/loadavg").read().split()[:3]
    print(f"normdyn run {' '.join('--set ' + s for s in sets)}; medians of {a.repeats}, interleaved; "
          f"{os.cpu_count()} CPUs, load average {' '.join(load)}")
    print(f"{'binary':<40} {'start':>8} {'run':>8} {'integr.':>8} {'writes':>8} {'flushes':>8} {'rest':>8}"
          f" {'run/integr.':>11} {'failed openat':>13}")
    for b in binaries:
        m = {k: statistics.median(v) * 1e3 for k, v in rows[b].items()}
        rest = m["run"] - m["start"] - m["wall"] - m["write"] - m["flush"]
        probe = "n/a" if probes[b] is None else str(probes[b])
        print(f"{b[-40:]:<40} {m['start']:7.1f}ms {m['run']:7.1f}ms {m['wall']:7.1f}ms {m['write']:7.1f}ms"
              f" {m['flush']:7.1f}ms {rest:7.1f}ms {m['run'] / m['wall']:11.1f} {probe:>13}")
    if a.floor:
        m = {k: statistics.median(v) * 1e3 for k, v in floor.items()}
        file = m["run file's shape"]
        print(f"HDF5 alone ({a.floor[-40:]}; the run file's shape: {groups} groups, {fixed} fixed and {extendable}"
              f" extendable datasets, {attributes} attributes, {frames} frames): start {m['start']:.1f}ms;"
              f" empty file {m['empty file']:.1f}ms; the run file's shape {file:.1f}ms, of which writing it"
              f" {file - m['start']:.1f}ms, the attributes {file - m['without attributes']:.1f}ms, the extendable"
              f" datasets {file - m['without extendable datasets']:.1f}ms")
        for b in binaries:
            print(f"run time {b[-40:]} / HDF5 alone: {statistics.median(rows[b]['run']) * 1e3 / file:.2f}")
    if len(binaries) > 1:
        first = statistics.median(rows[binaries[0]]["run"])
        for b in binaries[1:]:
            print(f"run time {b[-40:]} / {binaries[0][-40:]}: {statistics.median(rows[b]['run']) / first:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
