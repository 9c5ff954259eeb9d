"""PTRAM with its leaders on MPI ranks, equal to the serial mapping by construction.

The thesis runs PTRAM with one leader per node (Mirsadeghi 2017 §3.3,
Algs. 3.1 and 3.2; notes 000 §2): in each greedy step every leader scores
the unit on its own free nodes and the scores are gathered
(``MPI_Allgather``); in each refinement round every leader searches swaps
around its node and the kept tries are gathered.  Every rank then takes the
same decision.  Here the serial C mapper is itself that loop
(``csrc/include/topomap/map_ptram.h``, "Parallel decomposition"), and this
module runs its steps through :class:`topomap._core.PtramState` with the
leaders' parts split over ranks:

1. step 1 (the seeded partitioner) runs once on rank 0; its group vector is
   broadcast and adopted by the other ranks;
2. each greedy step: every leader scores its nodes, ``Allgatherv`` of the
   float64 scores, every rank runs the same argmin scan;
3. each round: every leader searches its nodes, ``Allgatherv`` of the kept
   tries (float64 rows ``u, r, m, mc, hot``), every rank runs the same scan.

The gathered values are the very doubles the serial loop computes, and the
decisions are the same C functions, so the mapping, the greedy order and the
round-by-round maximum congestion equal :func:`topomap.mappers.ptram.run_ptram`'s.
Each exchange carries a status word per leader (cancel, error) so that a
cancel or a failure on one rank makes every rank raise together.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Sequence

import numpy as np

from .. import _core
from .._digest import digest
from ..errors import Cancelled, TopomapError
from ..machine import Allocation
from ..mappers._options import core_errors
from ..mappers.ptram import DEFAULT_K, PtramResult, _check_options
from ..metrics import as_pattern
from ..pattern import Pattern
from ..networks.spec import machine as build_machine
from ._collective import CollectiveError, agree, from_root, mpi

__all__ = ["distributed_ptram", "leader_nodes"]

_OK, _CANCEL, _ERROR, _INTERRUPT = 0.0, 1.0, 2.0, 3.0


def leader_nodes(allocation: Allocation, size: int, leaders: str | None = None) -> list[np.ndarray]:
    """The allocation nodes each rank serves as a leader (int32, ascending).

    Parameters
    ----------
    allocation : Allocation
        The job's allocation; its nodes are numbered in order of first
        appearance in ``allocation.pes``.
    size : int
        Ranks in the communicator.
    leaders : {None, "node"}
        None: node ``j`` is served by rank ``j % size``.  ``"node"``: the
        thesis's one leader per node, the lowest rank ``r`` whose PE
        ``allocation.pes[r]`` is on that node.

    Returns
    -------
    list of numpy.ndarray
        ``size`` arrays; a rank that leads nothing gets an empty one.

    Raises
    ------
    ValueError
        ``leaders`` unknown, or with ``"node"``: fewer PEs than ranks or a
        node with no rank on it.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("torus:2x2/2").allocate(8)
    >>> [a.tolist() for a in leader_nodes(alloc, 3)]
    [[0, 3], [1], [2]]
    >>> [a.tolist() for a in leader_nodes(alloc, 8, "node")]
    [[0], [], [1], [], [2], [], [3], []]
    """
    node_of_pe = allocation.machine.node_of(allocation.pes)
    _, first = np.unique(node_of_pe, return_index=True)
    order = node_of_pe[np.sort(first)]
    nnodes = order.size
    index = {int(nd): j for j, nd in enumerate(order.tolist())}
    if leaders is None:
        return [np.arange(r, nnodes, size, dtype=np.int32) for r in range(size)]
    if leaders != "node":
        raise ValueError(f"leaders = {leaders!r} must be None (node j on rank j % size) or 'node'")
    if allocation.pes.size < size:
        raise ValueError(f"leaders='node' needs the PE of every rank: the allocation has {allocation.pes.size} PEs "
                         f"for {size} ranks")
    mine: list[list[int]] = [[] for _ in range(size)]
    led = np.full(nnodes, -1)
    for r in range(size):
        j = index[int(node_of_pe[r])]
        if led[j] < 0:
            led[j] = r
            mine[r].append(j)
    if np.any(led < 0):
        j = int(np.flatnonzero(led < 0)[0])
        raise ValueError(f"leaders='node': allocation node {j} (machine node {int(order[j])}) has no rank on it")
    return [np.asarray(m, dtype=np.int32) for m in mine]


def _inputs(comm: Any, pattern: Any, allocation: Any) -> tuple[Pattern, Allocation]:
    """Root's pattern and allocation on ranks that passed None; a collective check that all ranks agree."""
    problem = None
    try:
        pattern = None if pattern is None else as_pattern(pattern)
        if allocation is not None and not isinstance(allocation, Allocation):
            problem = f"allocation must be an Allocation (machine.allocate(...)), got {type(allocation).__name__}"
    except (TopomapError, ValueError, TypeError) as exc:
        problem = f"bad pattern: {exc}"
    agree(comm, problem, "distributed_ptram")
    root_has = comm.bcast((pattern is not None, allocation is not None) if comm.rank == 0 else None, root=0)
    if not all(root_has):
        raise CollectiveError("distributed_ptram: rank 0 must pass the pattern and the allocation", rank=0)
    if any(comm.allgather(pattern is None)):
        pattern = comm.bcast(pattern if comm.rank == 0 else None, root=0)
    if any(comm.allgather(allocation is None)):
        spec_pes = comm.bcast((allocation.machine.spec, allocation.pes) if comm.rank == 0 else None, root=0)
        if allocation is None:
            try:
                allocation = build_machine(spec_pes[0]).allocation(spec_pes[1])
            except TopomapError as exc:
                problem = f"cannot rebuild rank 0's machine {spec_pes[0]!r} from its spec: {exc}"
        agree(comm, problem, "distributed_ptram")
    return pattern, allocation


