"""Phase 2 of message combining (Alg. 3 of Mirsadeghi et al. 2017, note 002 s3): one rank's
schedule of SEND / RECV / COPY / WAIT operations with byte offsets, for neighbour allgather,
alltoall and alltoallv, and the naive schedule (one send and one receive per neighbour).

Buffers are named by number: :data:`SENDBUF`, :data:`RECVBUF` and :data:`TMP` (scratch of
``tmp_bytes``).  A combined message carries the blocks of its origins in ascending rank
order (two, or with cumulative combining any number; a friend exchange then carries every
block handed over, allgather blocks once per origin, alltoall blocks by destination, then
origin).  Choices beyond the paper: direct (final) messages are received straight into the
receive buffer, not through scratch; the combined message of an allgather is built once and
sent to every onloaded neighbour; a rank's schedule ends with one WAIT, which completes its
sends.  Tags: :data:`TAG_DATA` for edge messages, :data:`TAG_FRIEND` for friend exchanges
(each ordered pair of ranks exchanges at most one message of each, so tags need no step).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .graph import NeighborGraph, NeighborhoodError
from .pattern import FINAL, CombiningPattern, RankPattern

__all__ = ["SEND", "RECV", "COPY", "WAIT", "SENDBUF", "RECVBUF", "TMP", "TAG_DATA", "TAG_FRIEND", "OP_DTYPE",
           "Layout", "Schedule", "layouts", "build_schedule", "naive_schedule", "build_all"]

SEND, RECV, COPY, WAIT = 0, 1, 2, 3
SENDBUF, RECVBUF, TMP = 0, 1, 2
TAG_DATA, TAG_FRIEND = 0, 1
OP_NAMES = ("SEND", "RECV", "COPY", "WAIT")
#: One operation: SEND reads (src_buf, src_off, nbytes) to peer; RECV writes (dst_buf, dst_off,
#: nbytes) from peer; COPY moves nbytes from src to dst; WAIT completes every pending SEND/RECV.
OP_DTYPE = np.dtype([("op", np.int8), ("peer", np.int32), ("tag", np.int32), ("src_buf", np.int8),
                     ("src_off", np.int64), ("dst_buf", np.int8), ("dst_off", np.int64), ("nbytes", np.int64)])


@dataclass(frozen=True)
class Layout:
    """Where one rank's blocks are: per destination (in ``destinations(p)`` order) the send
    offset and size, per source (in ``sources(p)`` order) the receive offset and size, bytes."""

    send_off: np.ndarray
    send_size: np.ndarray
    recv_off: np.ndarray
    recv_size: np.ndarray

    @property
    def send_bytes(self) -> int:
        """The smallest send buffer that holds every block."""
        return int((self.send_off + self.send_size).max(initial=0))

    @property
    def recv_bytes(self) -> int:
        """The smallest receive buffer that holds every block."""
        return int((self.recv_off + self.recv_size).max(initial=0))


def layouts(graph: NeighborGraph, kind: str, nbytes: int | None = None,
            sendcounts: Sequence[Sequence[int]] | None = None) -> list[Layout]:
    """The layout of every rank for ``kind`` in {"allgather", "alltoall", "alltoallv"}.

    ``nbytes``: the block size (allgather, alltoall); ``sendcounts[p]``: p's block sizes in
    bytes per destination (alltoallv; blocks packed in order, receive sizes follow).

    Examples
    --------
    >>> from topomap.neighborhood import NeighborGraph
    >>> g = NeighborGraph.from_lists([[1, 2], [0], [0, 1]])
    >>> l = layouts(g, "alltoallv", sendcounts=[[3, 1], [2], [4, 5]])
    >>> l[0].send_off.tolist(), l[0].recv_size.tolist(), l[1].recv_off.tolist()
    ([0, 3], [2, 4], [0, 3])
    """
    n = graph.n
    if kind in ("allgather", "alltoall"):
        if nbytes is None or nbytes < 0:
            raise NeighborhoodError(f"{kind} needs a block size nbytes >= 0, got {nbytes}")
        per_edge = {(p, int(q)): nbytes for p in range(n) for q in graph.destinations(p)}
    elif kind == "alltoallv":
        if sendcounts is None or len(sendcounts) != n:
            raise NeighborhoodError("alltoallv needs sendcounts with one list per rank")
        per_edge = {}
        for p in range(n):
            dests = graph.destinations(p)
            if len(sendcounts[p]) != dests.size:
                raise NeighborhoodError(f"rank {p} has {dests.size} destinations but {len(sendcounts[p])} "
                                        "send counts")
            for q, c in zip(dests, sendcounts[p]):
                if c < 0:
                    raise NeighborhoodError(f"rank {p}'s send count to {int(q)} is negative ({c})")
                per_edge[(p, int(q))] = int(c)
    else:
        raise NeighborhoodError(f"kind must be allgather, alltoall or alltoallv, got {kind!r}")
    out = []
    for p in range(n):
        ssize = np.array([per_edge[(p, int(q))] for q in graph.destinations(p)], dtype=np.int64)
        soff = np.zeros_like(ssize) if kind == "allgather" else np.cumsum(ssize) - ssize
        rsize = np.array([per_edge[(int(o), p)] for o in graph.sources(p)], dtype=np.int64)
        roff = np.cumsum(rsize) - rsize
        out.append(Layout(soff.astype(np.int64), ssize, roff, rsize))
    return out


@dataclass(frozen=True, eq=False)
class Schedule:
    """One rank's operations (:data:`OP_DTYPE` records) and the scratch they need.

    Examples
    --------
    >>> from topomap.neighborhood import NeighborGraph
    >>> g = NeighborGraph.from_lists([[1], [0]])
    >>> s = naive_schedule(g, 0, layouts(g, "allgather", 8)[0])
    >>> s.describe()
    ['SEND peer=1 tag=0 0[0:8]', 'RECV peer=1 tag=0 1[0:8]', 'WAIT']
    """

    rank: int
    ops: np.ndarray
    tmp_bytes: int

    def describe(self) -> list[str]:
        """One line per operation, for reading and for tests."""
        lines = []
        for o in self.ops:
            name = OP_NAMES[o["op"]]
            if o["op"] == SEND:
                lines.append(f"SEND peer={o['peer']} tag={o['tag']} {o['src_buf']}[{o['src_off']}:"
                             f"{o['src_off'] + o['nbytes']}]")
            elif o["op"] == RECV:
                lines.append(f"RECV peer={o['peer']} tag={o['tag']} {o['dst_buf']}[{o['dst_off']}:"
                             f"{o['dst_off'] + o['nbytes']}]")
            elif o["op"] == COPY:
                lines.append(f"COPY {o['src_buf']}[{o['src_off']}:{o['src_off'] + o['nbytes']}] -> "
                             f"{o['dst_buf']}[{o['dst_off']}:{o['dst_off'] + o['nbytes']}]")
            else:
                lines.append(name)
        return lines

    def messages(self) -> tuple[int, int, int, int]:
        """(messages sent, bytes sent, messages received, bytes received)."""
        s, r = self.ops[self.ops["op"] == SEND], self.ops[self.ops["op"] == RECV]
        return s.size, int(s["nbytes"].sum()), r.size, int(r["nbytes"].sum())

    def to_dict(self) -> dict:
        """JSON-ready form: rank, tmp_bytes and the ops as a list of field lists."""
        return {"rank": self.rank, "tmp_bytes": self.tmp_bytes, "fields": list(OP_DTYPE.names),
                "ops": [[int(v) for v in o] for o in self.ops]}

    @classmethod
    def from_dict(cls, d: dict) -> "Schedule":
        """Inverse of :meth:`to_dict`.

        Examples
        --------
        >>> from topomap.neighborhood import NeighborGraph
        >>> g = NeighborGraph.from_lists([[1], [0]])
        >>> s = naive_schedule(g, 1, layouts(g, "allgather", 4)[1])
        >>> Schedule.from_dict(json.loads(json.dumps(s.to_dict()))).describe() == s.describe()
        True
        """
        if d.get("fields", list(OP_DTYPE.names)) != list(OP_DTYPE.names):
            raise NeighborhoodError(f"schedule fields {d.get('fields')} are not {list(OP_DTYPE.names)}")
        ops = np.array([tuple(o) for o in d["ops"]], dtype=OP_DTYPE)
        return cls(int(d["rank"]), ops, int(d["tmp_bytes"]))


class _Ops:
    """Accumulates operations and scratch space."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []
        self.tmp = 0

    def scratch(self, nbytes: int) -> int:
        off, self.tmp = self.tmp, self.tmp + nbytes
        return off

    def send(self, peer: int, tag: int, buf: int, off: int, nbytes: int) -> None:
        self.rows.append((SEND, peer, tag, buf, off, -1, 0, nbytes))

    def recv(self, peer: int, tag: int, buf: int, off: int, nbytes: int) -> None:
        self.rows.append((RECV, peer, tag, -1, 0, buf, off, nbytes))

    def copy(self, sbuf: int, soff: int, dbuf: int, doff: int, nbytes: int) -> None:
        if nbytes:
            self.rows.append((COPY, -1, -1, sbuf, soff, dbuf, doff, nbytes))

    def wait(self) -> None:
        if self.rows and self.rows[-1][0] != WAIT:
            self.rows.append((WAIT, -1, -1, -1, 0, -1, 0, 0))

    def done(self, rank: int) -> Schedule:
        self.wait()
        return Schedule(rank, np.array(self.rows, dtype=OP_DTYPE), self.tmp)


