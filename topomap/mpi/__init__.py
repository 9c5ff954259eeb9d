"""Apply placements to real MPI jobs through mpi4py (extra ``topomap-hpc[mpi]``).

mpi4py is imported on first use, never by ``import topomap``; without it,
every call raises :class:`~topomap.MissingDependencyError` naming the extra.
Collective calls either succeed on every rank or raise
:class:`CollectiveError` on every rank: a fault on one rank never leaves the
others waiting.

=================================== ==================================================================
:func:`reorder`                     gather the pattern, map on one rank, ``Split`` with the new ranks
:func:`apply_order`                 ``Split`` by a given ``new_rank`` permutation, checked
:func:`discover_job`                each rank's host and binding -> the job's Allocation
:func:`dist_graph`                  dist-graph on the reordered communicator from old-rank lists
:func:`to_new`, :func:`to_old`,     translate rank numbers and rank-indexed data between numberings
:func:`by_new_rank`, ...
:func:`handover`                    move per-role data to the process that now plays the role
:func:`profile`                     count an mpi4py code's sends per destination -> Pattern
:func:`ask_mpi`                     what the MPI library does with ``reorder=True`` (the baseline)
:func:`launcher_file`               Open MPI rankfile, ``MPICH_RANK_ORDER``, Slurm and plain host lists
:func:`mpi_library`                 the MPI mpi4py loads and the ``mpiexec`` that goes with it
:func:`distributed_ptram`           PTRAM with its node leaders on the ranks, equal to the serial mapping
=================================== ==================================================================

Examples
--------
>>> from mpi4py import MPI
>>> import topomap as tm
>>> comm = MPI.COMM_WORLD
>>> newcomm, info = tm.mpi.reorder(comm, tm.generators.stencil_2d((comm.size, 1)), method="random", seed=0)
>>> newcomm.rank == int(info.new_rank[comm.rank])
True
"""

from ._collective import CollectiveError
from .askmpi import AskMPIResult, ask_mpi
from .job import JobAllocation, RankPlace, discover_job, gather_places, job_allocation, parse_hosts
from .distgraph import by_new_rank, by_old_rank, dist_graph, handover, to_new, to_old
from .launch import FORMATS, launcher_file, usage, write_launcher_file
from .loadbalance import BalanceInfo, balance
from .profile import Profile, profile
from .ptram import distributed_ptram, leader_nodes
from .neighborhood import NeighborCombiner, PersistentNeighbor  # noqa: F401 - combined neighbour collectives
from .reorder import (ReorderInfo, ReorderPlan, apply_order, inverse, pattern_from_rows, plan_reorder, reorder,
                      with_cart_grid)
from .runtime import MPILibrary, mpi_library, mpiexec_command
from .collective_exec import run_collective

__all__ = ["CollectiveError", "reorder", "apply_order", "plan_reorder", "pattern_from_rows", "with_cart_grid", "inverse",
           "ReorderInfo", "ReorderPlan", "discover_job", "gather_places", "job_allocation", "parse_hosts",
           "RankPlace", "JobAllocation", "dist_graph", "to_new", "to_old", "by_new_rank", "by_old_rank", "handover",
           "profile", "Profile", "ask_mpi", "AskMPIResult", "launcher_file", "write_launcher_file", "usage",
           "FORMATS", "mpi_library", "mpiexec_command", "MPILibrary", "distributed_ptram", "leader_nodes",
           "balance", "BalanceInfo", "run_collective"]