def distributed_ptram(comm: Any, pattern: Any, allocation: Allocation | None, *, seed: int = 0, capacity: int = 1,
                      weights: Sequence[float] = (1, 1, 1, 1), k: int = DEFAULT_K, rounds: int = 10,
                      partition: bool = True, plateau: bool = False, candidates: int | None = None,
                      leaders: str | None = None,
                      progress: Callable[[float], Any] | None = None) -> PtramResult:
    """PTRAM with its leaders on the ranks of ``comm``; the same result as the serial run on every rank.

    Collective over ``comm``.  Equals
    :func:`topomap.mappers.ptram.run_ptram` with the same arguments
    (``pe_of``, ``group``, ``order``, ``unit_node``, ``round_mc``,
    ``rounds_done``, ``greedy_hybrid``; only ``seconds`` differ).

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
        The ranks that share the leaders' work.
    pattern : Pattern or array-like or None
        The communication pattern; None on a rank other than 0 takes rank
        0's.  Ranks that pass one must pass the same.
    allocation : Allocation or None
        The nodes to map onto; None on a rank other than 0 rebuilds rank 0's
        from its machine's spec string.
    seed, capacity, weights, k, rounds, partition, plateau, candidates
        As for :func:`~topomap.mappers.ptram.run_ptram`; the same on every rank.
    leaders : {None, "node"}
        None: node ``j`` is served by rank ``j % comm.size`` (any number of
        ranks, e.g. under ``mpiexec`` on one machine).  ``"node"``: one
        leader per node, the lowest rank running on it (rank ``r`` runs on
        ``allocation.pes[r]``, e.g. the allocation of
        :func:`~topomap.mpi.discover_job`); the leaders work in a
        sub-communicator and the others receive the result.
    progress : callable, optional
        Called on a leader with the fraction done before each exchange;
        returning True stops every rank with :class:`~topomap.Cancelled`,
        Ctrl-C on a leader stops every rank with KeyboardInterrupt, and an
        exception it raises propagates on its rank (the others raise
        CollectiveError naming that rank).

    Returns
    -------
    PtramResult
        On every rank.

    Raises
    ------
    CollectiveError
        On every rank: inputs that differ between ranks (naming the first
        rank that differs from rank 0), a bad option, or a failure on any
        rank.
    Cancelled
        On every rank, when a leader's progress callable returned True.
    KeyboardInterrupt
        On every rank, after Ctrl-C on a leader.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> import topomap as tm
    >>> from topomap.mappers.ptram import run_ptram
    >>> alloc = tm.machine("fattree:k=4,levels=2/2").allocate(16)
    >>> pat = tm.generators.stencil_2d((4, 4), weights=(3, 1))
    >>> res = distributed_ptram(MPI.COMM_WORLD, pat, alloc, seed=1)
    >>> bool((res.pe_of == run_ptram(pat, alloc, seed=1).pe_of).all())
    True
    """
    t0 = time.perf_counter()
    pattern, allocation = _inputs(comm, pattern, allocation)
    problem = None
    try:
        w = _check_options(weights, k, rounds, partition, plateau, candidates)
        split = leader_nodes(allocation, comm.size, leaders)
    except (TopomapError, ValueError) as exc:
        problem, w, split = str(exc), None, []
    agree(comm, problem, "distributed_ptram")
    options = dict(seed=int(seed) % 2**64, weights=w, k=int(k), rounds=int(rounds), partition=int(bool(partition)),
                   plateau=int(bool(plateau)), candidates=-1 if candidates is None else int(candidates))
    mine = digest(pattern.indptr, pattern.indices, pattern.bytes, allocation.pes, allocation.machine.spec,
                        int(capacity), sorted(options.items(), key=lambda kv: kv[0]).__repr__(), leaders)
    prints = comm.allgather(mine)
    differ = [r for r, f in enumerate(prints) if f != prints[0]]
    if differ:
        raise CollectiveError(f"distributed_ptram: rank {differ[0]}'s pattern, allocation or options differ from "
                              f"rank 0's", rank=differ[0])
    ranks = list(range(comm.size)) if leaders is None else [r for r, own in enumerate(split) if own.size]
    sub = comm if leaders is None else comm.Split(0 if split[comm.rank].size else mpi().UNDEFINED, comm.rank)
    outcome: Any = None
    raised: list[BaseException] = []  # the exception of this rank's progress callable, raised after the others know
    if sub != mpi().COMM_NULL:
        outcome = _lead(sub, pattern, allocation, int(capacity), options, [split[r] for r in ranks], ranks, progress,
                        raised)
        if leaders is not None:
            sub.Free()
    if leaders is not None:
        outcome = comm.bcast(outcome, root=0)     # rank 0 is the lowest rank on its node: a leader
    if raised:
        raise raised[0]
    if outcome[0] == "cancel":
        raise Cancelled.by_progress(f"distributed ptram (rank {outcome[1]})", outcome[2])
    if outcome[0] == "interrupt":
        raise KeyboardInterrupt(f"distributed ptram interrupted on rank {outcome[1]}")
    if outcome[0] == "error":
        raise CollectiveError(outcome[1], rank=outcome[2])
    pe_of, tr = outcome[1]
    seconds = dict(zip(("partition", "greedy", "refine"), tr["seconds"]))
    seconds.update(comm=outcome[2], total=time.perf_counter() - t0)
    return PtramResult(pe_of=pe_of, group=tr["group"], order=tr["order"], unit_node=tr["unit_node"],
                       round_mc=tr["round_mc"], rounds_done=tr["rounds_done"], greedy_hybrid=tr["greedy_hybrid"],
                       seconds=seconds)


