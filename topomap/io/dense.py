"""Dense communication matrices: ``.npy`` or text, one row per sender."""

from __future__ import annotations

import os

import numpy as np

from ..errors import FormatError, PatternError
from ..pattern import Pattern
from ._format import number_column, write_rows
from ._text import parse_block, parse_nonzeros, read_text
from .atomic import atomic_write

_MAX_DENSE = 50_000


def read_dense(path: "str | os.PathLike[str]") -> Pattern:
    """Read an ``n x n`` matrix of bytes (row = sender) from ``.npy`` or text.

    Text: whitespace- or comma-separated numbers, ``#`` comments; every row
    must have ``n`` entries.  Errors name the file and line.

    Examples
    --------
    >>> import topomap as tm, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "c.mat")
    >>> _ = open(path, "w").write("# profile2mat output\\n0 5 1\\n2, 0, 0\\n0 0 0\\n")
    >>> tm.io.read_dense(path).to_dense()[:2].tolist()
    [[0.0, 5.0, 1.0], [2.0, 0.0, 0.0]]
    """
    path = os.fspath(path)
    if path.lower().endswith(".npy"):
        mat = _load_npy(path)
        prov = {"source": "npy", "file": path}
    else:
        prov = {"source": "dense-text", "file": path}
        data = read_text(path)
        fast = _read_nonzeros(data, {"source": "dense", **prov})
        if fast is not None:
            return fast
        mat = _read_text(path, data)
    try:
        return Pattern.from_dense(mat, provenance=prov)
    except PatternError as exc:
        raise FormatError(f"{path}: {exc}") from None


def _load_npy(path: str) -> np.ndarray:
    """``numpy.load``, after checking the header's shape fits the file (a corrupt header must not
    make NumPy allocate terabytes)."""
    try:
        with open(path, "rb") as fh:
            major, _ = np.lib.format.read_magic(fh)
            read_header = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
            shape, _, dtype = read_header(fh)
            need = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if need > os.fstat(fh.fileno()).st_size - fh.tell():
                raise ValueError(f"the header's shape {shape} needs {need} bytes, more than the file holds")
        return np.load(path, allow_pickle=False)
    except Exception as exc:  # NumPy's header parser raises ValueError, SyntaxError, TokenError, ... on corrupt input
        raise FormatError(f"{path}: not a readable .npy matrix ({exc})") from None


def _read_nonzeros(data, provenance: dict) -> Pattern | None:
    """The pattern from the non-zero numbers alone (C skips the zeros: a matrix of 1 %
    non-zeros never exists as an array), when the text is a square matrix of valid volumes;
    None sends it to :func:`_read_text`, which names what is wrong."""
    found = parse_nonzeros(data, comment=b"#", commas=True)
    if found is None:
        return None
    line, col, value, counts = found
    filled = counts > 0
    width = int(counts.max(initial=0))
    if not 0 < width <= _MAX_DENSE or int(filled.sum()) != width or (counts[filled] != width).any():
        return None
    if value.size and (~np.isfinite(value) | (value < 0)).any():
        return None
    row = (np.cumsum(filled) - 1)[line]
    return Pattern._adopt(width, row, col, value, None, provenance)


def _read_text(path: str, data) -> np.ndarray:
    block = parse_block(path, data, 1, integer=False, comment=b"#", commas=True)
    rows = np.flatnonzero(block.counts)
    if not rows.size:
        raise FormatError(f"{path}: no matrix rows")
    width = int(block.counts[rows[0]])
    if width > _MAX_DENSE:
        raise block.error(rows[0], f"row has {width} entries, more than {_MAX_DENSE} processes; "
                                   "use a sparse format")
    bad = np.flatnonzero(block.counts[rows] != width)
    if bad.size:
        raise block.error(rows[bad[0]], f"row has {block.counts[rows[bad[0]]]} entries, the first row has {width}")
    if rows.size > _MAX_DENSE:
        raise block.error(rows[_MAX_DENSE], f"more than {_MAX_DENSE} rows; use a sparse format")
    if rows.size != width:
        raise block.error(rows[-1], f"{rows.size} rows of {width} entries; the matrix must be square "
                                    "(truncated file?)")
    mat = block.values.reshape(width, width)
    bad = np.flatnonzero(~np.isfinite(block.values) | (block.values < 0))
    if bad.size:
        r, c = divmod(int(bad[0]), width)
        text = block.tokens(rows[r])[c].decode("utf-8", errors="backslashreplace")
        raise block.error(rows[r], f"entry {c} ({text!r}) of row {r} is negative, NaN or infinite")
    return mat


def write_dense(pattern: Pattern, path: "str | os.PathLike[str]") -> None:
    """Write the dense matrix as ``.npy`` or as text (one row per line, exact decimals).

    Examples
    --------
    >>> import topomap as tm, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "c.mat")
    >>> tm.io.write_dense(tm.Pattern.from_edges([0, 1], [1, 0], [2.5, 3.0]), path)
    >>> print(open(path).read(), end="")
    0.0 2.5
    3.0 0.0
    """
    path = os.fspath(path)
    if pattern.n > _MAX_DENSE:
        raise FormatError(f"{path}: {pattern.n} processes is too many for a dense matrix")
    try:
        if path.lower().endswith(".npy"):
            with atomic_write(path, "wb") as fh:
                np.save(fh, pattern.to_dense())
            return
        conversion, values = number_column(pattern.to_dense().ravel())
        n = pattern.n
        with atomic_write(path, encoding="ascii") as fh:
            write_rows(fh, " ".join([conversion] * n) + "\n", [values[i::n] for i in range(n)])
    except OSError as exc:  # NumPy's own OSErrors carry no strerror
        raise FormatError(f"{path}: cannot write ({exc.strerror or exc})") from None
