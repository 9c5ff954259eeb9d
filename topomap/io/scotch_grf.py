"""Scotch source graph files (``.grf``): undirected graphs as a stream of integers.

Source: F. Pellegrini, "Scotch and libScotch 7.0 User's Guide", section 5.1
"Graph files": version ``0``; ``vertnbr edgenbr`` (``edgenbr`` counts arcs,
twice the edges); ``baseval flagval`` where ``flagval`` is three decimal
digits (hundreds: vertex labels, tens: edge loads, units: vertex loads); then
per vertex ``[label] [load] degree`` followed by ``degree`` arcs
``[edge load] end``.  Line breaks carry no meaning: the file is a stream of
integers.

Choices the source leaves open:

* Arc ``end`` (load ``e``, 1 without edge loads) of vertex ``v`` becomes ``e``
  bytes from ``v`` to ``end``; both arcs of an edge are in the file, so the
  pattern is symmetric.
* With labels, the process id of a vertex is ``label - baseval`` and arc ends
  are labels (so labels must be ``baseval .. baseval+vertnbr-1``, each once);
  without labels vertices are numbered in file order.
* ``baseval`` must be 0 or 1; vertex loads are checked (non-negative) and
  ignored (provenance says so); ``edgenbr`` must equal the sum of degrees and
  nothing may follow the last vertex.
* Before anything is allocated the header is checked against the file: each
  vertex takes at least 2 bytes (its degree and a separator).
* The graph must be undirected, as Scotch requires: every arc has its
  reverse arc with the same load, and no vertex lists a neighbour twice.
  ``check_symmetry=False`` reads the arcs as they are (repeats summed).
* The writer needs a symmetric pattern with integer volumes (see
  :mod:`topomap.io.metis`) and writes ``baseval`` 0, flag ``010`` (edge
  loads), one vertex per line; message counts are not part of the format.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import FormatError
from ..pattern import Pattern
from ._format import write_adjacency
from ._limits import check_count, from_entries
from ._text import _INT_RE, iter_lines, parse_block, parse_rows, read_text
from ._undirected import describe, read_undirected, undirected_weights, unmatched
from .atomic import atomic_write


def read_scotch_grf(path: "str | os.PathLike[str]", check_symmetry: bool = True) -> Pattern:
    """Read a Scotch source graph as a symmetric pattern of edge loads.

    ``check_symmetry=False`` accepts one-way arcs, different loads for the two
    directions and repeated neighbours (summed).

    Examples
    --------
    >>> import topomap as tm, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "g.grf")
    >>> _ = open(path, "w").write("0\\n3 4\\n0 010\\n1 7 1\\n2 7 0 4 2\\n1 4 1\\n")
    >>> tm.io.read_scotch_grf(path).to_dense().tolist()
    [[0.0, 7.0, 0.0], [7.0, 0.0, 4.0], [0.0, 4.0, 0.0]]
    """
    path = os.fspath(path)
    data = read_text(path)
    fast = _read_rows(path, data, check_symmetry)
    if fast is not None:
        return fast
    block = parse_block(path, data, 1, integer=True)
    vals = block.values
    if vals.size < 5:
        raise FormatError(f"{path}:{block.line_of(max(vals.size - 1, 0))}: truncated header: a Scotch graph starts with '0', 'vertnbr edgenbr', "
                          "'baseval flagval'")
    version, n, arcs, base, flag = (int(v) for v in vals[:5])

    def fail(token: int, message: str) -> FormatError:
        return FormatError(f"{path}:{block.line_of(token)}: {message}")

    if version != 0:
        raise fail(0, f"graph file version {version}; only version 0 is defined")
    if not 1 <= n < 2**31 or arcs < 0:
        raise fail(1, f"vertnbr {n} / edgenbr {arcs}: need 1 <= vertnbr < 2^31 and edgenbr >= 0")
    if base not in (0, 1):
        raise fail(3, f"baseval {base} must be 0 or 1")
    if not 0 <= flag <= 111 or set(str(flag)) - {"0", "1"}:
        raise fail(4, f"flagval {flag} must be three binary digits (labels, edge loads, vertex loads)")
    labels, weighted, loads = flag >= 100, (flag // 10) % 10 == 1, flag % 10 == 1
    head = int(labels) + int(loads)
    step = 2 if weighted else 1
    if vals.size - 5 < n * (head + 1):  # before _walk allocates per vertex
        raise fail(vals.size - 1, f"truncated: vertnbr {n} needs {n * (head + 1)} numbers after the header, "
                                  f"the file has {vals.size - 5}")
    provenance = _provenance(path, weighted, loads)
    lines = _vertex_lines(block, n, head, step)
    degree_at, degree = _walk(vals, 5, n, head, step, fail) if lines is None else lines
    if int(degree.sum()) != arcs:
        raise fail(2, f"edgenbr {arcs} but the degrees sum to {int(degree.sum())}")
    if loads:
        bad = np.flatnonzero(vals[degree_at - 1] < 0)
        if bad.size:
            raise fail(int(degree_at[bad[0]] - 1), f"vertex load {vals[degree_at[bad[0]] - 1]} is negative")
    ids = np.arange(n, dtype=np.int64)
    if labels:
        ids = vals[degree_at - head] - base
        bad = np.flatnonzero((ids < 0) | (ids >= n))
        if bad.size:
            raise fail(int(degree_at[bad[0]] - head), f"label {ids[bad[0]] + base} is outside "
                                                      f"{base}..{base + n - 1}")
        seen = np.zeros(n, dtype=np.int64)
        np.add.at(seen, ids, 1)
        if (seen > 1).any():
            dup = int(np.flatnonzero(seen > 1)[0])
            where = int(degree_at[np.flatnonzero(ids == dup)[1]] - head)
            raise fail(where, f"label {dup + base} is used twice")
    within = np.arange(int(degree.sum()), dtype=np.int64) - np.repeat(np.cumsum(degree) - degree, degree)
    arc = np.repeat(degree_at + 1, degree) + step * within
    end = vals[arc + step - 1] - base
    bad = np.flatnonzero((end < 0) | (end >= n))
    if bad.size:
        raise fail(int(arc[bad[0]] + step - 1), f"arc end {end[bad[0]] + base} is outside {base}..{base + n - 1}")
    weight = vals[arc] if weighted else np.ones(end.size, dtype=np.int64)
    bad = np.flatnonzero(weight < 0)
    if bad.size:
        raise fail(int(arc[bad[0]]), f"edge load {weight[bad[0]]} is negative")
    src = np.repeat(ids, degree)
    fault = unmatched(src, end, weight, n) if check_symmetry else None
    if fault is not None:
        e, other, kind = fault
        raise fail(int(arc[e] + step - 1), describe(kind, src[e] + base, end[e] + base, weight[e], weight[other]))
    return from_entries(path, src, end, weight.astype(np.float64), None, n, provenance,
                        lambda e: block.line_of(int(arc[e] + step - 1)))


def _provenance(path: str, weighted: bool, loads: bool) -> dict:
    provenance = {"source": "scotch", "file": path,
                  "counted": "edge loads, one message direction per arc"
                             + ("" if weighted else " (unit loads: the file has none)")}
    if loads:
        provenance["ignored"] = "vertex loads"
    return provenance


def _read_rows(path: str, data, check_symmetry: bool) -> Pattern | None:
    """The pattern straight from C when the header ends a line and every vertex is on a line
    of its own without a label (as Scotch and topomap write graphs): the rows come out as CSR
    arrays.  None sends the file to the checks of :func:`read_scotch_grf`."""
    header: list[bytes] = []
    body_at = 0
    for body_at, raw in iter_lines(data):
        if len(raw) > 200:  # not a header line: a graph written as one stream of numbers
            return None
        header += raw.split()
        if len(header) >= 5:
            break
    if len(header) != 5 or not all(_INT_RE.fullmatch(t) for t in header):
        return None
    version, n, arcs, base, flag = (int(t) for t in header)
    if version != 0 or not 1 <= n < 2**31 or arcs < 0 or base not in (0, 1) or flag not in (0, 1, 10, 11):
        return None
    weighted, loads = flag >= 10, flag % 10 == 1
    check_count(f"{path}:{_line_of_offset(data, body_at)}", "vertices", n, len(data) - body_at, 2)
    rows = parse_rows(data, n, head=int(loads), degree=True, step=2 if weighted else 1, weight_first=True, base=base,
                      start=body_at)
    if rows is None or int(rows[0][-1]) != arcs:
        return None
    row_ptr, dst, weight = rows
    return read_undirected(n, row_ptr, dst, weight, _provenance(path, weighted, loads), check_symmetry)


def _line_of_offset(data, offset: int) -> int:
    """Line number of the header's last line (the one before ``offset``)."""
    return data[:offset].count(b"\n")


