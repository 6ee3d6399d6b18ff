#!/usr/bin/env bash
# Installs every Debian 12 package normdyn needs to build, test, benchmark and plot.
# Run as root (or through sudo). Idempotent.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
packages=(
  # toolchain
  build-essential cmake pkg-config git
  # numerical core
  libboost-dev libboost-test-dev libeigen3-dev libfftw3-dev librandom123-dev
  libopenblas-dev libopenblas0-pthread
  # I/O and configuration
  libhdf5-dev hdf5-tools libcli11-dev libtomlplusplus-dev nlohmann-json3-dev
  # parallel (sweeps, sharded runs)
  libopenmpi-dev openmpi-bin
  # benchmarks and hardening (libFuzzer, sanitizers); SLEEF and GNU time for bench/
  libbenchmark-dev clang libclang-rt-14-dev libsleef-dev time
  # Python helpers: readers, plots, peer benchmarks (run with /usr/bin/python3)
  python3-numpy python3-scipy python3-h5py python3-matplotlib python3-threadpoolctl
  python3-xarray python3-h5netcdf
  # the Python package normdyn (python/): bindings, progress bars, its tests and example notebook
  pybind11-dev python3-pybind11 python3-pytest python3-tqdm python3-ipywidgets
  python3-nbclient python3-nbformat python3-ipykernel
  # the documentation site (scripts/docs.sh): Sphinx, Markdown pages, executed notebooks, a theme
  python3-sphinx python3-myst-parser python3-nbsphinx furo pandoc
)
if [[ -z ${NORMDYN_SKIP_APT_UPDATE:-} ]]; then $SUDO apt-get update -qq; fi
$SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}"
