"""Every notebook in notebooks/ is committed output-stripped and runs top to bottom.

Notebooks are found by globbing, so a new ``notebooks/*.ipynb`` is tested
without editing this file.  They run in a fresh ``python3`` kernel with
``notebooks/`` as working directory (they read ``data/...`` relative to it),
the Agg backend, and this checkout first on ``PYTHONPATH`` so the kernel
imports the code under test rather than another installed topomap.  The
per-cell timeout is generous on purpose: the under-a-minute budget of a
notebook is measured and reported, not asserted, so load spikes on a shared
CI machine do not fail the suite.  Assertions inside a notebook fail the test.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
CELL_TIMEOUT = 300


def _read(path: Path):
    nbformat = pytest.importorskip("nbformat")
    return nbformat.read(str(path), as_version=nbformat.NO_CONVERT)


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_notebook_is_committed_stripped(path: Path):
    nbformat = pytest.importorskip("nbformat")
    nb = _read(path)
    assert nb.nbformat == 4, f"{path.name}: nbformat {nb.nbformat}, expected 4"
    nbformat.validate(nb)
    kernel = nb.metadata.get("kernelspec", {}).get("name")
    assert kernel == "python3", f"{path.name}: kernel {kernel!r}, expected 'python3'"
    assert "widgets" not in nb.metadata, f"{path.name}: widget state is committed"
    dirty = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
             and (cell.outputs or cell.execution_count is not None or "execution" in cell.metadata)]
    assert not dirty, f"{path.name}: code cells {dirty} hold outputs, execution counts or timings; strip them"


@pytest.mark.parametrize("path", PATHS, ids=[p.name for p in PATHS])
def test_notebook_runs(path: Path, monkeypatch: pytest.MonkeyPatch):
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = _read(path)
    # the kernel inherits this process's environment
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    # force_raise_errors: a cell tagged raises-exception must not hide a failure either
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3", force_raise_errors=True,
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()    # raises CellExecutionError naming the cell, or a timeout error
