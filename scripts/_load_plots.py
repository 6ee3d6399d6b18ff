"""Loads python/normdyn/plots.py by its path, so that the scripts work from the source tree
without importing the rest of the `normdyn` Python package (which may need a built extension)."""
import importlib.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_PATH = os.path.join(_HERE, os.pardir, "python", "normdyn", "plots.py")


def load():
    spec = importlib.util.spec_from_file_location("normdyn_plots", os.path.normpath(_PATH))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
