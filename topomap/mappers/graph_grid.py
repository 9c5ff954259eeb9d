"""The grid a nearest-neighbour stencil lives on, recovered from its traffic
graph alone, whatever the rank numbering (:func:`graph_grid`).

A profiled halo exchange is numbered by whoever made the communicator: a
Cartesian communicator created with ``reorder=True``, a space-filling-curve
decomposition, ranks placed by an earlier mapping.  Its graph is still the
grid's, and the grid is what lets a mapper cut it by planes.  In a box grid
of ``d`` axes a corner has degree ``d``; its ``d`` neighbours each lie one
step along one axis, and the face ``x_i = 0`` is where the neighbour on
axis ``i`` is one hop farther than the corner.  The distance to that face is
the coordinate ``x_i``.  So ``2 d + 1`` breadth-first searches give every
process's coordinates, and a check that they form the box and that every
message joins grid neighbours decides whether the graph was a grid.
"""

from __future__ import annotations

import numpy as np

from .. import _core
from ..pattern import Pattern

__all__ = ["graph_grid"]


def _bfs(xadj: np.ndarray, adj: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """Hops from the nearest of ``sources`` to every vertex (-1 where none is reached)."""
    dist = np.full(xadj.size - 1, -1, dtype=np.int64)
    slot = np.empty(xadj.size - 1, dtype=np.int64)
    dist[sources] = 0
    frontier, hops = sources, 0
    while frontier.size:
        hops += 1
        starts, lens = xadj[frontier], xadj[frontier + 1] - xadj[frontier]
        first = np.cumsum(lens) - lens
        near = adj[np.repeat(starts - first, lens) + np.arange(int(lens.sum()))]
        near = near[dist[near] < 0]
        # each new vertex once, without a sort: whichever write to a repeated vertex stays, one position matches it
        at = np.arange(near.size)
        slot[near] = at
        frontier = near[slot[near] == at]
        dist[frontier] = hops
    return dist


def graph_grid(pattern: Pattern) -> np.ndarray | None:
    """Grid coordinates of a pattern whose graph is a box grid of 1 to 3 axes, in any rank numbering.

    Recognises the 2 d + 1-point stencils (paths, 5-point 2-D and 7-point
    3-D halo exchanges) without wrap-around, every axis at least 2 long:
    the graph (messages in either direction, self-messages ignored) must be
    the grid graph of a box, so that every message joins two processes one
    step apart on one axis and every grid neighbour pair exchanges a
    message.  Periodic and diagonal (Moore) stencils are not recognised.
    O(d (n + m)) with ``2 d + 1`` breadth-first searches, after an O(n + m)
    check of the degrees (a box of ``d`` axes has ``2^d`` corners of degree
    ``d``, the least degree) that turns most other graphs away at once.

    Parameters
    ----------
    pattern : Pattern
        The traffic; only which processes exchange messages matters.

    Returns
    -------
    numpy.ndarray or None
        int32 ``(n, d)`` coordinates (the box's longest axis first), or None
        when the graph is not such a grid.

    Examples
    --------
    >>> import numpy as np
    >>> import topomap as tm
    >>> from topomap.mappers.graph_grid import graph_grid
    >>> gen = tm.generators.stencil_3d((6, 4, 5), points=7)
    >>> perm = np.random.default_rng(1).permutation(gen.n)          # rank r becomes perm[r]
    >>> src, dst = perm[gen.senders()], perm[gen.indices]
    >>> xyz = graph_grid(tm.Pattern.from_edges(src, dst, gen.bytes, n=gen.n))
    >>> xyz.max(axis=0).tolist()
    [5, 4, 3]
    >>> graph_grid(tm.generators.stencil_3d((6, 4, 5), points=7, periodic=True)) is None
    True
    """
    n = pattern.n
    if n < 2 or pattern.nnz == 0:
        return None
    xadj, adj, _ = _core.ugraph_from_pattern(pattern.indptr, pattern.indices, pattern.bytes)
    xadj, adj = np.asarray(xadj, dtype=np.int64), np.asarray(adj, dtype=np.int64)
    deg = np.diff(xadj)
    d = int(deg.min())
    if not 1 <= d <= 3 or np.count_nonzero(deg == d) != 2 ** d or deg.max() > 2 * d:
        return None
    corner = int(np.argmax(deg == d))
    from_corner = _bfs(xadj, adj, np.array([corner]))
    if from_corner.min() < 0:
        return None
    coords = []
    for step in adj[xadj[corner]:xadj[corner + 1]]:
        face = np.flatnonzero(_bfs(xadj, adj, np.array([step])) == from_corner + 1)
        coords.append(_bfs(xadj, adj, face))
    xyz = np.stack(coords, axis=1)
    dims = xyz.max(axis=0) + 1
    if int(np.prod(dims)) != n or dims.min() < 2:
        return None
    order = np.argsort(-dims, kind="stable")
    xyz, dims = xyz[:, order], dims[order]
    strides = np.concatenate([[1], np.cumprod(dims)[:-1]])
    if np.bincount(xyz @ strides, minlength=n).max() != 1:
        return None
    src = np.repeat(np.arange(n), deg)
    if not np.all(np.abs(xyz[src] - xyz[adj]).sum(axis=1) == 1):
        return None
    # every grid neighbour pair exchanges a message: the box's edge count
    if adj.size != 2 * sum(int(np.prod(dims)) // int(k) * (int(k) - 1) for k in dims):
        return None
    return xyz.astype(np.int32)
