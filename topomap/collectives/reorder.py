"""Collective-aware rank reordering: Mirsadeghi's allgather heuristics (notes 000 §3).

The scheme (Alg. 4.1): new rank 0 keeps old rank 0's core; the other ranks,
in a heuristic's order, each take the free core closest (machine PE
distance) to the core of an earlier rank, ties broken uniformly at random
from ``seed``.  The orders (``csrc/core/coll_order.c``, which also states the
non-power-of-two fixes):

* ``rdmh`` (recursive doubling, Alg. 4.2): the partner of the latest stage
  first; the reference moves after two placements;
* ``rmh`` (ring, Alg. 4.3): ranks in order, each next to the one before;
* ``bbmh`` (binomial broadcast, Alg. 4.4): depth first, smaller subtrees first;
* ``bgmh`` (binomial gather, Alg. 4.5): heaviest tree edges first.

The initial layouts of the thesis's experiments (§7.6) come from
:func:`initial_layout`: ``block`` fills a node before the next, ``cyclic``
deals ranks round robin over nodes; inside a node ``bunch`` takes cores in
order and ``scatter`` alternates between the node's top-level parts
(sockets).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _core
from ..errors import MappingError
from ..machine import Allocation, Machine

__all__ = ["HEURISTICS", "LAYOUTS", "placement_order", "initial_layout", "reorder"]

HEURISTICS = ("rdmh", "rmh", "bbmh", "bgmh")
LAYOUTS = ("block-bunch", "block-scatter", "cyclic-bunch", "cyclic-scatter")


def _check_heuristic(heuristic: Any) -> str:
    if heuristic not in HEURISTICS:
        raise MappingError(f"heuristic = {heuristic!r} must be one of {', '.join(map(repr, HEURISTICS))}")
    return heuristic


def _check_p(p: Any) -> int:
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or not 1 <= p < 2**31:
        raise MappingError(f"p = {p!r} must be a number of ranks >= 1")
    return int(p)


def placement_order(heuristic: str, p: int) -> tuple[np.ndarray, np.ndarray]:
    """The order a heuristic places ranks in and the rank each is placed next to.

    Returns
    -------
    order, ref : ndarray of int32
        ``order[0] = 0``; rank ``order[t]`` goes next to the core of rank
        ``ref[t]`` (``ref[0] = -1``).

    Examples
    --------
    >>> from topomap.collectives.reorder import placement_order
    >>> placement_order("rdmh", 8)[0].tolist()          # notes 000 §3.3
    [0, 4, 2, 6, 3, 7, 1, 5]
    >>> placement_order("bgmh", 16)[0][:8].tolist()     # notes 000 §3.6
    [0, 8, 4, 12, 2, 10, 6, 14]
    """
    return _core.coll_order(_check_heuristic(heuristic), _check_p(p))


def _node_order(machine: Machine, pes: np.ndarray, scatter: bool) -> np.ndarray:
    pes = np.sort(pes)
    if not scatter or pes.size < 2:
        return pes
    level = machine.level_of(np.repeat(pes, pes.size), np.tile(pes, pes.size)).reshape(pes.size, pes.size)
    top = level.max()
    group = np.argmax(level < top, axis=1)        # first core sharing a part below the top level
    rank_in_group = np.array([np.count_nonzero(group[:i] == group[i]) for i in range(pes.size)])
    return pes[np.lexsort((group, rank_in_group))]


def initial_layout(allocation: Allocation, n: int | None = None, layout: str = "block-bunch") -> np.ndarray:
    """The core of every old rank under one of the thesis's initial layouts.

    Parameters
    ----------
    allocation : Allocation
        Its nodes in the order they first appear; their PEs are the cores.
    n : int, optional
        Ranks (default: every PE of the allocation).
    layout : {"block-bunch", "block-scatter", "cyclic-bunch", "cyclic-scatter"}

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.collectives.reorder import initial_layout
    >>> alloc = tm.machine("torus:2/package:2 core:2").allocate(8)    # 2 nodes, 2 sockets x 2 cores
    >>> initial_layout(alloc, layout="cyclic-scatter").tolist()
    [0, 4, 2, 6, 1, 5, 3, 7]
    """
    if layout not in LAYOUTS:
        raise MappingError(f"layout = {layout!r} must be one of {', '.join(map(repr, LAYOUTS))}")
    if not isinstance(allocation, Allocation):
        raise MappingError(f"initial_layout needs an Allocation, not {type(allocation).__name__}")
    machine, pes = allocation.machine, np.asarray(allocation.pes, dtype=np.int64)
    n = pes.size if n is None else _check_p(n)
    if n > pes.size:
        raise MappingError(f"n = {n} ranks do not fit the allocation's {pes.size} PEs")
    nodes = machine.node_of(pes)
    _, first = np.unique(nodes, return_index=True)
    order = nodes[np.sort(first)]
    per_node = [_node_order(machine, pes[nodes == nd], layout.endswith("scatter")) for nd in order]
    if layout.startswith("block"):
        return np.concatenate(per_node)[:n]
    deal = [(i, k) for i in range(max(map(len, per_node))) for k in range(len(per_node)) if i < len(per_node[k])]
    return np.array([per_node[k][i] for i, k in deal[:n]], dtype=np.int64)


def reorder(heuristic: str, where: "Allocation | Machine | str", pes: Any, seed: int = 0) -> np.ndarray:
    """Alg. 4.1 with one heuristic: which old rank's core each new rank takes.

    Parameters
    ----------
    heuristic : {"rdmh", "rmh", "bbmh", "bgmh"}
    where : Allocation, Machine or spec string
        The machine whose PE distance (:meth:`Machine.distance`) counts.
    pes : array of int
        ``pes[i]``: the core of old rank ``i`` (distinct PEs).
    seed : int
        Seeds the tie-breaks.

    Returns
    -------
    ndarray of int32
        ``old_of_new[j]``: new rank ``j`` runs on ``pes[old_of_new[j]]``.

    Examples
    --------
    Four cores on each of 2 nodes, ranks dealt cyclically: RMH puts ranks
    0..3 on node 0 and 4..7 on node 1 (one inter-node step of the ring
    instead of eight):

    >>> import topomap as tm
    >>> from topomap.collectives.reorder import reorder
    >>> m = tm.machine("torus:2/4")
    >>> pes = [0, 4, 1, 5, 2, 6, 3, 7]                        # cyclic
    >>> new = reorder("rmh", m, pes, seed=1)
    >>> m.node_of([pes[i] for i in new]).tolist()
    [0, 0, 0, 0, 1, 1, 1, 1]
    """
    _check_heuristic(heuristic)
    return run_heuristic(heuristic, where, pes, seed)


def run_heuristic(heuristic: str, where: "Allocation | Machine | str", pes: Any, seed: int) -> np.ndarray:
    """The C core's placement order for any heuristic name it knows (the
    thesis's and :mod:`~topomap.collectives.reorder_more`'s), inputs checked."""
    machine = where.machine if isinstance(where, Allocation) else where
    if not isinstance(machine, Machine):
        from ..networks.spec import machine as build_machine
        machine = build_machine(machine)
    arr = np.asarray(pes)
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu":
        raise MappingError("pes must be a non-empty 1-D array of PE ids")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise MappingError(f"seed = {seed!r} must be an integer")
    return _core.coll_reorder(machine._core, arr.astype(np.int32), heuristic, int(seed) % 2**64)
