#!/usr/bin/env bash
# Work-precision of normdyn's adaptive methods against scipy RK45 / DOP853 and numpy Euler.
#   bash bench/work_precision.sh [--problems 32x3,256x32] [--samples 201]
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset for this command only (numpy's OpenBLAS picks its
# own kernel).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -x build/app/normdyn ]] || bash scripts/build.sh
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/work_precision.py --normdyn build/app/normdyn "$@"
