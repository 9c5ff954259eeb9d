"""The top-down mapper for any machine: dual recursive bipartitioning of the
processes along the target's own decomposition, then a swap/move search.

Pellegrini & Roman, "Scotch: a software package for static mapping by dual
recursive bipartitioning of process and architecture graphs", HPCN 1996
(DRB with external gains); the search is VieM's (Schulz & Träff, SEA 2017)
over nodes.  The C files ``csrc/core/map_dualrb.c`` and
``csrc/core/map_qap_search.c`` state what they take from the sources and
what they had to choose.

The target's decomposition is built here, per machine kind:

tori, meshes, hypercubes
    recursive coordinate bisection of the allocation's nodes: a part is cut
    across one of its three longest extents (on a ring, the shortest arc
    covering it), whichever gives the processes the cheapest split, at the
    coordinate nearest its middle, so halves stay boxes (a 9-long ring
    splits 5 | 4, never mid-plane).
every other kind
    the allocation's nodes in id order, where every topomap kind numbers
    switch subtrees, groups and pods consecutively; a gap's level is the
    route length between its two nodes, the longest cut first (a fat tree
    splits between pods, then leaves; a dragonfly between groups, then
    routers), ties cut nearest the middle.
``graph`` fabrics (files, routing tables)
    whose node ids need not follow the structure: recursive graph
    bisection of the network (:func:`topomap.partition`, the allocation's
    nodes weighing 1 and every other vertex 0, edges weighted by their
    links' capacity), the gap's level being the depth of its cut.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _core
from ..errors import MappingError
from ..machine import Allocation
from ..metrics import evaluate
from ..networks import GraphNetwork
from ..partition import partition
from ..pattern import Pattern
from ..registry import register
from ._options import core_map, is_flag, is_int
from .grids import process_coords, process_grid, rank_grid
from .libtopomap import _geometry

__all__ = ["topdown", "decomposition", "process_grid", "rank_grid", "EFFORTS", "FLOW_MIN"]

#: Up to this many processes, on machines without coordinates (trees, fat trees, dragonflies, fabrics),
#: a grid pattern is also partitioned as a graph and the lower J kept; above, the grid alone (on the
#: 10^6 fat tree the partitioner costs 46 s where the grid costs 24 s).
BOTH_LIMIT = 2**17

#: Plain min cuts of at least this many processes add max-flow refinement (map_dualrb.c's
#: TOPOMAP_TOPDOWN_FLOW_MIN, where the measurements are).
FLOW_MIN = 16384

#: Presets: multilevel runs per bisection, local-search sweeps, complete tries,
#: congestion-search sweeps.
#: On the 36x18x18 stencil onto torus:9x9x9/16 without its grid, seeds 0-2: hop-bytes
#: 0.11-0.17 / 0.11-0.19 / 0.11-0.16 x block in 0.5 / 0.8 / 3.5 s of CPU; with it, the
#: embedding (0.107) in 0.2 s.  The congestion search stops at its local optimum (a hot
#: and a warm sweep that change nothing), at 10^4 processes within 10 sweeps; eco allows
#: 40 because larger inputs need more: on the 160x80x80 stencil without its grid 10 left its
#: maximum congestion at 0.198 / 0.166 / 0.262 / 0.119 x block (seeds 0-3) instead of
#: 0.159 / 0.131 / 0.203 / 0.113, for 3 % more CPU.
EFFORTS = {"fast": (1, 1, 1, 2), "eco": (2, 4, 1, 40), "strong": (4, 8, 3, 40)}


def _bisection_order(allocation: Allocation, nodes: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Recursive bisection of the network graph: (order, gap levels)."""
    m = allocation.machine
    links = m.links()
    weight = np.zeros(m.nvertices)
    weight[nodes] = 1.0
    order: list[int] = []
    gaps: list[int] = []

    def emit(part: np.ndarray, src: np.ndarray, dst: np.ndarray, cap: np.ndarray, level: int) -> None:
        inside = part[weight[part] > 0]
        if inside.size <= 1:
            order.extend(inside.tolist())
            return
        local = np.full(m.nvertices, -1, dtype=np.int64)
        local[part] = np.arange(part.size)
        graph = Pattern.from_edges(local[src], local[dst], cap, n=part.size)
        half = (inside.size + 1) // 2
        sides = partition(graph, 2, weights=weight[part], capacities=[half, inside.size - half], seed=seed,
                          method="builtin").parts
        side_of = np.full(m.nvertices, -1)
        side_of[part] = sides
        for s in (0, 1):
            keep = (side_of[src] == s) & (side_of[dst] == s)
            emit(part[sides == s], src[keep], dst[keep], cap[keep], level + 1)
            if s == 0:
                gaps.append(level)

    emit(np.arange(m.nvertices), links["src"], links["dst"], links["capacity"], 0)
    return np.asarray(order, dtype=np.int32), np.asarray(gaps, dtype=np.int32)


