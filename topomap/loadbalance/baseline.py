"""The QWalk-like baseline of Kumar's comparison (PhD thesis 2012, §5.4).

The thesis gives only its properties (optimal total and maximum tasks sent,
messages bounded by the imbalance, O(P + load) flow computation), not the
algorithm; notes 001 §4.2 [R] emulate it as a unit-transfer two-pointer
matcher: each surplus task goes to the next free deficit slot and
consecutive tasks between the same pair are one message
(csrc/core/lb_unit.c walks whole runs, so it is O(P)).
"""

from __future__ import annotations

from typing import Any

from .. import _core
from ..errors import CoreInputError
from .counts import LoadBalanceError, as_counts, as_order
from .flow import Flow

__all__ = ["unit_flow"]


def unit_flow(counts: Any, *, order: Any = None) -> Flow:
    """The QWalk-like baseline flow: minimal tasks moved, possibly many messages per process.

    Targets are ``floor(T / P)``, plus one for the ``T mod P`` largest
    processes (ties in ``order``), so total and maximum tasks sent are both
    optimal (a choice: the thesis does not say how QWalk rounds).

    Examples
    --------
    >>> from topomap.loadbalance import unit_flow
    >>> unit_flow([1, 5, 5, 5]).messages()      # Kumar's Example 2, P = 4
    [(1, 0, 1), (2, 0, 1), (3, 0, 1)]
    """
    c = as_counts(counts)
    try:
        src, dst, tasks = _core.lb_unit(c, as_order(order, c.size))
    except CoreInputError as exc:
        raise LoadBalanceError(str(exc)) from None
    return Flow.from_messages(c, src, dst, tasks, "unit")
