"""Patterns from the edge arrays the readers produce, skipping the sort when it is not needed.

Why: ``Pattern.from_edges`` sorts and deduplicates (an argsort of all entries, the
largest cost of reading a 10^8-byte file).  Files written by the writers here,
and many written by other tools, list entries already in canonical order:
sorted by (sender, receiver), no repeats, no self-messages, positive volumes.
That is checked in one linear pass and the CSR built directly; anything else
goes through ``from_edges`` unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..pattern import Pattern


def pattern_from_edges(src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray, msgs: np.ndarray | None, n: int,
                       provenance: dict[str, Any]) -> Pattern:
    """Same result as ``Pattern.from_edges(src, dst, nbytes, msgs, n=n, provenance=provenance)``.

    The arrays must already be validated (ranks in ``0..n-1``, volumes finite and
    non-negative), as every reader does before building its pattern.
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    key = src * n + dst
    if key.size and np.all(key[1:] > key[:-1]) and not np.any(src == dst) and np.all(nbytes > 0):
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
        return Pattern(n, indptr, dst.astype(np.int32), np.asarray(nbytes, dtype=np.float64),
                       None if msgs is None else np.asarray(msgs, dtype=np.float64),
                       {**provenance, "dropped_self_bytes": 0.0})
    return Pattern.from_edges(src, dst, nbytes, msgs, n=n, provenance=provenance)
