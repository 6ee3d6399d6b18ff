#!/usr/bin/env bash
# Peak memory of a large run (target: n = 65 536, d = 64 below 1.5 GB), measured by
# /usr/bin/time -v around the real CLI. One dopri5 step (the default method; it holds the most
# state vectors of the low-order methods) from a uniform start: 8 right-hand sides, a few minutes.
#   bash bench/memory.sh [n] [d]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-65536}
d=${2:-64}
[[ -x build/app/normdyn ]] || bash scripts/build.sh
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/big.toml" <<TOML
[model]
scheme = "post"
n = $n
d = $d
[init]
kind = "uniform"
[solver]
method = "dopri5"
dt = 0.001
t_end = 0.001
[output]
samples = 2
TOML
/usr/bin/time -v build/app/normdyn run "$work/big.toml" -o "$work/big.h5" 2> "$work/time.txt" || { cat "$work/time.txt"; exit 1; }
grep -E "^normdyn:" "$work/time.txt"
peak_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
wall=$(sed -n 's/.*Elapsed (wall clock) time.*: //p' "$work/time.txt")
state_mb=$(( (n * d + n) * 8 / 1000000 ))
echo "n = $n, d = $d: peak resident memory $(( peak_kb / 1024 )) MiB ($(( peak_kb * 1024 / 1000000 )) MB), wall $wall;" \
     "one state vector is $state_mb MB, an n x n score matrix would be $(( n * n * 8 / 1000000 )) MB"
limit_kb=$(( 1500 * 1000 * 1000 / 1024 ))
if (( peak_kb < limit_kb )); then verdict=MET; else verdict="NOT MET"; fi
echo "target: peak memory below 1.5 GB: $verdict"
