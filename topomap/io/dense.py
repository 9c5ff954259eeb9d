"""Dense communication matrices: ``.npy`` or text, one row per sender."""

from __future__ import annotations

import os

import numpy as np

from ..errors import FormatError, PatternError
from ..pattern import Pattern

_MAX_DENSE = 50_000


def read_dense(path: "str | os.PathLike[str]") -> Pattern:
    """Read an ``n x n`` matrix of bytes (row = sender) from ``.npy`` or text.

    Text: whitespace- or comma-separated numbers, ``#`` comments; every row
    must have ``n`` entries.  Errors name the file and line.
    """
    path = os.fspath(path)
    if path.lower().endswith(".npy"):
        try:
            mat = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise FormatError(f"{path}: not a readable .npy matrix ({exc})") from None
        prov = {"source": "npy", "file": path}
    else:
        mat = _read_text(path)
        prov = {"source": "dense-text", "file": path}
    try:
        return Pattern.from_dense(mat, provenance=prov)
    except PatternError as exc:
        raise FormatError(f"{path}: {exc}") from None


def _read_text(path: str) -> np.ndarray:
    rows: list[list[float]] = []
    try:
        fh = open(path, encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise FormatError(f"{path}: cannot open ({exc.strerror})") from None
    last = 0
    with fh:
        for lineno, line in _lines(fh, path):
            text = line.split("#", 1)[0].replace(",", " ").split()
            if not text:
                continue
            try:
                row = [float(t) for t in text]
            except ValueError:
                bad = next(t for t in text if not _is_float(t))
                raise FormatError(f"{path}:{lineno}: {bad!r} is not a number") from None
            for col, v in enumerate(row):
                if not (np.isfinite(v) and v >= 0):
                    raise FormatError(f"{path}:{lineno}: entry {col} ({text[col]!r}) of row {len(rows)} "
                                      "is negative, NaN or infinite")
            if rows and len(row) != len(rows[0]):
                raise FormatError(f"{path}:{lineno}: row has {len(row)} entries, the first row has {len(rows[0])}")
            if len(rows) >= _MAX_DENSE:
                raise FormatError(f"{path}:{lineno}: more than {_MAX_DENSE} rows; use a sparse format")
            rows.append(row)
            last = lineno
    if not rows:
        raise FormatError(f"{path}: no matrix rows")
    if len(rows) != len(rows[0]):
        raise FormatError(f"{path}:{last}: {len(rows)} rows of {len(rows[0])} entries; the matrix must be "
                          "square (truncated file?)")
    return np.array(rows)


def _lines(fh, path: str):
    """(line number, line) pairs of a file opened with ``errors="surrogateescape"``;
    a line that is not UTF-8 raises FormatError naming it."""
    for lineno, line in enumerate(fh, 1):
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            raise FormatError(f"{path}:{lineno}: not UTF-8 text (binary file?)") from None
        yield lineno, line


def _is_float(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def write_dense(pattern: Pattern, path: "str | os.PathLike[str]") -> None:
    """Write the dense matrix as ``.npy`` or as text (one row per line)."""
    path = os.fspath(path)
    if pattern.n > _MAX_DENSE:
        raise FormatError(f"{path}: {pattern.n} processes is too many for a dense matrix")
    if path.lower().endswith(".npy"):
        np.save(path, pattern.to_dense())
    else:
        np.savetxt(path, pattern.to_dense(), fmt="%.17g")
