#!/usr/bin/env bash
# Fresh Debian 12 machine → dependencies installed, normdyn built, the default experiment run.
# The run file goes to runs/default.h5 (rewritten on every call of this script).
set -euo pipefail
cd "$(dirname "$0")/.."
# The packages to build and use normdyn only; scripts/test.sh adds those of the tests and docs.
# Those of the Python package (numpy, h5py, matplotlib, xarray) are needed only when it is
# imported: they install while the C++ compiles, apt's log kept aside unless it fails.
bash scripts/install-deps.sh --build
python_log=$(mktemp)
bash scripts/install-deps.sh --runtime > "$python_log" 2>&1 &
python_packages=$!
# A failed build still waits for apt, so that it leaves no half-configured package behind.
trap 'wait "$python_packages" 2> /dev/null || true; rm -f "$python_log"' EXIT
# The static archives Debian ships make every start of the program 15 ms shorter (docs/howto/install.md).
# A unity build compiles each library as one source (batch size 0), and each library's sources need
# not wait for the libraries it links: about half the compile time (docs/howto/install.md).
bash scripts/build.sh -DNORMDYN_BUILD_TESTS=OFF -DNORMDYN_STATIC_ARCHIVES=ON -DCMAKE_UNITY_BUILD=ON \
  -DCMAKE_UNITY_BUILD_BATCH_SIZE=0 -DCMAKE_OPTIMIZE_DEPENDENCIES=ON
if ! wait "$python_packages"; then
  cat "$python_log" >&2
  echo "quickstart.sh: installing the Python package's Debian packages failed (apt's output above)" >&2
  exit 1
fi
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
