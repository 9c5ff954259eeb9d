"""MatrixMarket coordinate files (``.mtx``): entry ``(i, j, v)`` = ``v`` bytes from ``i-1`` to ``j-1``.

Source: R. F. Boisvert, R. Pozo, K. Remington, "The Matrix Market Exchange
Formats: Initial Design" (NISTIR 5935, 1996), sections 2-3: a banner
``%%MatrixMarket matrix coordinate <field> <symmetry>``, ``%`` comment lines,
a size line ``M N NZ``, then ``NZ`` lines ``i j [value]`` with 1-based indices.

Choices the source leaves open:

* Supported: fields ``real``, ``integer``, ``pattern`` (every entry weighs 1
  byte); symmetries ``general`` and ``symmetric`` (each stored off-diagonal
  entry also counts in the mirrored direction).  ``array`` files, ``complex``
  fields, ``skew-symmetric`` and ``hermitian`` are refused: a communication
  volume is neither negative nor complex.
* A symmetric file must store only the lower triangle (``i >= j``), as the
  format says; an upper entry is an error rather than a silent double count.
* The matrix must be square (rows = columns = processes).
* The size line is checked against the file before anything is allocated:
  ``NZ`` entry lines need at least 4 bytes each (``"1 1\\n"``),
  and at most ``max_processes`` (default :data:`topomap.io.MAX_PROCESSES`)
  processes beyond the ``2 NZ`` the entries can name may be declared.
* Repeated entries add up; sums past the largest double are an error naming
  the lines.
* Blank lines and ``%`` lines are accepted anywhere after the banner.
* The writer emits ``coordinate integer general`` when every volume is an
  integer below 2**53, else ``coordinate real general`` with shortest exact
  decimals; message counts are not part of the format and are not written.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import FormatError
from ..pattern import Pattern
from ._format import number_column, write_rows
from ._limits import check_count, check_processes, from_entries
from ._text import check_text_line, iter_lines, parse_block, parse_table, read_text, shown
from .atomic import atomic_write

_SUPPORTED_FIELDS = ("real", "integer", "pattern")
_SUPPORTED_SYMMETRY = ("general", "symmetric")


def read_matrix_market(path: "str | os.PathLike[str]", max_processes: int | None = None) -> Pattern:
    """Read a square MatrixMarket coordinate matrix of bytes (row = sender).

    ``max_processes`` bounds the processes the size line may declare beyond
    the ``2 NZ`` its entries can name (default :data:`topomap.io.MAX_PROCESSES`).

    Examples
    --------
    >>> import topomap as tm, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "c.mtx")
    >>> _ = open(path, "w").write("%%MatrixMarket matrix coordinate real symmetric\\n3 3 2\\n2 1 5\\n3 2 1.5\\n")
    >>> tm.io.read_matrix_market(path).to_dense().tolist()
    [[0.0, 5.0, 0.0], [5.0, 0.0, 1.5], [0.0, 1.5, 0.0]]
    """
    path = os.fspath(path)
    data = read_text(path)
    field, symmetry, n, nnz, size_line, body_at = _header(path, data, max_processes)
    provenance = {"source": "matrixmarket", "file": path, "field": field, "symmetry": symmetry,
                  "counted": "bytes per (row, column) = (sender, receiver) entry"
                             + (", 1 per entry (pattern field)" if field == "pattern" else "")}
    fast = _read_table(data, field, symmetry, n, nnz, body_at, provenance)
    if fast is not None:
        return fast
    width = 2 if field == "pattern" else 3
    block = parse_block(path, data, size_line + 1, integer=field != "real", comment=b"%",
                        whole_line_comments=True, start=body_at)
    bad = np.flatnonzero((block.counts != 0) & (block.counts != width))
    if bad.size:
        what = "row column" if width == 2 else "row column value"
        raise block.error(bad[0], f"{block.counts[bad[0]]} numbers where {width} ({what}) were expected")
    entry_lines = np.flatnonzero(block.counts)
    if entry_lines.size > nnz:
        raise block.error(entry_lines[nnz], f"more entries than the {nnz} the size line declares")
    if entry_lines.size < nnz:
        raise FormatError(f"{path}: the size line declares {nnz} entries but only {entry_lines.size} follow "
                          "(truncated file?)")
    rows = block.values.reshape(-1, width)
    i, j = rows[:, 0], rows[:, 1]
    bad = np.flatnonzero((i != np.round(i)) | (j != np.round(j)))
    if bad.size:
        e = bad[0]
        raise block.error(entry_lines[e], f"index ({_num(i[e])}, {_num(j[e])}) is not a pair of integers")
    bad = np.flatnonzero((i < 1) | (i > n) | (j < 1) | (j > n))
    if bad.size:
        e = bad[0]
        raise block.error(entry_lines[e], f"index ({_num(i[e])}, {_num(j[e])}) is outside the {n} x {n} matrix "
                                          "(indices are 1-based)")
    values = rows[:, 2].astype(np.float64) if width == 3 else np.ones(len(rows))
    bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
    if bad.size:
        e = bad[0]
        raise block.error(entry_lines[e], f"value {shown(block.tokens(entry_lines[e])[2])} is negative, "
                                          "NaN or infinite")
    src, dst = i.astype(np.int64) - 1, j.astype(np.int64) - 1
    if symmetry == "symmetric":
        bad = np.flatnonzero(src < dst)
        if bad.size:
            e = bad[0]
            raise block.error(entry_lines[e], f"entry ({src[e] + 1}, {dst[e] + 1}) is above the diagonal in a "
                                              "symmetric matrix (only the lower triangle is stored)")
        off = src != dst
        src, dst, values = (np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]]),
                            np.concatenate([values, values[off]]))
        entry_lines = np.concatenate([entry_lines, entry_lines[off]])  # a mirrored entry is on its entry's line
    return from_entries(path, src, dst, values, None, n, provenance, lambda e: block.first_line + int(entry_lines[e]))


def _read_table(data, field: str, symmetry: str, n: int, nnz: int, body_at: int, provenance: dict) -> Pattern | None:
    """The pattern straight from C-typed columns when the entries are a clean table of
    in-range indices and valid values; None sends the file to the checks above."""
    types = {"real": "nnf", "integer": "nnd", "pattern": "nn"}[field]
    table = parse_table(data, types, comment=b"%", whole_line_comments=True, start=body_at)
    if table is None or table[0].size != nnz:
        return None
    i, j = table[0], table[1]
    i -= 1  # 1-based; an index 0 becomes -1, which the builder refuses
    j -= 1
    values = table[2] if len(table) == 3 else np.ones(nnz)
    if symmetry == "symmetric":
        if nnz and bool((i < j).any()):
            return None
        off = i != j
        i, j, values = (np.concatenate([i, j[off]]), np.concatenate([j, i[off]]),
                        np.concatenate([values, values[off]]))
    return Pattern._adopt(n, i, j, values, None, provenance)


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _header(path: str, data: bytes, max_processes: int | None) -> tuple[str, str, int, int, int, int]:
    """(field, symmetry, n, nnz, line number of the size line, offset of the body)."""
    lines = iter_lines(data)
    first = next(lines, None)
    if first is None:
        raise FormatError(f"{path}: empty file (expected a %%MatrixMarket banner)")
    offset, raw = first
    banner = check_text_line(path, 1, raw).split()
    if not banner or banner[0].lower() != "%%matrixmarket":
        raise FormatError(f"{path}:1: not a MatrixMarket file (the first line must start with %%MatrixMarket)")
    if len(banner) != 5 or banner[1].lower() != "matrix":
        raise FormatError(f"{path}:1: banner must read '%%MatrixMarket matrix <format> <field> <symmetry>'")
    fmt, field, symmetry = (b.lower() for b in banner[2:])
    if fmt != "coordinate":
        raise FormatError(f"{path}:1: {fmt!r} format is not supported (only 'coordinate')")
    if field not in _SUPPORTED_FIELDS:
        raise FormatError(f"{path}:1: field {field!r} is not supported (only {', '.join(_SUPPORTED_FIELDS)})")
    if symmetry not in _SUPPORTED_SYMMETRY:
        raise FormatError(f"{path}:1: symmetry {symmetry!r} is not supported "
                          f"(only {', '.join(_SUPPORTED_SYMMETRY)})")
    for lineno, (next_offset, raw) in enumerate(lines, 2):
        text = check_text_line(path, lineno, raw).strip()
        if not text or text.startswith("%"):
            continue
        parts = text.split()
        if len(parts) != 3 or not all(p.isascii() and p.isdigit() for p in parts):
            raise FormatError(f"{path}:{lineno}: size line must be 'rows columns entries', got {text[:60]!r}")
        m, n, nnz = (int(p) for p in parts)
        if m != n:
            raise FormatError(f"{path}:{lineno}: the matrix is {m} x {n}; a communication matrix must be square")
        if not 1 <= n < 2**31:
            raise FormatError(f"{path}:{lineno}: {n} processes is outside 1 .. 2^31-1")
        # an entry line is at least "i j" and a newline
        check_count(f"{path}:{lineno}", "entries", nnz, len(data) - next_offset, 4)
        check_processes(f"{path}:{lineno}", n, nnz, max_processes)
        return field, symmetry, n, nnz, lineno, next_offset
    raise FormatError(f"{path}: no size line after the banner (truncated file?)")


def write_matrix_market(pattern: Pattern, path: "str | os.PathLike[str]") -> None:
    """Write ``pattern`` as a MatrixMarket ``coordinate integer|real general`` matrix.

    Examples
    --------
    >>> import topomap as tm, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "c.mtx")
    >>> tm.io.write_matrix_market(tm.Pattern.from_edges([0], [1], [2.5]), path)
    >>> open(path).read().splitlines()[-2:]
    ['2 2 1', '1 2 2.5']
    """
    path = os.fspath(path)
    conversion, values = number_column(pattern.bytes)
    field = "integer" if conversion == "%d" else "real"
    try:
        with atomic_write(path, encoding="ascii") as fh:
            fh.write(f"%%MatrixMarket matrix coordinate {field} general\n"
                     f"% written by topomap: bytes from row to column\n"
                     f"{pattern.n} {pattern.n} {pattern.nnz}\n")
            write_rows(fh, f"%d %d {conversion}\n",
                       [pattern.senders().astype(np.int64) + 1, pattern.indices.astype(np.int64) + 1, values])
    except OSError as exc:
        raise FormatError(f"{path}: cannot write ({exc.strerror})") from None