def decomposition(allocation: Allocation, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The target decomposition the ``topdown`` mapper follows where the
    machine has no coordinates (on tori, meshes and hypercubes the C core
    chooses each cut from the node coordinates instead).

    Parameters
    ----------
    allocation : Allocation
    seed : int
        Seed of the graph bisections (``graph`` fabrics only).

    Returns
    -------
    order : numpy.ndarray
        int32 machine nodes of the allocation, each once, in leaf order.
    gap : numpy.ndarray
        int32 level of the cut between ``order[i]`` and ``order[i + 1]``; a
        range of the order splits at its lowest level (nearest its middle on
        a tie).

    Examples
    --------
    >>> import topomap as tm
    >>> order, gap = decomposition(tm.machine("fattree:k=4,levels=2").allocate(8))
    >>> order.tolist(), gap.tolist()
    ([0, 1, 2, 3, 4, 5, 6, 7], [-2, -2, -2, -4, -2, -2, -2])
    """
    m = allocation.machine
    nodes = np.unique(m.node_of(allocation.pes)).astype(np.int64)
    if isinstance(m.network, GraphNetwork) and nodes.size > 1:
        return _bisection_order(allocation, nodes, seed)
    if nodes.size == 1:
        return nodes.astype(np.int32), np.zeros(0, dtype=np.int32)
    hops = np.asarray(m.hops(nodes[:-1], nodes[1:]), dtype=np.int64)
    return nodes.astype(np.int32), (-hops).astype(np.int32)


@register("topdown", "dual recursive bipartitioning of the processes along the target's own decomposition "
          "(tori by their longest extent, trees by levels), external gains, then swap/move search on J "
          "(any machine)",
          options={
              "effort": ("eco", "preset: fast | eco | strong (multilevel runs per bisection: 1, 2, 4; "
                                "complete tries: 1, 1, 3)"),
              "tries": (None, "complete runs with derived seeds, the lowest J kept (default: the preset's)"),
              "context": (True, "weigh each bisection by the hops to the processes' neighbours outside the part "
                                "(Scotch's external gains); False: plain min cuts"),
              "sweeps": (None, "local-search budget in sweeps over the processes on a node boundary (0: none; "
                               "default: the preset's 1, 4, 8)"),
              "depth": (2, "swap partners within this many hops of the traffic graph"),
              "max_partners": (64, "swap partners tried per process (both searches)"),
              "coords": ("auto", "process coordinates (an (n, d) integer array, d <= 3) to split the processes by "
                                 "instead of the graph partitioner; 'auto': the grid of a stencil/moore "
                                 "pattern when it fits (process_grid), else a grid the ranks are numbered along "
                                 "(rank_grid), else the grid of a 5- or 7-point stencil in any rank numbering, "
                                 "found from its graph (graph_grid); None: always partition the graph"),
              "congestion_sweeps": (None, "then at most this many sweeps of the bounded search on maximum link "
                                          "congestion over the processes on the hottest links (0: none; default: "
                                          "the preset's 2, 40, 40)"),
              "flow_min": (FLOW_MIN, "graph bisections of at least this many processes also refine their plain "
                                     "min cut by max flow (partition(flows=True)); 0: never"),
          },
          source="Pellegrini & Roman, HPCN 1996 (Scotch DRB); Schulz & Träff, SEA 2017 (VieM search)",
          c_file="map_dualrb.c")
def topdown(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
            progress: Callable[[float], Any] | None, effort: str, tries: int | None, context: bool,
            sweeps: int | None, depth: int, max_partners: int, coords: Any,
            congestion_sweeps: int | None, flow_min: int) -> np.ndarray:
    """Dual recursive bipartitioning onto any machine, then local search.

    Parameters
    ----------
    pattern : Pattern
    allocation : Allocation
    seed, capacity, progress
        As for :func:`topomap.map` (the seed reaches every bisection and the
        search).
    effort : {"fast", "eco", "strong"}
        Multilevel runs per bisection (1, 2, 4; the best is kept), the
        default search sweeps (1, 4, 8) and tries (1, 1, 3).
    tries : int, optional
        Complete runs with seeds derived from ``seed``; the one of lowest QAP
        objective J is kept (the first run uses ``seed`` itself).
    context : bool
        Scotch's external gains: each bisection knows where the part's
        outside neighbours are bound for.
    sweeps, depth, max_partners : int
        The swap/move search's budget, partner radius and partners per
        process.
    coords : "auto", None or array_like
        Process coordinates, ``(n, d)`` integers with ``d <= 3`` (a
        Cartesian process grid, cells of a structured mesh): each part of
        the processes is then split by coordinates, the first or the last
        ``k`` along whichever axis gives the least cut + outside cost, in
        O(n log n) instead of a multilevel partition.  ``"auto"`` uses
        :func:`process_grid`, else :func:`rank_grid`, else
        :func:`~topomap.mappers.graph_grid.graph_grid` (a 5- or 7-point
        stencil, its ranks in any order); None always
        partitions the traffic graph.  Under ``effort="strong"``, and on
        machines without coordinates (trees, fat trees, dragonflies,
        fabrics) up to :data:`BOTH_LIMIT` processes, both are run and the
        lower J is kept.
    congestion_sweeps : int, optional
        Sweeps of the final search on maximum link congestion (Kumar's
        LocalOpt over the processes on the hottest links, each against at
        most ``max_partners`` processes two traffic hops away or on a
        partner's node); it never raises the maximum.  0 turns it off.
    flow_min : int
        Where the traffic graph is partitioned, bisections of at least this
        many processes add max-flow refinement (:func:`topomap.partition`'s
        ``flows``) to their plain min cut (the split weighted by where the
        outside neighbours are bound runs without): straighter cuts at the
        top levels, where a jagged cut misplaces everything below it.  0
        never adds it.

    Returns
    -------
    numpy.ndarray
        int32 PE of every process.

    Examples
    --------
    A 3-D stencil of 4 x 2 x 2 blocks per node lands as the geometric
    embedding: every message crosses at most one link.

    >>> import topomap as tm
    >>> pat = tm.generators.stencil_3d((8, 4, 4), points=7)
    >>> alloc = tm.machine("torus:2x2x2/16").allocate(pat.n)
    >>> tm.evaluate(pat, alloc, tm.map(pat, alloc, method="topdown")).max_dilation
    1
    """
    if effort not in EFFORTS:
        raise MappingError(f"topdown: option effort must be one of {', '.join(map(repr, EFFORTS))}, got {effort!r}")
    ntries, default_sweeps, default_tries, default_csweeps = EFFORTS[effort]
    sweeps = default_sweeps if sweeps is None else sweeps
    tries = default_tries if tries is None else tries
    congestion_sweeps = default_csweeps if congestion_sweeps is None else congestion_sweeps
    if not is_flag(context):
        raise MappingError(f"topdown: option context must be True or False, got {context!r}")
    for name, value, low in (("sweeps", sweeps, 0), ("depth", depth, 0), ("max_partners", max_partners, 1),
                             ("tries", tries, 1), ("congestion_sweeps", congestion_sweeps, 0),
                             ("flow_min", flow_min, 0)):
        if not is_int(value) or not low <= value <= 2**31 - 1:
            raise MappingError(f"topdown: option {name} must be an integer >= {low}, got {value!r}")
    pcoords = process_coords(pattern, coords, "topdown", "coords")
    pos = None if pcoords is None else _grid_positions(pcoords)
    if pos is not None:
        return _topdown_relabelled(pattern, allocation, pos, seed=seed, capacity=capacity, progress=progress,
                                   effort=effort, tries=tries, context=context, sweeps=sweeps, depth=depth,
                                   max_partners=max_partners, coords=pcoords, congestion_sweeps=congestion_sweeps,
                                   flow_min=flow_min)
    grid = {} if pcoords is None else {"pcoords": np.ascontiguousarray(pcoords).ravel(), "pdims": pcoords.shape[1]}
    order, gap = decomposition(allocation, seed)

    def run(report: Callable[[float], Any] | None, **by: Any) -> np.ndarray:
        return core_map("topdown", _core.map_topdown, pattern, allocation, seed, capacity, report, order=order,
                        gap=gap, context=int(context), sweeps=sweeps, depth=depth, max_partners=max_partners,
                        ntries=ntries, tries=tries, congestion_sweeps=congestion_sweeps, flow_min=flow_min, **by,
                        **_geometry(allocation))

    geometric = bool(_geometry(allocation))
    if not grid or not (effort == "strong" or (not geometric and pattern.n <= BOTH_LIMIT)):
        return run(progress, **grid)
    # the partitioner too, where the grid's axis-aligned blocks are not the best shape (a stencil ten
    # times heavier along one axis: J 0.062 by the grid, 0.048 by the partitioner x block), or where the
    # machine has no axes to pair with the grid's (a 16x12x12 stencil on a dragonfly: 0.662 and 0.630)
    halves = [None if progress is None else (lambda f, lo=lo: progress(lo + 0.5 * f)) for lo in (0.0, 0.5)]
    by_grid, by_graph = run(halves[0], **grid), run(halves[1])
    J = [evaluate(pattern, allocation, pe).qap for pe in (by_grid, by_graph)]
    return by_grid if J[0] <= J[1] else by_graph


def _grid_positions(pcoords: np.ndarray) -> np.ndarray | None:
    """Each process's place in the grid's own order (first axis fastest), or None where the ranks are
    in that order already.  Ranks in another order (a grid found by graph_grid) scatter every part's
    traffic over memory: on the 160x80x80 stencil relabelled at random the core took 13.3 s instead
    of 4.4 s, so topdown then maps the pattern renumbered along its grid."""
    key = np.lexsort(pcoords.T)
    if np.array_equal(key, np.arange(key.size)):
        return None
    pos = np.empty_like(key)
    pos[key] = np.arange(key.size)
    return pos


def _topdown_relabelled(pattern: Pattern, allocation: Allocation, pos: np.ndarray, *, coords: np.ndarray,
                        **options: Any) -> np.ndarray:
    """topdown of the pattern whose process p is renamed pos[p]; the PE of every original process."""
    inner = Pattern.from_edges(pos[pattern.senders()], pos[pattern.indices], pattern.bytes, n=pattern.n)
    by_pos = np.empty_like(coords)
    by_pos[pos] = coords
    return topdown(inner, allocation, coords=by_pos, **options)[pos]
