"""Fast text output for the writers: rows formatted a chunk at a time.

Why: ``numpy.savetxt`` formats value by value (about 3 M values/s); one
``%``-format of a repeated row template over a tuple of a chunk's values is
about four times faster.  Weights print exactly: integral columns with ``%d``,
others with ``%r`` (the shortest string that reads back to the same double).
"""

from __future__ import annotations

from typing import IO, Sequence

import numpy as np

_CHUNK_VALUES = 1 << 20


def number_column(values: np.ndarray) -> tuple[str, np.ndarray]:
    """The conversion (``%d`` or ``%r``) and values that print ``values`` exactly."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0 or (np.all(v == np.round(v)) and np.all(np.abs(v) < 2.0**53)):
        return "%d", v.astype(np.int64)
    return "%r", v


def _interleave(columns: Sequence[np.ndarray], lo: int, hi: int) -> list:
    out = np.empty((hi - lo, len(columns)), dtype=object)
    for j, col in enumerate(columns):
        out[:, j] = col[lo:hi].astype(object)
    return out.ravel().tolist()


def write_rows(fh: IO[str], row_format: str, columns: Sequence[np.ndarray]) -> None:
    """Write ``row_format % (columns[0][i], columns[1][i], ...)`` for every row ``i``."""
    nrows = len(columns[0]) if columns else 0
    step = max(1, _CHUNK_VALUES // max(1, len(columns)))
    for lo in range(0, nrows, step):
        hi = min(nrows, lo + step)
        fh.write((row_format * (hi - lo)) % tuple(_interleave(columns, lo, hi)))


def write_adjacency(fh: IO[str], indptr: np.ndarray, head: Sequence[np.ndarray], head_format: str,
                    entries: Sequence[np.ndarray], entry_format: str, sep: str = " ") -> None:
    """One line per row: the row's ``head`` values, then its CSR ``entries``.

    ``head`` columns have one value per row, ``entries`` columns one value per
    CSR entry; ``head_format`` formats a row's head values (unused without
    head columns), ``entry_format`` one entry's values.
    """
    n = len(indptr) - 1
    templates: dict[int, str] = {}
    row = 0
    while row < n:
        # rows up to about _CHUNK_VALUES values, at least one row
        limit = indptr[row] + _CHUNK_VALUES // max(1, len(entries))
        stop = max(row + 1, min(n, int(np.searchsorted(indptr, limit, side="right")) - 1))
        lo, hi = int(indptr[row]), int(indptr[stop])
        degrees = np.diff(indptr[row:stop + 1])
        parts = []
        for d in degrees.tolist():
            t = templates.get(d)
            if t is None:
                t = templates[d] = sep.join(([head_format] if head else []) + [entry_format] * d) + "\n"
            parts.append(t)
        width = len(entries)
        total = (stop - row) * len(head) + (hi - lo) * width
        values = np.empty(total, dtype=object)
        starts = np.arange(stop - row) * len(head) + (indptr[row:stop] - lo) * width
        is_head = np.zeros(total, dtype=bool)
        for j, col in enumerate(head):
            values[starts + j] = col[row:stop].astype(object)
            is_head[starts + j] = True
        if width:
            flat = np.empty((hi - lo, width), dtype=object)
            for j, col in enumerate(entries):
                flat[:, j] = col[lo:hi].astype(object)
            values[~is_head] = flat.ravel()
        fh.write("".join(parts) % tuple(values.tolist()))
        row = stop
