"""Message combining for MPI neighbourhood collectives over common neighbourhoods
(Mirsadeghi, Traff, Balaji, Afsahi 2017; thesis ch. 6; notes 002 and 000 s5).

=================================== ==================================================================
:class:`NeighborGraph`              destinations and sources of every rank, checked to agree
:func:`random_graph`,               Erdos-Renyi G(n, delta) and periodic Moore (D, r) topologies
:func:`moore_graph`
:func:`combine`                     Phase 1 (Alg. 1 + 2): the combining pattern T of every rank
:class:`CombiningPattern`           T: steps, receives, exact-delivery check, statistics, JSON
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
from .pattern import FINAL, CombiningPattern

__all__ = ["NeighborGraph", "NeighborhoodError", "random_graph", "moore_graph", "combine", "CombiningPattern",
           "FINAL"]
