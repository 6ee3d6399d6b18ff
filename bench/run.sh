#!/usr/bin/env bash
# Right-hand-side benchmark: the n x d grid, the same-run DGEMM rate, ratios, growth
# exponent, exponentials. One command:
#   bash bench/run.sh             # Eigen GEMM (the default build)
#   bash bench/run.sh --backends  # also builds build-blas/ (NORMDYN_USE_BLAS=ON) and compares both
# Extra arguments go to Google Benchmark (e.g. --benchmark_filter=BM_Rhs/1024).
#
# Environment, for this command only: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset (they pin
# OpenBLAS to a slower kernel on this machine); OMP_WAIT_POLICY defaults to passive, because on a
# machine shared with other jobs a spinning OpenMP barrier waits for a descheduled thread for a whole
# time slice (measured: n = 256, d = 64 took 41.6 ms per evaluation with active waiting, 0.88 ms
# with passive). Three repetitions, randomly interleaved; the summary uses the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
backends=0
if [[ ${1:-} == --backends ]]; then backends=1; shift; fi
bash scripts/build.sh -DNORMDYN_BUILD_BENCH=ON > /dev/null
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
flags=(--benchmark_repetitions=3 --benchmark_enable_random_interleaving=true
       --benchmark_report_aggregates_only=true --benchmark_min_time=0.2)
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs; load average: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ)"
bench() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$@"; }
if [[ $backends == 0 ]]; then
  bench build/bench/normdyn_bench "${flags[@]}" "$@"
  exit 0
fi
cmake -S . -B build-blas -DCMAKE_BUILD_TYPE=Release -DNORMDYN_USE_BLAS=ON -DNORMDYN_BUILD_BENCH=ON -DNORMDYN_BUILD_TESTS=OFF > /dev/null
cmake --build build-blas -j "$(nproc)" --target normdyn_bench > /dev/null
out=$(mktemp -d)
# The two builds alternate twice so that a change of machine load hits both alike.
for round in 1 2; do
  for b in build build-blas; do
    bench "$b/bench/normdyn_bench" "${flags[@]}" --benchmark_filter='BM_Rhs|BM_Dgemm' \
      --benchmark_out="$out/$b.$round.json" --benchmark_out_format=json "$@" > "$out/$b.$round.txt"
  done
done
/usr/bin/python3 bench/compare_backends.py "$out"/build.{1,2}.json -- "$out"/build-blas.{1,2}.json
tail -n 25 "$out/build.2.txt"
