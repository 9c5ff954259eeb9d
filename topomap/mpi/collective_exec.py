"""Run topomap's own collective schedules in an MPI job, on a reordered communicator.

:func:`run_collective` builds the schedule of :func:`topomap.collectives.build`
(with what every message carries), splits the communicator so that the
process of old rank ``old_of_new[j]`` becomes new rank ``j``, and runs the
stages with ``Isend``/``Irecv`` (tag = stage), every send of a stage posted
from what the rank held when the stage began.  The result comes back in the
caller's original rank order (notes 000 §3.7): allgather and gather by
:class:`~topomap.collectives.plans.InitComm` (default) or
:class:`~topomap.collectives.plans.EndShuffle`, the ring allgather by its
offset table (:func:`~topomap.collectives.plans.ring_offsets`); alltoall
blocks are addressed by old rank on both sides; bcast and allreduce need no
reordering of their output.

Data: ``bcast`` a numpy array at the root (any value elsewhere); ``gather``
and ``allgather`` one array per rank, the same size everywhere;
``allreduce`` one array per rank, same shape and dtype, summed (integer sums
are exact, so they equal ``comm.allreduce`` bit for bit; floating-point sums
follow the schedule's order); ``alltoall`` a list of ``size`` arrays of one
size, entry ``d`` for old rank ``d``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..collectives.build import ALGORITHMS, build
from ..collectives.plans import InitComm, as_permutation, ring_offsets
from ..collectives.simulate import reduction_kinds
from ._collective import CollectiveError, agree, mpi
from .reorder import apply_order, inverse

__all__ = ["run_collective", "ORDERS"]

#: How allgather and gather give their output back in old-rank order.
ORDERS = ("initcomm", "endshfl", "ring")


def _check(op: str, algorithm: str, order: str, size: int, data: Any, root: int, old_of_new: Any) -> str | None:
    if op not in ALGORITHMS:
        return f"op = {op!r} must be one of {', '.join(map(repr, ALGORITHMS))}"
    if algorithm not in ALGORITHMS[op]:
        return f"algorithm for {op} = {algorithm!r} must be one of {', '.join(map(repr, ALGORITHMS[op]))}"
    if order not in ORDERS or (order == "ring") != (op == "allgather" and algorithm == "ring"):
        return (f"order = {order!r}: the ring allgather uses 'ring' (its offset table), "
                f"every other algorithm 'initcomm' or 'endshfl'")
    if not (isinstance(root, (int, np.integer)) and 0 <= root < size):
        return f"root = {root!r} is not a rank in [0, {size})"
    try:
        if as_permutation(old_of_new).size != size:
            return f"old_of_new has {len(old_of_new)} entries but the communicator has {size} ranks"
    except Exception as exc:  # noqa: BLE001 - reported on every rank
        return str(exc)
    if op == "alltoall" and (not isinstance(data, (list, tuple)) or len(data) != size):
        return f"alltoall needs a list of {size} arrays, one per destination"
    return None


def _meta(op: str, data: Any) -> tuple | None:
    if op == "alltoall":
        kinds = {(b.nbytes, b.dtype.str, b.shape) for b in map(np.ascontiguousarray, data)}
        return kinds.pop() if len(kinds) == 1 else (-1, "blocks of different sizes or types", ())
    if data is None:
        return None
    arr = np.ascontiguousarray(data)
    return (arr.nbytes, arr.dtype.str, arr.shape)


def run_collective(comm: Any, op: str, data: Any, *, algorithm: str, old_of_new: Any = None,
                   order: str | None = None, root: int = 0, **build_options: Any) -> Any:
    """Run collective ``op`` by ``algorithm`` with ranks reordered by ``old_of_new``.

    Parameters
    ----------
    comm : mpi4py communicator
    op : {"bcast", "gather", "allgather", "allreduce", "alltoall"}
    data : see the module docstring
    algorithm : str
        One of ``topomap.collectives.ALGORITHMS[op]``.
    old_of_new : permutation, optional
        New rank ``j`` is played by the process of old rank ``old_of_new[j]``
        (e.g. :func:`topomap.collectives.reorder.reorder`'s result); default
        the identity.
    order : {"initcomm", "endshfl", "ring"}, optional
        The output-order plan (default ``"ring"`` for the ring allgather,
        else ``"initcomm"``).
    root : int
        Old rank of the root (bcast, gather).
    **build_options
        ``ppn``, ``intra``, ``leaders`` of the hierarchical allgather.

    Returns
    -------
    ndarray (bcast, allreduce), list of ndarray in old-rank order (allgather;
    gather at the root, None elsewhere; alltoall, by source).

    Raises
    ------
    CollectiveError
        On every rank, when any rank's arguments are wrong or block sizes differ.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> import numpy as np
    >>> from topomap.mpi.collective_exec import run_collective
    >>> [b.tolist() for b in run_collective(MPI.COMM_SELF, "allgather", np.arange(3), algorithm="bruck")]
    [[0, 1, 2]]
    """
    MPI = mpi()
    size = comm.size
    old_of_new = np.arange(size) if old_of_new is None else old_of_new
    order = order or ("ring" if (op, algorithm) == ("allgather", "ring") else "initcomm")
    error = _check(op, algorithm, order, size, data, root, old_of_new)
    agree(comm, error, f"run_collective({op!r}, {algorithm!r})")
    metas = comm.allgather(_meta(op, data))
    want = metas[root] if op == "bcast" else metas[0]
    bad = [r for r, mt in enumerate(metas) if (op != "bcast" or r == root) and (mt is None or mt[:2] != want[:2]
                                                                               or want[0] < 0)]
    if bad:
        raise CollectiveError(f"run_collective({op!r}): rank {bad[0]}'s data {metas[bad[0]]} differs from "
                              f"{want} (every rank needs blocks of one size and type)", rank=bad[0])
    old = as_permutation(old_of_new)
    new_of_old = inverse(old)
    newcomm = apply_order(comm, new_of_old)
    try:
        return _execute(MPI, newcomm, op, algorithm, order, data, want, old, int(new_of_old[root]), build_options)
    finally:
        newcomm.Free()


def _execute(MPI: Any, comm: Any, op: str, algorithm: str, order: str, data: Any, meta: tuple,
             old: np.ndarray, root: int, options: dict) -> Any:
    n, me = comm.size, comm.rank
    sched = build(op, algorithm, n, root=root if op in ("bcast", "gather") else 0, items=True, **options)
    m = sched.messages
    nbytes = meta[0]
    state: dict[int, np.ndarray] = {}
    dtype = np.dtype(meta[1])
    if op == "allreduce":
        pieces = round(1 / m["item_unit"])
        chunks = np.array_split(np.ascontiguousarray(data).ravel(), pieces)
        state = {c: chunks[c].copy() for c in range(pieces)}
        adds = reduction_kinds(sched)
    elif op == "alltoall":
        state = {me * n + d: np.frombuffer(np.ascontiguousarray(data[old[d]]).tobytes(), np.uint8) for d in range(n)}
    elif op == "bcast":
        if me == root:
            state[0] = np.ascontiguousarray(data).ravel().view(np.uint8).copy()
    else:
        mine = np.ascontiguousarray(data).ravel().view(np.uint8).copy()
        if order == "initcomm":  # the process of new rank j takes old rank j's input
            plan = InitComm.of(old)
            buf = np.empty_like(mine)
            MPI.Request.Waitall([comm.Isend(mine, dest=int(plan.send_to[me]), tag=len(sched)),
                                 comm.Irecv(buf, source=int(plan.recv_from[me]), tag=len(sched))])
            mine = buf
        state[me] = mine
    offsets = ring_offsets(old) if order == "ring" else None
    piece_bytes = {c: v.nbytes for c, v in state.items()} if op == "allreduce" else None

    def item_bytes(item: int) -> int:
        return piece_bytes[item] if piece_bytes is not None else nbytes

    ring_out: dict[int, np.ndarray] = {}
    ptr, items, stage = m["item_ptr"], m["items"], m["stage"]
    for s in range(len(sched)):
        rows = np.flatnonzero(stage == s)
        reqs, recvs, sent = [], [], []
        for k in rows[m["src"][rows] == me]:
            its = items[ptr[k]:ptr[k + 1]].tolist()
            payload = np.concatenate([state[i].view(np.uint8) for i in its])
            reqs.append(comm.Isend(payload, dest=int(m["dst"][k]), tag=s))
            sent.extend(its)
        for k in rows[m["dst"][rows] == me]:
            its = items[ptr[k]:ptr[k + 1]].tolist()
            buf = np.empty(sum(item_bytes(i) for i in its), dtype=np.uint8)
            reqs.append(comm.Irecv(buf, source=int(m["src"][k]), tag=s))
            recvs.append((k, its, buf))
        MPI.Request.Waitall(reqs)
        if op == "alltoall":
            for i in sent:
                del state[i]
        for k, its, buf in recvs:
            at = 0
            for i in its:
                piece = buf[at:at + item_bytes(i)]
                at += item_bytes(i)
                if op == "allreduce":
                    got = piece.view(state[i].dtype)
                    state[i] = state[i] + got if adds[k] else got.copy()
                else:
                    state[i] = piece
                    if offsets is not None:
                        ring_out[int(offsets[s, me])] = piece
    return _result(op, order, state, old, me, root, n, meta, dtype, ring_out)


def _result(op: str, order: str, state: dict, old: np.ndarray, me: int, root: int, n: int, meta: tuple,
            dtype: np.dtype, ring_out: dict) -> Any:
    if op == "allreduce":
        return np.concatenate([state[c] for c in range(len(state))]).reshape(meta[2])
    if op == "bcast":
        return state[0].view(dtype).reshape(meta[2])
    if op == "alltoall":
        out: list = [None] * n
        for o in range(n):
            out[old[o]] = state[o * n + me].view(dtype).reshape(meta[2])
        return out
    if op == "gather" and me != root:
        return None
    if order == "ring":
        ring_out[int(old[me])] = state[me]
        blocks = [ring_out[i] for i in range(n)]
    elif order == "initcomm":
        blocks = [state[j] for j in range(n)]        # item j holds old rank j's input
    else:
        blocks = [None] * n
        for j in range(n):
            blocks[old[j]] = state[j]
    return [b.view(dtype).reshape(meta[2]) for b in blocks]
