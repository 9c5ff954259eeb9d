"""Kumar's alias-method load balancing (PhD thesis 2012, ch. 5; notes 001 §4.2).

P processes hold T identical, independent tasks; afterwards none holds more
than ``k = ceil(T / P)``.  Algorithm 1 (csrc/core/lb_alias.c) sorts the
unbalanced processes into deficit ones then excess ones (a stable partition
around k, O(P)) and lets the first excess process fill the deficits in turn;
once it falls below k it is the next deficit to fill.  Hence every process
receives from **at most one** other, there are at most P - 1 messages, and
no process sends more than it holds at the start, so the migration is one
round of sends (Table 5.4.1 gives the ratios to the optimum: 1 for the
receive metrics, 2 for the message count, unbounded for the send metrics).

When P does not divide T, ``kP - T`` phantom tasks, one per process, make
the counts divisible; a process ships its phantom in its first message
(which then carries one task less) and keeps none, so every process ends with
``k - 2 .. k`` real tasks.  The thesis leaves open which processes get the
phantoms; here (in the order the flow visits processes) those with ``k - 1``
tasks first (the phantom balances them), then the other deficit processes,
then, only if fewer processes than phantoms are short of k, the rest.

The SFC variant (:func:`sfc_flow`) visits processes in the Hilbert-curve
order of their nodes (topomap's :mod:`~topomap.networks.hilbert`), so the
stable partition keeps curve order on each side.  As printed, Algorithm 1
refills a donor that fell below k only after every original deficit process,
from a donor by then far along the curve; the thesis made unspecified
"slight changes so that it tries to match nodes based on their order in the
space filling curve".  Our reading, ``refill="next"`` (the SFC variant's
default): a donor that falls below k is refilled at once by the next excess
process, its curve neighbour.  Every guarantee above still holds (each
process is filled to k by one message, the last donor never receives, a
donor's sends total less than it held), and on fragmented torus allocations
the transfers get several times shorter (``benchmarks/bench_loadbalance.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _core
from ..errors import CoreInputError
from ..machine import Allocation
from ..networks import hilbert
from .counts import LoadBalanceError, as_counts, as_order
from .flow import Flow

__all__ = ["alias_flow", "sfc_flow", "sfc_order", "REFILLS"]

#: When a donor that fell below k is refilled (module docstring).
REFILLS = ("deferred", "next")


def alias_flow(counts: Any, *, order: Any = None, refill: str = "deferred") -> Flow:
    """The alias-method flow that balances ``counts`` (Kumar's Algorithm 1), O(P).

    Parameters
    ----------
    counts : array_like of int
        Tasks on each process (``>= 0``).
    order : array_like of int, optional
        A permutation of the processes: the order of the stable partition
        (default rank order).  :func:`sfc_flow` passes the Hilbert order.
    refill : {"deferred", "next"}
        ``"deferred"``: Algorithm 1 as printed; ``"next"``: a donor that
        falls below k is refilled at once by the next excess process (module
        docstring).

    Returns
    -------
    Flow
        At most one message into each process, at most P - 1 messages.

    Examples
    --------
    Kumar's Example 2 with P = 4: process 0 holds 1 task, the others 5 (k = 4):

    >>> from topomap.loadbalance import alias_flow
    >>> alias_flow([1, 5, 5, 5]).messages()
    [(1, 0, 3), (2, 1, 2), (3, 2, 1)]
    >>> alias_flow([5, 0, 0]).after.tolist()     # T = 5, k = 2, one phantom
    [2, 1, 2]
    >>> alias_flow([0, 4, 0, 4]).messages()      # 1 fills 0 and 2, falls to 0, 3 refills it
    [(1, 0, 2), (3, 1, 2), (1, 2, 2)]
    >>> alias_flow([0, 4, 0, 4], refill="next").messages()
    [(1, 0, 2), (3, 2, 2)]
    """
    if refill not in REFILLS:
        raise LoadBalanceError(f"refill must be one of {', '.join(REFILLS)}, got {refill!r}")
    c = as_counts(counts)
    ord_ = as_order(order, c.size)
    try:
        src, tasks = _core.lb_alias(c, ord_, refill == "next")
    except CoreInputError as exc:
        raise LoadBalanceError(str(exc)) from None
    dst = np.flatnonzero(src >= 0)
    return Flow.from_messages(c, src[dst], dst, tasks[dst], "alias" if refill == "deferred" else "alias-next")


def sfc_order(allocation: Allocation, mapping: Any = None) -> np.ndarray:
    """Processes in the Hilbert order of their nodes (rank order inside a node).

    ``mapping`` (a :class:`~topomap.Mapping` or an array) gives the PE of
    every process (default: process ``i`` on ``allocation.pes[i]``); the
    machine must be a torus or mesh.  The order is
    the ``key`` of Kumar's ``MPI_Comm_split`` renumbering, inverted.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.loadbalance import sfc_order
    >>> sfc_order(tm.machine("mesh:2x2").allocate(4)).tolist()
    [0, 2, 3, 1]
    """
    m = allocation.machine
    pes = allocation.pes if mapping is None else np.asarray(getattr(mapping, "pe_of", mapping))
    if pes.ndim != 1 or pes.size == 0:
        raise LoadBalanceError(f"mapping must give one PE per process, got shape {pes.shape}")
    node = m.node_of(pes)
    nodes = np.unique(node)
    curve_rank = np.empty(nodes.size, dtype=np.int64)
    curve_rank[hilbert.node_order(m, nodes)] = np.arange(nodes.size)
    return np.argsort(curve_rank[np.searchsorted(nodes, node)], kind="stable").astype(np.int32)


def sfc_flow(counts: Any, allocation: Allocation, mapping: Any = None, *, refill: str = "next") -> Flow:
    """Kumar's SFC-optimized alias flow: :func:`alias_flow` in :func:`sfc_order`, ``refill="next"`` by default.

    Examples
    --------
    On a 2x2 mesh the curve visits processes 0, 2, 3, 1: the excess process
    3 fills 0, then 1 fills 2; Algorithm 1 as printed lets 3 fill 2 too, and
    1 refill 3:

    >>> import topomap as tm
    >>> from topomap.loadbalance import sfc_flow
    >>> alloc = tm.machine("mesh:2x2").allocate(4)
    >>> sfc_flow([0, 4, 0, 4], alloc).messages()
    [(3, 0, 2), (1, 2, 2)]
    >>> sfc_flow([0, 4, 0, 4], alloc, refill="deferred").messages()
    [(3, 0, 2), (3, 2, 2), (1, 3, 2)]
    """
    c = as_counts(counts)
    order = sfc_order(allocation, mapping)
    if order.size != c.size:
        raise LoadBalanceError(f"{c.size} task counts but the mapping places {order.size} processes")
    flow = alias_flow(c, order=order, refill=refill)
    return Flow(flow.counts, flow.src, flow.dst, flow.tasks, flow.method.replace("alias", "alias-sfc"))
