#!/usr/bin/env bash
# Builds the libFuzzer harness of the configuration parser with clang (ASan + UBSan) in build-fuzz/
# and runs it for the given number of seconds (default 60) from the seed corpus in tests/fuzz/corpus.
# A crash leaves its input in build-fuzz/ and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DNORMDYN_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build-fuzz --target config_fuzzer -j "$(nproc)"
corpus=$(mktemp -d)
cp tests/fuzz/corpus/* "$corpus"/
trap 'rm -rf "$corpus"' EXIT
./build-fuzz/tests/fuzz/config_fuzzer -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
  -artifact_prefix=build-fuzz/ "$corpus" 2>&1 | tail -n 12
