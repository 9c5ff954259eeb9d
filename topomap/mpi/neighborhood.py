"""Message-combining neighbour collectives on a real communicator (Mirsadeghi et al. 2017).

:class:`NeighborCombiner` takes the topology of a dist-graph communicator (or per-rank
lists), obtains the combining pattern T (Phase 1) once, and runs Phase 2 schedules of
:mod:`topomap.neighborhood.schedule` with ``Isend``/``Irecv``/``Waitall`` on a duplicate of the
communicator.  Its calls take mpi4py's buffer arguments: ``Neighbor_allgather(sendbuf,
recvbuf)``, ``Neighbor_alltoall(sendbuf, recvbuf)``, ``Neighbor_alltoallv([sbuf, counts,
displs], [rbuf, counts, displs])`` (counts and displacements in elements), and the ``*_init``
forms return a persistent :class:`PersistentNeighbor` built once and started many times, whose
sends and receives are persistent MPI requests.  ``combine=False`` gives the naive baseline
(one message per edge), with the same calls.

Every argument check ends in a collective verdict, so a bad buffer on one rank raises
:class:`~topomap.mpi.CollectiveError` on every rank instead of leaving the others waiting:
once at construction, once per ``*_init``, and once per non-persistent call (``check=False``
skips the latter).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..neighborhood import NeighborGraph, combine
from ..neighborhood.distributed import phase1_rank
from ..neighborhood.pattern import RankPattern
from ..neighborhood.schedule import Schedule as NeighborSchedule
from ..neighborhood.schedule import COPY, RECV, SEND, WAIT, Layout, build_schedule, naive_schedule
from ._collective import agree, from_root, mpi

__all__ = ["NeighborCombiner", "PersistentNeighbor", "distributed_phase1"]


def _bytes(buf: Any, what: str, writable: bool) -> np.ndarray:
    """A flat uint8 view sharing memory with ``buf`` (a C-contiguous array)."""
    arr = np.asarray(buf)
    if not arr.flags.c_contiguous:
        raise ValueError(f"{what} must be C-contiguous")
    if writable and not arr.flags.writeable:
        raise ValueError(f"{what} must be writable")
    return arr.reshape(-1).view(np.uint8)


class NeighborCombiner:
    """Combined (or naive) neighbour collectives over a topology; collective constructor.

    Parameters
    ----------
    comm : mpi4py communicator
        A dist-graph communicator, or any intracommunicator with ``sources``/``destinations``.
    sources, destinations : sequence of int, optional
        This rank's neighbour lists (default: ``comm.Get_dist_neighbors()``).
    theta : int
        Friendship threshold of Phase 1.
    combine : bool
        False: the naive schedule (the baseline).
    pattern : CombiningPattern or "distributed", optional
        A T computed beforehand (the same on every rank), or "distributed" to run Phase 1
        over the communicator (:func:`distributed_phase1`, each rank knowing only its own
        neighbourhood); default: Phase 1 simulated from the gathered lists (same T).
    cumulative : bool
        Cumulative combining in Phase 1 (beyond the papers, see
        :func:`topomap.neighborhood.combine`): messages may carry any number of origins.  A
        given ``pattern`` must have been computed with the same setting.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> import numpy as np
    >>> comm = MPI.COMM_WORLD
    >>> nc = NeighborCombiner(comm, sources=[comm.rank], destinations=[comm.rank])
    >>> out = np.zeros(1, np.int64)
    >>> nc.Neighbor_allgather(np.array([comm.rank], np.int64), out)
    >>> int(out[0]) == comm.rank
    True
    """

    def __init__(self, comm: Any, sources: Sequence[int] | None = None,
                 destinations: Sequence[int] | None = None, *, theta: int = 4, combine: bool = True,
                 pattern: Any = None, cumulative: bool = False) -> None:
        MPI = mpi()
        if (sources is None) != (destinations is None):
            raise ValueError("give both sources and destinations, or neither")
        if sources is None:
            srcs, dsts, _ = comm.Get_dist_neighbors()
        else:
            srcs, dsts = list(sources), list(destinations)
        self.rank, self.size = comm.rank, comm.size
        lists = comm.allgather((list(map(int, srcs)), list(map(int, dsts))))
        self.graph: NeighborGraph = from_root(
            comm, lambda: NeighborGraph.from_lists([d for _, d in lists], [s for s, _ in lists]),
            "NeighborCombiner topology")
        self.combined = bool(combine)
        self.view: RankPattern | None = None
        if self.combined and isinstance(pattern, str) and pattern == "distributed":
            self.view = distributed_phase1(comm, srcs, dsts, theta=theta, cumulative=cumulative)[0]
        elif self.combined:
            if pattern is not None and bool(pattern.cumulative) != bool(cumulative):
                raise ValueError(f"the given pattern has cumulative={pattern.cumulative}, the call "
                                 f"cumulative={cumulative}")
            t = pattern if pattern is not None else from_root(
                comm, lambda: _combine(self.graph, theta, cumulative), "NeighborCombiner phase 1")
            self.view = t.rank_view(self.rank)
        self.comm = comm.Dup()
        self._MPI = MPI

    # ---- layouts and checks ----------------------------------------------------------
    def _neighbour_values(self, values: Sequence[int]) -> list[int]:
        """Send values[i] to destination i; return what each source sent (in source order)."""
        dests, srcs = self.graph.destinations(self.rank), self.graph.sources(self.rank)
        reqs = [self.comm.isend(int(v), dest=int(q), tag=7) for q, v in zip(dests, values)]
        got = [self.comm.recv(source=int(o), tag=7) for o in srcs]
        self._MPI.Request.waitall(reqs)
        return got

    def _layout(self, kind: str, send: Any, recv: Any) -> tuple[np.ndarray, np.ndarray, Layout, str | None]:
        """Byte views and layout of one call, or an error message (checked collectively)."""
        nd, ns = self.graph.destinations(self.rank).size, self.graph.sources(self.rank).size
        try:
            if kind == "alltoallv":
                sarr, scount, sdisp = _vspec(send, nd, "sendbuf")
                rarr, rcount, rdisp = _vspec(recv, ns, "recvbuf")
                sb, rb = _bytes(sarr, "sendbuf", False), _bytes(rarr, "recvbuf", True)
                si, ri = np.asarray(sarr).itemsize, np.asarray(rarr).itemsize
                lay = Layout(sdisp * si, scount * si, rdisp * ri, rcount * ri)
            else:
                sb, rb = _bytes(send, "sendbuf", False), _bytes(recv, "recvbuf", True)
                # alltoall: the block size shows in the send buffer, or the receive one when
                # the rank has no destination
                m = sb.size if kind == "allgather" else sb.size // nd if nd else rb.size // ns if ns else 0
                if kind == "alltoall" and sb.size != m * nd:
                    raise ValueError(f"sendbuf has {sb.size} bytes, not a multiple of {nd} destinations")
                soff = np.zeros(nd, np.int64) if kind == "allgather" else np.arange(nd, dtype=np.int64) * m
                lay = Layout(soff, np.full(nd, m, np.int64), np.arange(ns, dtype=np.int64) * m,
                             np.full(ns, m, np.int64))
            if lay.send_bytes > sb.size:
                raise ValueError(f"sendbuf has {sb.size} bytes, the blocks need {lay.send_bytes}")
            if lay.recv_bytes > rb.size:
                raise ValueError(f"recvbuf has {rb.size} bytes, the blocks need {lay.recv_bytes}")
            return sb, rb, lay, None
        except (ValueError, TypeError) as exc:
            empty = np.zeros(0, np.int64)
            return np.zeros(0, np.uint8), np.zeros(0, np.uint8), Layout(empty, empty, empty, empty), str(exc)

    def _prepare(self, kind: str, send: Any, recv: Any) -> tuple[np.ndarray, np.ndarray, NeighborSchedule]:
        sb, rb, lay, error = self._layout(kind, send, recv)
        agree(self.comm, error, f"neighbour {kind}")
        # every sender's block size must be what its receiver expects (MPI would truncate)
        got = self._neighbour_values(lay.send_size.tolist())
        bad = [(int(o), g, int(w)) for o, g, w in zip(self.graph.sources(self.rank), got, lay.recv_size) if g != w]
        agree(self.comm, None if not bad else f"rank {bad[0][0]} sends {bad[0][1]} bytes, {self.rank} expects "
              f"{bad[0][2]}", f"neighbour {kind} block sizes")
        if not self.combined:
            return sb, rb, naive_schedule(self.graph, self.rank, lay)
        sizes = self._friend_sizes(lay)
        sched = build_schedule(self.view, self.graph.destinations(self.rank), self.graph.sources(self.rank), lay,
                               kind, lambda f, q: sizes[(f, q)])
        return sb, rb, sched

    def _friend_sizes(self, lay: Layout) -> dict[tuple[int, int], int]:
        """Swap with each friend the sizes of the blocks it will forward (thesis s6, Alg. 6.3):
        (origin, destination) -> bytes.  Step by step, since with cumulative combining a rank
        hands on blocks whose sizes an earlier friend told it."""
        p, view = self.rank, self.view
        sizes = {(p, int(q)): int(size) for q, size in zip(self.graph.destinations(p), lay.send_size)}
        for i, (_, f, on, off) in enumerate(view.steps):
            handed, taken, _ = (view.carried[i] if view.carried is not None
                                else ([(q, (p,)) for q in off], [(q, (f,)) for q in on], []))
            req = self.comm.isend([sizes[(o, q)] for q, origins in handed for o in origins], dest=f, tag=8)
            got = self.comm.recv(source=f, tag=8)
            sizes.update(zip([(o, q) for q, origins in taken for o in origins], got))
            req.wait()
        return sizes

    # ---- the calls -------------------------------------------------------------------
    def _call(self, kind: str, send: Any, recv: Any, check: bool) -> None:
        if check:
            sb, rb, sched = self._prepare(kind, send, recv)
        else:
            sb, rb, lay, error = self._layout(kind, send, recv)
            if error:
                raise ValueError(error)
            sched = self._schedule_unchecked(kind, lay)
        _execute(self.comm, self._MPI, sched, sb, rb)

    def _schedule_unchecked(self, kind: str, lay: Layout) -> NeighborSchedule:
        if not self.combined:
            return naive_schedule(self.graph, self.rank, lay)
        if kind == "alltoallv":
            raise ValueError("Neighbor_alltoallv needs the friends' counts: call it with check=True or use the "
                             "persistent form")
        m = int(lay.send_size[0]) if lay.send_size.size else 0
        return build_schedule(self.view, self.graph.destinations(self.rank), self.graph.sources(self.rank), lay,
                              kind, lambda f, q: m)

    def Neighbor_allgather(self, sendbuf: Any, recvbuf: Any, *, check: bool = True) -> None:
        """Like ``comm.Neighbor_allgather(sendbuf, recvbuf)``: block i of recvbuf from source i."""
        self._call("allgather", sendbuf, recvbuf, check)

    def Neighbor_alltoall(self, sendbuf: Any, recvbuf: Any, *, check: bool = True) -> None:
        """Like ``comm.Neighbor_alltoall``: block j of sendbuf to destination j."""
        self._call("alltoall", sendbuf, recvbuf, check)

    def Neighbor_alltoallv(self, sendbuf: Any, recvbuf: Any, *, check: bool = True) -> None:
        """Like ``comm.Neighbor_alltoallv([sbuf, counts, displs], [rbuf, counts, displs])``."""
        self._call("alltoallv", sendbuf, recvbuf, check)

    def Neighbor_allgather_init(self, sendbuf: Any, recvbuf: Any) -> "PersistentNeighbor":
        """Persistent neighbour allgather on fixed buffers (collective)."""
        return PersistentNeighbor(self, *self._prepare("allgather", sendbuf, recvbuf))

    def Neighbor_alltoall_init(self, sendbuf: Any, recvbuf: Any) -> "PersistentNeighbor":
        """Persistent neighbour alltoall on fixed buffers (collective)."""
        return PersistentNeighbor(self, *self._prepare("alltoall", sendbuf, recvbuf))

    def Neighbor_alltoallv_init(self, sendbuf: Any, recvbuf: Any) -> "PersistentNeighbor":
        """Persistent neighbour alltoallv on fixed buffers and counts (collective)."""
        return PersistentNeighbor(self, *self._prepare("alltoallv", sendbuf, recvbuf))

    def Free(self) -> None:
        """Free the duplicate communicator."""
        self.comm.Free()


def distributed_phase1(comm: Any, sources: Sequence[int] | None = None, destinations: Sequence[int] | None = None,
                       *, theta: int = 4, max_iterations: int | None = None,
                       node: Sequence[int] | None = None, cumulative: bool = False) -> tuple[RankPattern, dict]:
    """Phase 1 over ``comm``, each rank holding only its own lists (collective).

    The lists default to ``comm.Get_dist_neighbors()``.  Before any neighbour message, every
    rank learns (one ``Alltoall`` of flags) which ranks list it as a destination and compares
    that with its sources; a disagreement or ``theta < 1`` raises
    :class:`~topomap.mpi.CollectiveError` on every rank.  The result is the rank's share of the
    same T as :func:`topomap.neighborhood.combine` with the same ``theta``, ``max_iterations``,
    ``node`` and ``cumulative`` (tests/mpi/neighborhood_phase1.py); with ``cumulative`` its
    :attr:`~topomap.neighborhood.RankPattern.carried` origins too.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> view, stats = distributed_phase1(MPI.COMM_WORLD, [], [])
    >>> view.steps, stats["done_iter"]
    ([], 0)
    """
    if sources is None or destinations is None:
        sources, destinations, _ = comm.Get_dist_neighbors()
    srcs, dsts = [int(o) for o in sources], [int(q) for q in destinations]
    n = comm.size
    error = None
    if not isinstance(theta, (int, np.integer)) or theta < 1:
        error = f"theta must be an integer >= 1, got {theta!r}"
    elif any(not 0 <= x < n for x in srcs + dsts):
        error = f"a neighbour is not a rank of 0..{n - 1}"
    elif len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        error = "a neighbour is listed twice"
    agree(comm, error, "distributed phase 1")
    listed = np.zeros(n, np.int8)
    listed[dsts] = 1
    lists_me = np.zeros(n, np.int8)
    comm.Alltoall(listed, lists_me)
    mine = np.zeros(n, np.int8)
    mine[srcs] = 1
    bad = np.flatnonzero(mine != lists_me)
    agree(comm, None if not bad.size else f"rank {int(bad[0])} and this rank disagree about the edge "
          f"{int(bad[0])} -> {comm.rank}", "distributed phase 1 topology")
    dup = comm.Dup()
    try:
        return phase1_rank(dup, comm.rank, srcs, dsts, int(theta), max_iterations=int(max_iterations or 0),
                           node=node, cumulative=bool(cumulative))
    finally:
        dup.Free()


def _combine(graph: NeighborGraph, theta: int, cumulative: bool) -> Any:
    return combine(graph, theta=theta, cumulative=cumulative)


def _vspec(spec: Any, k: int, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[array, counts] or [array, counts, displs] (elements) -> (array, counts, displs)."""
    if not isinstance(spec, (list, tuple)) or len(spec) not in (2, 3):
        raise ValueError(f"{what} must be [array, counts] or [array, counts, displs]")
    arr, counts = spec[0], np.asarray(spec[1], dtype=np.int64).reshape(-1)
    if counts.size != k:
        raise ValueError(f"{what} has {counts.size} counts for {k} neighbours")
    if (counts < 0).any():
        raise ValueError(f"{what} has a negative count")
    displs = (np.asarray(spec[2], dtype=np.int64).reshape(-1) if len(spec) == 3
              else np.cumsum(counts) - counts)
    if displs.size != k:
        raise ValueError(f"{what} has {displs.size} displacements for {k} neighbours")
    return np.asarray(arr), counts, displs


