"""The "ask MPI" baseline: what the MPI library does with ``reorder=True``.

:func:`ask_mpi` builds the pattern's graph as a dist-graph communicator with
``reorder=True`` (every process names its own sources and destinations,
weights = bytes), reads back the rank MPI gave each process, and evaluates
that order on the job's allocation next to the original one, so users see
what their library did: MPICH never permutes; Open MPI permutes only
dist-graphs, through treematch, and not when PUs are oversubscribed
(anchors.md §5.2).

It also reports which graph the library built, since reordered dist-graphs
have delivered to wrong neighbours (open-mpi/ompi#11756): ``"roles"`` if
new rank ``k`` has the neighbours of vertex ``k`` (the process must take
over role ``k``'s data), ``"processes"`` if each process kept the neighbours
it named (renumbered), ``"identity"`` when no rank moved (both at once), and
``"neither"`` otherwise.  Neighbour lists are compared as sorted lists.

MPI weights are integers: bytes are divided by ``ceil(max bytes / (2**31 - 1))``
so the largest fits, then rounded up (a sent byte never becomes weight 0).

Examples
--------
>>> from mpi4py import MPI
>>> import numpy as np
>>> from topomap.mpi import ask_mpi
>>> graph, res = ask_mpi(MPI.COMM_SELF, np.zeros(1))
>>> res.identity, res.neighbours
(True, 'identity')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..machine import Machine
from ..metrics import Metrics, evaluate
from ..node.nodetree import NodeTree
from ..pattern import Pattern
from ._collective import from_root, mpi
from .job import discover_job
from .reorder import _gather_pattern, inverse

__all__ = ["ask_mpi", "AskMPIResult"]

_MAX_WEIGHT = 2**31 - 1


@dataclass(frozen=True, eq=False)
class AskMPIResult:
    """What the MPI library did with ``reorder=True`` (on every rank).

    Attributes
    ----------
    new_rank : numpy.ndarray
        ``new_rank[old_rank]`` as MPI assigned it.
    identity : bool
        True if MPI kept every rank.
    neighbours : {"identity", "roles", "processes", "neither"}
        Which graph MPI built (see the module docstring).
    before, after : Metrics
        The original order and MPI's order on the job's allocation.
    library : str
        ``MPI.Get_library_version()``, first line.
    """

    new_rank: np.ndarray
    identity: bool
    neighbours: str
    before: Metrics
    after: Metrics
    library: str

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form (for JSON)."""
        return {"new_rank": self.new_rank.tolist(), "identity": self.identity, "neighbours": self.neighbours,
                "before": self.before.to_dict(), "after": self.after.to_dict(), "library": self.library}


def _adjacency(pat: Pattern) -> list[tuple[list[int], list[int], list[int], list[int]]]:
    """Per process: (sources, source weights, destinations, destination weights)."""
    scale = max(1, int(np.ceil(float(pat.bytes.max()) / _MAX_WEIGHT))) if pat.nnz else 1
    w = np.ceil(pat.bytes / scale).astype(np.int64)
    rows = np.repeat(np.arange(pat.n), np.diff(pat.indptr))
    by_dst = np.lexsort((rows, pat.indices))
    col_ptr = np.zeros(pat.n + 1, dtype=np.int64)
    np.cumsum(np.bincount(pat.indices, minlength=pat.n), out=col_ptr[1:])
    out = []
    for p in range(pat.n):
        a, b = pat.indptr[p], pat.indptr[p + 1]
        c = by_dst[col_ptr[p]:col_ptr[p + 1]]
        out.append((rows[c].tolist(), w[c].tolist(), pat.indices[a:b].tolist(), w[a:b].tolist()))
    return out


def _which_graph(adj: Sequence[tuple], got: Sequence[tuple], new_rank: np.ndarray) -> str:
    """Compare the neighbours MPI reports (``got[old rank]``, in new ranks) with the pattern's."""
    if np.array_equal(new_rank, np.arange(new_rank.size)):
        return "identity"
    old_of = inverse(new_rank)
    as_roles = all(sorted(got[old_of[k]][0]) == sorted(adj[k][0]) and
                   sorted(got[old_of[k]][1]) == sorted(adj[k][2]) for k in range(new_rank.size))
    as_procs = all(sorted(got[r][0]) == sorted(new_rank[adj[r][0]].tolist()) and
                   sorted(got[r][1]) == sorted(new_rank[adj[r][2]].tolist()) for r in range(new_rank.size))
    return "roles" if as_roles else "processes" if as_procs else "neither"


def ask_mpi(comm: Any, pattern: Any = None, *, machine: "Machine | str | None" = None,
            hosts: "Sequence[str] | str | None" = None, node: "str | NodeTree" = "auto",
            host_nodes: "Mapping[str, int] | Callable[[str], int] | None" = None,
            root: int = 0) -> tuple[Any, AskMPIResult]:
    """Create the pattern's dist-graph with ``reorder=True`` and report what MPI did (collective).

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
        The communicator.
    pattern, machine, hosts, node, host_nodes, root
        As for :func:`topomap.mpi.reorder`.

    Returns
    -------
    graph : mpi4py.MPI.Distgraphcomm
        The communicator MPI created (free it when done).
    result : AskMPIResult

    Examples
    --------
    >>> from mpi4py import MPI
    >>> import topomap as tm
    >>> comm = MPI.COMM_WORLD
    >>> graph, res = ask_mpi(comm, tm.generators.stencil_2d((comm.size, 1)))
    >>> int(res.new_rank[comm.rank]) == graph.rank
    True
    """
    MPI = mpi()
    pat = _gather_pattern(comm, pattern, root)
    adj = _adjacency(pat) if comm.rank == root else None
    src, sw, dst, dw = comm.scatter(adj, root=root)
    graph = comm.Create_dist_graph_adjacent(src, dst, sw, dw, reorder=True)
    new_rank = np.asarray(comm.allgather(graph.rank), dtype=np.int32)
    s, d, _ = graph.Get_dist_neighbors()
    got = comm.gather((list(s), list(d)), root=root)
    job = discover_job(comm, machine, hosts, node, host_nodes, root=root)

    def measure() -> tuple[Metrics, Metrics, str]:
        alloc = job.allocation
        return (evaluate(pat, alloc, alloc.pes), evaluate(pat, alloc, alloc.pes[inverse(new_rank)]),
                _which_graph(adj, got, new_rank))

    before, after, verdict = from_root(comm, measure, "ask_mpi: evaluation failed", root=root)
    library = MPI.Get_library_version().replace("\x00", "").strip().splitlines()[0]
    identity = bool(np.array_equal(new_rank, np.arange(comm.size)))
    return graph, AskMPIResult(new_rank, identity, verdict, before, after, library)
