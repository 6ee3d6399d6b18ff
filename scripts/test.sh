#!/usr/bin/env bash
# The whole default test suite: builds normdyn and runs every CTest test not labelled "slow".
# Long studies: `ctest --test-dir build -L slow`.
set -euo pipefail
cd "$(dirname "$0")/.."
# The packages of the tests (the quickstart installs those of the build only); asks apt nothing when
# they are there.
bash scripts/install-deps.sh
# The default build, shared libraries only (the quickstart links the archives).
# A unity build, as the quickstart's (one batch per library; scripts/hardening.sh in batches of eight).
bash scripts/build.sh -DNORMDYN_BUILD_TESTS=ON -DNORMDYN_STATIC_ARCHIVES=OFF -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_UNITY_BUILD_BATCH_SIZE=0 -DCMAKE_OPTIMIZE_DEPENDENCIES=ON
ctest --test-dir build -LE slow --output-on-failure -j 2 --timeout 900
