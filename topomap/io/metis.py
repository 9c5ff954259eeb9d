"""METIS graph files (``.graph``): undirected graphs as 1-based adjacency lines.

Source: G. Karypis, "METIS: A Software Package for Partitioning Unstructured
Graphs, Partitioning Meshes, and Computing Fill-Reducing Orderings of Sparse
Matrices", version 5.1.0 (2013), section 4.1.1 "Graph file".  Header
``n m [fmt [ncon]]``; ``fmt`` is three binary digits (vertex sizes, vertex
weights, edge weights, most significant first; ``1`` means ``001``); ``ncon``
weights per vertex; then line ``i`` holds vertex ``i``:
``[s] [w1 .. wncon] v1 [e1] v2 [e2] ...``; lines starting with ``%`` are comments.

Choices the source leaves open:

* Adjacency entry ``v`` (weight ``e``, or 1 without edge weights) on the line
  of vertex ``u`` becomes ``e`` bytes from ``u-1`` to ``v-1``.  A METIS graph
  lists every edge from both ends, so the pattern is symmetric, each
  direction carrying the edge weight (the networkx convention).
* Vertex sizes and weights are checked (non-negative integers) and ignored: a
  pattern has no vertex weights.  Provenance says so.
* The header's ``m`` must match: the vertex lines hold exactly ``2m`` entries.
  Before anything is allocated ``n`` is checked against the file: each vertex
  needs a line (at least its newline).  (``m`` allocates nothing: it is
  compared with the entries read.)
* The adjacency must be undirected, as METIS requires: ``v`` on the line of
  ``u`` with weight ``e`` needs ``u`` on the line of ``v`` with weight ``e``,
  and no line lists a neighbour twice.  ``check_symmetry=False`` reads the
  entries as they are (repeated neighbours summed), for files of other tools
  that use the layout for directed graphs.
* A blank line is a vertex without neighbours; after the ``n`` vertex lines
  only blank and comment lines may follow.
* The writer needs a symmetric pattern (use :meth:`Pattern.symmetric` or
  ``topomap convert --symmetrize`` for ``C + C^T``) with integer volumes; it
  writes ``fmt`` = ``1`` (edge weights) and no message counts.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import FormatError
from ..pattern import Pattern
from ._format import write_adjacency
from ._limits import check_count, from_entries
from ._text import check_text_line, iter_lines, parse_block, parse_rows, read_text
from ._undirected import describe, read_undirected, undirected_weights, unmatched
from .atomic import atomic_write


def read_metis(path: "str | os.PathLike[str]", check_symmetry: bool = True) -> Pattern:
    """Read a METIS graph as a symmetric pattern of edge weights.

    ``check_symmetry=False`` accepts one-way entries, different weights for
    the two directions and repeated neighbours (summed).

    Examples
    --------
    >>> import topomap as tm, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "g.graph")
    >>> _ = open(path, "w").write("% a path 1-2-3\\n3 2 1\\n2 7\\n1 7 3 4\\n2 4\\n")
    >>> tm.io.read_metis(path).to_dense().tolist()
    [[0.0, 7.0, 0.0], [7.0, 0.0, 4.0], [0.0, 4.0, 0.0]]
    """
    path = os.fspath(path)
    data = read_text(path)
    n, m, sizes, ncon, weighted, header_line, body_at = _header(path, data)
    provenance = {"source": "metis", "file": path,
                  "counted": "edge weights, one message direction per adjacency entry"
                             + ("" if weighted else " (unit weights: the file has none)")}
    ignored = [w for w, present in (("vertex sizes", sizes), ("vertex weights", ncon > 0)) if present]
    if ignored:
        provenance["ignored"] = " and ".join(ignored)
    fast = _read_rows(data, body_at, n, m, int(sizes) + ncon, weighted, provenance, check_symmetry)
    if fast is not None:
        return fast
    block = parse_block(path, data, header_line + 1, integer=True, comment=b"%", whole_line_comments=True,
                        start=body_at)
    is_vertex = np.ones(block.counts.size, dtype=bool)
    is_vertex[block.comment_lines] = False
    lines = np.flatnonzero(is_vertex)
    if lines.size < n:
        raise FormatError(f"{path}: {lines.size} vertex lines after the header, {n} expected (truncated file?)")
    extra = lines[n:][block.counts[lines[n:]] > 0]
    if extra.size:
        raise block.error(extra[0], f"more than the {n} vertex lines the header declares")
    lines = lines[:n]
    counts = block.counts[lines]
    head = int(sizes) + ncon
    step = 2 if weighted else 1
    bad = np.flatnonzero((counts < head) | ((counts - head) % step != 0))
    if bad.size:
        v = bad[0]
        raise block.error(lines[v], f"vertex {v + 1} has {counts[v]} numbers; with fmt "
                                    f"{int(sizes)}{int(ncon > 0)}{int(weighted)} and ncon {ncon} a line is "
                                    f"{head} vertex values then {'(neighbour, weight) pairs' if weighted else 'neighbours'}")
    degree = (counts - head) // step
    if int(degree.sum()) != 2 * m:
        raise FormatError(f"{path}: the header declares {m} edges ({2 * m} adjacency entries) but the vertex "
                          f"lines hold {int(degree.sum())}")
    starts = np.zeros(block.counts.size + 1, dtype=np.int64)
    np.cumsum(block.counts, out=starts[1:])
    vals = block.values
    if head:
        vertex_values = vals[(starts[lines][:, None] + np.arange(head)).ravel()]
        bad = np.flatnonzero(vertex_values < 0)
        if bad.size:
            v = bad[0] // head
            raise block.error(lines[v], f"vertex {v + 1} has a negative size or weight ({vertex_values[bad[0]]})")
    entry = np.repeat(starts[lines] + head, degree) + step * _ranks_within(degree)
    nbr = vals[entry]
    src = np.repeat(np.arange(n, dtype=np.int64), degree)
    bad = np.flatnonzero((nbr < 1) | (nbr > n))
    if bad.size:
        e = bad[0]
        raise block.error(lines[src[e]], f"neighbour {nbr[e]} of vertex {src[e] + 1} is outside 1..{n}")
    weight = vals[entry + 1] if weighted else np.ones(nbr.size, dtype=np.int64)
    bad = np.flatnonzero(weight < 0)
    if bad.size:
        e = bad[0]
        raise block.error(lines[src[e]], f"edge ({src[e] + 1}, {nbr[e]}) has negative weight {weight[e]}")
    dst = nbr - 1
    fault = unmatched(src, dst, weight, n) if check_symmetry else None
    if fault is not None:
        e, other, kind = fault
        raise block.error(lines[src[e]], describe(kind, src[e] + 1, nbr[e], weight[e], weight[other]))
    return from_entries(path, src, dst, weight.astype(np.float64), None, n, provenance,
                        lambda e: block.first_line + int(lines[src[e]]))


def _read_rows(data, body_at: int, n: int, m: int, head: int, weighted: bool, provenance: dict,
               check_symmetry: bool) -> Pattern | None:
    """The pattern straight from C when line ``i`` of the body is vertex ``i`` (no comment
    lines) and every number is valid: the rows come out as CSR arrays.  None sends the file
    to the checks of :func:`read_metis`, which name what is wrong."""
    rows = parse_rows(data, n, head=head, degree=False, step=2 if weighted else 1, weight_first=False, base=1,
                      start=body_at)
    if rows is None or int(rows[0][-1]) != 2 * m:
        return None
    row_ptr, dst, weight = rows
    return read_undirected(n, row_ptr, dst, weight, provenance, check_symmetry)


def _ranks_within(degree: np.ndarray) -> np.ndarray:
    """0, 1, .., d-1 for every row of ``degree`` d, concatenated."""
    total = int(degree.sum())
    starts = np.repeat(np.cumsum(degree) - degree, degree)
    return np.arange(total, dtype=np.int64) - starts


def _header(path: str, data: bytes) -> tuple[int, int, bool, int, bool, int, int]:
    """(n, m, vertex sizes?, ncon, edge weights?, header line number, body offset)."""
    for lineno, (offset, raw) in enumerate(iter_lines(data), 1):
        text = check_text_line(path, lineno, raw).strip()
        if text.startswith("%"):
            continue
        parts = text.split()
        if not 2 <= len(parts) <= 4 or not all(p.isascii() and p.isdigit() for p in parts):
            raise FormatError(f"{path}:{lineno}: METIS header must be 'n m [fmt [ncon]]' with non-negative "
                              f"integers, got {text[:60]!r}")
        n, m = int(parts[0]), int(parts[1])
        fmt = parts[2] if len(parts) > 2 else "0"
        if len(fmt) > 3 or set(fmt) - {"0", "1"}:
            raise FormatError(f"{path}:{lineno}: fmt {fmt!r} must be up to three binary digits "
                              "(vertex sizes, vertex weights, edge weights)")
        fmt = fmt.rjust(3, "0")
        sizes, vweights, weighted = fmt[0] == "1", fmt[1] == "1", fmt[2] == "1"
        if len(parts) == 4 and not vweights:
            raise FormatError(f"{path}:{lineno}: ncon is given but fmt {fmt} has no vertex weights")
        ncon = (int(parts[3]) if len(parts) == 4 else 1) if vweights else 0
        if vweights and ncon < 1:
            raise FormatError(f"{path}:{lineno}: ncon must be at least 1")
        if not 1 <= n < 2**31:
            raise FormatError(f"{path}:{lineno}: {n} vertices is outside 1 .. 2^31-1")
        if m >= 2**62 or ncon >= 2**31:
            raise FormatError(f"{path}:{lineno}: m={m} or ncon={ncon} is beyond any graph a file can hold")
        check_count(f"{path}:{lineno}", "vertices (a line each)", n, len(data) - offset, 1)
        return n, m, sizes, ncon, weighted, lineno, offset
    raise FormatError(f"{path}: no METIS header line (empty file?)")


def write_metis(pattern: Pattern, path: "str | os.PathLike[str]") -> None:
    """Write a symmetric pattern with integer volumes as a METIS graph (``fmt`` 1).

    Raises
    ------
    FormatError
        If the pattern is not symmetric (name the first one-way pair; write
        ``pattern.symmetric()`` instead) or a volume is not an integer.

    Examples
    --------
    >>> import topomap as tm, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "g.graph")
    >>> tm.io.write_metis(tm.Pattern.from_edges([0, 1], [1, 0], [3, 3]), path)
    >>> open(path).read()
    '2 1 1\\n2 3\\n1 3\\n'
    """
    path = os.fspath(path)
    weights = undirected_weights(pattern, path, "METIS")
    try:
        with atomic_write(path, encoding="ascii") as fh:
            fh.write(f"{pattern.n} {pattern.nnz // 2} 1\n")
            write_adjacency(fh, pattern.indptr, [], "", [pattern.indices.astype(np.int64) + 1, weights], "%d %d")
    except OSError as exc:
        raise FormatError(f"{path}: cannot write ({exc.strerror})") from None
