"""Reorder a running job's ranks: gather the pattern, map on one rank, split.

MPI libraries do not reorder reliably (MPICH ignores ``reorder``, Open MPI
reorders only dist-graphs and has delivered to wrong neighbours), so topomap
computes the permutation itself and applies it with ``MPI_Comm_split``
(DESIGN.md §7):

1. every rank states its part of the pattern: the whole :class:`~topomap.Pattern`
   (on one rank or on all), or its own row (bytes per destination rank);
   mismatches are found collectively and raise on every rank;
2. the rows are gathered and each rank's host and binding discovered
   (:mod:`topomap.mpi.job`) into the job's allocation;
3. one rank (``root``) maps the pattern onto that allocation with
   :func:`topomap.map` and a fixed seed; *process* ``p`` of the pattern is the
   role that new rank ``p`` plays, so the rank sitting on PE ``pe_of[p]`` gets
   new rank ``p``: ``new_rank[old_rank]`` is broadcast;
4. ``newcomm = comm.Split(0, key=new_rank[rank])`` (MPI orders by key, ties by
   old rank), and every rank checks that it got the rank it was meant to.

Afterwards the application derives its work from ``newcomm.rank`` (its role).
On GPU nodes, give the root the GPU pattern too (``gpu_pattern=``): MAGC
(:mod:`topomap.mappers.magc`, with ``method`` as its phase 1) then picks a GPU
for every rank as well, ``info.gpu_of[newcomm.rank]`` (the device ordinal in
PCI order; select it before the first CUDA call).
Data already distributed by old rank moves with :func:`topomap.mpi.handover`;
neighbour lists naming old ranks translate with :mod:`topomap.mpi.distgraph`.

Examples
--------
>>> from mpi4py import MPI
>>> import topomap as tm
>>> from topomap.mpi import reorder
>>> comm = MPI.COMM_WORLD
>>> newcomm, info = reorder(comm, tm.generators.stencil_2d((comm.size, 1)), method="block")
>>> newcomm.rank == int(info.new_rank[comm.rank])
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from .._digest import digest
from ..errors import TopomapError
from ..machine import Allocation, Machine
from ..mappers.magc import magc
from ..mapping import Mapping as TmMapping
from ..metrics import Metrics, as_pattern, evaluate
from ..node.nodetree import NodeTree
from ..pattern import Pattern
from ..registry import map as run_mapper
from ._collective import CollectiveError, agree, from_root, mpi
from .job import JobAllocation, discover_job

__all__ = ["reorder", "apply_order", "plan_reorder", "pattern_from_rows", "with_cart_grid", "ReorderInfo",
           "ReorderPlan", "inverse"]


@dataclass(frozen=True, eq=False)
class ReorderPlan:
    """What the root computes: the permutation and its quality (pure, no MPI).

    Attributes
    ----------
    new_rank : numpy.ndarray
        ``new_rank[old_rank]``: the rank each process gets in the new communicator.
    mapping : Mapping
        ``pe_of[p]``: PE of pattern process ``p`` (= new rank ``p``).
    before, after : Metrics
        The original order (rank ``r`` on ``allocation.pes[r]``) and the new one.
    """

    new_rank: np.ndarray
    mapping: TmMapping
    before: Metrics
    after: Metrics


@dataclass(frozen=True, eq=False)
class ReorderInfo:
    """What :func:`reorder` returns next to the new communicator (on every rank).

    Attributes
    ----------
    new_rank : numpy.ndarray
        ``new_rank[old_rank]``; ``old_rank`` is its inverse.
    mapping : Mapping
        ``pe_of[new_rank]`` on the job's allocation.
    before, after : Metrics
        Metrics of the original rank order and of the new one.
    method, seed : str, int
        The mapper and its seed.
    seconds : dict
        Wall-clock seconds of this rank's phases: ``pattern`` (checking and
        gathering), ``discover``, ``map`` (on the root, broadcast included),
        ``split`` and ``total``.
    job : JobAllocation or None
        The discovered allocation (on the root only: machines do not travel).
    """

    new_rank: np.ndarray
    mapping: TmMapping
    before: Metrics
    after: Metrics
    method: str
    seed: int
    seconds: dict = field(default_factory=dict)
    job: JobAllocation | None = None

    @property
    def old_rank(self) -> np.ndarray:
        """``old_rank[new_rank]``: the inverse permutation."""
        return inverse(self.new_rank)

    @property
    def gpu_of(self) -> np.ndarray | None:
        """``gpu_of[new_rank]``: the local GPU of each new rank (None without a GPU pattern)."""
        return self.mapping.gpu_of

    @property
    def identity(self) -> bool:
        """True if no rank moved."""
        return bool(np.array_equal(self.new_rank, np.arange(self.new_rank.size)))

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form (for JSON)."""
        out = {"new_rank": self.new_rank.tolist(), "pe_of": self.mapping.pe_of.tolist(), "method": self.method,
               "seed": self.seed, "before": self.before.to_dict(), "after": self.after.to_dict(),
               "seconds": dict(self.seconds), "job": None if self.job is None else self.job.to_dict()}
        if self.gpu_of is not None:
            out["gpu_of"] = self.gpu_of.tolist()
        return out