def _execute(comm: Any, MPI: Any, sched: NeighborSchedule, sb: np.ndarray, rb: np.ndarray) -> None:
    """One run of a schedule with Isend/Irecv/Waitall."""
    bufs = (sb, rb, np.empty(sched.tmp_bytes, np.uint8))
    reqs = []
    for o in sched.ops:
        kind = o["op"]
        if kind == SEND:
            reqs.append(comm.Isend([bufs[o["src_buf"]][o["src_off"]:o["src_off"] + o["nbytes"]], MPI.BYTE],
                                   int(o["peer"]), int(o["tag"])))
        elif kind == RECV:
            reqs.append(comm.Irecv([bufs[o["dst_buf"]][o["dst_off"]:o["dst_off"] + o["nbytes"]], MPI.BYTE],
                                   int(o["peer"]), int(o["tag"])))
        elif kind == COPY:
            bufs[o["dst_buf"]][o["dst_off"]:o["dst_off"] + o["nbytes"]] = \
                bufs[o["src_buf"]][o["src_off"]:o["src_off"] + o["nbytes"]]
        elif kind == WAIT:
            MPI.Request.Waitall(reqs)
            reqs = []
    MPI.Request.Waitall(reqs)


class PersistentNeighbor:
    """A schedule bound to its buffers, with persistent requests: ``Start()`` runs it once
    (its segments between WAITs are started and completed in order), ``Wait()`` returns at once
    afterwards (MPI-4 call shape); ``Free()`` releases the requests."""

    def __init__(self, owner: NeighborCombiner, sb: np.ndarray, rb: np.ndarray, sched: NeighborSchedule) -> None:
        MPI = owner._MPI
        self.schedule = sched
        self._MPI = MPI
        tmp = np.empty(sched.tmp_bytes, np.uint8)
        bufs = (sb, rb, tmp)
        self._bufs = bufs
        self._segments: list[tuple[list, list]] = []  # (requests, copies) ended by a WAIT
        reqs: list = []
        copies: list = []
        for o in sched.ops:
            kind = o["op"]
            if kind == SEND:
                reqs.append(owner.comm.Send_init([bufs[o["src_buf"]][o["src_off"]:o["src_off"] + o["nbytes"]],
                                                  MPI.BYTE], int(o["peer"]), int(o["tag"])))
            elif kind == RECV:
                reqs.append(owner.comm.Recv_init([bufs[o["dst_buf"]][o["dst_off"]:o["dst_off"] + o["nbytes"]],
                                                  MPI.BYTE], int(o["peer"]), int(o["tag"])))
            elif kind == COPY:
                copies.append((bufs[o["dst_buf"]][o["dst_off"]:o["dst_off"] + o["nbytes"]],
                               bufs[o["src_buf"]][o["src_off"]:o["src_off"] + o["nbytes"]], len(reqs)))
            elif kind == WAIT:
                self._segments.append((reqs, copies))
                reqs, copies = [], []
        if reqs or copies:
            self._segments.append((reqs, copies))

    def Start(self) -> None:
        """Run the collective once on the bound buffers."""
        for reqs, copies in self._segments:
            started = 0
            for dst, src, before in copies:
                # a COPY follows the sends/receives posted before it in its segment
                if before > started:
                    self._MPI.Prequest.Startall(reqs[started:before])
                    started = before
                dst[...] = src
            if started < len(reqs):
                self._MPI.Prequest.Startall(reqs[started:])
            self._MPI.Request.Waitall(reqs)

    def Wait(self) -> None:
        """Nothing left to do: :meth:`Start` completes the collective."""

    def Free(self) -> None:
        """Free the persistent requests."""
        for reqs, _ in self._segments:
            for r in reqs:
                r.Free()
        self._segments = []

