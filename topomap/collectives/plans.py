"""Keeping a reordered collective's output in the caller's rank order (notes 000 §3.7).

After reordering, the process that was old rank ``old_of_new[j]`` acts as
new rank ``j``.  A vector collective then delivers blocks in new-rank
order; three plans give them back in old-rank order:

* :class:`InitComm` (extra initial communication): before the collective,
  new rank ``j`` fetches the input of old rank ``j``; the output then comes
  out in old-rank order.  The thesis's choice for applications.
* :class:`EndShuffle` (memory shuffle at the end): run the collective
  unchanged, then move the block at new index ``j`` to position
  ``old_of_new[j]``.
* :func:`ring_offsets` (ring allgather, neither): the block a rank receives
  at each stage goes straight to its old-rank offset.

Recursive doubling and binomial gather need InitComm or EndShuffle (they
move runs of blocks that must be contiguous in rank order); a binomial
broadcast needs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import MappingError
from ..pattern import Pattern

__all__ = ["InitComm", "EndShuffle", "ring_offsets", "as_permutation"]


def as_permutation(old_of_new: Any) -> np.ndarray:
    """``old_of_new`` checked: a permutation of ``0..n-1`` (int64 copy).

    Examples
    --------
    >>> from topomap.collectives.plans import as_permutation
    >>> as_permutation([2, 0, 1]).tolist()
    [2, 0, 1]
    """
    arr = np.asarray(old_of_new)
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu":
        raise MappingError("old_of_new must be a non-empty 1-D integer array")
    arr = arr.astype(np.int64)
    seen = np.zeros(arr.size, dtype=bool)
    inside = (arr >= 0) & (arr < arr.size)
    if not inside.all():
        j = int(np.flatnonzero(~inside)[0])
        raise MappingError(f"old_of_new[{j}] = {arr[j]} is not a rank in [0, {arr.size})")
    seen[arr] = True
    if not seen.all():
        raise MappingError(f"old_of_new is not a permutation: rank {int(np.flatnonzero(~seen)[0])} is missing")
    return arr


@dataclass(frozen=True, eq=False)
class InitComm:
    """The extra first exchange: new rank ``j`` receives old rank ``j``'s input.

    Attributes
    ----------
    old_of_new : ndarray
    send_to : ndarray
        ``send_to[j]``: the new rank new rank ``j`` sends its own input to
        (the new rank of the process whose new rank equals ``j``'s old rank).
    recv_from : ndarray
        ``recv_from[j]``: the new rank whose input new rank ``j`` takes.

    Examples
    --------
    The notes' example: old rank 0 becomes new rank 1, so old rank 1 sends
    its input to it.

    >>> from topomap.collectives.plans import InitComm
    >>> plan = InitComm.of([1, 0, 2])       # new 0 is old 1, new 1 is old 0
    >>> plan.send_to.tolist(), plan.recv_from.tolist()
    ([1, 0, 2], [1, 0, 2])
    >>> plan.stage(bytes=8).to_dense().tolist()[0]
    [0.0, 8.0, 0.0]
    """

    old_of_new: np.ndarray
    send_to: np.ndarray
    recv_from: np.ndarray

    @classmethod
    def of(cls, old_of_new: Any) -> "InitComm":
        """The plan for a reordering ``old_of_new``."""
        old = as_permutation(old_of_new)
        new_of_old = np.empty_like(old)
        new_of_old[old] = np.arange(old.size)
        # new rank j holds old rank old[j]'s input; the one that needs it is new rank old[j]
        return cls(old, old.copy(), new_of_old)

    def stage(self, bytes: float) -> Pattern:
        """The exchange as one stage (``bytes`` per rank; staying ranks send nothing)."""
        src = np.arange(self.old_of_new.size)
        moving = self.send_to != src
        return Pattern.from_edges(src[moving], self.send_to[moving], np.full(int(moving.sum()), float(bytes)),
                                  n=int(src.size), provenance={"plan": "initComm"})


@dataclass(frozen=True, eq=False)
class EndShuffle:
    """The shuffle after the collective: the block at new index ``j`` goes to ``old_of_new[j]``.

    Examples
    --------
    >>> from topomap.collectives.plans import EndShuffle
    >>> EndShuffle.of([2, 0, 1]).apply(["from new 0", "from new 1", "from new 2"])
    ['from new 1', 'from new 2', 'from new 0']
    """

    old_of_new: np.ndarray

    @classmethod
    def of(cls, old_of_new: Any) -> "EndShuffle":
        """The plan for a reordering ``old_of_new``."""
        return cls(as_permutation(old_of_new))

    def apply(self, blocks: Sequence[Any]) -> list:
        """The blocks (in new-rank order) in old-rank order."""
        if len(blocks) != self.old_of_new.size:
            raise MappingError(f"{len(blocks)} blocks for {self.old_of_new.size} ranks")
        out: list = [None] * len(blocks)
        for j, b in enumerate(blocks):
            out[self.old_of_new[j]] = b
        return out


def ring_offsets(old_of_new: Any) -> np.ndarray:
    """The ring allgather's offset table: ``table[t, j]``, the old-rank slot of
    the block new rank ``j`` receives at stage ``t`` (from origin ``j - 1 - t``).

    Examples
    --------
    >>> from topomap.collectives.plans import ring_offsets
    >>> ring_offsets([0, 2, 1, 3]).tolist()
    [[3, 0, 2, 1], [1, 3, 0, 2], [2, 1, 3, 0]]
    """
    old = as_permutation(old_of_new)
    n = old.size
    t = np.arange(n - 1)[:, None]
    j = np.arange(n)[None, :]
    return old[(j - 1 - t) % n]
