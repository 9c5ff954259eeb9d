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

import os

import numpy as np

from ..errors import FormatError
from ..pattern import Pattern


# Keys of the fingerprint, drawn per process: a file cannot be made to collide without them.
_KEYS = np.frombuffer(os.urandom(24), dtype=np.uint64) | np.uint64(1)


_CHUNK = 1 << 16  # entries hashed at a time: the temporaries stay in cache (five times faster)


def _fingerprint(a: np.ndarray, b: np.ndarray, bits: np.ndarray) -> int:
    """Sum over entries of a keyed 64-bit hash of ``(a, b, weight bits)`` (splitmix64's finaliser),
    modulo 2^64: the same for any order of the same entries."""
    total = 0
    for lo in range(0, a.size, _CHUNK):
        x = a[lo:lo + _CHUNK].astype(np.uint64)
        x *= _KEYS[0]
        t = b[lo:lo + _CHUNK].astype(np.uint64)
        t *= _KEYS[1]
        x += t
        x += bits[lo:lo + _CHUNK] * _KEYS[2]
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
        total = (total + int(x.sum(dtype=np.uint64))) % 2**64
    return total


def is_undirected(pattern: Pattern) -> bool:
    """Every entry of the pattern has its mirror with the same weight.

    Why a fingerprint: the entries ``(u, v, w)`` and their mirrors ``(v, u, w)`` are the
    same multiset exactly when the pattern is undirected; comparing keyed sums of hashes
    takes a few sequential passes, where sorting (or searching each mirror in C) costs five
    to ten times the reading of the file.  Unequal multisets give equal sums with
    probability about 2^-64; :func:`unmatched`, exact, names the fault when there is one.
    """
    if not pattern.nnz:
        return True
    src, dst = pattern.senders(), pattern.indices
    bits = pattern.bytes.view(np.uint64)
    return _fingerprint(src, dst, bits) == _fingerprint(dst, src, bits)


def read_undirected(n: int, row_ptr: np.ndarray, dst: np.ndarray, weight: np.ndarray, provenance: dict,
                    check_symmetry: bool) -> Pattern | None:
    """The pattern of CSR rows a METIS or Scotch reader scanned in C, when it is undirected (or
    ``check_symmetry`` is off); None sends the file to the reader's own checks, which name
    the fault.  A repeated neighbour shows as fewer pairs than entries (zero weights, which
    the pattern drops, go to the exact check)."""
    entries = int(row_ptr[-1])
    if check_symmetry and entries and not bool((weight > 0).all()):
        return None
    pattern = Pattern._adopt(n, None, dst, weight, None, provenance, row_ptr=row_ptr)
    if pattern is None or not check_symmetry:
        return pattern
    return pattern if pattern.nnz == entries and is_undirected(pattern) else None


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
    fault = None if is_undirected(pattern) else unmatched(src, pattern.indices, pattern.bytes, pattern.n)
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