def naive_schedule(graph: NeighborGraph, p: int, layout: Layout) -> Schedule:
    """What MPI libraries do: a send to every destination and a receive from every source."""
    ops = _Ops()
    for i, q in enumerate(graph.destinations(p)):
        ops.send(int(q), TAG_DATA, SENDBUF, int(layout.send_off[i]), int(layout.send_size[i]))
    for i, o in enumerate(graph.sources(p)):
        ops.recv(int(o), TAG_DATA, RECVBUF, int(layout.recv_off[i]), int(layout.recv_size[i]))
    return ops.done(p)


def build_schedule(view: RankPattern, destinations: Sequence[int], sources: Sequence[int], layout: Layout,
                   kind: str, block_size: Callable[[int, int], int]) -> Schedule:
    """Alg. 3 for one rank: its combined schedule for ``kind`` from its share of T.

    ``destinations``/``sources``: the rank's neighbour lists (block order of ``layout``);
    ``block_size(o, q)``: the size of origin o's block for destination q, for the blocks a
    friend hands over (the friend's own without cumulative combining; what the rank must know
    to split a friend exchange; in MPI the friends swap these counts once).

    Examples
    --------
    >>> from topomap.neighborhood import NeighborGraph, combine
    >>> g = NeighborGraph.from_lists([[2, 3, 4, 5], [2, 3, 4, 5], [], [], [], []])
    >>> v = combine(g).rank_view(0)
    >>> s = build_schedule(v, g.destinations(0), g.sources(0), layouts(g, "allgather", 4)[0], "allgather",
    ...                    lambda f, q: 4)
    >>> s.describe()[:4]
    ['SEND peer=1 tag=1 0[0:4]', 'RECV peer=1 tag=1 2[4:8]', 'WAIT', 'COPY 0[0:4] -> 2[0:4]']
    """
    if kind not in ("allgather", "alltoall", "alltoallv"):
        raise NeighborhoodError(f"kind must be allgather, alltoall or alltoallv, got {kind!r}")
    dpos = {int(q): i for i, q in enumerate(destinations)}
    spos = {int(o): i for i, o in enumerate(sources)}
    recvs = view.receives
    times = sorted({s[0] for s in view.steps} | {t for t, _, _ in recvs if t != FINAL})
    ops = _Ops()
    store = _own_blocks(view.rank, destinations, layout, kind)
    for t in times:
        for i, (ts, f, on, off) in enumerate(view.steps):
            if ts != t:
                continue
            if view.carried is None:
                _combine_step(ops, view.rank, f, on, off, dpos, layout, kind, block_size)
            else:
                _cumulative_step(ops, f, view.carried[i], store, kind, block_size)
        _receive_block(ops, [r for r in recvs if r[0] == t], spos, layout)
    for q in view.final:
        i = dpos[q]
        ops.send(q, TAG_DATA, SENDBUF, int(layout.send_off[i]), int(layout.send_size[i]))
    for _, o, _ in (r for r in recvs if r[0] == FINAL):
        i = spos[o]
        ops.recv(o, TAG_DATA, RECVBUF, int(layout.recv_off[i]), int(layout.recv_size[i]))
    return ops.done(view.rank)


