#!/bin/sh
# Per-member cost of `normdyn ensemble` on the phase-diagram workload (Post-LN, n = 32, d = 2,
# t = 30, 200 checkpoints, dopri5 rtol 1e-6 / atol 1e-8; 3 values of beta x 64 seeds, one thread),
# for one or more normdyn binaries run alternately (side by side: the same machine load), REPS
# times each; prints the median CPU and wall milliseconds per member and the ratios to the first.
#
#   bench/ensemble_overhead.sh [REPS] BINARY [BINARY...]
# e.g. the binary of another revision against this build:
#   bench/ensemble_overhead.sh 7 /tmp/normdyn_before build/app/normdyn
set -eu
reps=5
case "${1:-}" in ''|*[!0-9]*) ;; *) reps=$1; shift ;; esac
[ $# -ge 1 ] || { echo "usage: $0 [REPS] BINARY [BINARY...]" >&2; exit 2; }
base=$(cd "$(dirname "$0")" && pwd)/phase_diagram.toml
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
seeds=$(seq -s ', ' 1 64)
printf 'base = "%s"\n[axes]\n"model.beta" = [1.0, 4.0, 9.0]\n"init.seed" = [%s]\n' "$base" "$seeds" > "$dir/sweep.toml"
members=192
export OMP_WAIT_POLICY=passive
i=0
while [ $i -lt "$reps" ]; do
  b=0
  for bin in "$@"; do
    /usr/bin/time -f "%e %U %S" -o "$dir/time" "$bin" ensemble "$dir/sweep.toml" -o "$dir/out.h5" --force -q --threads 1
    echo "$b $(cat "$dir/time")" >> "$dir/times"
    b=$((b + 1))
  done
  i=$((i + 1))
done
echo "ensemble of $members members (n = 32, d = 2, t = 30, 200 checkpoints), $reps runs each, alternately; load: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$dir/times" "$members" "$@" <<'PY'
import sys, statistics
rows = [line.split() for line in open(sys.argv[1])]
members = int(sys.argv[2]); bins = sys.argv[3:]
first = None
for b, name in enumerate(bins):
    wall = statistics.median(float(r[1]) for r in rows if int(r[0]) == b) * 1e3 / members
    cpu = statistics.median(float(r[2]) + float(r[3]) for r in rows if int(r[0]) == b) * 1e3 / members
    if first is None:
        first = (wall, cpu)
    print(f"{name}: {cpu:.3f} ms CPU / member ({cpu / first[1]:.2f}x the first), {wall:.3f} ms wall / member ({wall / first[0]:.2f}x)")
PY
