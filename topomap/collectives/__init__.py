"""Collective operations as stage-by-stage schedules of unicasts.

:func:`build` makes them in the C core the way MPICH runs them (binomial
bcast and gather; allgather by recursive doubling, ring, Bruck and the
hierarchical scheme; allreduce by recursive doubling and Rabenseifner;
alltoall pairwise and Bruck), any number of ranks;
:func:`~topomap.collectives.simulate.simulate` replays what their messages
carry; :func:`stage_costs` gives hops, H(pi), congestion, contention and
predicted time per stage; :mod:`~topomap.collectives.reorder` reorders
ranks for a collective (Mirsadeghi's RDMH, RMH, BBMH, BGMH, also registered
as mappers) and :mod:`~topomap.collectives.plans` keeps the output in the
caller's rank order (initComm, endShfl, the ring offset table; run in MPI
by :func:`topomap.mpi.run_collective`); :func:`reorder_for` reorders only
when the predicted time improves; :mod:`~topomap.collectives.reorder_more`
extends the heuristics to Bruck, allreduce and pairwise alltoall, and
:mod:`~topomap.collectives.placement` places ranks for collectives on
shortcut and circulant networks (Cui).  :mod:`~topomap.collectives.schedules` holds the
first Python generators (also ``topomap.generators_collective``).  Each
stage is a :class:`~topomap.Pattern` and ``schedule.total`` their sum, so
every mapper and metric accepts them.
"""

from . import placement, plans, reorder, reorder_more, schedules
from .build import ALGORITHMS, build
from .choose import ReorderChoice, reorder_for
from .evaluate import StageCosts, stage_costs
from .simulate import expected, simulate

__all__ = ["schedules", "reorder", "reorder_more", "placement", "plans", "build", "ALGORITHMS", "stage_costs",
           "StageCosts", "simulate", "expected", "reorder_for", "ReorderChoice"]
