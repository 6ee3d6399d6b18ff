#!/usr/bin/python3
"""What normdyn.run costs beyond the integration itself, against the command line.

For a small and a large run: the command line's solver time (its file's /summary@wall_seconds,
integration only), the wall time of `normdyn run` (process start, configuration, file) and of
normdyn.run from Python (in memory, and with the same run file), side by side in one process.
Prints the ratios. Not a test: timings depend on the machine.

    /usr/bin/python3 bench/python_overhead.py [--binary build/app/normdyn] [--repeats 5]
(with the package installed, or PYTHONPATH pointing at an install prefix's dist-packages)
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import h5py

import normdyn

CASES = {
    "small": {"model": {"n": 16, "d": 3, "beta": 1.0}, "solver": {"t_end": 10.0, "threads": 1},
              "output": {"samples": 101}},
    "large": {"model": {"n": 512, "d": 16, "beta": 1.0}, "solver": {"t_end": 10.0, "threads": 1},
              "output": {"samples": 101}},
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = pathlib.Path(__file__).resolve().parent.parent
    parser.add_argument("--binary", default=str(here / "build" / "app" / "normdyn"))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"normdyn {normdyn.__version__} from {normdyn.__file__}; median of {args.repeats} repeats; 1 thread")
    print(f"{'case':6} {'solver s':>10} {'CLI wall s':>11} {'py mem s':>10} {'py file s':>10} "
          f"{'CLI/solver':>11} {'py mem/solver':>14} {'py file/solver':>15} {'py file/CLI':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, config in CASES.items():
            cfg = pathlib.Path(tmp) / f"{name}.toml"
            cfg.write_text(normdyn.to_toml(config))
            solver, cli, mem, file = [], [], [], []
            for i in range(args.repeats):
                out = pathlib.Path(tmp) / f"{name}_cli.h5"
                t0 = time.perf_counter()
                subprocess.run([args.binary, "run", str(cfg), "-o", str(out), "--force", "--quiet"], check=True)
                cli.append(time.perf_counter() - t0)
                with h5py.File(out, "r") as f:
                    solver.append(float(f["summary"].attrs["wall_seconds"]))
                t0 = time.perf_counter()
                ds = normdyn.run(config)
                mem.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                normdyn.run(config, output=pathlib.Path(tmp) / f"{name}_py.h5", force=True)
                file.append(time.perf_counter() - t0)
            s, c, m, f_ = (statistics.median(x) for x in (solver, cli, mem, file))
            print(f"{name:6} {s:10.4f} {c:11.4f} {m:10.4f} {f_:10.4f} {c / s:11.2f} {m / s:14.2f} {f_ / s:15.2f} "
                  f"{f_ / c:12.2f}")
    print("solver s: the command line's integration time (/summary@wall_seconds of its file); CLI wall s: the "
          "whole `normdyn run` process; py mem / py file: normdyn.run without / with output")


if __name__ == "__main__":
    sys.exit(main())
