"""Experiment grids: patterns x machines x allocations x methods x seeds, as a table.

:func:`run_grid` runs every combination and returns a pandas DataFrame with
one row per run: every metric, each normalised by a baseline run of the same
cell, the mapping time, the seed, the options and the versions that produced
it.  Results save to CSV or Parquet (Parquet only when pyarrow is installed)
and a grid with an output file resumes where it stopped.  ``topomap
experiment grid.yaml`` runs a grid file (:func:`read_grid`).

Needs pandas (extra ``experiments``, which also brings tqdm for the progress
bar and PyYAML for YAML grid files).

Examples
--------
>>> from topomap.experiments import run_grid, summarize
>>> df = run_grid(["stencil2d:8x8"], {"torus": "torus:4x4/4"}, ["block", "cyclic"], progress=False)
>>> summarize(df)["hop_bytes_norm"].round(3).to_dict()
{'block': 1.0, 'cyclic': 1.222}
"""

from .grid import AllocationSpec, GridInterrupted, GridRunsFailed, MethodSpec, run_grid
from .gridfile import GRID_KEYS, read_grid
from .results import CELL, KEY, load, normalize, save, summarize

__all__ = ["run_grid", "GridInterrupted", "GridRunsFailed", "MethodSpec", "AllocationSpec", "read_grid", "GRID_KEYS",
           "load", "save", "normalize", "summarize", "KEY", "CELL"]
