#!/usr/bin/env bash
# Installs the Debian 12 packages normdyn needs. Run as root (or through sudo). Idempotent: when
# every package is there already it asks apt nothing.
#
#   bash scripts/install-deps.sh             everything: build, tests, benchmarks, hardening, docs
#   bash scripts/install-deps.sh --runtime   what the quickstart needs: build, install, use from
#                                            Python (no test, benchmark, sanitizer or docs tools)
#   bash scripts/install-deps.sh --build     what compiling needs (the quickstart installs the
#                                            Python packages of --runtime while it compiles)
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
build=(
  # toolchain
  build-essential cmake pkg-config git
  # numerical core
  libboost-dev libeigen3-dev libfftw3-dev libsharp-dev librandom123-dev libxsimd-dev
  # I/O and configuration
  libhdf5-dev zlib1g-dev hdf5-tools libcli11-dev libtomlplusplus-dev nlohmann-json3-dev
  # parallel (sweeps, sharded runs)
  libopenmpi-dev openmpi-bin
  # the Python package normdyn (python/): its bindings
  pybind11-dev python3-pybind11 python3-dev
)
python=(
  # what the Python package imports: arrays, files, Datasets, plots, progress bars
  python3-numpy python3-h5py python3-matplotlib python3-xarray python3-tqdm
  # the writers of `normdyn animate`: MP4 through ffmpeg, GIF through Pillow
  ffmpeg python3-pil
  # what the documentation's examples import (xarray's netCDF engine), and the tutorials opened and run
  python3-h5netcdf python3-notebook jupyter-nbconvert
  # `pip install .` into a venv (pyproject.toml, setup.py: setuptools drives CMake)
  python3-venv python3-pip python3-wheel python3-setuptools
)
development=(
  # tests; OpenBLAS behind Eigen (NORMDYN_USE_BLAS) and beside numpy in the peer benchmarks
  libboost-test-dev libopenblas-dev libopenblas0-pthread
  # benchmarks and hardening (libFuzzer, sanitizers); SLEEF and GNU time for bench/
  libbenchmark-dev clang libclang-rt-14-dev libsleef-dev time
  # the formatter of the C++ sources (.clang-format; the test style/format)
  clang-format-14
  # Python helpers: peer benchmarks, tests of the package and of its example notebooks
  python3-scipy python3-threadpoolctl python3-pytest
  # compiled user terms in the tests, the tutorial and bench/ (the package itself does not need it);
  # numba and torch are also the peers of bench/table.py
  python3-numba python3-torch
  python3-nbclient python3-nbformat python3-ipykernel
  # progress bars as notebook widgets (74 packages of the Jupyter stack: not in the quickstart's
  # set; without them a notebook shows the bar as a line)
  python3-ipywidgets
  # the documentation site (scripts/docs.sh): Sphinx, Markdown pages, executed notebooks, a theme
  python3-sphinx python3-myst-parser python3-nbsphinx furo pandoc
  # its equations without a network: MathJax 2.7 served from the site (docs/conf.py)
  libjs-mathjax
)
packages=("${build[@]}")
case ${1:-} in
  --build) ;;
  --runtime) packages+=("${python[@]}") ;;
  "") packages+=("${python[@]}" "${development[@]}") ;;
  *) echo "install-deps.sh: unknown option '$1' (expected --build, --runtime or nothing)" >&2; exit 2 ;;
esac
# Installed already (dpkg's "ii" for each): nothing to ask apt.
installed=$(dpkg-query -W -f='${db:Status-Abbrev}\n' "${packages[@]}" 2> /dev/null | grep -c '^ii' || true)
if [[ $installed -eq ${#packages[@]} ]]; then exit 0; fi
# A user may be installing beside us: wait up to ten minutes for the package manager's lock
# instead of failing on it.
apt_options=(-o DPkg::Lock::Timeout=600)
if [[ -z ${NORMDYN_SKIP_APT_UPDATE:-} ]]; then $SUDO apt-get "${apt_options[@]}" update -qq; fi
$SUDO apt-get "${apt_options[@]}" install -y -qq --no-install-recommends "${packages[@]}"
