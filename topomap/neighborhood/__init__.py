"""Message combining for MPI neighbourhood collectives over common neighbourhoods
(Mirsadeghi, Traff, Balaji, Afsahi 2017; thesis ch. 6; notes 002 and 000 s5).

=================================== ==================================================================
:class:`NeighborGraph`              destinations and sources of every rank, checked to agree
:func:`random_graph`,               Erdos-Renyi G(n, delta) and periodic Moore (D, r) topologies
:func:`moore_graph`
:func:`combine`                     Phase 1 (Alg. 1 + 2): the combining pattern T of every rank;
                                    ``cumulative=True``: a neighbour may be combined again
:class:`CombiningPattern`           T: steps, receives, origin flows, exact-delivery check, statistics, JSON
:func:`layouts`, :func:`build_all`, Phase 2 (Alg. 3): SEND/RECV/COPY/WAIT schedules with byte offsets
:func:`build_schedule`,             for neighbour allgather, alltoall and alltoallv; the naive one
:func:`naive_schedule`
:func:`replay`                      run all ranks' schedules in one process: receive buffers, deadlocks
=================================== ==================================================================

Examples
--------
>>> import topomap.neighborhood as nb
>>> g = nb.random_graph(32, 0.6, seed=3)
>>> t = nb.combine(g)
>>> t.check(g)
>>> bool(t.stats()["sends"].sum() < g.edges)
True
"""

from .combine import combine
from .graph import NeighborGraph, NeighborhoodError, moore_graph, random_graph
from .pattern import FINAL, CombiningPattern, RankPattern
from .replay import expected_recv, random_sendbufs, replay
from .schedule import Layout, Schedule, build_all, build_schedule, layouts, naive_schedule

__all__ = ["NeighborGraph", "NeighborhoodError", "random_graph", "moore_graph", "combine", "CombiningPattern",
           "RankPattern",
           "FINAL", "Layout", "Schedule", "layouts", "build_all", "build_schedule", "naive_schedule", "replay",
           "expected_recv", "random_sendbufs"]
