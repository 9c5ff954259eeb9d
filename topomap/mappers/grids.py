"""The grid a stencil pattern lives on: from its provenance (:func:`process_grid`),
from its rank numbering alone (:func:`rank_grid`) or from its graph alone
(:func:`~topomap.mappers.graph_grid.graph_grid`), and the process-coordinates
option of the mappers that use it (topdown splits by it; greedy, recursive, rcm
and ptram group processes into nodes by boxes of it, csrc/core/map_nodes_grid.c).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import MappingError
from ..pattern import Pattern
from .graph_grid import graph_grid

__all__ = ["process_grid", "rank_grid", "process_coords", "grid_option"]

_PCOORD_LIMIT = 2**20   # the core packs three coordinates into one sort key

def grid_option(default: str | None) -> tuple[str | None, str]:
    """The ``grid`` option of a mapper that groups processes into nodes first.

    Parameters
    ----------
    default : "auto" or None
        The mapper's default: ``"auto"`` where boxes measured better than
        the partitioner's groups for that mapper, None where not.

    Returns
    -------
    tuple
        ``(default, help)`` as :func:`topomap.registry.register` takes options.

    Examples
    --------
    >>> from topomap.mappers.grids import grid_option
    >>> grid_option("auto")[0]
    'auto'
    """
    return (default, "group the processes into nodes by boxes of their grid where boxes tile it (nodes of equal "
                     "slots, filled): 'auto' = the grid a stencil or Cartesian communicator records (process_grid); "
                     "None = always the partitioner; or an (n, d) integer array, e.g. rank_grid(pattern)")


def process_grid(pattern: Pattern) -> np.ndarray | None:
    """Coordinates of the processes on the grid their pattern was generated on.

    A pattern from :func:`~topomap.generators.stencil_2d`,
    :func:`~topomap.generators.stencil_3d` or :func:`~topomap.generators.moore`
    records its grid (``provenance["dims"]``, rank ``x0 + d0 (x1 + d1 x2)``).
    The grid is trusted only if every message joins processes at most the
    stencil's radius apart on every axis (across the wrap where periodic):
    a pattern relabelled or edited since keeps its provenance but fails
    that check.

    Returns
    -------
    numpy.ndarray or None
        int32 ``(n, d)`` coordinates, or None when the pattern has no grid
        of 1 to 3 axes that fits it.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.mappers.grids import process_grid
    >>> process_grid(tm.generators.stencil_2d((3, 2)))[[0, 1, 3]].tolist()
    [[0, 0], [1, 0], [0, 1]]
    >>> process_grid(tm.generators.random_sparse(8, 0.5)) is None
    True
    """
    dims = pattern.provenance.get("dims")
    if not isinstance(dims, (list, tuple)) or not 1 <= len(dims) <= 3 or math.prod(dims) != pattern.n \
            or max(dims) >= _PCOORD_LIMIT:
        return None
    src, dst = pattern.senders().astype(np.int64), pattern.indices.astype(np.int64)
    if _wrapped(tuple(dims), src, dst, pattern.bytes, pattern.provenance.get("r", 1)) is None:
        return None
    return _grid_coords(pattern.n, dims).astype(np.int32)


def _grid_coords(n: int, dims: Any) -> np.ndarray:
    dims_a = np.asarray(dims, dtype=np.int64)
    strides = np.concatenate([[1], np.cumprod(dims_a)[:-1]])
    return (np.arange(n, dtype=np.int64)[:, None] // strides) % dims_a


def _wrapped(dims: tuple[int, ...], src: np.ndarray, dst: np.ndarray, weight: np.ndarray,
             reach: int = 1) -> float | None:
    """Bytes of the messages that cross a wrap of the grid ``dims`` (ranks first-axis fastest), or None
    if a message joins processes more than ``reach`` apart on some axis (across the wrap if shorter)."""
    wrapped = np.zeros(src.size, dtype=bool)
    stride = 1
    for d in dims:
        gap = np.abs(src // stride % d - dst // stride % d)
        near = np.minimum(gap, d - gap)
        if near.max(initial=0) > reach:
            return None
        wrapped |= near < gap
        stride *= d
    return float(weight[wrapped].sum())


def rank_grid(pattern: Pattern) -> np.ndarray | None:
    """Coordinates of a pattern that is a nearest-neighbour stencil of ranks numbered along a grid.

    MPI codes number their processes along a Cartesian grid (``MPI_Cart_create``,
    or ``x + X (y + Y z)`` by hand), so a profiled halo exchange is a grid
    pattern without saying so.  The grid is found from the pattern alone:
    its strides are among the message offsets ``|v - u|`` (plus or minus one
    for diagonal neighbours) that divide ``n``; every 2- and 3-axis grid they
    give (and the 1-axis one) is tested on a sample of 4096 messages and
    then on all of them; a grid fits when every message joins processes at
    most one apart on each axis, across the wrap where the axis has 3 or more
    planes.  Of the fitting grids, the one whose wraps carry the fewest
    bytes wins, then the one of fewer axes.  A pattern of more than 64
    distinct offsets is no grid stencil (refused at once).  Axes are
    first-fastest, as :func:`process_grid`'s; an MPI Cartesian communicator
    of dims (d0, d1, d2) is the grid (d2, d1, d0).

    Returns
    -------
    numpy.ndarray or None
        int32 ``(n, d)`` coordinates, or None.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.mappers.grids import rank_grid
    >>> gen = tm.generators.stencil_3d((6, 4, 5), points=7)
    >>> bare = tm.Pattern.from_edges(gen.senders(), gen.indices, gen.bytes, n=gen.n)   # no provenance
    >>> rank_grid(bare).max(axis=0).tolist()
    [5, 3, 4]
    >>> rank_grid(tm.generators.random_sparse(60, 0.2)) is None
    True
    """
    n = pattern.n
    if n < 4 or pattern.nnz == 0 or n >= _PCOORD_LIMIT ** 3:
        return None
    src, dst = pattern.senders().astype(np.int64), pattern.indices.astype(np.int64)
    pick = np.random.default_rng(0).choice(src.size, min(src.size, 4096), replace=False)
    if np.unique(np.abs(dst[pick] - src[pick])).size > 64:   # a sample refuses a relabelled pattern at once
        return None
    offsets = np.unique(np.abs(dst - src))
    if offsets.size > 64:
        return None
    near = {int(o) + e for o in offsets for e in (-1, 0, 1)}
    strides = sorted(s for s in near if 1 < s < n and n % s == 0)
    grids = [(n,)] + [(x, n // x) for x in strides]
    grids += [(x, xy // x, n // xy) for x in strides for xy in strides if xy > x and xy % x == 0 and xy < n]
    grids = [g for g in grids if max(g) < _PCOORD_LIMIT]
    best: tuple[float, int, tuple[int, ...]] | None = None
    for dims in grids:
        if _wrapped(dims, src[pick], dst[pick], pattern.bytes[pick]) is None:
            continue
        cost = _wrapped(dims, src, dst, pattern.bytes)
        if cost is not None and (best is None or (cost, len(dims)) < best[:2]):
            best = (cost, len(dims), dims)
    return None if best is None else _grid_coords(n, best[2]).astype(np.int32)


def process_coords(pattern: Pattern, coords: Any, method: str, option: str, ranks: bool = True) -> np.ndarray | None:
    """The processes' grid coordinates that a mapper's option asks for.

    Parameters
    ----------
    pattern : Pattern
        The pattern being mapped.
    coords : None, False, "auto" or array_like
        None or False: no coordinates; ``"auto"``: :func:`process_grid`,
        else (with ``ranks``) :func:`rank_grid`, else
        :func:`~topomap.mappers.graph_grid.graph_grid`; or an ``(n, d)`` integer
        array, ``d <= 3``, entries from 0 to 2^20 - 1.
    method, option : str
        The mapper and option named in errors.
    ranks : bool
        Let ``"auto"`` fall back on :func:`rank_grid`, then on the graph's
        own grid in any numbering (``graph_grid``).

    Returns
    -------
    numpy.ndarray or None
        int32 ``(n, d)`` coordinates, or None.

    Raises
    ------
    MappingError
        A value of another kind, shape or range.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.mappers.grids import process_coords
    >>> process_coords(tm.generators.stencil_2d((4, 2)), "auto", "greedy", "grid").shape
    (8, 2)
    >>> process_coords(tm.generators.stencil_2d((4, 2)), None, "greedy", "grid") is None
    True
    """
    if coords is None or coords is False:
        return None
    if isinstance(coords, str):
        if coords != "auto":
            raise MappingError(f"{method}: option {option} must be 'auto', None or an (n, d) array, got {coords!r}")
        grid = process_grid(pattern)
        if grid is None and ranks:
            grid = rank_grid(pattern)
            if grid is None:
                grid = graph_grid(pattern)
                grid = None if grid is None or grid.max(initial=0) >= _PCOORD_LIMIT else grid
        return grid
    try:
        xy = np.asarray(coords)
    except Exception as exc:  # noqa: BLE001  (whatever the object raises, the message names the option)
        raise MappingError(f"{method}: option {option} is not an array: {exc}") from None
    if xy.ndim != 2 or xy.shape[0] != pattern.n or not 1 <= xy.shape[1] <= 3:
        raise MappingError(f"{method}: option {option} must have shape (n, d) = ({pattern.n}, 1..3), got {xy.shape}")
    if xy.size and (xy.dtype.kind not in "iu" or xy.min() < 0 or xy.max() >= _PCOORD_LIMIT):
        raise MappingError(f"{method}: option {option} must be integers from 0 to {_PCOORD_LIMIT - 1}")
    return xy.astype(np.int32)
