"""Loads python/normdyn/plots.py by its path, so that the scripts work from the source tree
without importing the rest of the `normdyn` Python package (which may need a built extension).

The folder is registered as a package of its own (`normdyn_figures`) whose __init__ is not run:
plots.py imports its siblings (_style, _animate) relatively, and they need only numpy, h5py and
matplotlib."""
import importlib
import os
import sys
import types

_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = os.path.normpath(os.path.join(_HERE, os.pardir, "python", "normdyn"))


def _package():
    if "normdyn_figures" not in sys.modules:
        package = types.ModuleType("normdyn_figures")
        package.__path__ = [_PACKAGE]
        sys.modules["normdyn_figures"] = package


def load():
    """normdyn.plots."""
    _package()
    return importlib.import_module("normdyn_figures.plots")


def load_style():
    """normdyn's figure style (python/normdyn/_style.py: RC, widths, names), without matplotlib's figures."""
    _package()
    return importlib.import_module("normdyn_figures._style")


def run_script(name, main, input_errors=(), io_errors=(OSError,)):
    """Runs `main(argv, plots)` as the script `name` and exits with its code: the package not
    importable, or one of `io_errors`, exit 3; one of `input_errors` (plots.InputProblem always), exit
    2; each with one line on stderr."""
    try:
        plots = load()
    except ImportError as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        sys.exit(3)
    try:
        sys.exit(main(sys.argv[1:], plots))
    except (plots.InputProblem, *input_errors) as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        sys.exit(2)
    except io_errors as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        sys.exit(3)
