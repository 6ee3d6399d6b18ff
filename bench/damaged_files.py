#!/usr/bin/python3
"""Damaged run files must fail at once, never hang: a run file of the default configuration
(t_end = 5) with `--flips` random bit flips, `--files` times (seeded), each opened by
`normdyn.load` (reading every value), `normdyn analyze` and `normdyn run --resume`, each with a
time limit. Prints, per reader, how many files it was still reading at the limit (hangs) and how
many it refused (a non-zero exit: damaged, or for --resume also finished).

  /usr/bin/python3 bench/damaged_files.py [--files 50] [--flips 3] [--seed 1] [--timeout 10] [BINARY]

Default BINARY: build/app/normdyn; the package is the one /usr/bin/python3 imports (PYTHONPATH).
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

LOAD = "import normdyn, sys\ntry:\n    normdyn.load(sys.argv[1]).load()\nexcept (OSError, ValueError):\n    sys.exit(1)\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("binary", nargs="?", default="build/app/normdyn")
    p.add_argument("--files", type=int, default=50)
    p.add_argument("--flips", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=10.0)
    args = p.parse_args()
    binary = os.path.abspath(args.binary)
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "configs", "default.toml")
    rng = random.Random(args.seed)
    hangs = {"load": 0, "analyze": 0, "resume": 0}
    refused = dict.fromkeys(hangs, 0)
    with tempfile.TemporaryDirectory(prefix="normdyn-damaged-") as d:
        base = os.path.join(d, "base.h5")
        subprocess.run([binary, "run", source, "-o", base, "-q", "--set", "solver.t_end=5"], check=True)
        whole = open(base, "rb").read()
        for k in range(args.files):
            data = bytearray(whole)
            for _ in range(args.flips):
                i = rng.randrange(len(data))
                data[i] ^= 1 << rng.randrange(8)
            path = os.path.join(d, f"f{k}.h5")
            open(path, "wb").write(data)
            commands = {"load": [sys.executable, "-c", LOAD, path],
                        "analyze": [binary, "analyze", path, "-q", "--no-write"],
                        "resume": [binary, "run", "--resume", path, "-q"]}
            for what, command in commands.items():
                try:
                    r = subprocess.run(command, capture_output=True, timeout=args.timeout)
                    refused[what] += r.returncode != 0
                except subprocess.TimeoutExpired:
                    hangs[what] += 1
                    print(f"still reading after {args.timeout:g} s: {what} of file {k}", flush=True)
    print(f"{args.files} files with {args.flips} flipped bits each (seed {args.seed}):")
    for what in hangs:
        print(f"  {what:8s} hangs {hangs[what]:3d}   refused {refused[what]:3d}")
    return 1 if any(hangs.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
