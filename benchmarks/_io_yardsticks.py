"""Other projects' readers of the same files, for bench_io.py: what "fast" means for a text
parser on this machine.  Apache Arrow's and Polars' CSV readers (multi-threaded, SIMD) and
SciPy's ``mmread`` (fast_matrix_market, multi-threaded C++) only parse into columns; ours also
check every id and volume and build the pattern's CSR, so the comparison favours them.

Each yardstick returns the number of entries it read, which bench_io.py checks against the
pattern's message lines.  A yardstick whose package is missing is left out (``pip install
".[bench]"`` installs them all)."""

from __future__ import annotations

import importlib.util
from typing import Callable


def _csv_head(path: str) -> tuple[int, list[str]]:
    """The comment lines our writer puts first (``# n=...``), then the header's columns."""
    with open(path, "rb") as fh:
        skip, line = 0, fh.readline()
        while line.startswith(b"#"):
            skip, line = skip + 1, fh.readline()
    return skip, line.decode().strip().split(",")


def _pyarrow_csv(path: str) -> int:
    import pyarrow as pa
    import pyarrow.csv as pc
    skip, columns = _csv_head(path)
    types = {c: pa.int32() if c in ("src", "dst") else pa.float64() for c in columns}
    return pc.read_csv(path, read_options=pc.ReadOptions(skip_rows=skip),
                       convert_options=pc.ConvertOptions(column_types=types)).num_rows


def _polars_csv(path: str) -> int:
    import polars as pl
    skip, columns = _csv_head(path)
    types = {c: pl.Int32 if c in ("src", "dst") else pl.Float64 for c in columns}
    return pl.read_csv(path, skip_rows=skip, schema_overrides=types).height


def _scipy_mmread(path: str) -> int:
    import scipy.io
    return scipy.io.mmread(path).nnz


_CSV = {"pyarrow": ("pyarrow", _pyarrow_csv), "polars": ("polars", _polars_csv)}
_BY_FORMAT = {"csv": _CSV, "csv_decimal": _CSV, "csv_unsorted": _CSV,
              "matrixmarket": {"scipy": ("scipy", _scipy_mmread)}}


def yardsticks(case: str) -> dict[str, Callable[[str], int]]:
    """The installed third-party readers of bench_io.py's case `case`, by name."""
    return {name: read for name, (module, read) in _BY_FORMAT.get(case, {}).items()
            if importlib.util.find_spec(module) is not None}
