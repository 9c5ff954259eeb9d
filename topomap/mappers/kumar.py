"""Kumar's hop-byte and maximum-contention mappers, and Hilbert rank order.

Kumar CH, "Topology and Routing Aware Mapping on Parallel Processors" (PhD
thesis 2012; notes 001): mapping as a quadratic assignment problem on the
hop-byte metric (ch. 6: ``grasp``, ``mahd``, ``emahd``, the ``gge``
baseline and ``kumar-hybrid``), mapping for the maximum link load (ch. 7:
``max-contention``, EMAHD followed by pairwise swaps), and the Hilbert
space-filling-curve rank order of §5.5 (``hilbert``).

Kumar maps one task per node.  For n-to-1 mappings the processes are first
grouped into as few groups as the largest nodes hold (multilevel
partitioning), the groups are mapped onto nodes, and each group fills its
node's PEs in rank order; with one PE per node and capacity 1 this is
exactly the thesis's setting.  Distances are hop counts under the machine's
routing, so every machine kind works.  The C code (csrc/core/map_grasp.c,
map_mahd.c, map_maxcontention.c, map_kumar_hybrid.c, map_qap.c) lists every
choice the thesis leaves open.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

import numpy as np

from .. import _core
from ..errors import MappingError
from ..machine import Allocation
from ..networks.hilbert import order_allocation
from ..pattern import Pattern
from ..registry import register
from ._options import core_map, is_flag, is_int, is_real

__all__ = ["grasp", "mahd", "emahd", "gge", "max_contention", "kumar_hybrid", "hilbert"]

OBJECTIVES = {"hop_bytes": 0, "max_congestion": 1}
_GRASP_OPTIONS = {
    "iterations": (32, "constructions + local searches, the best kept (>= 1)"),
    "alpha": (0.25, "candidate-list fraction, in (0, 1]"),
    "beta": (0.5, "stage-1 fraction of the smallest distances and largest flows, in (0, 1]"),
}


def _positive(method: str, name: str, value: Any) -> int:
    if not is_int(value) or not 1 <= value < 2**31:
        raise MappingError(f"{method} option {name} = {value!r} must be a positive integer")
    return int(value)


def _fraction(method: str, name: str, value: Any) -> float:
    if not is_real(value) or not 0 < value <= 1:
        raise MappingError(f"{method} option {name} = {value!r} must be a number in (0, 1]")
    return float(value)


def _flag(method: str, name: str, value: Any) -> bool:
    if not is_flag(value):
        raise MappingError(f"{method} option {name} = {value!r} must be True or False")
    return bool(value)


def _run(method: str, pattern: Pattern, allocation: Allocation, seed: int, capacity: int,
         progress: Callable[[float], Any] | None, **options: Any) -> np.ndarray:
    return core_map(method, partial(_core.map_kumar, method), pattern, allocation, seed, capacity, progress,
                    **options)


@register("grasp", "GRASP for the hop-byte QAP: randomized two-stage greedy construction + 2-exchange "
                   "local search, the best of `iterations` (Li, Pardalos & Resende)",
          options=_GRASP_OPTIONS, source="Kumar 2012 §6.2.1 (after Li, Pardalos & Resende 1994)")
def grasp(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
          progress: Callable[[float], Any] | None, iterations: int, alpha: float, beta: float) -> np.ndarray:
    """GRASP mapping on hop-bytes: ``pe_of`` for ``pattern`` on ``allocation``.

    Parameters
    ----------
    pattern : Pattern
    allocation : Allocation
    seed, capacity, progress
        As for :func:`topomap.map`.
    iterations : int
        Randomized constructions, each followed by local search (32).
    alpha, beta : float
        Candidate-list and stage-1 fractions (0.25, 0.5).

    Returns
    -------
    numpy.ndarray
        int32 PE of every process.

    Examples
    --------
    >>> import numpy as np, topomap as tm
    >>> perm = np.random.default_rng(0).permutation(16)               # a scrambled rank order
    >>> pat = tm.Pattern.from_dense(tm.generators.stencil_2d((4, 4)).to_dense()[np.ix_(perm, perm)])
    >>> alloc = tm.machine("torus:4x4").allocate(16)
    >>> hb = lambda method: tm.evaluate(pat, alloc, tm.map(pat, alloc, method=method, seed=1)).hop_bytes
    >>> bool(hb("grasp") < hb("block"))
    True
    """
    return _run("grasp", pattern, allocation, seed, capacity, progress,
                iterations=_positive("grasp", "iterations", iterations), alpha=_fraction("grasp", "alpha", alpha),
                beta=_fraction("grasp", "beta", beta))


@register("mahd", "Minimum Average Hop Distance: greedy, most-connected task first, each next to its mapped "
                  "neighbours (least average hops)",
          options={"weighted": (False, "weigh each mapped neighbour's hops by its bytes (least added hop-bytes) "
                                       "instead of the thesis's plain average")},
          source="Kumar 2012 §6.2.2, Algorithm 1")
def mahd(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
         progress: Callable[[float], Any] | None, weighted: bool) -> np.ndarray:
    """MAHD mapping (deterministic: ``seed`` only feeds the n-to-1 grouping).

    Examples
    --------
    >>> import topomap as tm
    >>> pat = tm.generators.stencil_2d((4, 4))
    >>> alloc = tm.machine("torus:8x8").allocate(16, policy="random", seed=2)
    >>> hb = lambda method: tm.evaluate(pat, alloc, tm.map(pat, alloc, method=method)).hop_bytes
    >>> bool(hb("mahd") < hb("block"))
    True
    """
    rule = 1 if _flag("mahd", "weighted", weighted) else 0
    return _run("mahd", pattern, allocation, seed, capacity, progress, rule=rule)


@register("emahd", "Exhaustive MAHD: MAHD from every start node, the best by `objective`",
          options={"objective": ("hop_bytes", "pick the best run by 'hop_bytes' (ch. 6) or 'max_congestion' "
                                              "(ch. 7); ties go to lower hop-bytes, then the earlier start"),
                   "weighted": (False, "as for mahd")},
          source="Kumar 2012 §6.2.2 (EMAHD), §7.2", c_file="map_mahd.c")
def emahd(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
          progress: Callable[[float], Any] | None, objective: str, weighted: bool) -> np.ndarray:
    """EMAHD mapping: never worse than MAHD by its objective.

    Examples
    --------
    >>> import topomap as tm
    >>> pat = tm.generators.stencil_2d((4, 4))
    >>> alloc = tm.machine("torus:8x8").allocate(16, policy="random", seed=2)
    >>> hb = lambda method: tm.evaluate(pat, alloc, tm.map(pat, alloc, method=method)).hop_bytes
    >>> bool(hb("emahd") <= hb("mahd"))
    True
    """
    if objective not in OBJECTIVES:
        raise MappingError(f"emahd option objective = {objective!r} must be one of {', '.join(OBJECTIVES)}")
    rule = 1 if _flag("emahd", "weighted", weighted) else 0
    return _run("emahd", pattern, allocation, seed, capacity, progress, rule=rule, objective=OBJECTIVES[objective])


@register("gge", "Kumar's GGE baseline: MAHD's order, each task on the free node closest to its most recently "
                 "mapped neighbour (not LibTopoMap's 'greedy')",
          source="Kumar 2012 §6.2.2 (GGE as compared there, after Hoefler & Snir 2011)", c_file="map_mahd.c")
def gge(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
        progress: Callable[[float], Any] | None) -> np.ndarray:
    """GGE as Kumar ran it: the MAHD skeleton with "closest to the most recently mapped neighbour".

    Examples
    --------
    >>> import topomap as tm
    >>> pat = tm.generators.stencil_2d((4, 4))
    >>> alloc = tm.machine("torus:8x8").allocate(16, policy="random", seed=2)
    >>> tm.map(pat, alloc, method="gge").n
    16
    """
    return _run("mahd", pattern, allocation, seed, capacity, progress, rule=2)


@register("max-contention", "EMAHD chosen by maximum link load, then pairwise swaps (LocalOpt) that lower the "
                            "maximum link congestion, plateaus crossed on the sum of squared congestions",
          options={"passes": (100, "at most this many swap sweeps (>= 1); a sweep pairs each task on a most "
                                   "loaded link (or, once those are exhausted, on a link at >= 90 % of the "
                                   "maximum) with every other task")},
          source="Kumar 2012 §7.2 (EMAHD + LocalOpt)", c_file="map_maxcontention.c")
def max_contention(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
                   progress: Callable[[float], Any] | None, passes: int) -> np.ndarray:
    """EMAHD + LocalOpt: the maximum link congestion never exceeds EMAHD's (by congestion).

    Examples
    --------
    >>> import topomap as tm
    >>> pat = tm.generators.stencil_2d((4, 4))
    >>> alloc = tm.machine("torus:8x8").allocate(16, policy="random", seed=2)
    >>> mc = lambda method, **o: tm.evaluate(pat, alloc, tm.map(pat, alloc, method=method, **o)).max_congestion
    >>> bool(mc("max-contention") <= mc("emahd", objective="max_congestion"))
    True
    """
    return _run("max-contention", pattern, allocation, seed, capacity, progress,
                passes=_positive("max-contention", "passes", passes))


@register("kumar-hybrid", "partition the allocation and the processes into parts of `part_size` nodes, GRASP "
                          "on the part quotient, then GRASP inside each matched pair",
          options={"part_size": (125, "nodes per part (the thesis's p = 125); one part = plain GRASP"),
                   **_GRASP_OPTIONS},
          source="Kumar 2012 §6.2.3")
def kumar_hybrid(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
                 progress: Callable[[float], Any] | None, part_size: int, iterations: int, alpha: float,
                 beta: float) -> np.ndarray:
    """Kumar's hybrid of graph partitioning and GRASP, for allocations too large for GRASP.

    Examples
    --------
    >>> import topomap as tm
    >>> pat = tm.generators.stencil_2d((6, 6))
    >>> alloc = tm.machine("torus:8x8").allocate(36, policy="fragmented", seed=1)
    >>> tm.map(pat, alloc, method="kumar-hybrid", part_size=12, iterations=4).n
    36
    """
    return _run("kumar-hybrid", pattern, allocation, seed, capacity, progress,
                part_size=_positive("kumar-hybrid", "part_size", part_size),
                iterations=_positive("kumar-hybrid", "iterations", iterations),
                alpha=_fraction("kumar-hybrid", "alpha", alpha), beta=_fraction("kumar-hybrid", "beta", beta))


@register("hilbert", "block mapping onto the allocation renumbered along a Hilbert curve (torus and mesh machines)",
          source="Kumar 2012 §5.5 (SFC rank order)", c_file="hilbert.c")
def hilbert(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
            progress: Callable[[float], Any] | None) -> np.ndarray:
    """Kumar's SFC rank order: rank ``i`` on the ``i``-th slot along the curve.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("mesh:2x2").allocate(4)
    >>> tm.map(tm.generators.stencil_2d((2, 2)), alloc, method="hilbert").pe_of.tolist()
    [0, 2, 3, 1]
    """
    return _core.map_block(pattern.n, order_allocation(allocation).pes, capacity)