def inverse(perm: Any) -> np.ndarray:
    """The inverse permutation: ``out[perm[i]] = i``.

    Examples
    --------
    >>> inverse([2, 0, 1]).tolist()
    [1, 2, 0]
    """
    perm = np.asarray(perm, dtype=np.int64)
    out = np.empty_like(perm)
    out[perm] = np.arange(perm.size)
    return out


def _permutation_error(new_rank: Any, n: int) -> str | None:
    """Why ``new_rank`` is not a permutation of ``0..n-1`` (None if it is)."""
    arr = np.asarray(new_rank)
    if arr.ndim != 1 or arr.size != n:
        return f"new_rank has shape {arr.shape}, expected ({n},) (one entry per rank)"
    if arr.size and arr.dtype.kind not in "iu":
        return f"new_rank must hold integers, got dtype {arr.dtype}"
    bad = np.flatnonzero((arr < 0) | (arr >= n))
    if bad.size:
        return f"new_rank[{bad[0]}] = {arr[bad[0]]} is not a rank of a communicator of {n}"
    seen = np.zeros(n, dtype=np.int64)
    np.add.at(seen, arr, 1)
    if (seen != 1).any():
        twice = int(np.flatnonzero(seen > 1)[0])
        return f"new_rank is not a permutation: {twice} is given to ranks {np.flatnonzero(arr == twice)[:2].tolist()}"
    return None


def plan_reorder(pattern: Pattern, allocation: Allocation, method: str, seed: int = 0,
                 progress: Callable[[float], Any] | None = None, gpu_pattern: Any = None,
                 **options: Any) -> ReorderPlan:
    """Map ``pattern`` onto the job's ``allocation`` and turn the mapping into ``new_rank``.

    The allocation's order is the job's: rank ``r`` runs on ``allocation.pes[r]``.
    Process ``p`` of the pattern goes to ``pe_of[p]``, so the rank on that PE
    gets new rank ``p``.  With ``gpu_pattern`` (a machine of GPU nodes) the mapping is
    :func:`~topomap.mappers.magc.magc`'s with ``method`` as phase 1 (``options`` may name its
    ``strategy`` and ``intra``) and holds a GPU per process.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("torus:4/1").allocation([3, 2, 1, 0])   # ranks 0..3 sit on PEs 3..0
    >>> plan = plan_reorder(tm.generators.stencil_2d((4, 1)), alloc, "block")
    >>> plan.new_rank.tolist(), plan.mapping.pe_of.tolist()
    ([0, 1, 2, 3], [3, 2, 1, 0])
    """
    if pattern.n != len(allocation):
        raise TopomapError(f"the pattern has {pattern.n} processes but the job has {len(allocation)} ranks")
    if gpu_pattern is None:
        mapping = run_mapper(pattern, allocation, method=method, seed=seed, capacity=1, progress=progress, **options)
    else:
        mapping = magc(pattern, gpu_pattern, allocation, phase1=method, seed=seed, **options)
    order = np.argsort(allocation.pes)
    pos = np.searchsorted(allocation.pes[order], mapping.pe_of)
    rank_at = order[pos]                     # the old rank sitting on pe_of[p]
    new_rank = inverse(rank_at)
    error = _permutation_error(new_rank, pattern.n)
    if error is not None:  # tm.map checked capacity 1 on n PEs: this would be a bug in the mapper contract
        raise TopomapError(f"method {method!r} did not produce a one-to-one mapping: {error}")
    before = evaluate(pattern, allocation, allocation.pes)
    after = evaluate(pattern, allocation, mapping)
    return ReorderPlan(new_rank.astype(np.int32), mapping, before, after)


