"""Cui's rank placements for collectives on shortcut networks, as mappers.

K. Cui, PhD thesis, SOKENDAI 2024 (notes 003 §3): hierarchical BFS tree,
ring-consecutive and circulant stride placement, chain concatenation
ordering, two-opt and simulated annealing; the random placement of §3.1 is
the ``random`` mapper.  The pattern is a collective: a
:class:`~topomap.collectives.schedules.Schedule`, a list of them, or a
:class:`~topomap.Pattern` taken as one stage (what ``topomap.map`` passes;
:func:`topomap.collectives.placement.place` keeps a schedule's stages, which
the contention objective needs).  Each rank gets a PE of its own; the
placements pick ``n`` of the allocation's PEs.  The algorithms and the
choices the thesis leaves open: :mod:`topomap.collectives.placement`.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _core
from ..collectives import placement as pl
from ..errors import Cancelled, MappingError
from ..machine import Allocation
from ..registry import register
from ._options import is_int, is_real

__all__ = ["cui_tree", "cui_ring", "cui_circulant", "cco", "two_opt", "cui_anneal"]

Progress = Callable[[float], Any] | None
_INITIAL = ("block", "random", "tree", "ring", "circulant", "cco")
_SEARCH_OPTIONS = {
    "initial": ("block", "the starting placement: 'block' (allocation order, the thesis's ascending order), "
                         "'random', 'tree', 'ring', 'circulant' or 'cco'"),
    "iterations": (200_000, "swaps tried (the thesis: 200,000)"),
    "objective": ("hops", "'hops' (total hop count) or 'contention' (per-stage link loads above 1)"),
}


def _optional_id(method: str, name: str, value: Any) -> int | None:
    if value is not None and not is_int(value):
        raise MappingError(f"{method} option {name} = {value!r} must be an integer or None")
    return None if value is None else int(value)


def _n(pattern: Any) -> int:
    return pl.unicasts(pattern).n


def _starting(method: str, progress: Progress) -> None:
    """The one report of a placement that runs in a moment: cancel before it starts (the mappers' rule)."""
    if progress is not None and progress(0.0):
        raise Cancelled.by_progress(method, 0.0)


def _initial(kind: str, pattern: Any, allocation: Allocation, seed: int) -> np.ndarray:
    """One of the starting placements of two-opt (``_INITIAL``) for ``pattern``'s ranks."""
    n = _n(pattern)
    if kind not in _INITIAL:
        raise MappingError(f"initial placement {kind!r} must be one of {', '.join(_INITIAL)}")
    if n > len(allocation):
        raise MappingError(f"{n} ranks need {n} PEs; the allocation has {len(allocation)}")
    if kind == "block":
        return allocation.pes[:n].astype(np.int32)
    if kind == "random":
        return _core.map_random(n, allocation.pes, 1, seed % 2**64)
    if kind == "tree":
        return pl.tree_placement(allocation, n, seed)
    if kind == "ring":
        return pl.ring_placement(allocation, n)
    if kind == "circulant":
        return pl.circulant_placement(allocation, n, seed)
    return pl.cco_placement(allocation, n)


@register("shortcut-tree", "hierarchical BFS-tree placement: ranks in BFS discovery order from a root through the "
                      "allocation's nodes", options={"root": (None, "a PE of the allocation (None: a random node)")},
          source="Cui 2024 §3.2.2 (after Hu & Koibuchi, ICPADS 2019)", c_file="")
def cui_tree(pattern: Any, allocation: Allocation, *, seed: int, capacity: int, progress: Progress,
             root: int | None) -> np.ndarray:
    """BFS-tree placement (see :func:`topomap.collectives.placement.tree_placement`).

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.collectives.schedules import binomial_bcast
    >>> alloc = tm.machine("circulant:8").allocate(8)
    >>> tm.map(binomial_bcast(4).total, alloc, method="shortcut-tree", root=0).pe_of.tolist()
    [0, 1, 2, 4]
    """
    _starting("shortcut-tree", progress)
    return pl.tree_placement(allocation, _n(pattern), seed, _optional_id("shortcut-tree", "root", root))


@register("shortcut-ring", "ring-consecutive placement: nodes start, start+1, ... (mod N) in ring order",
          options={"start": (None, "first node id (None: the node of the allocation's first PE)")},
          source="Cui 2024 §3.2.3", c_file="")
def cui_ring(pattern: Any, allocation: Allocation, *, seed: int, capacity: int, progress: Progress,
             start: int | None) -> np.ndarray:
    """Ring-consecutive placement (see :func:`topomap.collectives.placement.ring_placement`).

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.collectives.schedules import binomial_bcast
    >>> alloc = tm.machine("circulant:8").allocate(8)
    >>> tm.map(binomial_bcast(3).total, alloc, method="shortcut-ring", start=6).pe_of.tolist()
    [6, 7, 0]
    """
    _starting("shortcut-ring", progress)
    return pl.ring_placement(allocation, _n(pattern), _optional_id("shortcut-ring", "start", start))


@register("shortcut-circulant", "circulant stride placement: rank j on node (start + j N/n) mod N, one hop per "
                           "unicast of binomial, recursive doubling and Bruck on G(N, log2 N)",
          options={"start": (None, "node of rank 0 (None: drawn from the seed, as Alg. 4.1)")},
          source="Cui 2024 §4.4, Algorithm 4.1", c_file="")
def cui_circulant(pattern: Any, allocation: Allocation, *, seed: int, capacity: int, progress: Progress,
                  start: int | None) -> np.ndarray:
    """Circulant placement (see :func:`topomap.collectives.placement.circulant_placement`).

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.collectives.schedules import binomial_bcast
    >>> tm.map(binomial_bcast(4).total, tm.machine("circulant:8").allocate(8), method="shortcut-circulant",
    ...        start=3).pe_of.tolist()
    [3, 5, 7, 1]
    """
    _starting("shortcut-circulant", progress)
    return pl.circulant_placement(allocation, _n(pattern), seed, _optional_id("shortcut-circulant", "start", start))


@register("shortcut-cco", "chain concatenation ordering: ranks along the preorder of the network's BFS tree "
                          "from the root",
          options={"root": (None, "a PE of the allocation for rank 0 (None: its first PE)")},
          source="Kesavan & Panda, TPDS 12(2) 2001, as Cui 2024 §3.4 compares it", c_file="")
def cco(pattern: Any, allocation: Allocation, *, seed: int, capacity: int, progress: Progress,
        root: int | None) -> np.ndarray:
    """CCO (see :func:`topomap.collectives.placement.cco_placement`).

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.collectives.schedules import binomial_bcast
    >>> tm.map(binomial_bcast(4).total, tm.machine("circulant:8").allocate(8), method="shortcut-cco").pe_of.tolist()
    [0, 1, 3, 5]
    """
    _starting("shortcut-cco", progress)
    return pl.cco_placement(allocation, _n(pattern), _optional_id("shortcut-cco", "root", root))


def _search_args(method: str, initial: Any, iterations: Any) -> int:
    if not isinstance(initial, str):
        raise MappingError(f"{method} option initial = {initial!r} must be one of {', '.join(_INITIAL)}")
    if not is_int(iterations) or not 0 <= iterations < 2**63:
        raise MappingError(f"{method} option iterations = {iterations!r} must be a non-negative integer")
    return int(iterations)


@register("two-opt", "random pairwise rank swaps kept only when the collective's total hops (or contention) "
                     "strictly fall, from an initial placement",
          options=_SEARCH_OPTIONS, source="Cui 2024 §3.3.2; Cui & Koibuchi, IEICE Trans. 103(12) 2020",
          c_file="twoopt_search.c")
def two_opt(pattern: Any, allocation: Allocation, *, seed: int, capacity: int, progress: Progress, initial: str,
            iterations: int, objective: str) -> np.ndarray:
    """Two-opt placement (see :func:`topomap.collectives.placement.two_opt`).

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.collectives import placement
    >>> from topomap.collectives.schedules import binomial_bcast
    >>> alloc = tm.machine("shortcut:n=64,d=11,seed=0").allocate(32, policy="random", seed=1)
    >>> s = binomial_bcast(32)
    >>> mp = tm.map(s.total, alloc, method="two-opt", iterations=20_000, seed=3)
    >>> bool(placement.placement_cost(s, alloc, mp.pe_of) < placement.placement_cost(s, alloc, alloc.pes))
    True
    """
    its = _search_args("two-opt", initial, iterations)
    start = _initial(initial, pattern, allocation, seed)
    return pl.two_opt(pattern, allocation, start, iterations=its, objective=objective, seed=seed,
                      progress=progress).pe_of


@register("shortcut-anneal", "simulated annealing over two-opt's swap (Metropolis, geometric cooling from t0 to t1), "
                        "the best placement seen",
          options={**_SEARCH_OPTIONS, "t0": (2.0, "starting temperature, in objective units"),
                   "t1": (0.05, "final temperature, 0 < t1 <= t0")},
          source="Cui 2024 §3.4 (SA competitor, after Cui & Koibuchi 2020)", c_file="twoopt_search.c")
def cui_anneal(pattern: Any, allocation: Allocation, *, seed: int, capacity: int, progress: Progress, initial: str,
               iterations: int, objective: str, t0: float, t1: float) -> np.ndarray:
    """Annealed placement (see :func:`topomap.collectives.placement.anneal`).

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.collectives.schedules import binomial_bcast
    >>> alloc = tm.machine("shortcut:n=64,d=11,seed=0").allocate(16, policy="random", seed=1)
    >>> tm.map(binomial_bcast(16).total, alloc, method="shortcut-anneal", iterations=5_000).n
    16
    """
    its = _search_args("shortcut-anneal", initial, iterations)
    if not is_real(t0) or not is_real(t1):
        raise MappingError(f"shortcut-anneal options t0 = {t0!r}, t1 = {t1!r} must be numbers")
    start = _initial(initial, pattern, allocation, seed)
    return pl.anneal(pattern, allocation, start, iterations=its, objective=objective, t0=float(t0), t1=float(t1),
                     seed=seed, progress=progress).pe_of
