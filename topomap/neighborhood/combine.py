"""Phase 1 of message combining (Mirsadeghi, Traff, Balaji, Afsahi 2017, Alg. 1 + Alg. 2):
the pattern T of every rank of a neighbourhood topology, simulated in synchronous rounds.

The C simulator (csrc/core/nbr_phase1.c) keeps the global common-neighbourhood count
C = A A^T and scales to 8K ranks; ``backend="python"`` runs the set-based reference
(:mod:`topomap.neighborhood.reference`) for cross-checks on small graphs.  Both give the same
T; the choices the paper leaves open are listed in nbr_phase1.c and nbr_match.c.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .. import _core
from .graph import NeighborGraph, NeighborhoodError
from .pattern import CombiningPattern
from .reference import phase1_reference

__all__ = ["combine"]


def combine(graph: NeighborGraph, theta: int = 4, *, max_iterations: int | None = None,
            node: Sequence[int] | None = None, distance: np.ndarray | None = None, cumulative: bool = False,
            backend: str = "c", progress: Callable[[float], object] | None = None) -> CombiningPattern:
    """Run Phase 1 for all ranks of ``graph`` and return their combining pattern T.

    Parameters
    ----------
    graph : NeighborGraph
        The topology (destinations and sources of every rank).
    theta : int
        Friendship threshold: ranks sharing at least ``theta`` active destinations are
        friends (the paper uses 4).
    max_iterations : int, optional
        Cap on Alg. 1 iterations; ranks still in the loop then send the rest directly.
        Default: none (the loop ends by itself, each iteration pairs at least one couple).
    node : sequence of int, optional
        Node of each rank ("beyond the papers"): a friend on the same node is preferred to
        any friend elsewhere, so combined data crosses the network less.
    distance : (k, k) array of int, optional
        Path cost between nodes ("beyond the papers", needs ``node`` with entries in
        0 .. k-1; symmetric, >= 0; :func:`~topomap.neighborhood.pathcost.path_costs` gives the
        hops for a machine and a mapping).  The data of every neighbour offloaded to a friend
        takes the detour p -> friend -> destination, one friend-exchange message each way,
        so rank p prefers the friend q of smallest ``distance[node[p], node[q]]``, then (as
        the paper) the most common neighbours, then the lowest rank.  This replaces the
        same-node rule (a friend on the same node costs 0 when the diagonal is 0).
    cumulative : bool
        Cumulative combining ("beyond the papers", their future work): a paired rank drops
        only the neighbours its friend takes on and keeps those it takes on, so a neighbour
        may be combined again in a later iteration and a message may carry the blocks of any
        number of origins (defined in csrc/core/nbr_phase1.c; origins per message from
        :meth:`CombiningPattern.flows`).  False: the paper's algorithm, each neighbour
        combined at most once.
    backend : {"c", "python"}
        The C simulator or the slow set-based reference.
    progress : callable, optional
        Called with the fraction of edges combined (C backend); a true return cancels.

    Returns
    -------
    CombiningPattern

    Examples
    --------
    >>> from topomap.neighborhood import moore_graph
    >>> t = combine(moore_graph((8, 8), 2))
    >>> t.check(moore_graph((8, 8), 2))
    >>> int(t.stats()["sends"].max()) < 24
    True
    >>> c = combine(moore_graph((8, 8), 2), cumulative=True)
    >>> c.check(moore_graph((8, 8), 2))
    >>> max(len(o) for _, _, o in c.receives(0)) > 2
    True
    """
    if not isinstance(theta, (int, np.integer)) or theta < 1:
        raise NeighborhoodError(f"theta must be an integer >= 1, got {theta!r}")
    cap = 0 if max_iterations is None else int(max_iterations)
    if max_iterations is not None and cap < 1:
        raise NeighborhoodError(f"max_iterations must be >= 1 or None, got {max_iterations}")
    nodes = None if node is None else np.asarray(node, dtype=np.int32)
    if nodes is not None and nodes.shape != (graph.n,):
        raise NeighborhoodError(f"node needs one entry per rank ({graph.n}), got shape {nodes.shape}")
    dist = None if distance is None else _check_distance(distance, nodes)
    if backend == "python":
        return _from_reference(phase1_reference(graph, int(theta), max_iterations=cap, node=nodes, distance=dist,
                                                cumulative=bool(cumulative)), graph.n, int(theta), bool(cumulative))
    if backend != "c":
        raise NeighborhoodError(f"backend must be 'c' or 'python', got {backend!r}")
    r = _core.nbr_phase1(graph.out_ptr, graph.out_idx, int(theta), cap, nodes, progress,
                         None if dist is None else dist.ravel(), 0 if dist is None else dist.shape[0],
                         bool(cumulative))
    its = {k[3:]: r.pop(k) for k in list(r) if k.startswith("it_")}
    seconds = r.pop("seconds")
    return CombiningPattern(graph.n, int(theta), iterations=its, seconds=seconds, cumulative=bool(cumulative), **r)


def _check_distance(distance: np.ndarray, nodes: np.ndarray | None) -> np.ndarray:
    """The node distance as a square int32 matrix that ``nodes`` index, or an error."""
    d = np.asarray(distance)
    if nodes is None:
        raise NeighborhoodError("distance needs node= (the node of each rank)")
    if d.ndim != 2 or d.shape[0] != d.shape[1] or d.shape[0] < 1:
        raise NeighborhoodError(f"distance must be a square k x k matrix, got shape {d.shape}")
    if not np.issubdtype(d.dtype, np.integer):
        raise NeighborhoodError(f"distance must hold integers (e.g. hops), got {d.dtype}")
    if d.min() < 0 or not (d == d.T).all():
        raise NeighborhoodError("distance must be symmetric and >= 0")
    if nodes.size and (nodes.min() < 0 or nodes.max() >= d.shape[0]):
        raise NeighborhoodError(f"node entries must lie in 0..{d.shape[0] - 1} (the distance matrix's nodes)")
    return d.astype(np.int32)


def _from_reference(r: dict, n: int, theta: int, cumulative: bool) -> CombiningPattern:
    steps = r["steps"]
    step_ptr = np.zeros(n + 1, dtype=np.int64)
    step_ptr[1:] = np.cumsum([len(s) for s in steps])
    flat = [s for rank in steps for s in rank]
    on_ptr = np.zeros(len(flat) + 1, dtype=np.int64)
    on_ptr[1:] = np.cumsum([len(s[2]) for s in flat])
    final_ptr = np.zeros(n + 1, dtype=np.int64)
    final_ptr[1:] = np.cumsum([len(f) for f in r["final"]])
    stats = np.array(r["iterations"], dtype=np.int64).reshape(-1, 4)
    i32 = lambda xs: np.asarray(xs, dtype=np.int32)  # noqa: E731
    return CombiningPattern(
        n, theta, step_ptr, i32([s[0] for s in flat]), i32([s[1] for s in flat]), on_ptr,
        i32([q for s in flat for q in s[2]]), final_ptr, i32([q for f in r["final"] for q in f]),
        i32(r["done_iter"]), i32(r["friends0"]), i32(r["alg2_rounds"]),
        iterations={"active": stats[:, 0].astype(np.int32), "pairs": stats[:, 1].astype(np.int32),
                    "rounds": stats[:, 2].astype(np.int32), "messages": stats[:, 3]}, cumulative=cumulative)
