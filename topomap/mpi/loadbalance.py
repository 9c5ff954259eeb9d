"""Balance identical, independent tasks over an MPI job with Kumar's alias method (collective).

Kumar (PhD thesis 2012, §5.2; notes 001 §4.2): every rank learns every
count (``MPI_Allgather``), computes the whole flow itself (O(P), the same on
every rank, so nothing else is exchanged) and keeps its own part; the tasks
then move in **one round** of ``Isend``/``Irecv``/``Waitall``, since no rank
ever sends more than it holds at the start.

Tasks are the rows (axis 0) of a NumPy array by default: a rank sends its
last rows and appends what it receives, so the dtype and the shape of a row
must agree on every rank.  Other containers pass ``pack``/``unpack``; their
messages travel pickled, and a receiver learns a message's size by a matched
probe (``Mprobe``) before its ``Irecv``, because only the sender knows the
pickled size.
"""

from __future__ import annotations

import pickle
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..loadbalance import Flow, LoadBalanceError, alias_flow, unit_flow
from ._collective import CollectiveError, mpi

__all__ = ["balance", "BalanceInfo", "METHODS"]

#: Flow computations :func:`balance` offers.
METHODS = {"alias": alias_flow, "unit": unit_flow}
_TAG = 7315


@dataclass(frozen=True, eq=False)
class BalanceInfo:
    """What :func:`balance` did, the same flow on every rank.

    Attributes
    ----------
    flow : Flow
        The whole job's flow (every rank computed it).
    sent, received : list of (rank, count)
        This rank's messages.
    seconds : dict
        This rank's ``allgather``, ``flow`` and ``migrate`` times (Kumar's
        per-component breakdown).
    """

    flow: Flow
    sent: list
    received: list
    seconds: dict