def pattern_from_rows(rows: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray | None]], n: int | None = None,
                      provenance: Mapping[str, Any] | None = None) -> Pattern:
    """A Pattern from per-rank rows ``(destinations, bytes, msgs or None)``.

    Examples
    --------
    >>> import numpy as np
    >>> rows = [(np.array([1]), np.array([5.0]), None), (np.array([0]), np.array([2.0]), None)]
    >>> pattern_from_rows(rows).to_dense().tolist()
    [[0.0, 5.0], [2.0, 0.0]]
    """
    n = len(rows) if n is None else n
    src = np.repeat(np.arange(len(rows), dtype=np.int64), [len(r[0]) for r in rows])
    dst = np.concatenate([np.asarray(r[0], dtype=np.int64) for r in rows]) if rows else np.zeros(0, np.int64)
    byts = np.concatenate([np.asarray(r[1], dtype=np.float64) for r in rows]) if rows else np.zeros(0)
    msgs = None
    if rows and all(r[2] is not None for r in rows):
        msgs = np.concatenate([np.asarray(r[2], dtype=np.float64) for r in rows])
    return Pattern.from_edges(src, dst, byts, msgs, n=n, provenance=dict(provenance or {"source": "mpi rows"}))


def _as_row(value: Any, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """This rank's row as sparse (destinations, bytes, msgs); ValueError names the fault."""
    msgs = None
    if hasattr(value, "row") and hasattr(value, "msgs"):   # a topomap.mpi.profile.Profile
        value, msgs = value.row, value.msgs
    if isinstance(value, Mapping):
        keys = list(value.keys())
        for k in keys:
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < size:
                raise ValueError(f"destination {k!r} is not a rank of a communicator of {size}")
        dst = np.asarray(keys, dtype=np.int64)
        byts = np.asarray([value[k] for k in keys], dtype=np.float64) if keys else np.zeros(0)
    else:
        arr = np.asarray(value)
        if arr.ndim != 1 or arr.size != size:
            raise ValueError(f"a row needs one entry per rank ({size}), got shape {arr.shape}")
        if arr.size and arr.dtype.kind not in "iuf":
            raise ValueError(f"row entries must be numbers, got dtype {arr.dtype}")
        arr = arr.astype(np.float64)
        dst = np.flatnonzero(arr)
        byts = arr[dst]
        if msgs is not None:
            msgs = np.asarray(msgs, dtype=np.float64)[dst]
    bad = ~np.isfinite(byts) | (byts < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"bytes to rank {int(dst[i])} = {float(byts[i])!r} must be finite and >= 0")
    return dst, byts, msgs


def _is_whole(value: Any) -> bool:
    """A whole pattern other than a Pattern: an n x n array, a scipy.sparse matrix, a networkx graph."""
    if isinstance(value, (Pattern, Mapping)) or value is None or (hasattr(value, "row") and hasattr(value, "msgs")):
        return False                                               # ... or a Profile (a row)
    if hasattr(value, "tocoo") or (hasattr(value, "edges") and hasattr(value, "nodes")):
        return True
    return isinstance(value, (np.ndarray, list, tuple)) and np.ndim(value) == 2


def _fingerprint(pat: Pattern) -> tuple[int, int, str]:
    return pat.n, pat.nnz, digest(pat.indptr, pat.indices, pat.bytes)


def _gather_pattern(comm: Any, pattern: Any, root: int) -> Pattern | None:
    """The full pattern on ``root`` (None elsewhere), after a collective check of every rank's input."""
    size = comm.size
    kind, row, local_error, fp = "none", None, None, None
    if _is_whole(pattern):
        try:
            pattern = as_pattern(pattern)
        except (TopomapError, ValueError, TypeError) as exc:
            local_error = f"bad pattern: {exc}"
    if pattern is None or local_error is not None:
        pass
    elif isinstance(pattern, Pattern):
        kind, fp = "pattern", _fingerprint(pattern)
        if pattern.n != size:
            local_error = f"its pattern has {pattern.n} processes but the communicator has {size} ranks"
    else:
        kind = "row"
        try:
            row = _as_row(pattern, size)
        except (ValueError, TypeError) as exc:
            local_error = f"bad pattern row: {exc}"
    states = comm.allgather((kind, local_error, fp))
    for r, (_, err, _) in enumerate(states):
        if err is not None:
            raise CollectiveError(f"reorder: rank {r}: {err}", rank=r)
    kinds = {k for k, _, _ in states if k != "none"}
    if not kinds:
        raise CollectiveError("reorder: no rank passed a pattern (give a Pattern on the root or a row on every rank)")
    if len(kinds) > 1:
        a = next(r for r, s in enumerate(states) if s[0] == "pattern")
        b = next(r for r, s in enumerate(states) if s[0] == "row")
        raise CollectiveError(f"reorder: rank {a} passed a whole Pattern but rank {b} a row; pass one kind", rank=b)
    if kinds == {"row"}:
        missing = [r for r, s in enumerate(states) if s[0] == "none"]
        if missing:
            raise CollectiveError(f"reorder: ranks {missing[:8]} passed no row (every rank must give its own)",
                                  rank=missing[0])
        rows = comm.gather(row, root=root)
        return pattern_from_rows(rows, size, {"source": "topomap.mpi.reorder rows"}) if comm.rank == root else None
    holders = [r for r, s in enumerate(states) if s[0] == "pattern"]
    ref = states[holders[0]][2]
    for r in holders[1:]:
        if states[r][2] != ref:
            raise CollectiveError(f"reorder: rank {r}'s pattern (n={states[r][2][0]}, {states[r][2][1]} entries) "
                                  f"differs from rank {holders[0]}'s (n={ref[0]}, {ref[1]} entries)", rank=r)
    src = holders[0] if root not in holders else root
    if src != root:
        if comm.rank == src:
            comm.send(pattern, dest=root, tag=77)
        elif comm.rank == root:
            pattern = comm.recv(source=src, tag=77)
    return pattern if comm.rank == root else None


def with_cart_grid(pattern: Pattern, dims: Sequence[int], periods: Sequence[bool]) -> Pattern:
    """``pattern`` with the grid of a Cartesian communicator of ``dims`` in its provenance.

    MPI numbers a Cartesian communicator row-major, the last dimension
    fastest; :func:`topomap.mappers.topdown.process_grid` reads ``dims``
    first-fastest, so they are stored reversed.  A pattern that already has
    a grid keeps it.  ``topdown`` (and ``auto``, through it) then splits the
    processes by their grid coordinates where the pattern fits the grid.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.mappers.topdown import process_grid
    >>> pat = tm.Pattern.from_edges([0, 1, 1, 4], [1, 0, 4, 1], [1.0, 1.0, 1.0, 1.0], n=6)
    >>> process_grid(with_cart_grid(pat, (2, 3), (False, False)))[[0, 1, 4]].tolist()   # rank 4 is (1, 1)
    [[0, 0], [1, 0], [1, 1]]
    """
    if "dims" in pattern.provenance:
        return pattern
    grid = {"cart_dims": [int(d) for d in dims], "dims": [int(d) for d in reversed(dims)],
            "periodic": [bool(p) for p in reversed(periods)]}
    return replace(pattern, provenance={**pattern.provenance, **grid})


def apply_order(comm: Any, new_rank: Any) -> Any:
    """``comm.Split(0, key=new_rank[rank])``, checked: every rank gets ``new_rank[old rank]``.

    Every rank must pass the same permutation; a malformed one, one that
    differs between ranks, or a split that does not give the ranks asked for
    raises :class:`CollectiveError` on every rank (the new communicator is
    freed first).

    Examples
    --------
    >>> from mpi4py import MPI
    >>> apply_order(MPI.COMM_SELF, [0]).rank
    0
    """
    error = _permutation_error(new_rank, comm.size)
    mine = None
    if error is None:
        arr = np.asarray(new_rank, dtype=np.int64)
        mine = digest(arr)
    agree(comm, error, "reorder: bad permutation")
    digests = comm.allgather(mine)
    for r, d in enumerate(digests):
        if d != digests[0]:
            raise CollectiveError(f"reorder: rank {r} passed a different new_rank than rank 0", rank=r)
    want = int(arr[comm.rank])
    newcomm = comm.Split(0, key=want)
    got = comm.allgather(newcomm.rank)
    wrong = [r for r, g in enumerate(got) if g != int(arr[r])]
    if wrong:
        newcomm.Free()
        r = wrong[0]
        raise CollectiveError(f"reorder: MPI_Comm_split gave rank {r} the new rank {got[r]}, not {int(arr[r])}",
                              rank=r)
    return newcomm


def reorder(comm: Any, pattern: Any = None, *, method: str = "auto", machine: "Machine | str | None" = None, seed: int = 0,
            hosts: "Sequence[str] | str | None" = None, node: "str | NodeTree" = "auto",
            host_nodes: "Mapping[str, int] | Callable[[str], int] | None" = None, root: int = 0,
            **options: Any) -> tuple[Any, ReorderInfo]:
    """Renumber the ranks of ``comm`` so that communication is cheap on the job's machine (collective).

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
        The communicator to reorder (usually ``MPI.COMM_WORLD``).
    pattern : Pattern, n x n array, row, Profile or None
        Either the whole pattern of ``comm.size`` processes -- a
        :class:`~topomap.Pattern`, an ``n x n`` array of bytes (row = sender),
        a ``scipy.sparse`` matrix or a networkx graph -- on the root, on some
        ranks, or on all (ranks holding one must hold the same), with None on
        the others; or, on *every* rank, its own row: an array of bytes per
        destination rank (length ``comm.size``), a dict ``{destination:
        bytes}``, or a :class:`topomap.mpi.Profile`.
    method : str
        Any registered mapper (``topomap.methods()``); default ``"auto"``,
        the best of a portfolio for the machine kind and size on its
        ``objective`` option (hop-bytes unless named), never worse than the
        launcher's order (:mod:`topomap.mappers.auto`).
    machine : Machine or spec string, optional
        The machine the job's hosts belong to (see :mod:`topomap.mpi.job`);
        default one switch joining them.
    seed : int
        Mapper seed; the mapping is computed once, on ``root``.
    hosts, node, host_nodes
        As for :func:`topomap.mpi.job.discover_job`.
    root : int
        The rank that maps.
    **options
        Mapper options.

    Notes
    -----
    On a Cartesian communicator (``comm.Create_cart``) the grid travels
    with the pattern (:func:`with_cart_grid`): ``topdown``, and ``auto``
    through it, split the processes by their grid coordinates, which finds
    the geometric embedding on tori where the grid's extents divide the
    machine's.

    Returns
    -------
    newcomm : mpi4py.MPI.Intracomm
        ``newcomm.rank == info.new_rank[comm.rank]`` on every rank.
    info : ReorderInfo

    Raises
    ------
    CollectiveError
        On every rank, for a malformed or mismatched pattern, a host the
        machine does not know, a mapper failure, or a split gone wrong.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> import numpy as np
    >>> comm = MPI.COMM_WORLD
    >>> row = np.ones(comm.size)             # this rank's bytes to each rank
    >>> newcomm, info = reorder(comm, row, method="random", seed=1)
    >>> sorted(info.new_rank.tolist()) == list(range(comm.size))
    True
    >>> whole = np.ones((comm.size, comm.size))   # or the whole matrix on every rank, default method
    >>> reorder(comm, whole)[1].method
    'auto'
    """
    MPI = mpi()
    if not isinstance(comm, MPI.Intracomm):
        raise CollectiveError(f"reorder needs an intracommunicator, got {type(comm).__name__}")
    t0 = time.perf_counter()
    pat = _gather_pattern(comm, pattern, root)
    t1 = time.perf_counter()
    job = discover_job(comm, machine, hosts, node, host_nodes, root=root)
    t2 = time.perf_counter()

    def plan() -> ReorderPlan:
        mine = pat
        if isinstance(comm, MPI.Cartcomm) and mine is not None:
            mine = with_cart_grid(mine, comm.dims, comm.periods)
        return plan_reorder(mine, job.allocation, method, seed, **options)

    planned = from_root(comm, plan, "reorder: mapping failed", root=root)
    t3 = time.perf_counter()
    newcomm = apply_order(comm, planned.new_rank)
    t4 = time.perf_counter()
    seconds = {"pattern": t1 - t0, "discover": t2 - t1, "map": t3 - t2, "split": t4 - t3, "total": t4 - t0}
    info = ReorderInfo(planned.new_rank, planned.mapping, planned.before, planned.after, method, int(seed),
                       seconds, job if comm.rank == root else None)
    return newcomm, info
