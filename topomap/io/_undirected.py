"""What the undirected graph formats (METIS, Scotch) can hold: symmetric integer volumes.

Why refuse rather than symmetrise silently: writing ``C + C^T`` for a
directed pattern changes what reading the file back gives, so the caller
asks for it explicitly (``Pattern.symmetric()``, ``topomap convert
--symmetrize``).
"""

from __future__ import annotations

import numpy as np

from ..errors import FormatError
from ..pattern import Pattern


def undirected_weights(pattern: Pattern, path: str, fmt: str) -> np.ndarray:
    """Integer edge weights aligned with the CSR entries, after checking symmetry."""
    n = pattern.n
    src = pattern.senders().astype(np.int64)
    dst = pattern.indices.astype(np.int64)
    order = np.argsort(dst * n + src, kind="stable")
    mirrored_key = dst[order] * n + src[order]
    key = src * n + dst
    same = (mirrored_key == key) & (pattern.bytes[order] == pattern.bytes)
    if not same.all():
        e = int(np.flatnonzero(~same)[0])
        # the smaller of the two keys is the pair whose mirror is missing
        u, v = divmod(int(min(key[e], mirrored_key[e])), n)
        if key[e] > mirrored_key[e]:
            u, v = v, u
        raise FormatError(f"{path}: {fmt} graphs are undirected but {u} -> {v} carries {_volume(pattern, u, v):g} "
                          f"bytes and {v} -> {u} {_volume(pattern, v, u):g}; write pattern.symmetric() "
                          "(topomap convert --symmetrize)")
    w = pattern.bytes
    bad = np.flatnonzero(w != np.round(w))
    if bad.size:
        e = int(bad[0])
        raise FormatError(f"{path}: {fmt} edge weights are integers but {src[e]} -> {dst[e]} carries {float(w[e])!r} "
                          "bytes; scale and round the pattern first")
    return w.astype(np.int64)


def _volume(pattern: Pattern, u: int, v: int) -> float:
    row = slice(pattern.indptr[u], pattern.indptr[u + 1])
    hit = np.flatnonzero(pattern.indices[row] == v)
    return float(pattern.bytes[row][hit[0]]) if hit.size else 0.0
