"""Synthetic communication patterns from the thesis and paper benchmarks.

Every generator returns a :class:`~topomap.pattern.Pattern` whose provenance is
``{"generator": <function name>, **normalised parameters}`` (plus the
``dropped_self_bytes`` entry every pattern carries).  Volumes are bytes per
iteration of the benchmark; ``msgs`` counts the messages per iteration, so a
neighbour reached twice (see "tiny periodic grids" below) carries two messages.

Process numbering
-----------------
A grid ``dims = (d0, d1, ..., d_{k-1})`` numbers its processes row-major with
the FIRST coordinate fastest: ``p = x0 + d0*(x1 + d1*(x2 + ...))``, the order
``MPI_Cart_create`` would give with the dimensions reversed.  Axis ``a`` has
stride ``d0*...*d_{a-1}``.

Spec grammar (:func:`from_spec`, used by the command line)
-----------------------------------------------------------
::

    spec    := kind ":" shape [":" option ("," option)*]
    kind    := "stencil2d" | "stencil3d" | "moore" | "random" | "alltoall"
    shape   := INT ("x" INT)*          grid extents; "random" takes one INT = n
    option  := INT                     points (stencils only)
             | "periodic"              every dimension periodic
             | KEY "=" VALUE
    lists   := items joined by "x"     e.g. weights=3x1, periodic=1x0, axes=0x2
    bool    := "1" | "0" | "true" | "false" | "yes" | "no"

    kind       keys (VALUE type)                                  required
    stencil2d  points (INT) weights (FLOATS) periodic (BOOLS)
               bytes (FLOAT)
    stencil3d  same as stencil2d
    moore      r (INT) periodic (BOOLS) bytes (FLOAT)
    random     p (FLOAT) seed (INT) bytes (FLOAT)                 p
    alltoall   axes (INTS) bytes (FLOAT)                          axes

A single boolean for ``periodic`` applies to every dimension.  Whitespace
around the whole spec is ignored; keys and kinds are case-sensitive.  Any
malformed spec raises :class:`~topomap.errors.PatternError` naming the token
at fault.  Examples: ``stencil2d:64x64``, ``stencil2d:64x64:9,periodic,weights=3x1``,
``stencil3d:16x16x16:27``, ``moore:32x32:r=2``, ``random:4096:p=0.05,seed=1``,
``alltoall:16x16:axes=1``, ``alltoall:16x4x16:axes=0x2``.

Choices the sources leave open
------------------------------
* **Weighted stencils.**  The thesis (Ch.3) sends "messages of a relatively
  larger size over the weighted dimension" with factor 3 on "one of the
  dimensions"; Ch.5 names the first dimension.  ``weights`` gives one factor
  per dimension, so the thesis form is ``weights=(3, 1)`` or ``(3, 1, 1)``.  A
  diagonal message (moving along several dimensions at once) is scaled by the
  MAXIMUM factor of the dimensions it moves along: it is one message carried
  over each of those dimensions, so it counts as a message of the heaviest
  one, and it is never larger than the largest face message.  With a single
  weighted dimension, as in the thesis, the product rule would give the same
  volumes.
* **15-point stencil.**  Thesis §3: the 6 face neighbours plus the 8 corner
  processes (offsets with all three coordinates ±1); the 12 edge diagonals
  are not neighbours.
* **Boundaries.**  Without periodicity a neighbour outside the grid does not
  exist, so boundary processes have fewer neighbours (no message is
  redirected).  ``periodic`` may differ per dimension.
* **Tiny periodic grids.**  With extent 1 a periodic offset wraps onto the
  process itself; with extent 2 the offsets ``+1`` and ``-1`` reach the same
  process.  Each offset still produces its message: messages to oneself are
  dropped (their bytes are recorded in ``provenance["dropped_self_bytes"]``)
  and messages that reach the same neighbour are summed (bytes and message
  counts).  Degrees then fall below the nominal neighbour count while
  ``total_bytes + dropped_self_bytes`` keeps its nominal value.
* **Moore neighbourhoods** (paper 002).  The neighbourhood is the Chebyshev
  box ``max_a |o_a| <= r``: the paper's word "Manhattan" contradicts its own
  count ``(2r+1)^d - 1``, which only the box satisfies.  The paper gives every
  process that many neighbours and worries about "duplicate neighbors" when
  an extent is too small, which only happens with wrap-around, so the grid is
  periodic by default.  The paper avoided extents below ``2r+1``; here they
  follow the tiny-grid rule above instead of being refused.
* **Random sparse digraphs** (paper 002 §VI-A, thesis §6.2): Erdős–Rényi
  G(n, p): the ordered pair ``(i, j)``, ``i != j``, is an edge iff
  ``uniform(stream_seed(seed, "random_sparse"), i*n + j) < p`` (see
  :mod:`topomap._rng`), so the graph depends only on ``(n, p, seed)`` and is
  identical on every platform and NumPy version.  Edge ``(i, j)`` means that
  ``i`` sends ``bytes`` to ``j`` (``j`` is an outgoing neighbour of ``i``).
* **Sub-communicator all-to-all** (thesis §3).  ``axes`` lists the grid axes
  that vary inside one sub-communicator; the processes that agree on every
  other coordinate form one communicator.  With ``x0`` read as the column
  index (the first coordinate runs fastest, like ``x`` across a row), "one
  communicator per column" of a 2-D grid is ``axes=(1,)``; "one communicator
  per plane along the first and last dimensions" of a 3-D grid is
  ``axes=(0, 2)``; the Ch.5 "COL" benchmark (groups along the first
  dimension of a 3-D grid) is ``axes=(0,)``.  Every member sends ``bytes``
  to every other member, as ``MPI_Alltoall`` with a block of ``bytes`` does;
  the block a process keeps for itself is a local copy, not a message, and is
  not generated.
* **Size limits.**  A generator refuses, before allocating, a pattern with
  more than ``2**26`` messages (building one needs roughly 200 bytes per
  message at peak), and :func:`random_sparse` refuses more than ``2**32``
  ordered pairs, since it draws one number per pair.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from .._rng import _check_seed, stream_seed, uniform
from ..errors import PatternError
from ..pattern import Pattern

__all__ = [
    "stencil_2d",
    "stencil_3d",
    "moore",
    "random_sparse",
    "subcomm_alltoall",
    "from_spec",
]

_MAX_ENTRIES = 2**26
_MAX_PAIRS = 2**32
_CHUNK = 2**20  # random numbers per block: fits in cache, bounds memory at any n
_MAX_PROCESSES = 2**31 - 1  # process ids are int32 in a Pattern


# ---------------------------------------------------------------- validation
def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_dims(dims: Any, ndim: int | None = None) -> tuple[int, ...]:
    if _is_int(dims) or isinstance(dims, (str, bytes)) or not isinstance(dims, (Sequence, np.ndarray)):
        raise PatternError(f"dims must be a sequence of integers, got {dims!r}")
    dims = tuple(dims)
    if ndim is not None and len(dims) != ndim:
        raise PatternError(f"dims must have {ndim} entries, got {len(dims)}: {dims!r}")
    if not dims:
        raise PatternError("dims must have at least one entry")
    for a, extent in enumerate(dims):
        if not _is_int(extent) or extent < 1:
            raise PatternError(f"dims[{a}] = {extent!r} must be an integer >= 1")
    dims = tuple(int(e) for e in dims)
    n = math.prod(dims)
    if n > _MAX_PROCESSES:
        raise PatternError(f"dims {dims} give {n} processes, more than the {_MAX_PROCESSES} a pattern holds")
    return dims


def _check_periodic(periodic: Any, d: int) -> tuple[bool, ...]:
    if isinstance(periodic, (bool, np.bool_)):
        return (bool(periodic),) * d
    if not isinstance(periodic, (Sequence, np.ndarray)) or isinstance(periodic, (str, bytes)):
        raise PatternError(f"periodic must be a bool or one bool per dimension, got {periodic!r}")
    flags = tuple(periodic)
    if len(flags) != d:
        raise PatternError(f"periodic must have {d} entries, got {len(flags)}: {flags!r}")
    for a, flag in enumerate(flags):
        if not isinstance(flag, (bool, np.bool_)):
            raise PatternError(f"periodic[{a}] = {flag!r} must be a bool")
    return tuple(bool(f) for f in flags)


def _check_positive(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise PatternError(f"{name} must be a number, got {value!r}")
    x = float(value)
    if not (math.isfinite(x) and x > 0):
        raise PatternError(f"{name} = {value!r} must be positive and finite")
    return x


def _check_weights(weights: Any, d: int) -> tuple[float, ...]:
    if weights is None:
        return (1.0,) * d
    if not isinstance(weights, (Sequence, np.ndarray)) or isinstance(weights, (str, bytes)):
        raise PatternError(f"weights must be one number per dimension, got {weights!r}")
    ws = tuple(weights)
    if len(ws) != d:
        raise PatternError(f"weights must have {d} entries, got {len(ws)}: {ws!r}")
    return tuple(_check_positive(w, f"weights[{a}]") for a, w in enumerate(ws))


def _check_points(points: Any, allowed: tuple[int, ...]) -> int:
    if not _is_int(points) or int(points) not in allowed:
        raise PatternError(f"points = {points!r} must be one of {', '.join(map(str, allowed))}")
    return int(points)


def _check_radius(r: Any) -> int:
    if not _is_int(r) or r < 1:
        raise PatternError(f"r = {r!r} must be an integer >= 1")
    return int(r)


def _check_probability(p: Any) -> float:
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise PatternError(f"p must be a number, got {p!r}")
    x = float(p)
    if not 0.0 <= x <= 1.0:  # also rejects NaN
        raise PatternError(f"p = {p!r} must lie in [0, 1]")
    return x


def _check_n(n: Any) -> int:
    if not _is_int(n) or n < 1:
        raise PatternError(f"n = {n!r} must be an integer >= 1")
    if n > _MAX_PROCESSES:
        raise PatternError(f"n = {n} exceeds the {_MAX_PROCESSES} processes a pattern holds")
    return int(n)


def _check_axes(axes: Any, d: int) -> tuple[int, ...]:
    if _is_int(axes):
        axes = (axes,)
    if not isinstance(axes, (Sequence, np.ndarray)) or isinstance(axes, (str, bytes)):
        raise PatternError(f"axes must be a sequence of axis numbers, got {axes!r}")
    ax = tuple(axes)
    if not ax:
        raise PatternError("axes must name at least one axis")
    for i, a in enumerate(ax):
        if not _is_int(a) or not 0 <= a < d:
            raise PatternError(f"axes[{i}] = {a!r} must be an axis number in [0, {d})")
    if len(set(ax)) != len(ax):
        raise PatternError(f"axes {ax!r} repeats an axis")
    return tuple(sorted(int(a) for a in ax))


def _check_entries(count: int, what: str) -> None:
    if count > _MAX_ENTRIES:
        raise PatternError(
            f"{what} would generate {count} messages (about {count * 200 / 2**30:.0f} GiB to build), "
            f"more than the limit of {_MAX_ENTRIES}; use a smaller size"
        )


# ---------------------------------------------------------------- grid helpers
def _strides(dims: tuple[int, ...]) -> np.ndarray:
    return np.array([math.prod(dims[:a]) for a in range(len(dims))], dtype=np.int64)


def _box_offsets(
    d: int, r: int, keep: Callable[[np.ndarray], np.ndarray] = lambda nonzeros: nonzeros > 0
) -> np.ndarray:
    """Offsets in ``{-r..r}^d`` whose count of non-zero coordinates passes ``keep``."""
    offs = np.indices((2 * r + 1,) * d, dtype=np.int64).reshape(d, -1).T - r
    return offs[keep(np.count_nonzero(offs, axis=1))]


def _offset_volumes(offsets: np.ndarray, weights: tuple[float, ...], volume: float) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    return volume * np.where(offsets != 0, w, 0.0).max(axis=1)


def _neighbour_pattern(
    dims: tuple[int, ...],
    periodic: tuple[bool, ...],
    offsets: np.ndarray,
    volumes: np.ndarray,
    provenance: dict[str, Any],
) -> Pattern:
    """Every process sends ``volumes[j]`` to the process at relative position ``offsets[j]``."""
    n, d = math.prod(dims), len(dims)
    k = offsets.shape[0]
    _check_entries(n * k, provenance["generator"])
    strides = _strides(dims)
    # Ascending linear displacement makes each row come out (nearly) sorted,
    # which keeps the stable sort inside Pattern.from_edges close to linear.
    order = np.argsort(offsets @ strides, kind="stable")
    offsets, volumes = offsets[order], volumes[order]
    procs = np.arange(n, dtype=np.int64)
    dst = np.zeros((n, k), dtype=np.int64)
    valid = None if all(periodic) else np.ones((n, k), dtype=bool)
    for a in range(d):
        coord = (procs // strides[a] % dims[a])[:, None] + offsets[:, a]
        if periodic[a]:
            coord %= dims[a]
        else:
            valid &= (coord >= 0) & (coord < dims[a])
        coord *= strides[a]
        dst += coord
    src = np.broadcast_to(procs[:, None], (n, k))
    vol = np.broadcast_to(volumes, (n, k))
    if any(periodic):
        # Wrapped neighbours break the row order; sorting the short rows here
        # is far cheaper than letting from_edges sort scattered global keys.
        row_order = np.argsort(dst, axis=1, kind="stable")
        dst = np.take_along_axis(dst, row_order, axis=1)
        vol = volumes[row_order]
        if valid is not None:
            valid = np.take_along_axis(valid, row_order, axis=1)
    if valid is None:
        src, dst, vol = src.ravel(), dst.ravel(), vol.ravel()
    else:
        src, dst, vol = src[valid], dst[valid], vol[valid]
    return Pattern.from_edges(src, dst, vol, np.ones(dst.size), n=n, provenance=provenance)


# ---------------------------------------------------------------- generators
def _stencil(
    name: str, dims: Any, ndim: int, points: Any, allowed: dict[int, Callable[[np.ndarray], np.ndarray]],
    weights: Any, periodic: Any, bytes: Any,
) -> Pattern:
    dims = _check_dims(dims, ndim)
    pts = _check_points(points, tuple(allowed))
    ws = _check_weights(weights, ndim)
    per = _check_periodic(periodic, ndim)
    vol = _check_positive(bytes, "bytes")
    offsets = _box_offsets(ndim, 1, allowed[pts])
    prov = {"generator": name, "dims": list(dims), "points": pts, "weights": list(ws),
            "periodic": list(per), "bytes": vol}
    return _neighbour_pattern(dims, per, offsets, _offset_volumes(offsets, ws, vol), prov)


def stencil_2d(
    dims: Sequence[int],
    points: int = 5,
    weights: Sequence[float] | None = None,
    periodic: bool | Sequence[bool] = False,
    bytes: float = 1.0,
) -> Pattern:
    """2-D halo exchange: the 5-point or 9-point stencil on a ``d0 x d1`` grid.

    Parameters
    ----------
    dims : sequence of 2 int
        Grid extents ``(d0, d1)``; process ``x0 + d0*x1`` sits at ``(x0, x1)``.
    points : {5, 9}
        5: the 4 face neighbours (``±1`` along one axis).  9: the 8 Moore
        neighbours (faces and diagonals).
    weights : sequence of 2 float, optional
        Factor per dimension on the message volume; the thesis's weighted
        form is ``(3, 1)``.  A diagonal message gets the largest factor of the
        dimensions it moves along.  Default: all 1.
    periodic : bool or sequence of 2 bool
        Wrap-around per dimension.  Without it boundary processes have fewer
        neighbours.
    bytes : float
        Volume of one unweighted message.

    Returns
    -------
    Pattern
        Symmetric pattern with one message per (process, neighbour).

    Raises
    ------
    PatternError
        On bad dims, points, weights, periodic flags or bytes.

    Examples
    --------
    >>> import numpy as np
    >>> from topomap.patterns.generators import stencil_2d
    >>> pat = stencil_2d((3, 3))
    >>> np.diff(pat.indptr).tolist()           # corners 2, edges 3, centre 4
    [2, 3, 2, 3, 4, 3, 2, 3, 2]
    >>> stencil_2d((4, 4), weights=(3, 1), periodic=True).total_bytes   # 16 * (3+3+1+1)
    128.0
    """
    return _stencil("stencil_2d", dims, 2, points, {5: lambda nz: nz == 1, 9: lambda nz: nz > 0},
                    weights, periodic, bytes)


def stencil_3d(
    dims: Sequence[int],
    points: int = 7,
    weights: Sequence[float] | None = None,
    periodic: bool | Sequence[bool] = False,
    bytes: float = 1.0,
) -> Pattern:
    """3-D halo exchange: the 7-, 15- or 27-point stencil on a ``d0 x d1 x d2`` grid.

    Parameters
    ----------
    dims : sequence of 3 int
        Grid extents; process ``x0 + d0*(x1 + d1*x2)`` sits at ``(x0, x1, x2)``.
    points : {7, 15, 27}
        7: the 6 face neighbours.  15: the 6 faces plus the 8 corners
        (offsets ``(±1, ±1, ±1)``), the thesis's "6 face + 8 corner"
        pattern.  27: all 26 Moore neighbours.
    weights : sequence of 3 float, optional
        Factor per dimension on the message volume (thesis: ``(3, 1, 1)``);
        a diagonal message gets the largest factor of the dimensions it moves
        along.  Default: all 1.
    periodic : bool or sequence of 3 bool
        Wrap-around per dimension.
    bytes : float
        Volume of one unweighted message.

    Returns
    -------
    Pattern
        Symmetric pattern with one message per (process, neighbour).

    Raises
    ------
    PatternError
        On bad dims, points, weights, periodic flags or bytes.

    Examples
    --------
    >>> import numpy as np
    >>> from topomap.patterns.generators import stencil_3d
    >>> pat = stencil_3d((4, 4, 4), points=15, periodic=True)
    >>> sorted(set(np.diff(pat.indptr).tolist()))
    [14]
    >>> int(np.diff(stencil_3d((3, 3, 3), points=27).indptr)[13])   # the centre
    26
    """
    return _stencil("stencil_3d", dims, 3, points,
                    {7: lambda nz: nz == 1, 15: lambda nz: (nz == 1) | (nz == 3), 27: lambda nz: nz > 0},
                    weights, periodic, bytes)


def moore(
    dims: Sequence[int],
    r: int = 1,
    periodic: bool | Sequence[bool] = True,
    bytes: float = 1.0,
) -> Pattern:
    """Moore neighbourhood of radius ``r`` on a ``d``-dimensional grid (paper 002).

    Every process sends ``bytes`` to each process whose coordinates differ by
    at most ``r`` in every dimension (the Chebyshev box): ``(2r+1)^d - 1``
    neighbours when the grid is periodic and every extent is at least
    ``2r+1``.

    Parameters
    ----------
    dims : sequence of int
        Grid extents, first coordinate fastest; ``d = len(dims)``.
    r : int
        Radius, at least 1.
    periodic : bool or sequence of bool
        Wrap-around per dimension; periodic by default as in the paper.
        Extents below ``2r+1`` make offsets coincide: see the module notes.
    bytes : float
        Volume of each message.

    Returns
    -------
    Pattern
        Symmetric pattern.

    Raises
    ------
    PatternError
        On bad dims, r, periodic flags or bytes, or a pattern too large.

    Examples
    --------
    >>> import numpy as np
    >>> from topomap.patterns.generators import moore
    >>> pat = moore((8, 8), r=2)
    >>> sorted(set(np.diff(pat.indptr).tolist()))    # 5**2 - 1
    [24]
    >>> pat.provenance["generator"], pat.provenance["r"]
    ('moore', 2)
    """
    dims = _check_dims(dims)
    rad = _check_radius(r)
    per = _check_periodic(periodic, len(dims))
    vol = _check_positive(bytes, "bytes")
    _check_entries(math.prod(dims) * ((2 * rad + 1) ** len(dims) - 1), "moore")
    offsets = _box_offsets(len(dims), rad)
    prov = {"generator": "moore", "dims": list(dims), "r": rad, "periodic": list(per), "bytes": vol}
    return _neighbour_pattern(dims, per, offsets, np.full(offsets.shape[0], vol), prov)


def random_sparse(n: int, p: float, seed: int = 0, bytes: float = 1.0) -> Pattern:
    """Erdős–Rényi random digraph G(n, p) (paper 002 and thesis Ch.6).

    Each ordered pair ``(i, j)``, ``i != j``, is an edge, i.e. ``i`` sends
    ``bytes`` to ``j``, independently with probability ``p``: exactly when
    ``uniform(stream_seed(seed, "random_sparse"), i*n + j) < p``.  The same
    ``(n, p, seed)`` gives the same graph on every platform and NumPy version.
    Work is done in blocks of about a million pairs, so memory is bounded by
    the output size.

    Parameters
    ----------
    n : int
        Number of processes.
    p : float
        Edge probability (the paper's density), in ``[0, 1]``.
    seed : int
        Seed in ``[0, 2**64)``.
    bytes : float
        Volume of each message.

    Returns
    -------
    Pattern
        Expected out-degree ``p*(n-1)``.

    Raises
    ------
    PatternError
        On bad arguments, more than ``2**32`` ordered pairs, or an expected
        edge count above the size limit.

    Examples
    --------
    >>> from topomap.patterns.generators import random_sparse
    >>> a = random_sparse(100, 0.05, seed=1)
    >>> b = random_sparse(100, 0.05, seed=1)
    >>> bool((a.indices == b.indices).all()), 300 < a.nnz < 700
    (True, True)
    """
    n = _check_n(n)
    prob = _check_probability(p)
    sd = int(_check_seed(seed))
    vol = _check_positive(bytes, "bytes")
    pairs = n * (n - 1)
    if pairs > _MAX_PAIRS:
        raise PatternError(
            f"random_sparse draws one number per ordered pair: n = {n} has {pairs} pairs, "
            f"more than the limit of {_MAX_PAIRS}; use n <= {math.isqrt(_MAX_PAIRS)}"
        )
    _check_entries(math.ceil(prob * pairs), "random_sparse")
    stream = stream_seed(sd, "random_sparse")
    rows = max(1, _CHUNK // n)
    cols = np.arange(n, dtype=np.int64)
    degree = np.zeros(n, dtype=np.int64)
    pieces = []
    for i0 in range(0, n, rows):
        i1 = min(n, i0 + rows)
        senders = np.arange(i0, i1, dtype=np.int64)
        hit = uniform(stream, senders[:, None] * n + cols) < prob
        hit[senders - i0, senders] = False
        degree[i0:i1] = hit.sum(axis=1)
        pieces.append(np.nonzero(hit)[1].astype(np.int32))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(degree, out=indptr[1:])
    nnz = int(indptr[-1])
    prov = {"generator": "random_sparse", "n": n, "p": prob, "seed": sd, "bytes": vol,
            "dropped_self_bytes": 0.0}
    return Pattern(n, indptr, np.concatenate(pieces), np.full(nnz, vol), np.ones(nnz), prov)


def subcomm_alltoall(dims: Sequence[int], axes: int | Sequence[int], bytes: float = 1.0) -> Pattern:
    """All-to-all inside the sub-communicators of a process grid (thesis Ch.3/Ch.5).

    ``axes`` lists the grid axes that vary inside one sub-communicator; the
    processes sharing all other coordinates form one communicator, and each
    member sends ``bytes`` to every other member (one ``MPI_Alltoall`` block).

    Parameters
    ----------
    dims : sequence of int
        Grid extents, first coordinate fastest.
    axes : int or sequence of int
        Axes spanned by each sub-communicator.  Thesis forms: ``dims`` 2-D
        with ``axes=(1,)`` (one communicator per column, 1-D all-to-all);
        ``dims`` 3-D with ``axes=(0, 2)`` (one per plane along the first and
        last dimensions, 2-D all-to-all); Ch.5 "COL" is 3-D with ``axes=(0,)``.
    bytes : float
        Volume of each block.

    Returns
    -------
    Pattern
        Block-diagonal up to a permutation: each communicator of size ``g``
        is a complete digraph, ``n*(g-1)`` messages in all.

    Raises
    ------
    PatternError
        On bad dims, axes or bytes, or a pattern too large.

    Examples
    --------
    >>> from topomap.patterns.generators import subcomm_alltoall
    >>> pat = subcomm_alltoall((2, 3), axes=1)    # columns {0, 2, 4} and {1, 3, 5}
    >>> pat.indices[pat.indptr[0]:pat.indptr[1]].tolist()
    [2, 4]
    >>> subcomm_alltoall((4, 2, 4), axes=(0, 2)).nnz    # 32 processes, 16 per plane
    480
    """
    dims = _check_dims(dims)
    ax = _check_axes(axes, len(dims))
    vol = _check_positive(bytes, "bytes")
    n = math.prod(dims)
    g = math.prod(dims[a] for a in ax)
    _check_entries(n * (g - 1), "subcomm_alltoall")
    strides = _strides(dims)
    members = np.zeros(1, dtype=np.int64)
    for a in ax:
        members = (members[:, None] + np.arange(dims[a], dtype=np.int64) * strides[a]).ravel()
    members.sort()
    procs = np.arange(n, dtype=np.int64)
    first = procs.copy()
    for a in ax:
        first -= (procs // strides[a]) % dims[a] * strides[a]
    group = first[:, None] + members
    indices = group[group != procs[:, None]].astype(np.int32)
    indptr = np.arange(n + 1, dtype=np.int64) * (g - 1)
    prov = {"generator": "subcomm_alltoall", "dims": list(dims), "axes": list(ax), "bytes": vol,
            "dropped_self_bytes": 0.0}
    return Pattern(n, indptr, indices, np.full(indices.size, vol), np.ones(indices.size), prov)


# ---------------------------------------------------------------- spec strings
_BOOLS = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}


def _parse_int(text: str) -> int:
    if not text.isdigit() or not text.isascii():
        raise ValueError(f"{text!r} is not a non-negative integer")
    return int(text)


def _parse_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None


def _parse_bool(text: str) -> bool:
    if text not in _BOOLS:
        raise ValueError(f"{text!r} is not one of {', '.join(_BOOLS)}")
    return _BOOLS[text]


def _parse_list(item: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    return lambda text: [item(part) for part in text.split("x")]


def _parse_periodic(text: str) -> Any:
    flags = _parse_list(_parse_bool)(text)
    return flags[0] if len(flags) == 1 else flags


_VALUE_PARSERS: dict[str, Callable[[str], Any]] = {
    "points": _parse_int,
    "weights": _parse_list(_parse_float),
    "periodic": _parse_periodic,
    "bytes": _parse_float,
    "r": _parse_int,
    "p": _parse_float,
    "seed": _parse_int,
    "axes": _parse_list(_parse_int),
}

# kind -> (generator, number of dims or None for any, allowed keys, required keys)
_KINDS: dict[str, tuple[Callable[..., Pattern], int | None, tuple[str, ...], tuple[str, ...]]] = {
    "stencil2d": (stencil_2d, 2, ("points", "weights", "periodic", "bytes"), ()),
    "stencil3d": (stencil_3d, 3, ("points", "weights", "periodic", "bytes"), ()),
    "moore": (moore, None, ("r", "periodic", "bytes"), ()),
    "random": (random_sparse, 1, ("p", "seed", "bytes"), ("p",)),
    "alltoall": (subcomm_alltoall, None, ("axes", "bytes"), ("axes",)),
}


def from_spec(spec: str) -> Pattern:
    """Build a pattern from a spec string such as ``"stencil2d:64x64:9,periodic"``.

    The grammar is given in the module docstring.  Values are checked by the
    same rules as the generator functions.

    Parameters
    ----------
    spec : str
        ``kind:shape[:options]``.

    Returns
    -------
    Pattern
        The same pattern (and provenance) as the equivalent generator call.

    Raises
    ------
    PatternError
        Naming the token at fault when the spec is malformed or a value is
        out of range.

    Examples
    --------
    >>> from topomap.patterns.generators import from_spec
    >>> from_spec("stencil3d:4x4x4:27,periodic").nnz
    1664
    >>> from_spec("random:64:p=0.1,seed=3").provenance["seed"]
    3
    >>> from_spec("moore:8x8:r=0")
    Traceback (most recent call last):
    ...
    topomap.errors.PatternError: pattern spec 'moore:8x8:r=0': bad token 'r=0': r = 0 must be an integer >= 1
    """
    if not isinstance(spec, str):
        raise PatternError(f"a pattern spec must be a string, got {type(spec).__name__}")
    text = spec.strip()

    def bad(token: str, why: str) -> PatternError:
        return PatternError(f"pattern spec {spec!r}: bad token {token!r}: {why}")

    parts = text.split(":")
    if len(parts) < 2:
        raise bad(text, "expected kind:shape[:options], e.g. stencil2d:64x64")
    if len(parts) > 3:
        raise bad(parts[3], "a spec has at most three ':'-separated parts")
    kind, shape = parts[0], parts[1]
    if kind not in _KINDS:
        raise bad(kind, f"unknown kind; expected one of {', '.join(_KINDS)}")
    func, ndim, allowed, required = _KINDS[kind]
    try:
        dims = _parse_list(_parse_int)(shape)
    except ValueError as exc:
        raise bad(shape, f"the shape must be integers joined by 'x' ({exc})") from None
    if ndim is not None and len(dims) != ndim:
        raise bad(shape, f"{kind} takes {ndim} extent{'s' if ndim > 1 else ''}, got {len(dims)}")

    kwargs: dict[str, Any] = {}
    seen: dict[str, str] = {}
    for token in parts[2].split(",") if len(parts) == 3 else []:
        if "=" in token:
            key, _, value = token.partition("=")
        elif token == "periodic":
            key, value = "periodic", "1"
        elif token.isdigit() and "points" in allowed:
            key, value = "points", token
        else:
            raise bad(token, f"expected key=value with key in {', '.join(allowed)}")
        if key not in allowed:
            raise bad(token, f"{kind} accepts the keys {', '.join(allowed)}")
        if key in seen:
            raise bad(token, f"{key} was already given by {seen[key]!r}")
        try:
            kwargs[key] = _VALUE_PARSERS[key](value)
        except ValueError as exc:
            raise bad(token, str(exc)) from None
        seen[key] = token
    for key in required:
        if key not in kwargs:
            raise PatternError(f"pattern spec {spec!r}: {kind} needs {key}=...")

    # Check each value on its own first so that the error names its token.
    d = len(dims)
    checks: dict[str, Callable[[Any], Any]] = {
        "points": lambda v: _check_points(v, (5, 9) if kind == "stencil2d" else (7, 15, 27)),
        "weights": lambda v: _check_weights(v, d),
        "periodic": lambda v: _check_periodic(v, d),
        "bytes": lambda v: _check_positive(v, "bytes"),
        "r": _check_radius,
        "p": _check_probability,
        "seed": _check_seed,
        "axes": lambda v: _check_axes(v, d),
    }
    try:
        shape_arg = _check_n(dims[0]) if kind == "random" else _check_dims(dims)
    except PatternError as exc:
        raise bad(shape, str(exc)) from None
    for key, value in kwargs.items():
        try:
            checks[key](value)
        except PatternError as exc:
            raise bad(seen[key], str(exc)) from None
    try:
        return func(shape_arg, **kwargs)
    except PatternError as exc:
        raise PatternError(f"pattern spec {spec!r}: {exc}") from None
