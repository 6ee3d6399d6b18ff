"""The example notebook runs from a clean kernel with the installed package (nbclient)."""
import pathlib
import shutil

import nbformat
from nbclient import NotebookClient

from conftest import SOURCE

NOTEBOOK = SOURCE / "docs" / "notebooks" / "compare_schemes.ipynb"


def test_compare_schemes_notebook_executes(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    shutil.copy(NOTEBOOK, tmp_path / NOTEBOOK.name)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "the notebook drew no figure"
    statuses = nb.cells[3].outputs[0]["data"]["text/plain"]
    for key in ("post", "pre", "mix", "peri", "ngpt", "cod"):
        assert key in statuses
