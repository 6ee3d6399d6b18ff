#!/usr/bin/env bash
# Fresh Debian 12 machine → dependencies installed, normdyn built, the default experiment run.
# The run file goes to runs/default.h5 (rewritten on every call of this script).
set -euo pipefail
cd "$(dirname "$0")/.."
# The packages to build and use normdyn only; scripts/test.sh adds those of the tests and docs.
bash scripts/install-deps.sh --runtime
# The static archives Debian ships make every start of the program 15 ms shorter (docs/howto/install.md).
# A unity build compiles each library in a few batches of sources, and each library's sources need
# not wait for the libraries it links: about half the compile time (docs/developer/ci.md).
bash scripts/build.sh -DNORMDYN_BUILD_TESTS=OFF -DNORMDYN_STATIC_ARCHIVES=ON -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_OPTIMIZE_DEPENDENCIES=ON
# The Python package normdyn, into the folder Debian's python3 searches (/usr/local/lib/python3.X/
# dist-packages); build/install_manifest.txt lists what was installed (README "From Python").
cmake --install build > /dev/null
mkdir -p runs
./build/app/normdyn run data/configs/default.toml -o runs/default.h5 --force
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
with h5py.File("runs/default.h5", "r") as f:
    theta = f["particles/tokens/direction/value"]
    t = f["particles/tokens/direction/time"][:]
    s = f["summary"].attrs
    mean = theta[-1].mean(axis=0)
    print(f"runs/default.h5: {theta.shape[0]} frames of {theta.shape[1]} tokens in R^{theta.shape[2]}, "
          f"t = {t[0]:g}..{t[-1]:g}, status {s['status']}")
    print(f"variance 1 - |mean direction|^2: t = 0: {1 - np.sum(theta[0].mean(axis=0)**2):.3g}, "
          f"t = {t[-1]:g}: {1 - np.sum(mean**2):.3g}")
PY
(cd / && /usr/bin/python3 -c "import normdyn; print('import normdyn: version', normdyn.__version__, 'from', normdyn.__file__)")