def _vertex_lines(block, n: int, head: int, step: int) -> tuple[np.ndarray, np.ndarray] | None:
    """What :func:`_walk` finds, without a Python loop, when every vertex is on a line of its
    own (as Scotch and topomap write graphs): the lines holding numbers after the five header
    numbers must be ``n`` lines of ``head + 1 + degree * step`` numbers.  None otherwise."""
    counts = block.counts
    starts = np.cumsum(counts) - counts
    filled = np.flatnonzero(counts)
    rows = filled[starts[filled] >= 5]
    if rows.size != n or starts[rows[0]] != 5 or (counts[rows] <= head).any():
        return None
    degree_at = starts[rows] + head
    degree = block.values[degree_at]
    if (degree < 0).any() or (counts[rows] != head + 1 + degree * step).any():
        return None
    return degree_at, degree


def _walk(vals: np.ndarray, start: int, n: int, head: int, step: int, fail) -> tuple[np.ndarray, np.ndarray]:
    """Token index of every vertex's degree, and the degrees (the stream is sequential)."""
    degree_at = np.empty(n, dtype=np.int64)
    degree = np.empty(n, dtype=np.int64)
    pos = start
    size = vals.size
    item = vals.item
    for v in range(n):
        at = pos + head
        if at >= size:
            raise fail(size - 1, f"truncated: vertex {v} of {n} is missing")
        d = item(at)
        if d < 0:
            raise fail(at, f"vertex {v} has negative degree {d}")
        degree_at[v] = at
        degree[v] = d
        pos = at + 1 + d * step
        if pos > size:
            raise fail(size - 1, f"truncated: vertex {v} has degree {d} but the file ends first")
    if pos < size:
        raise fail(pos, f"numbers after the last of the {n} vertices")
    return degree_at, degree


def write_scotch_grf(pattern: Pattern, path: "str | os.PathLike[str]") -> None:
    """Write a symmetric pattern with integer volumes as a Scotch graph (baseval 0, edge loads).

    Raises
    ------
    FormatError
        If the pattern is not symmetric or a volume is not an integer.

    Examples
    --------
    >>> import topomap as tm, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "g.grf")
    >>> tm.io.write_scotch_grf(tm.Pattern.from_edges([0, 1], [1, 0], [3, 3]), path)
    >>> open(path).read().split("\\n")
    ['0', '2\\t2', '0\\t010', '1\\t3 1', '1\\t3 0', '']
    """
    path = os.fspath(path)
    weights = undirected_weights(pattern, path, "Scotch")
    try:
        with atomic_write(path, encoding="ascii") as fh:
            fh.write(f"0\n{pattern.n}\t{pattern.nnz}\n0\t010\n")
            write_adjacency(fh, pattern.indptr, [np.diff(pattern.indptr)], "%d",
                            [weights, pattern.indices.astype(np.int64)], "%d %d", sep="\t")
    except OSError as exc:
        raise FormatError(f"{path}: cannot write ({exc.strerror})") from None
