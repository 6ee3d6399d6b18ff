#!/usr/bin/env bash
# Builds the documentation site into build/docs/html (open build/docs/html/index.html).
#
# Builds the normdyn program and Python package first (reusing build/, configuring it if absent),
# installs the package into a temporary prefix (never into the system) for autodoc and the
# tutorials, and runs Sphinx with Debian's packages (scripts/install-deps.sh). The tutorials are
# executed during the build; the command-line and configuration references are generated from the
# program. Extra arguments go to sphinx-build (e.g. -W --keep-going: warnings are errors).
# Environment: NORMDYN_INSTALLED_PREFIX (an installed tree to use instead of installing the
# package), NORMDYN_BUILD_DIR (default build), NORMDYN_DOCS_OUT (default $NORMDYN_BUILD_DIR/docs/html;
# the doctrees go beside it), NORMDYN_DOCS_SKIP_BUILD=1 (the build is current: do not run cmake --build).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh  # Sphinx, clang and the rest; asks apt nothing when they are there
build=${NORMDYN_BUILD_DIR:-build}
out=${NORMDYN_DOCS_OUT:-$build/docs/html}
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release > /dev/null
fi
if [[ -z ${NORMDYN_DOCS_SKIP_BUILD:-} ]]; then
  cmake --build "$build" -j "$(nproc)" --target normdyn normdyn_python > /dev/null
fi
build=$(cd "$build" && pwd)
site=$(sed -n 's/^NORMDYN_PYTHON_INSTALL_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
if [[ -n ${NORMDYN_INSTALLED_PREFIX:-} ]]; then
  prefix=$NORMDYN_INSTALLED_PREFIX  # the test suite's installed tree (fixture install/prefix)
else
  prefix=$(mktemp -d "${TMPDIR:-/tmp}/normdyn-docs-XXXXXX")
  trap 'rm -rf "$prefix"' EXIT
  cmake --install "$build" --prefix "$prefix" --component python > /dev/null
fi
export PYTHONPATH="$prefix/$site${PYTHONPATH:+:$PYTHONPATH}"
export NORMDYN_BINARY="$build/app/normdyn"
# The tutorials call the program too (`normdyn analyze`, `normdyn plot`).
export PATH="$build/app:$PATH"
# PYDEVD_...: the kernels of the tutorials would warn about frozen modules on every start.
export PYTHONDONTWRITEBYTECODE=1 PYDEVD_DISABLE_FILE_VALIDATION=1
# Doctrees beside the site, not inside it; -E: read every page again, so that generated pages and
# the tutorials are always current.
/usr/bin/python3 -m sphinx -b html -E -q -j auto -d "$(dirname "$out")/doctrees" "$@" docs "$out"
echo "$out/index.html"
