"""Checks of the task counts every load balancer takes, with errors naming the process."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TopomapError

__all__ = ["LoadBalanceError", "as_counts", "as_order"]


class LoadBalanceError(TopomapError, ValueError):
    """Task counts, a process order or a migration that cannot be balanced as asked."""


def as_counts(counts: Any) -> np.ndarray:
    """Task counts as a read-only 1-D int64 array; LoadBalanceError naming the first bad process.

    Examples
    --------
    >>> as_counts([3, 0, 2]).tolist()
    [3, 0, 2]
    >>> as_counts([3, 1.5])
    Traceback (most recent call last):
    ...
    topomap.loadbalance.counts.LoadBalanceError: process 1 has a task count that is not an integer (1.5)
    """
    try:
        arr = np.asarray(counts)
    except (TypeError, ValueError) as exc:
        raise LoadBalanceError(f"task counts must be a 1-D sequence of integers: {exc}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise LoadBalanceError(f"task counts must be a non-empty 1-D sequence (one per process), got shape {arr.shape}")
    if arr.size >= 2**31:
        raise LoadBalanceError(f"{arr.size} processes exceed the 2^31 - 1 the core handles")
    if arr.dtype.kind not in "iuf":
        items = arr.tolist() if isinstance(counts, np.ndarray) else list(counts)
        for i, v in enumerate(items):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise LoadBalanceError(f"process {i} has a task count that is not an integer ({v!r})")
            if not 0 <= v < 2**63:
                raise LoadBalanceError(f"process {i} has a task count outside 0..2^63 - 1 ({v})")
        arr = np.asarray(items, dtype=np.int64)
    if arr.dtype.kind == "f":
        wrong = ~np.isfinite(arr) | (arr != np.round(arr)) | (np.abs(arr) >= 2.0**63)
        if wrong.any():
            bad = int(np.argmax(wrong))
            raise LoadBalanceError(f"process {bad} has a task count that is not an integer ({arr[bad].item()!r})")
    elif arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and (arr >= 2**63).any():
        bad = int(np.argmax(arr >= 2**63))
        raise LoadBalanceError(f"process {bad} has a task count over 2^63 ({arr[bad]})")
    out = arr.astype(np.int64)
    if (out < 0).any():
        bad = int(np.argmax(out < 0))
        raise LoadBalanceError(f"process {bad} has a negative task count ({out[bad]})")
    out.setflags(write=False)
    return out


def as_order(order: Any, nproc: int) -> np.ndarray | None:
    """None, or a permutation of ``0..nproc-1`` as int32; LoadBalanceError otherwise."""
    if order is None:
        return None
    arr = np.asarray(order)
    if arr.ndim != 1 or arr.size != nproc:
        raise LoadBalanceError(f"order must list each of the {nproc} processes once, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise LoadBalanceError(f"order must hold integer process ids, got dtype {arr.dtype}")
    seen = np.zeros(nproc, dtype=bool)
    inside = (arr >= 0) & (arr < nproc)
    if not inside.all():
        bad = int(np.argmax(~inside))
        raise LoadBalanceError(f"order[{bad}] = {arr[bad]} is not a process (0..{nproc - 1})")
    seen[arr] = True
    if not seen.all():
        raise LoadBalanceError(f"order leaves out process {int(np.argmax(~seen))} (it lists another one twice)")
    return arr.astype(np.int32)
