#!/usr/bin/env bash
# Hardening checks that CI runs after the default test suite:
#  1. the unit tests of memory-unsafe code and the hostile inputs given to the program (label
#     "memory": I/O, parsers, the attention kernel, recorders, the analysis driver, damaged files and
#     special paths) built with AddressSanitizer + UndefinedBehaviorSanitizer, in build-asan/; any
#     report fails the test;
#  2. the libFuzzer harness of the configuration parser for 60 s (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh  # Sphinx, clang and the rest; asks apt nothing when they are there
# -g1 (line tables only): the reports keep file:line, the build spends less time on debug info.
# -O1, as AddressSanitizer's documentation advises: 12 % less compile time than -O2 on the heaviest
# sources (src/attention.cpp 113 s against 128 s), and the sanitized tests are not timed.
# A unity build in batches of eight sources: the sources share the parsing of Eigen and Boost, the two
# cores still have batches to share. A missing include still fails in the fuzzer's build, which
# compiles the parser's sources one by one.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 \
  -DNORMDYN_SANITIZE=ON -DNORMDYN_BUILD_TESTS=ON -DNORMDYN_NATIVE=OFF -DNORMDYN_BUILD_BENCH=OFF -DNORMDYN_PYTHON=OFF > /dev/null
cmake --build build-asan -j "$(nproc)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
ctest --test-dir build-asan -L memory --output-on-failure -j 2 --timeout 1800
bash scripts/fuzz.sh "${NORMDYN_FUZZ_SECONDS:-60}"
