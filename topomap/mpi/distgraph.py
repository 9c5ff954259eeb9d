"""Dist-graph communicators on a reordered communicator, and moving data between numberings.

After :func:`topomap.mpi.reorder`, a process has two numbers: its old rank
``r`` (in ``comm``) and its new rank ``new_rank[r]`` (in ``newcomm``).  Two
situations need translation:

* **The process keeps its data** (it already holds what old rank ``r``
  owned, and its neighbour lists name old ranks).  Then the neighbours stay
  the same *processes*; only their numbers change: :func:`dist_graph` builds
  the graph on ``newcomm`` from lists in old numbering by mapping every rank
  through ``new_rank``, with ``reorder=False`` and the weights unchanged,
  and :func:`to_new`/:func:`to_old`/:func:`by_new_rank` translate any other
  rank-indexed data (send counts, displacements, per-rank buffers).  Skipping
  this translation is the wrong-neighbour bug of open-mpi/ompi#11756.
* **The data follows the role** (the point of reordering: new rank ``p``
  now does the work of role ``p``, the pattern's process ``p``).  Data held
  per old rank then moves to the process that took over that role:
  :func:`handover` (one ``sendrecv``), after which lists written in role
  numbers are already in new ranks.

Negative entries (``MPI.PROC_NULL``) pass through the translations unchanged.

Examples
--------
>>> import numpy as np
>>> new_rank = np.array([2, 0, 1])          # old rank 0 is now rank 2, ...
>>> to_new([0, 1, -2], new_rank).tolist(), to_old([2], new_rank).tolist()
([2, 0, -2], [0])
>>> by_new_rank(["a", "b", "c"], new_rank).tolist()
['b', 'c', 'a']
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ._collective import agree, mpi
from .reorder import ReorderInfo, _permutation_error, inverse

__all__ = ["to_new", "to_old", "by_new_rank", "by_old_rank", "dist_graph", "handover"]


def _perm(new_rank: "ReorderInfo | Any") -> np.ndarray:
    arr = new_rank.new_rank if isinstance(new_rank, ReorderInfo) else new_rank
    arr = np.asarray(arr)
    error = _permutation_error(arr, arr.size)
    if error is not None:
        raise ValueError(error)
    return arr.astype(np.int64)


def _through(ranks: Any, table: np.ndarray) -> np.ndarray:
    r = np.asarray(ranks, dtype=np.int64)
    if r.size and r.max() >= table.size:
        raise ValueError(f"rank {int(r.max())} is not a rank of a communicator of {table.size}")
    out = r.copy()
    keep = r >= 0
    out[keep] = table[r[keep]]
    return out


def to_new(ranks: Any, new_rank: "ReorderInfo | Any") -> np.ndarray:
    """Old rank numbers -> the same processes' new rank numbers.

    Examples
    --------
    >>> to_new([0, 2], [1, 2, 0]).tolist()
    [1, 0]
    """
    return _through(ranks, _perm(new_rank))


def to_old(ranks: Any, new_rank: "ReorderInfo | Any") -> np.ndarray:
    """New rank numbers -> the same processes' old rank numbers.

    Examples
    --------
    >>> to_old([1, 0], [1, 2, 0]).tolist()
    [0, 2]
    """
    return _through(ranks, inverse(_perm(new_rank)))


def by_new_rank(data: Any, new_rank: "ReorderInfo | Any") -> np.ndarray:
    """Re-index data indexed by old rank so it is indexed by new rank: ``out[new_rank[r]] = data[r]``.

    For per-destination arrays (send counts, displacement tables) of a
    process that keeps its data.
    """
    perm = _perm(new_rank)
    arr = np.asarray(data)
    if arr.shape[:1] != perm.shape:
        raise ValueError(f"data has {arr.shape[0] if arr.ndim else 0} rows, expected one per rank ({perm.size})")
    out = np.empty_like(arr)
    out[perm] = arr
    return out


def by_old_rank(data: Any, new_rank: "ReorderInfo | Any") -> np.ndarray:
    """The inverse of :func:`by_new_rank`: ``out[r] = data[new_rank[r]]``.

    Examples
    --------
    >>> by_old_rank(by_new_rank([10, 11, 12], [1, 2, 0]), [1, 2, 0]).tolist()
    [10, 11, 12]
    """
    perm = _perm(new_rank)
    arr = np.asarray(data)
    if arr.shape[:1] != perm.shape:
        raise ValueError(f"data has {arr.shape[0] if arr.ndim else 0} rows, expected one per rank ({perm.size})")
    return arr[perm]


def handover(newcomm: Any, new_rank: "ReorderInfo | Any", obj: Any) -> Any:
    """Pass what this process held for its old role to the process now playing that role (collective).

    Every process calls it with the object it held as old rank ``r``; it
    returns the object of role ``newcomm.rank`` (held before by old rank
    ``newcomm.rank``).  Objects travel pickled (``sendrecv``).

    Examples
    --------
    >>> from mpi4py import MPI
    >>> handover(MPI.COMM_SELF, [0], {"rows": 3})
    {'rows': 3}
    """
    perm = _perm(new_rank)
    old = int(inverse(perm)[newcomm.rank])
    holder = int(perm[newcomm.rank])     # new rank of the process that was old rank newcomm.rank
    return newcomm.sendrecv(obj, dest=old, sendtag=71, source=holder, recvtag=71)


def dist_graph(newcomm: Any, new_rank: "ReorderInfo | Any", sources: Sequence[int], destinations: Sequence[int],
               sourceweights: Sequence[int] | None = None, destweights: Sequence[int] | None = None,
               info: Any = None) -> Any:
    """``Create_dist_graph_adjacent`` on ``newcomm`` from neighbour lists in *old* rank numbers (collective).

    Each process passes its own sources and destinations as old ranks of the
    communicator that was reordered; they are translated through
    ``new_rank`` and the graph is created with ``reorder=False``, so every
    process keeps exactly the neighbours (and weights, in the same order) it
    named.  Lists that do not fit the communicator raise
    :class:`~topomap.mpi.CollectiveError` on every rank.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> g = dist_graph(MPI.COMM_SELF, [0], [0], [0], [5], [5])
    >>> g.Get_dist_neighbors()
    ([0], [0], ([5], [5]))
    """
    MPI = mpi()
    error = None
    try:
        perm = _perm(new_rank)
        if perm.size != newcomm.size:
            raise ValueError(f"new_rank has {perm.size} entries for a communicator of {newcomm.size}")
        src = [int(x) for x in to_new(sources, perm)]
        dst = [int(x) for x in to_new(destinations, perm)]
        if any(x < 0 for x in src + dst):
            raise ValueError("a dist-graph neighbour cannot be negative (MPI.PROC_NULL)")
        for name, w, lst in (("sourceweights", sourceweights, src), ("destweights", destweights, dst)):
            if w is not None and w is not MPI.UNWEIGHTED and len(w) != len(lst):
                raise ValueError(f"{name} has {len(w)} entries for {len(lst)} neighbours")
    except (ValueError, TypeError) as exc:
        error = str(exc)
    agree(newcomm, error, "dist_graph: bad neighbour lists")
    kwargs = {} if info is None else {"info": info}
    return newcomm.Create_dist_graph_adjacent(src, dst, _weights(sourceweights), _weights(destweights),
                                              reorder=False, **kwargs)


def _weights(w: Any) -> Any:
    MPI = mpi()
    if w is None or w is MPI.UNWEIGHTED:
        return None
    return [int(x) for x in w]
