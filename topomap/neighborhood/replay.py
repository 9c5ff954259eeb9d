"""Run the schedules of all ranks in one process, over simulated point-to-point channels, to
check them: every receive buffer must equal what MPI's neighbour collective delivers, and no
rank may wait forever.

A SEND deposits its bytes in the FIFO channel (source, destination, tag) at once (eager);
a RECV is matched in posting order; a WAIT blocks until every posted RECV of the rank has
matched.  Ranks run round-robin until all finish; a full pass without progress is a deadlock.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .graph import NeighborGraph, NeighborhoodError
from .schedule import COPY, RECV, RECVBUF, SEND, WAIT, Layout, Schedule

__all__ = ["replay", "expected_recv", "random_sendbufs"]


def replay(schedules: list[Schedule], sendbufs: list[np.ndarray], recv_bytes: list[int]) -> list[np.ndarray]:
    """Execute ``schedules`` (one per rank) and return every rank's receive buffer (uint8).

    Examples
    --------
    >>> from topomap.neighborhood import NeighborGraph
    >>> from topomap.neighborhood.schedule import layouts, build_all
    >>> g = NeighborGraph.from_lists([[1], [0]])
    >>> s = build_all(None, g, "allgather", layouts(g, "allgather", 2))
    >>> [b.tolist() for b in replay(s, [np.array([1, 2], np.uint8), np.array([3, 4], np.uint8)], [2, 2])]
    [[3, 4], [1, 2]]
    """
    n = len(schedules)
    bufs = [[np.asarray(sendbufs[p], dtype=np.uint8), np.zeros(recv_bytes[p], np.uint8),
             np.zeros(schedules[p].tmp_bytes, np.uint8)] for p in range(n)]
    chan: dict[tuple[int, int, int], deque] = {}
    pc = [0] * n
    pending: list[list] = [[] for _ in range(n)]

    def match(p: int) -> None:
        still = []
        for op in pending[p]:
            q = chan.get((int(op["peer"]), p, int(op["tag"])))
            if q:
                data = q.popleft()
                if data.size != op["nbytes"]:
                    raise NeighborhoodError(f"rank {p} expects {op['nbytes']} bytes from {op['peer']} (tag "
                                            f"{op['tag']}) but {data.size} arrive")
                bufs[p][op["dst_buf"]][op["dst_off"]:op["dst_off"] + op["nbytes"]] = data
            else:
                still.append(op)
        pending[p] = still

    while any(pc[p] < len(schedules[p].ops) for p in range(n)):
        progress = False
        for p in range(n):
            ops = schedules[p].ops
            while pc[p] < len(ops):
                op = ops[pc[p]]
                kind = op["op"]
                if kind == SEND:
                    data = bufs[p][op["src_buf"]][op["src_off"]:op["src_off"] + op["nbytes"]].copy()
                    chan.setdefault((p, int(op["peer"]), int(op["tag"])), deque()).append(data)
                elif kind == RECV:
                    pending[p].append(op)
                elif kind == COPY:
                    bufs[p][op["dst_buf"]][op["dst_off"]:op["dst_off"] + op["nbytes"]] = \
                        bufs[p][op["src_buf"]][op["src_off"]:op["src_off"] + op["nbytes"]]
                elif kind == WAIT:
                    match(p)
                    if pending[p]:
                        break
                pc[p] += 1
                progress = True
        if not progress:
            stuck = [p for p in range(n) if pc[p] < len(schedules[p].ops)]
            raise NeighborhoodError(f"the schedules deadlock: ranks {stuck[:8]} wait for messages never sent")
    left = [k for k, q in chan.items() if q]
    if left:
        raise NeighborhoodError(f"message {left[0][0]} -> {left[0][1]} (tag {left[0][2]}) is never received")
    return [b[RECVBUF] for b in bufs]


def random_sendbufs(lay: list[Layout], seed: int = 0) -> list[np.ndarray]:
    """Random send buffers of the right sizes (bytes)."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, size=l.send_bytes, dtype=np.uint8) for l in lay]


def expected_recv(graph: NeighborGraph, lay: list[Layout], sendbufs: list[np.ndarray]) -> list[np.ndarray]:
    """What MPI delivers: slot i of rank q holds origin ``sources(q)[i]``'s block for q."""
    out = []
    for q in range(graph.n):
        buf = np.zeros(lay[q].recv_bytes, np.uint8)
        for i, o in enumerate(graph.sources(q)):
            j = int(np.flatnonzero(graph.destinations(int(o)) == q)[0])
            src = sendbufs[int(o)][lay[o].send_off[j]:lay[o].send_off[j] + lay[o].send_size[j]]
            buf[lay[q].recv_off[i]:lay[q].recv_off[i] + lay[q].recv_size[i]] = src
        out.append(buf)
    return out