def _combine_step(ops: _Ops, p: int, f: int, on: list[int], off: list[int], dpos: dict[int, int], layout: Layout,
                  kind: str, block_size: Callable[[int, int], int]) -> None:
    mine_first = p < f
    if kind == "allgather":
        m = int(layout.send_size[0]) if layout.send_size.size else 0
        comb = ops.scratch(2 * m)
        own, theirs = (comb, comb + m) if mine_first else (comb + m, comb)
        ops.send(f, TAG_FRIEND, SENDBUF, 0, m)
        ops.recv(f, TAG_FRIEND, TMP, theirs, m)
        ops.wait()
        ops.copy(SENDBUF, 0, TMP, own, m)
        for q in on:
            ops.send(q, TAG_DATA, TMP, comb, 2 * m)
        return
    # alltoall(v): pack my blocks for CN_off, receive f's blocks for CN_on, then one
    # combined message per onloaded neighbour
    out_sizes = [int(layout.send_size[dpos[q]]) for q in off]
    pack = ops.scratch(sum(out_sizes))
    pos = pack
    for q, size in zip(off, out_sizes):
        ops.copy(SENDBUF, int(layout.send_off[dpos[q]]), TMP, pos, size)
        pos += size
    in_sizes = [int(block_size(f, q)) for q in on]
    got = ops.scratch(sum(in_sizes))
    ops.send(f, TAG_FRIEND, TMP, pack, sum(out_sizes))
    ops.recv(f, TAG_FRIEND, TMP, got, sum(in_sizes))
    ops.wait()
    pos = got
    for q, theirs in zip(on, in_sizes):
        i = dpos[q]
        mine = int(layout.send_size[i])
        comb = ops.scratch(mine + theirs)
        own_at, their_at = (comb, comb + mine) if mine_first else (comb + theirs, comb)
        ops.copy(SENDBUF, int(layout.send_off[i]), TMP, own_at, mine)
        ops.copy(TMP, pos, TMP, their_at, theirs)
        pos += theirs
        ops.send(q, TAG_DATA, TMP, comb, mine + theirs)


