"""Collective algorithms as stage-by-stage communication patterns.

Each generator returns a :class:`Schedule`: one :class:`~topomap.Pattern` per
stage (``msgs`` = messages of the stage, ``bytes`` = their volume) and
their sum.  The algorithms are those of Mirsadeghi's thesis §4.1 (notes
000 §3.1: recursive doubling, ring, binomial broadcast and gather) and
Cui's thesis §2.1 (notes 003 §2.1: the MPICH binomial-tree schedule, Bruck).
``n`` processes are ranks ``0..n-1``; ``bytes`` is the size of one block
(one process's contribution) unless a function says otherwise.

Choices the sources leave open
------------------------------
* **Binomial broadcast** (003 §2.1): the stage with the largest mask comes
  first: with ``L = ceil(log2 n)``, stage ``k`` uses ``mask = 2^(L-1-k)``
  and every rank ``r`` with ``r mod 2*mask == 0`` and ``r + mask < n``
  sends the whole buffer to ``r + mask`` (relative to the root).  This is
  the same tree as MPICH's and as the profiler's model.
* **Binomial gather** (000 §3.1, "the same tree bottom-up; messages grow
  toward the root"): stage ``k`` uses ``mask = 2^k``; every rank with
  ``r mod 2*mask == mask`` sends its subtree's ``min(mask, n - r)`` blocks
  to ``r - mask``.
* **Recursive doubling** (000 §3.1): power-of-two ``n`` only, as in the
  thesis; stage ``s`` pairs ``r`` with ``r XOR 2^s``.  ``op="allgather"``:
  the volume doubles each stage (``2^s`` blocks); ``op="allreduce"``: the
  whole vector (``bytes``) every stage, both directions counted
  (003 §2.1: ``P log2 P`` unicasts).
* **Ring allgather** (000 §3.1): ``n - 1`` stages, each rank sends one
  block to ``r + 1``.
* **Bruck** (003 §2.1): ``op="alltoall"``: stage ``k`` sends to
  ``(r + 2^k) mod n`` the blocks whose index ``j`` in ``0..n-1`` has bit
  ``k`` set (the sign of 003's formula; its example uses the opposite
  sign, which changes no hop count).  ``op="allgather"``: stage ``k``
  sends ``min(2^k, n - 2^k)`` blocks to ``(r - 2^k) mod n``.
* Roots other than 0 relabel ranks by ``(r - root) mod n``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..errors import PatternError
from ..patterns.generators import _check_n, _check_positive, _is_int
from ..pattern import Pattern

__all__ = ["Schedule", "binomial_bcast", "binomial_gather", "recursive_doubling", "ring_allgather", "bruck"]


@dataclass(frozen=True, eq=False)
class Schedule:
    """A collective as a sequence of stages.

    Attributes
    ----------
    algorithm : str
        Name of the algorithm (and operation).
    stages : tuple of Pattern
        ``stages[k]``: the messages of stage ``k``.
    total : Pattern
        Sum of all stages (bytes and message counts).
    op : str or None
        The collective (``"bcast"``, ``"allgather"``, ...) of schedules built
        by :func:`topomap.collectives.build`.
    messages : dict or None
        :func:`~topomap.collectives.build`'s unicasts in order: ``src``,
        ``dst``, ``stage``, ``bytes``, ``count`` (items carried) and, when
        asked for, ``item_ptr`` / ``items`` (what each message carries).

    Examples
    --------
    >>> from topomap.collectives.schedules import binomial_bcast
    >>> s = binomial_bcast(8, bytes=10)
    >>> len(s), [st.nnz for st in s], s.total.total_bytes
    (3, [1, 2, 4], 70.0)
    """

    algorithm: str
    stages: tuple[Pattern, ...]
    total: Pattern
    op: str | None = None
    messages: dict | None = None

    def __len__(self) -> int:
        return len(self.stages)

    def __iter__(self) -> Iterator[Pattern]:
        return iter(self.stages)

    def __getitem__(self, k: int) -> Pattern:
        return self.stages[k]


def _schedule(name: str, n: int, stages: list[tuple[np.ndarray, np.ndarray, np.ndarray]], params: dict) -> Schedule:
    prov = {"generator": name, "n": n, **params}
    pats = tuple(
        Pattern.from_edges(s, d, b, np.ones(len(s)), n=n, provenance={**prov, "stage": k})
        for k, (s, d, b) in enumerate(stages)
    )
    if stages:
        src, dst, byts = (np.concatenate(parts) for parts in zip(*stages))
    else:
        src = dst = np.zeros(0, dtype=np.int64)
        byts = np.zeros(0)
    total = Pattern.from_edges(src, dst, byts, np.ones(len(src)), n=n, provenance={**prov, "stages": len(pats)})
    return Schedule(name, pats, total)


def _check_root(root: object, n: int) -> int:
    if not _is_int(root) or not 0 <= int(root) < n:  # type: ignore[arg-type]
        raise PatternError(f"root = {root!r} must be a rank in [0, {n})")
    return int(root)  # type: ignore[arg-type]


def _levels(n: int) -> int:
    return max(0, math.ceil(math.log2(n))) if n > 1 else 0


def binomial_bcast(n: int, bytes: float = 1.0, root: int = 0) -> Schedule:
    """Binomial-tree broadcast of ``bytes`` from ``root`` (003 §2.1).

    Parameters
    ----------
    n : int
        Number of ranks.
    bytes : float
        Size of the broadcast buffer.
    root : int
        Broadcasting rank.

    Returns
    -------
    Schedule
        ``ceil(log2 n)`` stages, ``n - 1`` messages of ``bytes`` in all.

    Examples
    --------
    >>> from topomap.collectives.schedules import binomial_bcast
    >>> [st.to_dense().nonzero()[1].tolist() for st in binomial_bcast(8)]   # receivers per stage
    [[4], [2, 6], [1, 3, 5, 7]]
    """
    n = _check_n(n)
    vol = _check_positive(bytes, "bytes")
    root = _check_root(root, n)
    L = _levels(n)
    stages = []
    for k in range(L):
        mask = 1 << (L - 1 - k)
        rel = np.arange(0, n, 2 * mask, dtype=np.int64)
        rel = rel[rel + mask < n]
        stages.append(((rel + root) % n, (rel + mask + root) % n, np.full(rel.size, vol)))
    return _schedule("binomial_bcast", n, stages, {"bytes": vol, "root": root})


def binomial_gather(n: int, bytes: float = 1.0, root: int = 0) -> Schedule:
    """Binomial-tree gather of one block of ``bytes`` per rank to ``root`` (000 §3.1).

    Examples
    --------
    >>> from topomap.collectives.schedules import binomial_gather
    >>> s = binomial_gather(8, bytes=1)
    >>> [sorted(st.bytes.tolist()) for st in s]        # messages grow toward the root
    [[1.0, 1.0, 1.0, 1.0], [2.0, 2.0], [4.0]]
    """
    n = _check_n(n)
    vol = _check_positive(bytes, "bytes")
    root = _check_root(root, n)
    stages = []
    for k in range(_levels(n)):
        mask = 1 << k
        rel = np.arange(mask, n, 2 * mask, dtype=np.int64)
        blocks = np.minimum(mask, n - rel)
        stages.append(((rel + root) % n, (rel - mask + root) % n, blocks * vol))
    return _schedule("binomial_gather", n, stages, {"bytes": vol, "root": root})


def recursive_doubling(n: int, bytes: float = 1.0, op: str = "allreduce") -> Schedule:
    """Recursive doubling (000 §3.1) for a power-of-two ``n``.

    Parameters
    ----------
    n : int
        Number of ranks, a power of two.
    bytes : float
        ``op="allreduce"``: the vector size, sent whole at every stage;
        ``op="allgather"``: one block (stage ``s`` sends ``2^s`` blocks).
    op : {"allreduce", "allgather"}

    Examples
    --------
    >>> from topomap.collectives.schedules import recursive_doubling
    >>> [st.total_bytes for st in recursive_doubling(4, bytes=3, op="allgather")]
    [12.0, 24.0]
    >>> recursive_doubling(8).total.nnz        # P log2 P unicasts
    24
    """
    n = _check_n(n)
    vol = _check_positive(bytes, "bytes")
    if op not in ("allreduce", "allgather"):
        raise PatternError(f"op = {op!r} must be 'allreduce' or 'allgather'")
    if n & (n - 1):
        raise PatternError(f"recursive doubling needs a power-of-two number of ranks, got n = {n}")
    ranks = np.arange(n, dtype=np.int64)
    stages = [(ranks, ranks ^ (1 << s), np.full(n, vol * (1 << s if op == "allgather" else 1)))
              for s in range(_levels(n))]
    return _schedule("recursive_doubling", n, stages, {"bytes": vol, "op": op})


def ring_allgather(n: int, bytes: float = 1.0) -> Schedule:
    """Ring allgather (000 §3.1): ``n - 1`` stages, one block to the right neighbour each.

    Examples
    --------
    >>> from topomap.collectives.schedules import ring_allgather
    >>> s = ring_allgather(4, bytes=2)
    >>> len(s), float(s.total.to_dense()[3, 0]), s.total.msgs.tolist()
    (3, 6.0, [3.0, 3.0, 3.0, 3.0])
    """
    n = _check_n(n)
    vol = _check_positive(bytes, "bytes")
    ranks = np.arange(n, dtype=np.int64)
    stages = [(ranks, (ranks + 1) % n, np.full(n, vol)) for _ in range(n - 1)]
    return _schedule("ring_allgather", n, stages, {"bytes": vol})


def bruck(n: int, bytes: float = 1.0, op: str = "alltoall") -> Schedule:
    """Bruck's algorithm (003 §2.1), ``ceil(log2 n)`` stages, any ``n``.

    Parameters
    ----------
    n : int
        Number of ranks.
    bytes : float
        One block: for ``"alltoall"`` the data a rank has for one
        destination; for ``"allgather"`` one rank's contribution.
    op : {"alltoall", "allgather"}

    Examples
    --------
    >>> from topomap.collectives.schedules import bruck
    >>> s = bruck(8, op="alltoall")
    >>> [st.total_bytes for st in s]          # n/2 blocks per rank per stage
    [32.0, 32.0, 32.0]
    >>> [st.total_bytes for st in bruck(5, op="allgather")]
    [5.0, 10.0, 5.0]
    """
    n = _check_n(n)
    vol = _check_positive(bytes, "bytes")
    if op not in ("alltoall", "allgather"):
        raise PatternError(f"op = {op!r} must be 'alltoall' or 'allgather'")
    ranks = np.arange(n, dtype=np.int64)
    idx = np.arange(n, dtype=np.int64)
    stages = []
    for k in range(_levels(n)):
        step = 1 << k
        if op == "alltoall":
            blocks = int(((idx >> k) & 1).sum())
            stages.append((ranks, (ranks + step) % n, np.full(n, vol * blocks)))
        else:
            stages.append((ranks, (ranks - step) % n, np.full(n, vol * min(step, n - step))))
    return _schedule("bruck", n, stages, {"bytes": vol, "op": op})
