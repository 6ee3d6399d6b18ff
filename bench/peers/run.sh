#!/usr/bin/env bash
# Peer benchmark: normdyn vs scipy solve_ivp (RK45, DOP853) vs numpy forward Euler.
#   bash bench/peers/run.sh [--problems 32x3,256x32,1024x64] [--schemes post,pre]
# Builds normdyn if needed. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset for this command only,
# so that numpy's OpenBLAS picks its own kernel (the script prints which one). OMP_WAIT_POLICY
# defaults to passive as in bench/run.sh: on a machine shared with other jobs, normdyn's OpenMP
# barriers otherwise spin against descheduled threads (README, Performance).
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ -x build/app/normdyn ]] || bash scripts/build.sh
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 bench/peers/peers.py --normdyn build/app/normdyn "$@"
