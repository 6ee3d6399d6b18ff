#!/bin/sh
# Peak memory, file size and thread scaling of `normdyn ensemble` on the phase-diagram workload
# (Post-LN, n = 32, d = 2, t = 30, 200 checkpoints, dopri5 rtol 1e-6 / atol 1e-8; 2 values of beta
# x MEMBERS/2 seeds): /usr/bin/time -v around the real command with 1 and with 2 threads, then what
# each dataset of the file costs a member (its storage size over the members, h5py).
#
#   bench/ensemble_memory.sh [MEMBERS] [BINARY]      (defaults 10000 build/app/normdyn)
#
# THREADS (environment) lists the thread counts to run (default "1 2"; the scaling needs both).
# BINARY may also be build/bench/normdyn_bench_ensemble (the library's ensemble with the command's
# arguments, without the program's other commands).
# Prints one line per thread count (peak resident memory, per member, wall and CPU seconds), the
# ratio of the wall times (thread scaling) with the load average before and after, and the table of
# the file's datasets. The machine may be shared: a load average above 1.5 (on 2 cores) means other
# work took CPU time, and the thread scaling is then a lower bound.
set -eu
members=${1:-10000}
bin=${2:-build/app/normdyn}
[ -x "$bin" ] || { echo "no normdyn binary at $bin (build the target normdyn first)" >&2; exit 2; }
base=$(cd "$(dirname "$0")" && pwd)/phase_diagram.toml
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
seeds=$(seq -s ', ' 1 $((members / 2)))
printf 'base = "%s"\n[axes]\n"model.beta" = [1.0, 4.0]\n"init.seed" = [%s]\n' "$base" "$seeds" > "$dir/sweep.toml"
members=$(( (members / 2) * 2 ))
export OMP_WAIT_POLICY=passive
echo "ensemble of $members members (n = 32, d = 2, t = 30, 200 checkpoints); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for threads in ${THREADS:-1 2}; do
  /usr/bin/time -v -o "$dir/time.$threads" "$bin" ensemble "$dir/sweep.toml" -o "$dir/out.$threads.h5" --force -q \
    --threads "$threads"
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$dir/time.$threads")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$dir/time.$threads")
  user=$(sed -n 's/.*User time (seconds): //p' "$dir/time.$threads")
  sys=$(sed -n 's/.*System time (seconds): //p' "$dir/time.$threads")
  echo "$threads $rss $wall $user $sys" >> "$dir/runs"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$dir/runs" "$members" "$dir/out.1.h5" "$dir/out.2.h5" <<'PY'
import os, sys
import h5py
runs = [line.split() for line in open(sys.argv[1])]
members = int(sys.argv[2])
def seconds(text):
    parts = [float(p) for p in text.split(":")]
    return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
walls = {}
for threads, rss, wall, user, sys_ in runs:
    walls[threads] = seconds(wall)
    print(f"threads {threads}: peak resident {int(rss) / 1024:7.1f} MiB = {int(rss) * 1024 / members / 1000:6.1f} kB a member;"
          f" wall {seconds(wall):6.2f} s, CPU {float(user) + float(sys_):6.2f} s")
if "1" in walls and "2" in walls:
    print(f"thread scaling (wall, 1 thread / 2 threads): {walls['1'] / walls['2']:.2f}x")
files = [f for f in sys.argv[3:] if os.path.exists(f)]
size = os.path.getsize(files[0])
print(f"file: {size / 1e6:.2f} MB = {size / members:.0f} bytes a member")
rows = []
with h5py.File(files[0], "r") as f:
    for name, ds in f.items():
        if isinstance(ds, h5py.Dataset):
            rows.append((ds.id.get_storage_size(), name, ds.shape, ds.compression))
print(f"{'dataset':36s} {'shape':>16s} {'stored bytes':>13s} {'a member':>9s}")
for stored, name, shape, compression in sorted(rows, reverse=True):
    print(f"{name:36s} {str(shape):>16s} {stored:13d} {stored / members:9.1f}" + (f"  ({compression})" if compression else ""))
total = sum(r[0] for r in rows)
print(f"{'datasets':36s} {'':>16s} {total:13d} {total / members:9.1f}; the rest (metadata, attributes) "
      f"{(size - total) / members:.1f} bytes a member")
PY
