"""LibTopoMap's heuristics: greedy, recursive co-bisection, reverse Cuthill-McKee.

T. Hoefler and M. Snir, "Generic Topology Mapping Strategies for Large-scale
Parallel Architectures", ICS 2011 (LibTopoMap): the baselines of
Mirsadeghi 2017 §6.3 and, for the greedy one, Kumar 2012 §6.2.2 (GGE).

Each method first runs LibTopoMap's multicore step: the processes are
grouped into as few groups as the largest allocation nodes hold (multilevel
partitioning, :func:`topomap.partition` with hard capacities) and the traffic
between groups forms the nodal pattern.  The methods then map groups onto
the allocation's nodes through the machine's network graph (every machine
kind), and each group takes its node's PEs in rank order.

``greedy``
    The heaviest group goes to a start node; then the unmapped group with
    the most traffic to the mapped ones goes to the closest free node:
    fewest hops on the machine's route from its heaviest mapped neighbour,
    then the least traffic already on that route (congestion awareness).
``recursive``
    Bisect the network (vertex weight 1 for the allocation's nodes, 0 for
    switches; edge weight = capacity) and the group graph into halves of
    matching sizes, map half to half, recurse.
``rcm``
    Order both graphs by reverse Cuthill-McKee and map the i-th group to
    the i-th node.

What each C file takes from the paper and what it had to choose is stated
in ``csrc/core/map_greedy.c``, ``map_recursive.c`` and ``map_rcm.c``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _core
from ..errors import MappingError
from ..machine import Allocation
from ..networks import Hypercube, Torus
from ..metrics import as_pattern
from ..pattern import Pattern
from ..registry import register
from ._options import core_map, is_flag
from .grids import grid_option, process_coords

__all__ = ["greedy", "recursive", "rcm", "rcm_order", "GREEDY_STARTS", "RCM_STARTS"]

#: Where greedy puts its first group: the allocation's first node or a seeded random one.
GREEDY_STARTS = ("first", "random")
#: Where each component's Cuthill-McKee search starts: George and Liu's
#: pseudo-peripheral vertex (SPARSPAK's GENRCM, as LibTopoMap) or the least
#: degree vertex (SciPy's ``reverse_cuthill_mckee``).
RCM_STARTS = ("peripheral", "min_degree")


def _choice(method: str, name: str, value: Any, choices: tuple[str, ...]) -> int:
    if not isinstance(value, str) or value not in choices:
        raise MappingError(f"{method}: option {name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return choices.index(value)


def _flag(method: str, name: str, value: Any) -> int:
    if not is_flag(value):
        raise MappingError(f"{method}: option {name} must be True or False, got {value!r}")
    return int(value)


@register("greedy", "heaviest group first, then the group most tied to the mapped ones onto the nearest free node "
          "(route hops, then traffic already on the route) (LibTopoMap greedy)",
          options={
              "start": ("first", "node of the first (heaviest) group: 'first' allocation node or a seeded 'random' one"),
              "congestion": (True, "among the nearest free nodes prefer the least traffic/capacity already on "
                                   "the routes; False: the lowest node id"),
              "tries": (1, "runs from different start nodes (after the first, seeded random ones); "
                           "the lowest max congestion, then hop-bytes, is kept"),
              "candidates": (64, "price the routes of at most this many nearest free nodes per placement, the "
                                 "first the network search finds; 0: all (LibTopoMap's exhaustive choice)"),
              "grid": grid_option(None),
          },
          source="Hoefler & Snir, ICS 2011 (LibTopoMap greedy); Kumar 2012 §6.2.2 (GGE)")
def greedy(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
           progress: Callable[[float], Any] | None, start: str, congestion: bool, tries: int, candidates: int,
           grid: Any) -> np.ndarray:
    """LibTopoMap's greedy graph embedding, after the multicore step.

    Parameters
    ----------
    pattern : Pattern
    allocation : Allocation
    seed, capacity, progress
        As for :func:`topomap.map` (the seed reaches the multicore
        partitioner and the random start nodes).
    start : {"first", "random"}
        Node of the heaviest group.
    congestion : bool
        Among the nearest free nodes, prefer the one whose routes to and
        from the source node carry the least traffic / capacity so far
        (LibTopoMap's growing link weights); False: the lowest node id.
    tries : int
        Runs from different start nodes, the best kept.
    candidates : int
        At most this many of the free nodes with the fewest hops are
        priced by the traffic on their routes, the first that the
        breadth-first search of the network from the source node finds
        (its nearest in the network graph); 0 prices them all, as
        LibTopoMap's search does.  The hop count stays exact.  Default 64:
        on ``fattree:k=40,levels=3/16`` with the 100^3 stencil pricing all
        of them took 20 s of the 45 s (up to 60,000 candidates when a pod is
        full), and 64 gave 5 % lower hop-bytes; on the 72x36x36 stencil and
        ``fattree:k=18,levels=3/16`` 3 % lower hop-bytes and 18 % lower max
        congestion; on the tori and a dragonfly measured, the same mapping.
    grid : "auto", None or array_like
        The processes' grid for the node grouping
        (:func:`~topomap.mappers.grids.process_coords`): where boxes of it
        tile the nodes, each node gets a box (the least surface); else the
        partitioner groups them.
        Default None: with boxes, the greedy placement of their regular
        group graph measured 1.8 x the maximum congestion of the
        partitioner's groups and 7 % more hop-bytes on
        ``torus:40x40x40/16`` (100^3 stencil), though on
        ``fattree:k=40,levels=3/16`` 0.9 x and 9 % less, in 2.0 s and 3.4 s
        of CPU instead of 25 s and 28 s (benchmarks/bench_mappers_scaling.py;
        2 GHz Zen 1 EPYC).

    Returns
    -------
    numpy.ndarray
        int32 PE of every process.

    Examples
    --------
    >>> import topomap as tm
    >>> pat = tm.generators.stencil_2d((8, 8))
    >>> alloc = tm.machine("torus:4x4/4").allocate(64)
    >>> mp = tm.map(pat, alloc, method="greedy")
    >>> tm.evaluate(pat, alloc, mp).hop_bytes < tm.evaluate(pat, alloc, tm.map(pat, alloc, method="random")).hop_bytes
    True
    """
    s = _choice("greedy", "start", start, GREEDY_STARTS)
    c = _flag("greedy", "congestion", congestion)
    if not isinstance(tries, (int, np.integer)) or isinstance(tries, bool) or not 1 <= tries < 2**31:
        raise MappingError(f"greedy: option tries must be a positive integer, got {tries!r}")
    if not isinstance(candidates, (int, np.integer)) or isinstance(candidates, bool) or not 0 <= candidates < 2**31:
        raise MappingError(f"greedy: option candidates must be an integer >= 0, got {candidates!r}")
    return core_map("greedy", _core.map_greedy, pattern, allocation, seed, capacity, progress, start=s, congestion=c,
                    tries=int(tries), candidates=int(candidates), grid=process_coords(pattern, grid, "greedy", "grid", ranks=False))


def _geometry(allocation: Allocation) -> dict[str, np.ndarray]:
    """Node coordinates and ring sizes of a torus, mesh or hypercube network (else nothing)."""
    net = allocation.machine.network
    nn = allocation.machine.nnodes
    if isinstance(net, Torus):
        dims = np.asarray(net.dims, dtype=np.int64)
        ring = np.where(np.asarray(net.wrap, dtype=bool), dims, 0)
    elif isinstance(net, Hypercube):
        dims = np.full(net.dim, 2, dtype=np.int64)
        ring = np.zeros(net.dim, dtype=np.int64)
    else:
        return {}
    strides = np.concatenate(([1], np.cumprod(dims)[:-1]))
    coords = (np.arange(nn, dtype=np.int64)[:, None] // strides) % dims
    return {"coords": coords.astype(np.int32).ravel(), "ring": ring.astype(np.int32)}


@register("recursive", "recursive co-bisection of the network and the group graph, halves mapped to halves "
          "(LibTopoMap recursive)",
          options={
              "context": (True, "weigh each group bisection by the hops from the node halves to the group's "
                                "neighbours outside the part (Scotch-style); False: plain co-bisection, as LibTopoMap"),
              "geometric": (True, "on tori, meshes and hypercubes cut the nodes at the median of their longest "
                                  "extent; False: graph bisection on every network"),
              "grid": grid_option("auto"),
          },
          source="Hoefler & Snir, ICS 2011 (LibTopoMap recursive)")
def recursive(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
              progress: Callable[[float], Any] | None, context: bool, geometric: bool, grid: Any) -> np.ndarray:
    """LibTopoMap's recursive co-bisection, after the multicore step.

    Parameters
    ----------
    pattern : Pattern
    allocation : Allocation
    seed, capacity, progress
        As for :func:`topomap.map` (the seed reaches every bisection).
    context : bool
        Bias every bisection of the groups by where their neighbours outside
        the part sit (placed, or bound for another node half), and pair the
        halves accordingly.
    geometric : bool
        Cut the nodes of tori, meshes and hypercubes by their coordinates.
    grid : "auto", None or array_like
        The processes' grid for the node grouping
        (:func:`~topomap.mappers.grids.process_coords`): where boxes of it
        tile the nodes, each node gets a box (the least surface); else the
        partitioner groups them.
        With boxes the 100^3 stencil maps with 0.64 x the hop-bytes and
        0.57 x the maximum congestion on ``torus:40x40x40/16`` (0.90 x and
        1.08 x on ``fattree:k=40,levels=3/16``) in 19 s and 11 s of CPU
        instead of 52 s and 42 s.

    Returns
    -------
    numpy.ndarray
        int32 PE of every process.

    Examples
    --------
    >>> import topomap as tm
    >>> pat = tm.generators.stencil_2d((8, 8))
    >>> alloc = tm.machine("mesh:8x8").allocate(64)
    >>> tm.evaluate(pat, alloc, tm.map(pat, alloc, method="recursive")).max_dilation
    1
    """
    geo = _geometry(allocation) if _flag("recursive", "geometric", geometric) else {}
    return core_map("recursive", _core.map_recursive, pattern, allocation, seed, capacity, progress,
                    context=_flag("recursive", "context", context),
                    grid=process_coords(pattern, grid, "recursive", "grid", ranks=False), **geo)


@register("rcm", "reverse Cuthill-McKee orders of the group graph and the network, i-th group onto i-th node "
          "(LibTopoMap RCM)",
          options={
              "start": ("peripheral", "each component's search starts at a 'peripheral' vertex (George-Liu, "
                                      "as LibTopoMap) or the 'min_degree' one (as SciPy)"),
              "grid": grid_option(None),
          },
          source="Hoefler & Snir, ICS 2011 (LibTopoMap rcm)")
def rcm(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
        progress: Callable[[float], Any] | None, start: str, grid: Any) -> np.ndarray:
    """LibTopoMap's reverse Cuthill-McKee mapping, after the multicore step.

    Parameters
    ----------
    pattern : Pattern
    allocation : Allocation
    seed, capacity, progress
        As for :func:`topomap.map` (the seed reaches the multicore
        partitioner).
    start : {"peripheral", "min_degree"}
        Start rule of the Cuthill-McKee searches (see :func:`rcm_order`).
    grid : "auto", None or array_like
        The processes' grid for the node grouping
        (:func:`~topomap.mappers.grids.process_coords`): where boxes of it
        tile the nodes, each node gets a box (the least surface); else the
        partitioner groups them.
        Default None: with boxes, the RCM order of their regular group graph
        measured 2.2 x the maximum congestion of the partitioner's groups on
        ``torus:40x40x40/16`` (100^3 stencil; 0.46 x on the fat tree).

    Returns
    -------
    numpy.ndarray
        int32 PE of every process.

    Examples
    --------
    >>> import topomap as tm
    >>> pat = tm.generators.stencil_2d((16, 1))
    >>> alloc = tm.machine("mesh:16").allocate(16)
    >>> tm.evaluate(pat, alloc, tm.map(pat, alloc, method="rcm")).max_dilation
    1
    """
    return core_map("rcm", _core.map_rcm, pattern, allocation, seed, capacity, progress,
                    start=_choice("rcm", "start", start, RCM_STARTS), grid=process_coords(pattern, grid, "rcm", "grid", ranks=False))


def rcm_order(graph: Any, start: str = "peripheral") -> np.ndarray:
    """Reverse Cuthill-McKee order of a graph's vertices.

    The graph is made undirected (``C + C^T``; weights are ignored).  Each
    connected component is searched breadth first from its start vertex,
    every vertex appending its unvisited neighbours by increasing degree
    (ties in index order), and the whole order is reversed.

    Parameters
    ----------
    graph : Pattern or array-like
        Anything :func:`topomap.map` accepts as a pattern.
    start : {"peripheral", "min_degree"}
        ``"peripheral"``: per component, in order of its lowest vertex, a
        pseudo-peripheral vertex (George and Liu's level-structure search
        from that lowest vertex, as SPARSPAK's GENRCM that LibTopoMap uses).
        ``"min_degree"``: the unvisited vertex of least degree, ties to the
        lower index (SciPy's ``reverse_cuthill_mckee`` with a stable sort).

    Returns
    -------
    numpy.ndarray
        int32 vertex ids, the i-th vertex in RCM order.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.mappers.libtopomap import rcm_order
    >>> rcm_order(tm.generators.stencil_2d((5, 1))).tolist()
    [4, 3, 2, 1, 0]
    """
    s = _choice("rcm_order", "start", start, RCM_STARTS)
    pat = as_pattern(graph)
    xadj, adjncy, _ = _core.ugraph_from_pattern(pat.indptr, pat.indices, pat.bytes)
    return _core.rcm_order(xadj, adjncy[:xadj[-1]], s)