def _own_blocks(p: int, destinations: Sequence[int], layout: Layout, kind: str) -> dict:
    """Where the rank holds each block, (buffer, offset, bytes), by origin (allgather) or by
    (origin, destination) (alltoall, alltoallv): at first its own."""
    if kind == "allgather":
        return {p: (SENDBUF, 0, int(layout.send_size[0]) if layout.send_size.size else 0)}
    return {(p, int(q)): (SENDBUF, int(layout.send_off[i]), int(layout.send_size[i]))
            for i, q in enumerate(destinations)}


def _block_keys(carried: list, kind: str) -> list:
    """The blocks of (destination, origins) entries: one per origin for allgather (all
    destinations get the same block), else one per (origin, destination)."""
    if kind == "allgather":
        return sorted({o for _, origins in carried for o in origins})
    return [(o, q) for q, origins in carried for o in origins]


def _cumulative_step(ops: _Ops, f: int, carried: tuple, store: dict, kind: str,
                     block_size: Callable[[int, int], int]) -> None:
    """A step of cumulative combining: hand the friend the blocks it takes on, take its blocks
    (kept in ``store``, as they may be handed on or combined again), then send the messages
    whose origins are complete."""
    handed, taken, sent = carried
    out = [store[k] for k in _block_keys(handed, kind)]
    if len(out) == 1:
        ops.send(f, TAG_FRIEND, out[0][0], out[0][1], out[0][2])
    else:
        ops.send(f, TAG_FRIEND, TMP, _pack(ops, out), sum(b[2] for b in out))
    keys = _block_keys(taken, kind)
    if kind == "allgather":
        dest = {o: q for q, origins in taken for o in origins}
        sizes = [int(block_size(o, dest[o])) for o in keys]
    else:
        sizes = [int(block_size(o, q)) for o, q in keys]
    at = ops.scratch(sum(sizes))
    ops.recv(f, TAG_FRIEND, TMP, at, sum(sizes))
    ops.wait()
    for k, nbytes in zip(keys, sizes):
        store[k] = (TMP, at, nbytes)
        at += nbytes
    built: dict[tuple[int, ...], tuple[int, int]] = {}
    for q, origins in sent:
        blocks = [store[o if kind == "allgather" else (o, q)] for o in origins]
        # an allgather message depends on its origins only: build it once per origin set
        if kind != "allgather" or origins not in built:
            built[origins] = (_pack(ops, blocks), sum(b[2] for b in blocks))
        ops.send(q, TAG_DATA, TMP, *built[origins])


