"""The build of `pip install .` and `pip wheel .`: CMake builds and installs the project into a staging
prefix, from which the wheel takes the extension normdyn._core (and the MPI module beside it), the
`normdyn` program (the venv's bin/) and the shared libraries the program loads from bin/../lib.
The pure-Python layer comes from python/normdyn/.

Environment:
  NORMDYN_PREBUILT       a prefix that `cmake --install BUILD --prefix PREFIX` filled: its files are
                         taken as they are and nothing is compiled (the tests install the build they
                         have already made this way)
  NORMDYN_CMAKE_ARGS     extra arguments of the CMake configuration (split on spaces), e.g.
                         "-DNORMDYN_NATIVE=OFF" for a wheel that runs on other x86-64 machines
  CMAKE_BUILD_PARALLEL_LEVEL   jobs of the CMake build (CMake reads it)
  CMAKE_CXX_COMPILER_LAUNCHER  e.g. ccache (CMake reads it when it configures build-pip-cmake/ first)

The CMake build directory is build-pip-cmake/ in the source tree, kept between installs.
"""
import glob
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
# setuptools' folders (egg_info needs its folder to exist).
(ROOT / "build-pip").mkdir(exist_ok=True)


def _version():
    text = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    return re.search(r"project\(normdyn VERSION ([0-9.]+)", text).group(1)


class CMakeBuild(build_ext):
    """Builds the whole project with CMake and stages what the wheel holds."""

    def run(self):
        prefix = self._prefix()
        self._stage_program(prefix)
        super().run()

    def _prefix(self):
        prebuilt = os.environ.get("NORMDYN_PREBUILT")
        if prebuilt:
            prefix = pathlib.Path(prebuilt).resolve()
            if not (prefix / "bin" / "normdyn").is_file():
                sys.exit(f"NORMDYN_PREBUILT={prebuilt}: no bin/normdyn there (expected a prefix filled by "
                         "cmake --install BUILD --prefix PREFIX)")
            return prefix
        # The CMake tree beside scripts/build.sh's build/, at the same depth and with the same
        # generator when Ninja is there: a second `pip install .` or `pip wheel .` rebuilds only what
        # changed, and with ccache (CMAKE_CXX_COMPILER_LAUNCHER=ccache) the compilations are those of
        # build/, found in the cache.
        build = ROOT / "build-pip-cmake"
        prefix = pathlib.Path(self.build_temp).resolve() / "prefix"
        configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     "-DNORMDYN_BUILD_TESTS=OFF", f"-DPython_EXECUTABLE={sys.executable}",
                     # The interpreter's own site folder, relative to the staging prefix.
                     "-DNORMDYN_PYTHON_INSTALL_DIR=python"]
        if not (build / "CMakeCache.txt").exists() and not os.environ.get("CMAKE_GENERATOR") and shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        configure += shlex.split(os.environ.get("NORMDYN_CMAKE_ARGS", ""))
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build)], check=True)
        if prefix.exists():
            shutil.rmtree(prefix)
        subprocess.run(["cmake", "--install", str(build), "--prefix", str(prefix)], check=True,
                       stdout=subprocess.DEVNULL)
        return prefix

    def _package_dir(self, prefix):
        """The folder of the installed package normdyn below `prefix` (its _core module)."""
        found = sorted(glob.glob(str(prefix / "**" / "normdyn" / "_core*.so"), recursive=True))
        if not found:
            sys.exit(f"{prefix}: no normdyn/_core*.so (was the project configured with NORMDYN_PYTHON=ON?)")
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        mine = [f for f in found if f.endswith(suffix)]
        if not mine:
            sys.exit(f"{prefix}: normdyn/_core was built for another Python ({os.path.basename(found[0])}, "
                     f"this one needs *{suffix})")
        return pathlib.Path(mine[0]).parent

    def _stage_program(self, prefix):
        # The program and the libraries it loads from bin/../lib go to the wheel's data (bin/, lib/).
        staged = pathlib.Path(self.build_temp).resolve() / "data"
        if staged.exists():
            shutil.rmtree(staged)
        (staged / "bin").mkdir(parents=True)
        (staged / "lib").mkdir()
        shutil.copy2(prefix / "bin" / "normdyn", staged / "bin" / "normdyn")
        for lib in glob.glob(str(prefix / "lib" / "libnormdyn_*.so")):
            shutil.copy2(lib, staged / "lib")
        self.distribution.data_files = [
            ("bin", [str(staged / "bin" / "normdyn")]),
            ("lib", sorted(str(p) for p in (staged / "lib").iterdir())),
        ]
        self._from = self._package_dir(prefix)

    def build_extension(self, ext):
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        core = next(self._from.glob("_core*" + sysconfig.get_config_var("EXT_SUFFIX")))
        shutil.copy2(core, target)
        # The MPI module, loaded from beside the extension under an MPI launcher.
        for module in self._from.glob("libnormdyn_mpi.so"):
            shutil.copy2(module, target.parent / module.name)


setup(
    version=_version(),
    package_dir={"": "python"},
    packages=["normdyn"],
    ext_modules=[Extension("normdyn._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' folders beside, not inside, the CMake build folder `build/` of scripts/build.sh.
    options={"build": {"build_base": "build-pip"}, "egg_info": {"egg_base": "build-pip"}},
    zip_safe=False,
)
