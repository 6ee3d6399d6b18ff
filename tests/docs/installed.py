"""The package under test is the one installed from the build: `cmake --install BUILD --prefix P
--component python` into a temporary prefix (never into the system), as tests/python/conftest.py
does. Environment (set by CTest): NORMDYN_BUILD_DIR, NORMDYN_BINARY, NORMDYN_PYTHON_INSTALL_DIR,
CMAKE_COMMAND."""
import os
import pathlib
import subprocess

SOURCE = pathlib.Path(__file__).resolve().parents[2]


def install(prefix: pathlib.Path) -> pathlib.Path:
    """The site folder of the installed package: the tree of the CTest fixture normdyn_installed
    (NORMDYN_INSTALLED_PREFIX) if there is one, else the package installed into prefix."""
    if os.environ.get("NORMDYN_INSTALLED_PREFIX"):
        return pathlib.Path(os.environ["NORMDYN_INSTALLED_PREFIX"]) / os.environ["NORMDYN_PYTHON_INSTALL_DIR"]
    subprocess.run([os.environ.get("CMAKE_COMMAND", "cmake"), "--install", os.environ["NORMDYN_BUILD_DIR"],
                    "--prefix", str(prefix), "--component", "python"], check=True, stdout=subprocess.DEVNULL)
    return prefix / os.environ["NORMDYN_PYTHON_INSTALL_DIR"]


def environment(scratch: pathlib.Path) -> dict:
    """os.environ with the package installed under scratch/prefix on PYTHONPATH, and scratch/bin
    (`normdyn`, and `python3` = /usr/bin/python3) first on PATH."""
    site = install(scratch / "prefix")
    bin_dir = scratch / "bin"
    bin_dir.mkdir()
    (bin_dir / "normdyn").symlink_to(os.environ["NORMDYN_BINARY"])
    for name in ("python3", "python"):
        (bin_dir / name).symlink_to("/usr/bin/python3")
    env = dict(os.environ)
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH")) if p),
               MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1", PYDEVD_DISABLE_FILE_VALIDATION="1")
    env.setdefault("OMP_WAIT_POLICY", "passive")
    return env
