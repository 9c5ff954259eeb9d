"""Collective-aware reordering past the thesis: Bruck, allreduce and alltoall.

Topomap's extension of Mirsadeghi's scheme (notes 000 §3, Alg. 4.1; the
thesis names these collectives as future work): the same placement of each
rank on the free core closest to an earlier rank's, with placement orders
(``csrc/core/coll_more_order.c``) that put each rank's partners of the
heavy, else early, stages first:

* ``bkmh``: Bruck allgather and alltoall (the last stage's partners r +- 2^k first);
* ``armh``: allreduce by recursive doubling and Rabenseifner (XOR partners
  from the heaviest, first halving stage on; MPICH's fold partner first);
* ``pwmh``: pairwise alltoall (round 1's partners first).

:data:`COLLECTIVES` names the heuristic for every (operation, algorithm)
whose pattern does not depend on a node size, the thesis's four included.
Pairwise alltoall sends one block between every two ranks, so its hop-bytes
are the same under every placement; ``pwmh`` only keeps each round's
partners together: for a power of two, 26 % less summed per-round
congestion than a random layout on a 2-level fat tree.  For other sizes it
raised that sum by 10-22 % in the same test (Alg. 4.1 picks among equally
close nodes at random, which scrambles the node order that the shift rounds
``r -> r + i`` depend on), so compare before using it there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _core
from ..errors import MappingError
from ..machine import Allocation, Machine
from .reorder import _check_p, run_heuristic

__all__ = ["COLLECTIVES", "heuristic_for", "order_for", "reorder_collective"]

COLLECTIVES = {
    ("allgather", "recursive_doubling"): "rdmh", ("allgather", "ring"): "rmh",
    ("bcast", "binomial"): "bbmh", ("gather", "binomial"): "bgmh",
    ("allgather", "bruck"): "bkmh", ("alltoall", "bruck"): "bkmh",
    ("allreduce", "recursive_doubling"): "armh", ("allreduce", "rabenseifner"): "armh",
    ("alltoall", "pairwise"): "pwmh",
}


def heuristic_for(collective: str) -> str:
    """The heuristic for ``"op/algorithm"`` (a key of :data:`COLLECTIVES` joined by ``/``).

    Examples
    --------
    >>> from topomap.collectives.reorder_more import heuristic_for
    >>> heuristic_for("allreduce/rabenseifner"), heuristic_for("allgather/ring")
    ('armh', 'rmh')
    """
    key = tuple(collective.split("/", 1)) if isinstance(collective, str) else None
    if key not in COLLECTIVES:
        names = ", ".join(f"'{op}/{alg}'" for op, alg in COLLECTIVES)
        raise MappingError(f"collective = {collective!r} must be one of {names}")
    return COLLECTIVES[key]


def order_for(collective: str, p: int) -> tuple[np.ndarray, np.ndarray]:
    """The order the collective's heuristic places ``p`` ranks in, and each one's reference.

    Like :func:`topomap.collectives.reorder.placement_order`: rank
    ``order[t]`` goes next to the core of rank ``ref[t]``.

    Examples
    --------
    >>> from topomap.collectives.reorder_more import order_for
    >>> order_for("allgather/bruck", 8)[0].tolist()      # the last stage's partner 4 first
    [0, 4, 2, 6, 3, 7, 5, 1]
    >>> order_for("allreduce/rabenseifner", 8)[0].tolist()   # the first halving's partner 1 first
    [0, 1, 2, 3, 6, 7, 4, 5]
    """
    return _core.coll_order(heuristic_for(collective), _check_p(p))


def reorder_collective(collective: str, where: "Allocation | Machine | str", pes: Any, seed: int = 0) -> np.ndarray:
    """Alg. 4.1 with the heuristic of ``collective``: which old rank's core each new rank takes.

    Parameters
    ----------
    collective : str
        ``"op/algorithm"``, a key of :data:`COLLECTIVES`.
    where, pes, seed
        As for :func:`topomap.collectives.reorder.reorder`.

    Returns
    -------
    ndarray of int32
        ``old_of_new[j]``: new rank ``j`` runs on ``pes[old_of_new[j]]``.

    Examples
    --------
    Two nodes of four cores, ranks dealt cyclically: for Rabenseifner's
    allreduce the heavy first stages (partners 1 and 2 apart) move inside
    the nodes:

    >>> import topomap as tm
    >>> from topomap.collectives.reorder_more import reorder_collective
    >>> m = tm.machine("torus:2/4")
    >>> pes = [0, 4, 1, 5, 2, 6, 3, 7]                        # cyclic
    >>> new = reorder_collective("allreduce/rabenseifner", m, pes)
    >>> m.node_of([pes[i] for i in new]).tolist()
    [0, 0, 0, 0, 1, 1, 1, 1]
    """
    heuristic = heuristic_for(collective)
    return run_heuristic(heuristic, where, pes, seed)
