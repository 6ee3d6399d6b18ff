#!/bin/sh
# `mpirun -n 2 normdyn ensemble` against one process with 2 threads, side by side (alternately, the
# same machine load), on the phase-diagram workload (Post-LN, n = 32, d = 2, t = 30, 200
# checkpoints, dopri5 rtol 1e-6 / atol 1e-8; 6 values of beta x SEEDS seeds). Prints each run's wall
# time (the launcher included), the members each process integrated and the launch alone (`mpirun -n 2
# normdyn --version`: Open MPI's start and MPI_Init/MPI_Finalize, a fixed cost no work can shorten),
# then the median ratios with and without that launch.
#
#   bench/ensemble_mpi.sh [REPS] [SEEDS] [BINARY]     (defaults: 5, 512, build/app/normdyn)
set -eu
reps=${1:-5}
seeds=${2:-512}
bin=${3:-build/app/normdyn}
command -v mpirun > /dev/null || { echo "mpirun not found (apt-get install openmpi-bin)" >&2; exit 2; }
base=$(cd "$(dirname "$0")" && pwd)/phase_diagram.toml
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'base = "%s"\n[axes]\n"model.beta" = [0.5, 2.0, 4.0, 6.0, 8.0, 10.0]\n"init.seed" = [%s]\n' \
  "$base" "$(seq -s ', ' 1 "$seeds")" > "$dir/sweep.toml"
export OMP_WAIT_POLICY=passive
launcher="mpirun -n 2"
[ "$(id -u)" = 0 ] && launcher="mpirun --allow-run-as-root -n 2"
echo "$((6 * seeds)) members; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
while [ $i -lt "$reps" ]; do
  /usr/bin/time -f "%e" -o "$dir/t1" "$bin" ensemble "$dir/sweep.toml" -o "$dir/one.h5" --force -q --threads 2
  /usr/bin/time -f "%e" -o "$dir/t2" $launcher "$bin" ensemble "$dir/sweep.toml" -o "$dir/two.h5" --force 2> "$dir/err"
  /usr/bin/time -f "%e" -o "$dir/t0" $launcher "$bin" --version > /dev/null
  split=$(sed -n 's/.*integrated per process: \([0-9 ]*\)).*/\1/p' "$dir/err")
  echo "$(cat "$dir/t1") $(cat "$dir/t2") $(cat "$dir/t0")" >> "$dir/times"
  printf 'run %d: one process, 2 threads %6.2f s   mpirun -n 2 %6.2f s (members per process: %s; launch alone %.2f s)\n' \
    $((i + 1)) "$(cat "$dir/t1")" "$(cat "$dir/t2")" "$split" "$(cat "$dir/t0")"
  i=$((i + 1))
done
ratios() {
  sort -g | awk -v what="$1" '{ r[NR] = $1 } END {
    printf "%s: median %.2f (min %.2f, max %.2f) over %d runs\n", what, r[int((NR + 1) / 2)], r[1], r[NR], NR }'
}
awk '{ print $2 / $1 }' "$dir/times" | ratios "mpirun -n 2 / one process with 2 threads"
awk '{ print ($2 - $3) / $1 }' "$dir/times" | ratios "the same, without the launch alone"
