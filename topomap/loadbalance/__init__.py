"""Dynamic load balancing of identical independent tasks (Kumar, PhD thesis 2012, ch. 5).

=================================== ==============================================================
:func:`alias_flow`                  the alias-method flow (Algorithm 1, phantom tasks), O(P);
                                    ``refill="next"`` refills a fallen donor from its successor
:func:`sfc_flow`, :func:`sfc_order` the same in the Hilbert order of the processes' nodes
:func:`unit_flow`                   the QWalk-like baseline (unit-transfer two-pointer matcher)
:class:`Flow`                       messages, final counts, the six metrics of Table 5.4.1, the
                                    migration as a Pattern and its predicted time
=================================== ==============================================================

:func:`topomap.mpi.balance` runs a flow on an MPI job (allgather the
counts, one round of Isend/Irecv/Waitall).

Examples
--------
>>> from topomap.loadbalance import alias_flow, unit_flow
>>> counts = [9, 1, 1, 5]         # k = 4: process 0 gives 6, then takes 1 back
>>> alias_flow(counts).messages(), unit_flow(counts).messages()
([(3, 0, 1), (0, 1, 3), (0, 2, 3)], [(0, 1, 3), (0, 2, 2), (3, 2, 1)])
"""

from .alias import REFILLS, alias_flow, sfc_flow, sfc_order
from .baseline import unit_flow
from .counts import LoadBalanceError
from .flow import Flow, LBMetrics

__all__ = ["alias_flow", "sfc_flow", "sfc_order", "REFILLS", "unit_flow", "Flow", "LBMetrics", "LoadBalanceError"]