def _pack(ops: _Ops, blocks: list[tuple[int, int, int]]) -> int:
    """Copy blocks one after another into fresh scratch; its offset."""
    start = pos = ops.scratch(sum(b[2] for b in blocks))
    for buf, off, nbytes in blocks:
        ops.copy(buf, off, TMP, pos, nbytes)
        pos += nbytes
    return start


def _receive_block(ops: _Ops, recvs: list, spos: dict[int, int], layout: Layout) -> None:
    if not recvs:
        return
    placed = []
    for _, sender, origins in recvs:
        sizes = [int(layout.recv_size[spos[o]]) for o in origins]
        at = ops.scratch(sum(sizes))
        ops.recv(sender, TAG_DATA, TMP, at, sum(sizes))
        placed.append((at, origins, sizes))
    ops.wait()
    for at, origins, sizes in placed:
        for o, size in zip(origins, sizes):
            ops.copy(TMP, at, RECVBUF, int(layout.recv_off[spos[o]]), size)
            at += size


def build_all(pattern: CombiningPattern | None, graph: NeighborGraph, kind: str, lay: list[Layout]) -> list[Schedule]:
    """Schedules of every rank (naive when ``pattern`` is None), offline: all layouts known.

    Examples
    --------
    >>> from topomap.neighborhood import moore_graph, combine
    >>> g = moore_graph((5, 5), 1)
    >>> s = build_all(combine(g), g, "allgather", layouts(g, "allgather", 8))
    >>> sum(x.messages()[0] for x in s) < 8 * 25
    True
    """
    if pattern is None:
        return [naive_schedule(graph, p, lay[p]) for p in range(graph.n)]
    size = {}
    for p in range(graph.n):
        for i, q in enumerate(graph.destinations(p)):
            size[(p, int(q))] = int(lay[p].send_size[i])
    return [build_schedule(pattern.rank_view(p), graph.destinations(p), graph.sources(p), lay[p], kind,
                           lambda f, q: size[(f, q)]) for p in range(graph.n)]
