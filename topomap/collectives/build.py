"""Collective schedules built by the C core, the way MPICH runs them.

:func:`build` covers binomial broadcast and gather; allgather by recursive
doubling, ring, Bruck and the hierarchical three-phase scheme (notes 000
§3.1); allreduce by recursive doubling and Rabenseifner; alltoall pairwise
and Bruck (003 §2.1).  Every size ``n >= 1`` works; the rule each algorithm
uses when ``n`` is not a power of two is MPICH 4's (``csrc/core/coll_algorithms.c``
states them):

* binomial trees: the tree of ranks relative to the root, cut off at ``n``;
* recursive doubling (allreduce) and Rabenseifner: ``rem = n - 2^k`` even
  ranks ``2i < 2 rem`` first hand their data to ``2i + 1`` and sit out, the
  other ``2^k`` ranks run the power-of-two algorithm, and ``2i + 1`` sends the
  result back at the end;
* recursive doubling (allgather): MPICH selects it for powers of two only;
  here the same fold, a folded pair's two blocks travelling together;
* ring, Bruck (both) and pairwise: any ``n`` (pairwise pairs ``r`` with
  ``r XOR i`` for powers of two, else sends to ``r + i``);
* hierarchical: node ``i`` holds ranks ``[i ppn, (i+1) ppn)``; its first
  rank leads; leaders run recursive doubling (with the fold) or a ring.

Message sizes: ``bytes`` is one rank's block for gather, allgather and
alltoall (an alltoall block is what one rank has for one destination) and
the whole vector for bcast and allreduce (Rabenseifner moves ``1 / 2^k``
pieces of it).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import _core
from ..errors import PatternError
from ..patterns.generators import _check_n, _check_positive, _is_int
from .schedules import Schedule, _check_root, _schedule

__all__ = ["build", "ALGORITHMS"]

#: The algorithms of each operation.
ALGORITHMS: dict[str, tuple[str, ...]] = {
    "bcast": ("binomial",),
    "gather": ("binomial",),
    "allgather": ("recursive_doubling", "ring", "bruck", "hierarchical"),
    "allreduce": ("recursive_doubling", "rabenseifner"),
    "alltoall": ("pairwise", "bruck"),
}
_OPS = ("bcast", "gather", "allgather", "allreduce", "alltoall")
_ALGS = ("binomial", "recursive_doubling", "ring", "bruck", "hierarchical", "rabenseifner", "pairwise")


def _check_choice(value: object, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise PatternError(f"{what} = {value!r} must be one of {', '.join(map(repr, allowed))}")
    return value  # type: ignore[return-value]


def build(op: str, algorithm: str, n: int, bytes: float = 1.0, *, root: int = 0, ppn: int | None = None,
          intra: str = "L", leaders: str = "rd", items: bool = False) -> Schedule:
    """The schedule of collective ``op`` run by ``algorithm`` on ``n`` ranks.

    Parameters
    ----------
    op : {"bcast", "gather", "allgather", "allreduce", "alltoall"}
    algorithm : str
        One of ``ALGORITHMS[op]``.
    n : int
        Number of ranks, >= 1.
    bytes : float
        One block (gather, allgather, alltoall) or the vector (bcast, allreduce).
    root : int
        Root of bcast and gather.
    ppn : int, optional
        Ranks per node of the hierarchical allgather (required there).
    intra : {"L", "NL"}
        Hierarchical node phases: linear (every rank talks to its leader) or
        binomial trees.
    leaders : {"rd", "ring"}
        Hierarchical leaders' allgather.
    items : bool
        Also list what every message carries (``messages["items"]``, for
        :func:`topomap.collectives.simulate`): block ids (allgather, gather),
        ``origin * n + destination`` (alltoall), 0 (bcast, recursive-doubling
        allreduce) or the vector piece (Rabenseifner).

    Returns
    -------
    Schedule
        One Pattern per stage (no stage empty, no pair twice in a stage),
        with ``op`` and ``messages`` set.

    Examples
    --------
    >>> from topomap.collectives import build
    >>> s = build("allreduce", "rabenseifner", 4, bytes=8)
    >>> [st.total_bytes for st in s]        # halving 16, 8 then doubling 8, 16
    [16.0, 8.0, 8.0, 16.0]
    >>> s = build("allgather", "recursive_doubling", 6, items=True)   # 2 folded pairs
    >>> len(s), s.messages["src"][:2].tolist(), s.messages["dst"][:2].tolist()
    (4, [0, 2], [1, 3])
    >>> len(build("allgather", "hierarchical", 8, ppn=4, intra="NL", leaders="ring"))   # 2 + 1 + 2 stages
    5
    """
    _check_choice(op, _OPS, "op")
    _check_choice(algorithm, ALGORITHMS[op], f"algorithm for {op}")
    n = _check_n(n)
    vol = _check_positive(bytes, "bytes")
    root = _check_root(root, n) if op in ("bcast", "gather") else 0
    params: dict = {"op": op, "bytes": vol}
    if op in ("bcast", "gather"):
        params["root"] = root
    if algorithm == "hierarchical":
        if ppn is None or not _is_int(ppn) or not 1 <= ppn <= n:
            raise PatternError(f"ppn = {ppn!r}: the hierarchical allgather needs ranks per node in [1, n = {n}]")
        _check_choice(intra, ("L", "NL"), "intra")
        _check_choice(leaders, ("rd", "ring"), "leaders")
        params.update(ppn=int(ppn), intra=intra, leaders=leaders)
    elif ppn is not None:
        raise PatternError(f"ppn = {ppn!r} is only for the hierarchical allgather, not {algorithm!r}")
    raw = _core.coll_build(_OPS.index(op), _ALGS.index(algorithm), n, root, int(ppn or 1), intra == "NL",
                           leaders == "ring", bool(items))
    ptr = raw["stage_ptr"]
    stage = np.repeat(np.arange(len(ptr) - 1, dtype=np.int32), np.diff(ptr))
    byts = raw["count"] * (raw["item_unit"] * vol)
    src, dst = raw["src"].astype(np.int64), raw["dst"].astype(np.int64)
    stages = [(src[a:b], dst[a:b], byts[a:b]) for a, b in zip(ptr[:-1], ptr[1:])]
    sched = _schedule(algorithm, n, stages, params)
    messages = {"src": raw["src"], "dst": raw["dst"], "stage": stage, "bytes": byts, "count": raw["count"],
                "item_unit": raw["item_unit"]}
    if items:
        messages.update(item_ptr=raw["item_ptr"], items=raw["items"])
    return dataclasses.replace(sched, op=op, messages=messages)
