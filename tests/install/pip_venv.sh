#!/usr/bin/env bash
# The pip route of the README, as a user without root does it: `pip install --no-build-isolation .`
# into a venv that sees Debian's packages, then `pip wheel` and the wheel into a second venv, both
# offline (--no-index: a dependency pip would have to download fails the test). The build is the
# one CTest made: setup.py takes the installed tree of the fixture normdyn_installed
# (NORMDYN_PREBUILT) and compiles nothing. With --compile instead of PREFIX, setup.py compiles the
# whole project from a copy of the files git tracks, as a user's `pip install .` does (the test
# install/pip_compile, label slow). Run as root, the steps run as the user `nobody`.
#
#   pip_venv.sh SOURCE_DIR PREFIX|--compile PYTHON
set -euo pipefail
source_dir=$1
prefix=$2
python=$3

work=$(mktemp -d /tmp/normdyn-pip-venv.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/python"
if [[ $prefix == --compile ]]; then
  # The source tree as a clone has it (no build/, no outputs).
  git -C "$source_dir" ls-files -z | (cd "$source_dir" && tar --null -T - -cf -) | tar -xf - -C "$work/src"
  given=(CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}")
else
  # What setup.py reads when the build is given: the package's sources and the project's metadata.
  cp "$source_dir"/{pyproject.toml,setup.py,README.md,LICENSE,CMakeLists.txt} "$work/src/"
  cp -r "$source_dir/python/normdyn" "$work/src/python/"
  rm -rf "$work/src/python/normdyn/__pycache__"
  given=(NORMDYN_PREBUILT="$prefix")
fi

as_user=()
if [[ $(id -u) -eq 0 ]]; then
  chown -R nobody:nogroup "$work"
  as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
fi
run() {
  env -i PATH=/usr/bin:/bin HOME="$work" OMP_WAIT_POLICY=passive "${given[@]}" \
    PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 "${as_user[@]}" "$@"
}

run "$python" -m venv --system-site-packages "$work/v"
(cd "$work/src" && run "$work/v/bin/pip" install -q --no-build-isolation .)
# The venv's own copies: the package, its extension and the program.
run "$work/v/bin/python" - "$work" << 'EOF'
import os, pathlib, sys
import normdyn
work = pathlib.Path(sys.argv[1])
assert pathlib.Path(normdyn.__file__).resolve().is_relative_to(work / "v"), normdyn.__file__
assert pathlib.Path(normdyn._core.__file__).resolve().is_relative_to(work / "v"), normdyn._core.__file__
ds = normdyn.run({"model": {"n": 8, "d": 3}, "solver": {"t_end": 1.0}, "output": {"samples": 3}})
assert ds.attrs["status"] == "ok", ds.attrs
print("venv: import normdyn from", pathlib.Path(normdyn.__file__).parent, "ran", ds.direction.shape)
EOF
run "$work/v/bin/normdyn" --version
(cd "$work" && run "$work/v/bin/normdyn" run --set model.n=8 --set solver.t_end=1 --set output.samples=3 -o "$work/cli.h5" -q)
test -s "$work/cli.h5"

# The wheel, installed into a second venv.
(cd "$work/src" && run "$work/v/bin/pip" wheel -q --no-build-isolation --no-deps -w "$work/wheels" .)
wheel=$(ls "$work"/wheels/normdyn-*.whl)
run "$python" -m venv --system-site-packages "$work/w"
run "$work/w/bin/pip" install -q "$wheel"
run "$work/w/bin/python" -c "import normdyn, pathlib, sys; p = pathlib.Path(normdyn.__file__).resolve(); \
assert p.is_relative_to(pathlib.Path(sys.argv[1])), p; print('wheel:', p.parent)" "$work/w"
run "$work/w/bin/normdyn" --version
echo "pip_venv: the venv install and the wheel work as $("${as_user[@]}" id -un)"
