"""What the undirected graph formats (METIS, Scotch) can hold: symmetric integer volumes.

Readers and writers check the same rule (:func:`unmatched`): every entry
``u -> v`` has its mirror ``v -> u`` with the same weight, and no vertex lists
a neighbour twice.

Why refuse rather than symmetrise silently: writing ``C + C^T`` for a
directed pattern changes what reading the file back gives, so the caller
asks for it explicitly (``Pattern.symmetric()``, ``topomap convert
--symmetrize``).
"""

from __future__ import annotations

import numpy as np

from ..errors import FormatError
from ..pattern import Pattern


def unmatched(src: np.ndarray, dst: np.ndarray, weight: np.ndarray, n: int) -> tuple[int, int, str] | None:
    """The first fault of entries ``src[e] -> dst[e]`` read as an undirected graph, or None.

    Returns ``(e, other, kind)``: ``"duplicate"`` (entry ``e`` repeats entry
    ``other``), ``"one-way"`` (no entry ``dst[e] -> src[e]``; ``other`` is -1)
    or ``"weights"`` (entry ``other`` is the mirror of ``e`` with another
    weight).  Why two sorts: the entries sorted by ``(src, dst)`` and by
    ``(dst, src)`` are the same list exactly when every entry has its mirror.
    """
    key = src.astype(np.int64) * n + dst
    mirrored = dst.astype(np.int64) * n + src
    order = np.argsort(key, kind="stable")
    forward = key[order]
    repeat = np.flatnonzero(forward[1:] == forward[:-1])
    if repeat.size:
        first, again = order[repeat], order[repeat + 1]
        j = int(np.argmin(again))
        return int(again[j]), int(first[j]), "duplicate"
    back_order = np.argsort(mirrored, kind="stable")
    backward = mirrored[back_order]
    differ = np.flatnonzero((forward != backward) | (weight[order] != weight[back_order]))
    if not differ.size:
        return None
    p = int(differ[0])
    if forward[p] < backward[p]:  # key forward[p] has no mirror among the entries
        return int(order[p]), -1, "one-way"
    if forward[p] > backward[p]:  # the entry whose mirror key is backward[p] has no mirror
        return int(back_order[p]), -1, "one-way"
    return int(order[p]), int(back_order[p]), "weights"


def describe(kind: str, u: int, v: int, w: float, w_other: float) -> str:
    """A reader's message for a fault :func:`unmatched` found (``u``, ``v`` as the file writes them)."""
    what = {"duplicate": f"vertex {u} lists neighbour {v} twice",
            "one-way": f"vertex {u} lists neighbour {v} but vertex {v} does not list {u}",
            "weights": f"edge ({u}, {v}) weighs {w:g} at vertex {u} but {w_other:g} at vertex {v}"}[kind]
    return f"{what}: the graph is not undirected (pass check_symmetry=False to read the entries as they are)"


def undirected_weights(pattern: Pattern, path: str, fmt: str) -> np.ndarray:
    """Integer edge weights aligned with the CSR entries, after checking symmetry."""
    src = pattern.senders()
    fault = unmatched(src, pattern.indices, pattern.bytes, pattern.n)
    if fault is not None:
        u, v = int(src[fault[0]]), int(pattern.indices[fault[0]])
        raise FormatError(f"{path}: {fmt} graphs are undirected but {u} -> {v} carries {_volume(pattern, u, v):g} "
                          f"bytes and {v} -> {u} {_volume(pattern, v, u):g}; write pattern.symmetric() "
                          "(topomap convert --symmetrize)")
    w = pattern.bytes
    bad = np.flatnonzero(w != np.round(w))
    if bad.size:
        e = int(bad[0])
        raise FormatError(f"{path}: {fmt} edge weights are integers but {src[e]} -> {pattern.indices[e]} carries "
                          f"{float(w[e])!r} bytes; scale and round the pattern first")
    return w.astype(np.int64)


def _volume(pattern: Pattern, u: int, v: int) -> float:
    row = slice(pattern.indptr[u], pattern.indptr[u + 1])
    hit = np.flatnonzero(pattern.indices[row] == v)
    return float(pattern.bytes[row][hit[0]]) if hit.size else 0.0