class _Stop(Exception):
    """A leader reported a cancel, an interrupt or a failure (``status``) in the last exchange."""

    def __init__(self, rank: int, status: float):
        super().__init__(rank)
        self.rank, self.status = rank, status


def _local(func: Callable[[], np.ndarray], nrows: int, width: int) -> tuple[np.ndarray, float]:
    """A leader's own computation and its status word; a failure goes to the next exchange, never raised alone."""
    try:
        with core_errors("ptram"):
            return np.asarray(func(), dtype=np.float64).reshape(nrows, width), _OK
    except KeyboardInterrupt:
        return np.zeros((nrows, width)), _INTERRUPT
    except Exception as exc:  # noqa: BLE001 - every failure must reach the other leaders
        print(f"distributed_ptram: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return np.zeros((nrows, width)), _ERROR


def _lead(comm: Any, pattern: Pattern, allocation: Allocation, capacity: int, options: dict,
          split: list[np.ndarray], ranks: list[int], progress: Callable[[float], Any] | None,
          raised: list[BaseException]) -> tuple:
    """The leaders' loop on ``comm`` (its rank i is rank ``ranks[i]`` of the caller's communicator and serves
    ``split[i]``).  Returns the same tuple on every leader: ("ok", (pe_of, trace), comm seconds),
    ("cancel", rank, fraction), ("interrupt", rank) or ("error", message, rank).  An exception of this
    leader's progress callable goes to ``raised``."""
    args = (allocation.machine._core, pattern.indptr, pattern.indices, pattern.bytes, allocation.pes, capacity)

    def build(group: Any) -> Any:
        with core_errors("ptram"):
            return _core.ptram_state(*args, **options, group=group)

    state, group, holder = None, None, []
    try:
        if options["partition"]:
            def step1() -> np.ndarray:
                holder.append(build(None))
                return holder[0].group
            group = from_root(comm, step1, "distributed_ptram step 1")
            state = holder[0] if holder else None
        problem = None
        if state is None:
            try:
                state = build(group)
            except TopomapError as exc:
                problem = str(exc)
        agree(comm, problem, "distributed_ptram")
    except CollectiveError as exc:
        return ("error", str(exc), None if exc.rank is None else ranks[exc.rank])
    MPI = mpi()
    mine = split[comm.rank]
    order = np.concatenate(split).astype(np.int64)
    counts = np.array([s.size for s in split], dtype=np.int64)
    clock = [0.0]
    last = [0.0]  # the fraction of the last exchange: the same on every leader
    nunits, rounds = max(state.nunits, 1), max(options["rounds"], 1)

    def exchange(rows: np.ndarray, status: float, width: int, fraction: float) -> np.ndarray:
        """Allgatherv of every leader's rows and status word; the rows come back in node order."""
        last[0] = fraction
        if status == _OK and progress is not None:
            try:
                status = _CANCEL if progress(fraction) else _OK
            except KeyboardInterrupt:
                status = _INTERRUPT
            except Exception as exc:  # noqa: BLE001 - the others must stop too before it propagates here
                print(f"distributed_ptram: progress raised {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
                raised.append(exc)
                status = _ERROR
        send = np.concatenate([rows.ravel(), [status]])
        sizes = counts * width + 1
        recv = np.empty(int(sizes.sum()), dtype=np.float64)
        t = time.perf_counter()
        comm.Allgatherv(send, [recv, sizes, np.cumsum(sizes) - sizes, MPI.DOUBLE])
        clock[0] += time.perf_counter() - t
        ends = np.cumsum(sizes) - 1
        bad = np.flatnonzero(recv[ends] != _OK)
        if bad.size:
            raise _Stop(ranks[int(bad[0])], float(recv[ends[bad[0]]]))
        out = np.empty((order.size, width))
        out[order] = np.delete(recv, ends).reshape(-1, width)
        return out

    try:
        placed = 0
        while True:
            unit, needs = state.greedy_next()
            if unit < 0:
                break
            scores = None
            if needs:
                rows, status = _local(lambda: state.greedy_score(unit, mine), mine.size, 1)
                scores = exchange(rows, status, 1, 0.1 + 0.8 * placed / nunits)[:, 0]
            state.greedy_place(unit, scores)
            placed += 1
        done = 0
        while state.round_begin():
            rows, status = _local(lambda: state.leader_search(mine), mine.size, 5)
            state.round_end(exchange(rows, status, 5, 0.9 + 0.1 * done / rounds))
            done += 1
        return ("ok", state.finish(), clock[0])
    except _Stop as stop:
        if stop.status == _CANCEL:
            return ("cancel", stop.rank, last[0])
        if stop.status == _INTERRUPT:
            return ("interrupt", stop.rank)
        return ("error", f"distributed_ptram: rank {stop.rank} failed (its error is printed on its stderr)",
                stop.rank)
    except TopomapError as exc:     # a decision step: the same state, so the same error, on every leader
        return ("error", f"distributed_ptram: {exc}", None)
