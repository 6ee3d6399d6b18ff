"""The package under test is the installed one: under CTest the tree that the fixture install/prefix
installed (NORMDYN_INSTALLED_PREFIX), else the session installs the build into a temporary prefix
(`cmake --install BUILD --prefix TMP --component python`); normdyn is imported from there, so that
the install rules are tested with everything else.

Environment (set by CTest, tests/CMakeLists.txt): NORMDYN_BUILD_DIR, NORMDYN_BINARY (the command
line), NORMDYN_SOURCE_DIR, NORMDYN_PYTHON_INSTALL_DIR (relative to the prefix), CMAKE_COMMAND.
"""
import os
import pathlib
import subprocess
import sys
import tempfile

import pytest

BUILD = pathlib.Path(os.environ["NORMDYN_BUILD_DIR"])
BINARY = pathlib.Path(os.environ["NORMDYN_BINARY"])
SOURCE = pathlib.Path(os.environ["NORMDYN_SOURCE_DIR"])

# Under CTest the installed tree of the fixture normdyn_installed (NORMDYN_INSTALLED_PREFIX); run by
# hand, a temporary one.
if os.environ.get("NORMDYN_INSTALLED_PREFIX"):
    _prefix = None
    PREFIX = pathlib.Path(os.environ["NORMDYN_INSTALLED_PREFIX"])
else:
    _prefix = tempfile.TemporaryDirectory(prefix="normdyn-python-install-")
    PREFIX = pathlib.Path(_prefix.name)
    subprocess.run([os.environ.get("CMAKE_COMMAND", "cmake"), "--install", str(BUILD), "--prefix", str(PREFIX),
                    "--component", "python"], check=True, stdout=subprocess.DEVNULL)
SITE = PREFIX / os.environ["NORMDYN_PYTHON_INSTALL_DIR"]
sys.path.insert(0, str(SITE))
# Child processes (the Ctrl-C test, the notebook's kernel) import the same installed package.
os.environ["PYTHONPATH"] = str(SITE) + os.pathsep + os.environ.get("PYTHONPATH", "")

import normdyn  # noqa: E402

assert pathlib.Path(normdyn.__file__).resolve().is_relative_to(SITE.resolve()), normdyn.__file__


def pytest_sessionfinish(session, exitstatus):
    if _prefix is not None:
        _prefix.cleanup()


def run_cli(*args, check=True):
    """`normdyn ARGS...` (the command line of the same build); returns the CompletedProcess."""
    p = subprocess.run([str(BINARY), *map(str, args)], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"normdyn {' '.join(map(str, args))}: exit {p.returncode}\n{p.stderr}")
    return p


@pytest.fixture
def small_config(tmp_path):
    """A particle run of a fraction of a second: Pre-LN (radii move), 12 tokens in R^3."""
    text = """
[model]
scheme = "pre"
n = 12
d = 3
beta = 2.0
[init]
kind = "uniform"
seed = 7
[solver]
method = "dopri5"
t_end = 3.0
[output]
samples = 31
"""
    path = tmp_path / "small.toml"
    path.write_text(text)
    return path