def _numpy_pack(tasks: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    return tasks[:tasks.shape[0] - n], np.ascontiguousarray(tasks[tasks.shape[0] - n:])


def balance(comm: Any, tasks: Any, *, method: str = "alias", order: Any = None, refill: str = "deferred",
            pack: Callable[[Any, int], tuple[Any, Any]] | None = None,
            unpack: Callable[[Any, list], Any] | None = None, count: int | None = None) -> tuple[Any, BalanceInfo]:
    """Move tasks so that no rank holds more than ``ceil(T / P)`` (collective).

    Parameters
    ----------
    comm : mpi4py communicator
    tasks : numpy.ndarray or any container
        This rank's tasks: the rows of an array (default), or anything
        ``pack``/``unpack`` understand.
    method : {"alias", "unit"}
        Kumar's alias flow (each rank receives at most one message) or the
        QWalk-like baseline (fewest tasks moved).
    order : array_like of int, optional
        Process order of the flow (the alias partition's, or the baseline's
        two pointers), e.g. :func:`topomap.loadbalance.sfc_order` for the SFC
        variant.
    refill : {"deferred", "next"}
        The alias flow's refill rule (:func:`topomap.loadbalance.alias_flow`).
    pack : callable, optional
        ``pack(tasks, n) -> (kept, outgoing)``: take ``n`` tasks out; called
        once per message this rank sends, in receiver order.  ``outgoing``
        must pickle.
    unpack : callable, optional
        ``unpack(kept, incoming) -> tasks``: add the received payloads
        (a list, in sender order).  Required with ``pack``.
    count : int, optional
        This rank's number of tasks; default ``len(tasks)``.

    Returns
    -------
    (tasks, BalanceInfo)

    Raises
    ------
    CollectiveError
        On every rank, naming the first rank at fault, when a count is bad
        (negative, not an integer) or the arrays disagree in dtype or row shape.

    Examples
    --------
    >>> import numpy as np
    >>> from mpi4py import MPI
    >>> from topomap.mpi import balance
    >>> mine, info = balance(MPI.COMM_SELF, np.arange(5))
    >>> mine.tolist(), info.sent
    ([0, 1, 2, 3, 4], [])
    """
    MPI = mpi()
    if method not in METHODS:
        raise CollectiveError(f"balance: unknown method {method!r}; known: {', '.join(METHODS)}")
    if (pack is None) != (unpack is None):
        raise CollectiveError("balance: pack and unpack go together (give both or neither)")
    error, layout = None, None
    try:
        if count is None:
            count = len(tasks)
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise ValueError(f"the task count must be a non-negative integer, got {count!r}")
        if pack is None:
            if not isinstance(tasks, np.ndarray) or tasks.ndim < 1:
                raise ValueError(f"tasks must be a NumPy array of rows (or give pack/unpack), got "
                                 f"{type(tasks).__name__}")
            if tasks.dtype.hasobject:
                raise ValueError("an array of Python objects cannot travel as a buffer; give pack/unpack")
            if count != tasks.shape[0]:
                raise ValueError(f"count = {count} but the array has {tasks.shape[0]} rows")
            layout = (tasks.dtype.str, tasks.shape[1:])
    except (TypeError, ValueError) as exc:
        error = str(exc)
    start = time.perf_counter()
    gathered = comm.allgather((error, int(count) if error is None else 0, layout))
    gathered_at = time.perf_counter()
    bad = [r for r, (e, _, _) in enumerate(gathered) if e is not None]
    if bad:
        raise CollectiveError(f"balance: rank {bad[0]}: {gathered[bad[0]][0]}", rank=bad[0])
    layouts = {lay for _, _, lay in gathered}
    if pack is None and len(layouts) > 1:
        first = next(r for r, (_, _, lay) in enumerate(gathered) if lay != gathered[0][2])
        raise CollectiveError(f"balance: rank {first} holds rows of dtype {gathered[first][2][0]} shape "
                              f"{gathered[first][2][1]}, rank 0 of {gathered[0][2][0]} shape {gathered[0][2][1]}",
                              rank=first)
    try:
        extra = {"refill": refill} if method == "alias" else {}
        flow = METHODS[method]([c for _, c, _ in gathered], order=order, **extra)
    except LoadBalanceError as exc:
        raise CollectiveError(f"balance: {exc}") from None
    flowed_at = time.perf_counter()
    me = comm.rank
    dst, out_n = flow.sends(me)
    src, in_n = flow.receives(me)
    kept, requests, outgoing = tasks, [], []
    for d, n in zip(dst.tolist(), out_n.tolist()):
        if pack is None:
            kept, chunk = _numpy_pack(kept, n)
            outgoing.append(chunk)
        else:
            kept, payload = pack(kept, n)
            chunk = np.frombuffer(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL), dtype=np.uint8)
            outgoing.append(chunk)
        requests.append(comm.Isend(chunk, dest=d, tag=_TAG))
    incoming = []
    for s, n in zip(src.tolist(), in_n.tolist()):
        if pack is None:
            buf = np.empty((n,) + tasks.shape[1:], dtype=tasks.dtype)
            requests.append(comm.Irecv(buf, source=s, tag=_TAG))
        else:
            status = MPI.Status()
            message = comm.Mprobe(source=s, tag=_TAG, status=status)
            buf = np.empty(status.Get_count(MPI.BYTE), dtype=np.uint8)
            requests.append(message.Irecv(buf))
        incoming.append(buf)
    MPI.Request.Waitall(requests)
    if pack is None:
        result = np.concatenate([kept, *incoming]) if incoming else kept
    else:
        result = unpack(kept, [pickle.loads(b.tobytes()) for b in incoming])
    done = time.perf_counter()
    info = BalanceInfo(flow, list(zip(dst.tolist(), out_n.tolist())), list(zip(src.tolist(), in_n.tolist())),
                       {"allgather": gathered_at - start, "flow": flowed_at - gathered_at, "migrate": done - flowed_at})
    return result, info
