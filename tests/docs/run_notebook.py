"""Executes one tutorial notebook from a clean kernel in a fresh folder, with the package installed
from the build (nbclient, as the site's build does with nbsphinx): no cell may raise, and the
notebook must draw at least one figure.

    /usr/bin/python3 tests/docs/run_notebook.py docs/tutorials/NAME.ipynb
"""
import os
import pathlib
import shutil
import sys
import tempfile
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

import installed

path = pathlib.Path(sys.argv[1]).resolve()
nb = nbformat.read(path, as_version=4)
stored = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
if stored or any(cell.get("execution_count") for cell in nb.cells if cell.cell_type == "code"):
    sys.exit(f"{path.name}: outputs are committed; clear them (they are made when the site is built)")
with tempfile.TemporaryDirectory(prefix="normdyn-notebook-") as tmp:
    os.environ.update(installed.environment(pathlib.Path(tmp)))
    os.environ.pop("MPLBACKEND")             # the kernel's own inline backend draws the figures
    work = pathlib.Path(tmp) / "work"
    work.mkdir()
    (work / "data").symlink_to(installed.SOURCE / "data")
    shutil.copy(path, work / path.name)
    started = time.monotonic()
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    except CellExecutionError as e:
        sys.exit(f"{path.name}: {e}")
    print(f"{path.name}: executed in {time.monotonic() - started:.1f} s")
outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
if not any("image/png" in o.get("data", {}) for o in outputs):
    sys.exit(f"{path.name}: the notebook drew no figure")
