"""Simulate the data movement of a built schedule, to check what it delivers.

Stages run in order; within a stage every message carries what its sender
held when the stage began (concurrent sends); alltoall blocks move (the
sender drops what it sends), the other items are copied.  A message may only carry
items its sender holds.  Reductions (allreduce) keep, per rank and vector
piece, the set of ranks whose contributions it has summed: a received piece
is added when the two sets are disjoint, replaces the receiver's when it
contains it, and is a double count otherwise.
"""

from __future__ import annotations

import numpy as np

from ..errors import PatternError
from .schedules import Schedule

__all__ = ["simulate", "expected", "reduction_kinds"]


def _initial(op: str, n: int, root: int, pieces: int) -> list:
    if op == "bcast":
        return [{0} if r == root else set() for r in range(n)]
    if op == "alltoall":
        return [set(range(r * n, (r + 1) * n)) for r in range(n)]
    if op == "allreduce":
        return [[1 << r] * pieces for r in range(n)]
    return [{r} for r in range(n)]


def expected(op: str, n: int, root: int = 0, pieces: int = 1) -> list:
    """What every rank must hold after collective ``op`` (as :func:`simulate` reports it).

    Examples
    --------
    >>> from topomap.collectives.simulate import expected
    >>> expected("gather", 3, root=1)
    [set(), {0, 1, 2}, set()]
    >>> expected("allreduce", 2, pieces=2)      # bit r: rank r's contribution is summed in
    [[3, 3], [3, 3]]
    """
    full = set(range(n))
    if op == "bcast":
        return [{0}] * n
    if op == "gather":
        return [full if r == root else set() for r in range(n)]
    if op == "allgather":
        return [full] * n
    if op == "alltoall":
        return [set(range(r, n * n, n)) for r in range(n)]
    return [[(1 << n) - 1] * pieces for _ in range(n)]


def simulate(schedule: Schedule) -> list:
    """Run the data movement of ``schedule`` (built with ``items=True``).

    Returns
    -------
    list
        Per rank: the set of items it ends with (blocks, ``origin * n +
        destination`` for alltoall; a gather's non-roots report the empty
        set), or for allreduce the list of contributor bitmasks, one per piece.

    Raises
    ------
    PatternError
        A message carries an item its sender lacks, or a reduction counts a
        contribution twice.

    Examples
    --------
    >>> from topomap.collectives import build
    >>> from topomap.collectives.simulate import expected, simulate
    >>> s = build("alltoall", "bruck", 5, items=True)
    >>> simulate(s) == expected("alltoall", 5)
    True
    """
    return _replay(schedule)[0]


def reduction_kinds(schedule: Schedule) -> np.ndarray:
    """Per message of an allreduce schedule: True where the receiver adds the
    pieces to its own, False where it takes them over (they hold its part).

    Examples
    --------
    >>> from topomap.collectives import build
    >>> from topomap.collectives.simulate import reduction_kinds
    >>> reduction_kinds(build("allreduce", "rabenseifner", 4, items=True)).astype(int).tolist()
    [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    """
    if schedule.op != "allreduce":
        raise PatternError(f"reduction_kinds needs an allreduce schedule, not {schedule.op!r}")
    return _replay(schedule)[1]


def _replay(schedule: Schedule) -> tuple[list, np.ndarray]:
    m = schedule.messages
    if schedule.op is None or m is None or "items" not in m:
        raise PatternError("simulate needs a schedule from topomap.collectives.build(..., items=True)")
    op, n = schedule.op, (schedule.stages[0].n if schedule.stages else 1)
    prov = schedule.total.provenance
    root = int(prov.get("root", 0))
    pieces = int(round(1 / m["item_unit"]))
    held = _initial(op, n, root, pieces)
    adds = np.zeros(len(m["src"]), dtype=bool)
    ptr, items = m["item_ptr"], m["items"]
    stage_start = np.searchsorted(m["stage"], np.arange(len(schedule) + 1))
    for s in range(len(schedule)):
        before = [list(h) if op == "allreduce" else set(h) for h in held]
        for k in range(int(stage_start[s]), int(stage_start[s + 1])):
            src, dst = int(m["src"][k]), int(m["dst"][k])
            carried = items[ptr[k]:ptr[k + 1]].tolist()
            if op == "allreduce":
                kinds = set()
                for c in carried:
                    mine, theirs = before[src][c], held[dst][c]
                    if mine & theirs and mine & theirs != theirs:
                        raise PatternError(f"stage {s}: {src} -> {dst} sums piece {c} of ranks "
                                           f"{mine & theirs:#x} twice")
                    kinds.add(not mine & theirs)
                    held[dst][c] = mine | theirs
                if len(kinds) > 1:
                    raise PatternError(f"stage {s}: {src} -> {dst} both adds and replaces pieces")
                adds[k] = kinds == {True}
                continue
            missing = set(carried) - before[src]
            if missing:
                raise PatternError(f"stage {s}: {src} -> {dst} carries item {min(missing)} that {src} lacks")
            if op == "alltoall":  # a block moves on: its sender no longer holds it
                held[src] -= set(carried)
            held[dst] |= set(carried)
    if op == "gather":  # only the root's buffer is the result
        held = [h if r == root else set() for r, h in enumerate(held)]
    return held, adds
