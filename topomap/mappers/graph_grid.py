"""The grid a nearest-neighbour stencil lives on, recovered from its traffic
graph alone, whatever the rank numbering (:func:`graph_grid`).

A profiled halo exchange is numbered by whoever made the communicator: a
Cartesian communicator created with ``reorder=True``, a space-filling-curve
decomposition, ranks placed by an earlier mapping.  Its graph is still the
grid's, and the grid is what lets a mapper cut it by planes.  In a box grid
of ``d`` axes a corner has degree ``d``; its ``d`` neighbours each lie one
step along one axis, and the face ``x_i = 0`` is where the neighbour on
axis ``i`` is one hop farther than the corner.  The distance to that face is
the coordinate ``x_i``.  A grid that wraps on every axis has no corner, so
any process is the origin and its ``2 d`` neighbours, paired into axes,
mark the planes through it (:func:`_ring_coords`).  Breadth-first searches
(``2 d + 1`` in a box, ``3 d + 1`` on rings) give every process's
coordinates, and a check that they fill the grid and that every message
joins grid neighbours decides whether the graph was a grid.
"""

from __future__ import annotations

import numpy as np

from .. import _core
from ..pattern import Pattern

__all__ = ["graph_grid"]


def _bfs(xadj: np.ndarray, adj: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """Hops from the nearest of ``sources`` to every vertex (-1 where none is reached)."""
    return _core.ugraph_bfs(xadj, adj, np.asarray(sources, dtype=np.int32))


def graph_grid(pattern: Pattern) -> np.ndarray | None:
    """Grid coordinates of a pattern whose graph is a grid of 1 to 3 axes, in any rank numbering.

    Recognises the 2 d + 1-point stencils (paths and rings, 5-point 2-D and
    7-point 3-D halo exchanges) without wrap-around (every axis at least 2
    long) or with it on every axis (every axis at least 3 long): the graph
    (messages in either direction, self-messages ignored) must be the grid
    graph, so that every message joins two processes one step apart on one
    axis and every grid neighbour pair exchanges a message.  Grids that wrap
    on some axes only, and diagonal (Moore) stencils, are not recognised.
    O(d (n + m)) with ``2 d + 1`` breadth-first searches (``3 d + 1`` when
    the grid wraps), after an O(n + m) check of the degrees (a box of ``d``
    axes has ``2^d`` corners of degree ``d``, the least degree, and none
    above ``2 d``; a wrapped grid has degree ``2 d`` everywhere) that turns
    most other graphs away at once.

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
    >>> graph_grid(tm.generators.stencil_3d((6, 4, 5), points=7, periodic=True)).max(axis=0).tolist()
    [5, 4, 3]
    >>> graph_grid(tm.generators.stencil_3d((6, 4, 5), points=27)) is None
    True
    """
    n = pattern.n
    if n < 2 or pattern.nnz == 0:
        return None
    xadj, adj, _ = _core.ugraph_from_pattern(pattern.indptr, pattern.indices, pattern.bytes)
    deg = np.diff(xadj)
    low, high = int(deg.min()), int(deg.max())
    if low == high and high in (2, 4, 6) and n >= 3 ** (high // 2):
        found = _ring_coords(xadj, adj, high // 2)
    elif 1 <= low <= 3 and np.count_nonzero(deg == low) == 2 ** low and high <= 2 * low:
        found = _box_coords(xadj, adj, low)
    else:
        return None
    if found is None:
        return None
    xyz, dims, periodic = found
    if int(np.prod(dims)) != n:
        return None
    order = np.argsort(-dims, kind="stable")
    xyz, dims = xyz[:, order], dims[order]
    strides = np.concatenate([[1], np.cumprod(dims)[:-1]])
    if np.bincount(xyz @ strides, minlength=n).max() != 1:
        return None
    gap = np.abs(xyz[np.repeat(np.arange(n), deg)] - xyz[adj])
    if periodic:
        gap = np.minimum(gap, dims - gap)
    if not np.all(gap.sum(axis=1) == 1):
        return None
    # every grid neighbour pair exchanges a message: the grid's edge count
    edges = sum(n if periodic else n // int(k) * (int(k) - 1) for k in dims)
    return xyz.astype(np.int32) if adj.size == 2 * edges else None


def _box_coords(xadj: np.ndarray, adj: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """Coordinates from a corner of degree d: x_i = hops to the face its i-th neighbour leaves."""
    corner = int(np.argmax(np.diff(xadj) == d))
    from_corner = _bfs(xadj, adj, np.array([corner]))
    if from_corner.min() < 0:
        return None
    coords = []
    for step in adj[xadj[corner]:xadj[corner + 1]]:
        face = np.flatnonzero(_bfs(xadj, adj, np.array([step])) == from_corner + 1)
        coords.append(_bfs(xadj, adj, face))
    xyz = np.stack(coords, axis=1)
    dims = xyz.max(axis=0) + 1
    return (xyz, dims, False) if dims.min() >= 2 else None


def _ring_coords(xadj: np.ndarray, adj: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """Coordinates of a grid that wraps on every axis, from process 0 and its 2 d neighbours.

    A neighbour p one step along an axis is nearer than the origin to the processes of the half
    ring x in [1, a / 2].  The opposite neighbour q's half shares at most the plane x = a / 2 with
    it, no more than a neighbour on another axis shares (as much on a ring of 4), so partners are
    tried in that order.  The plane x = 0 is where both are farther than the origin; the hops to it
    are min(x, a - x), and p's half tells which.  A pair is an axis if every message then moves
    along it by at most one step and each process has its two neighbours on it."""
    origin = _bfs(xadj, adj, np.array([0]))
    if origin.min() < 0:
        return None
    n, steps = origin.size, adj[xadj[0]:xadj[1]]
    far = np.stack([_bfs(xadj, adj, np.array([p])) for p in steps])
    half = far < origin
    shared = half.astype(np.int64) @ half.T.astype(np.int64)
    src = np.repeat(np.arange(n), np.diff(xadj))
    coords, dims, left = [], [], set(range(steps.size))
    while left:
        p = min(left)
        for q in sorted(left - {p}, key=lambda j: (shared[p, j], j)):
            ring = _bfs(xadj, adj, np.flatnonzero((far[p] > origin) & (far[q] > origin)))
            if ring.min() < 0:
                continue
            a = 2 * int(ring.max()) + (0 if np.any(half[p] & half[q]) else 1)
            x = np.where(half[p], ring, (a - ring) % a)
            gap = np.abs(x[src] - x[adj])
            gap = np.minimum(gap, a - gap)
            if gap.max() <= 1 and np.count_nonzero(gap) == 2 * n:
                break
        else:
            return None
        left -= {p, q}
        coords.append(x)
        dims.append(a)
    return np.stack(coords, axis=1), np.asarray(dims, dtype=np.int64), True
