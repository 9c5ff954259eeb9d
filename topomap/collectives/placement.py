"""Rank placement for collectives on shortcut networks (Cui 2024; notes 003 §2-§3).

K. Cui, "Efficient Collective Communication in Interconnection Networks with
Shortcut Network Topologies", PhD thesis, SOKENDAI 2024 (and Cui &
Koibuchi, IEICE Trans. Inf. & Syst. 103(12), 2020).  A collective is a
:class:`~topomap.collectives.schedules.Schedule` (or several, or a plain
:class:`~topomap.Pattern` taken as one stage); a placement puts rank ``r`` on
PE ``pe_of[r]`` of an allocation.  Two objectives, computed in C
(``csrc/core/twoopt_search.c``):

* ``"hops"``: the total hop count H(pi) of 003 §2.3, the sum over unicasts
  of messages x hops (an exchange is two unicasts);
* ``"contention"``: 003 §2.4, the sum over stages and directed links of
  ``max(0, load - 1)`` with the machine's deterministic routes.

Placements, each choosing ``n`` PEs of the allocation and their rank order:

* random (§3.1): the ``random`` mapper (rank ``r`` on the ``r``-th PE drawn),
  or an allocation drawn with ``allocate(policy="random")``, whose launcher
  order is the draw order the thesis's tables need (003 §3.1);
* :func:`tree_placement` (§3.2, Hu & Koibuchi ICPADS'19): BFS discovery order
  from a root through the allocation's nodes;
* :func:`ring_placement` (§3.3): consecutive node ids along the baseline ring;
* :func:`circulant_placement` (§3.4, Alg. 4.1): the stride ``N/n`` coset;
* :func:`cco_placement` (§3.7, Kesavan & Panda TPDS 2001): preorder of the
  network's BFS tree from the root;
* :func:`two_opt` (§3.3.2) and :func:`anneal` (§3.7) improve any of them by
  random pairwise swaps.

Choices the thesis leaves open: BFS visits neighbours in ascending vertex id
and passes through switches (never through nodes outside the allocation);
when the allocation's nodes are not connected that way, the tree continues
from a random unvisited allocation node.  A node with several allocated PEs
takes consecutive ranks on them in allocation order.  CCO's chain is the
depth-first preorder of the BFS tree of the whole network (children in
ascending id), restricted to the allocation's nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence, Union

import numpy as np

from .. import _core
from .._rng import stream_seed, uniform
from ..errors import CoreError, CoreInputError, MappingError, PatternError
from ..machine import Allocation, Machine
from ..mapping import Mapping, check_mapping
from ..pattern import Pattern
from ..registry import methods
from ..timemodel.predict import message_table
from .schedules import Schedule

__all__ = ["Unicasts", "unicasts", "placement_cost", "tree_placement", "ring_placement", "circulant_placement",
           "cco_placement", "SearchResult", "two_opt", "anneal", "place", "OBJECTIVES"]

OBJECTIVES = {"hops": 0, "contention": 1}
Collective = Union[Schedule, Pattern, Sequence[Union[Schedule, Pattern]]]


@dataclass(frozen=True)
class Unicasts:
    """A collective flattened: unicast ``k`` of stage ``s`` is ``src[k] -> dst[k]``, ``count[k]`` messages,
    for ``k`` in ``[stage_ptr[s], stage_ptr[s + 1])``."""

    n: int
    stage_ptr: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    count: np.ndarray


def _stages(collective: Any) -> list[Pattern]:
    if isinstance(collective, Pattern):
        return [collective]
    if isinstance(collective, Schedule):
        return list(collective.stages)
    if isinstance(collective, (list, tuple)) and collective:
        return [st for item in collective for st in _stages_of_item(item)]
    raise PatternError(f"a collective must be a Schedule, a Pattern or a non-empty list of them, "
                       f"got {type(collective).__name__}")


def _stages_of_item(item: Any) -> list[Pattern]:
    if not isinstance(item, (Schedule, Pattern)):
        raise PatternError(f"a list of collectives holds Schedules or Patterns, got a {type(item).__name__}")
    return _stages(item)


def unicasts(collective: Collective) -> Unicasts:
    """Flatten a schedule, a pattern (one stage) or a list of them into :class:`Unicasts`.

    A pattern entry with ``msgs = k`` (1 when the pattern counts no messages)
    is ``k`` unicasts of the stage.

    Examples
    --------
    >>> from topomap.collectives.schedules import recursive_doubling
    >>> u = unicasts(recursive_doubling(4))
    >>> u.stage_ptr.tolist(), u.src.tolist(), u.dst.tolist()
    ([0, 4, 8], [0, 1, 2, 3, 0, 1, 2, 3], [1, 0, 3, 2, 2, 3, 0, 1])
    """
    stages = _stages(collective)
    n = stages[0].n
    if any(st.n != n for st in stages):
        raise PatternError(f"the collectives have different numbers of ranks: {sorted({st.n for st in stages})}")
    t = message_table(tuple(stages))
    msgs = t["msgs"]
    if (msgs != np.round(msgs)).any() or (msgs < 1).any() or (msgs > 2**31 - 1).any():
        raise PatternError("a stage's message counts must be whole numbers in [1, 2^31)")
    ptr = np.concatenate([[0], np.cumsum([st.nnz for st in stages])]).astype(np.int64)
    return Unicasts(n, ptr, t["src"], t["dst"], msgs.astype(np.int32))


def _objective(objective: str) -> int:
    if objective not in OBJECTIVES:
        raise MappingError(f"unknown placement objective {objective!r}; choose one of {', '.join(OBJECTIVES)}")
    return OBJECTIVES[objective]


def _machine(where: Machine | Allocation) -> Machine:
    if isinstance(where, Allocation):
        return where.machine
    if isinstance(where, Machine):
        return where
    raise MappingError(f"expected a Machine or an Allocation, got {type(where).__name__}")


def _pe_of(pe_of: Any, n: int) -> np.ndarray:
    pe = np.asarray(pe_of)
    if pe.shape != (n,) or pe.dtype.kind not in "iu":
        raise MappingError(f"the placement must be {n} integer PEs (one per rank), got shape {pe.shape} "
                           f"of {pe.dtype}")
    return pe.astype(np.int32)


def placement_cost(collective: Collective, where: Machine | Allocation, pe_of: Any, objective: str = "hops") -> int:
    """The objective of a placement: total hops H(pi) or contention (003 §2.3-§2.4).

    Examples
    --------
    >>> import numpy as np, topomap as tm
    >>> from topomap.collectives.schedules import binomial_bcast
    >>> m = tm.machine("circulant:16")
    >>> placement_cost(binomial_bcast(16), m, np.arange(16))          # G(16, 4): 1 hop per unicast
    15
    >>> placement_cost(binomial_bcast(16), m, np.arange(16), "contention")
    0
    """
    u = unicasts(collective)
    machine = _machine(where)
    obj = _objective(objective)
    try:
        return int(_core.twoopt_cost(machine._core, u.n, u.stage_ptr, u.src, u.dst, u.count, _pe_of(pe_of, u.n), obj))
    except (CoreError, CoreInputError) as exc:
        raise MappingError(str(exc)) from None


# ---------------------------------------------------------------- initial placements

def _need(allocation: Allocation, n: int, what: str) -> None:
    if not isinstance(allocation, Allocation):
        raise MappingError(f"{what} needs an Allocation, got {type(allocation).__name__}")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or not 1 <= n <= len(allocation):
        raise MappingError(f"{what} places one rank per PE: n = {n!r} must lie in [1, {len(allocation)}] "
                           f"(the allocation's PEs)")


def _pes_in_node_order(allocation: Allocation, nodes: np.ndarray, n: int) -> np.ndarray:
    """The allocation's PEs node by node in the order of ``nodes``, allocation order inside; the first n."""
    node = allocation.pes // allocation.machine.pes_per_node
    rank_of_node = np.full(allocation.machine.nnodes, np.iinfo(np.int64).max, dtype=np.int64)
    rank_of_node[nodes] = np.arange(nodes.size)
    order = np.lexsort((np.arange(node.size), rank_of_node[node]))
    return allocation.pes[order][:n].astype(np.int32)


def _adjacency(machine: Machine) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the network graph over vertices (nodes, then switches), neighbours ascending."""
    g = machine.links()
    order = np.lexsort((g["dst"], g["src"]))
    src, dst = g["src"][order], g["dst"][order]
    ptr = np.searchsorted(src, np.arange(machine.nvertices + 1))
    return ptr.astype(np.int64), dst.astype(np.int64)


def _bfs(ptr: np.ndarray, nbr: np.ndarray, root: int, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices reachable from root through ``allowed`` ones in BFS discovery order, and their parents."""
    parent = np.full(allowed.size, -2, dtype=np.int64)
    parent[root] = -1
    order, frontier = [np.array([root])], np.array([root])
    while frontier.size:
        counts = ptr[frontier + 1] - ptr[frontier]
        owner = np.repeat(frontier, counts)
        first_slot = np.repeat(ptr[frontier] - (np.cumsum(counts) - counts), counts)
        cand = nbr[first_slot + np.arange(counts.sum())]  # the frontier's neighbour lists, concatenated
        fresh = (parent[cand] == -2) & allowed[cand]
        cand, owner = cand[fresh], owner[fresh]
        _, first = np.unique(cand, return_index=True)  # a vertex's first discoverer, in discovery order
        first.sort()
        frontier = cand[first]
        parent[frontier] = owner[first]
        order.append(frontier)
    return np.concatenate(order), parent


def _draw(seed: int, label: str, bound: int, k: int = 0) -> int:
    return int(uniform(stream_seed(seed, label), [k])[0] * bound)


def _root_node(allocation: Allocation, root: int | None, seed: int, label: str) -> int:
    if root is None:
        nodes = allocation.nodes()
        return int(nodes[_draw(seed, label, nodes.size)])
    if not isinstance(root, (int, np.integer)) or int(root) not in set(allocation.pes.tolist()):
        raise MappingError(f"root = {root!r} must be a PE of the allocation")
    return int(root) // allocation.machine.pes_per_node


def tree_placement(allocation: Allocation, n: int, seed: int = 0, root: int | None = None) -> np.ndarray:
    """Hierarchical BFS-tree placement (003 §3.2): ranks in BFS discovery order from a root.

    Parameters
    ----------
    allocation : Allocation
        The free PEs.
    n : int
        Ranks to place (one per PE).
    seed : int
        Picks the root (uniformly among the allocation's nodes) when ``root`` is None.
    root : int, optional
        A PE of the allocation whose node is the root.

    Returns
    -------
    numpy.ndarray
        int32 PE of each rank.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("circulant:16").allocate(16)
    >>> tree_placement(alloc, 6, root=0).tolist()          # 0, then its neighbours 1, 2, 4, 8, 12
    [0, 1, 2, 4, 8, 12]
    """
    _need(allocation, n, "tree placement")
    machine = allocation.machine
    ptr, nbr = _adjacency(machine)
    allowed = np.ones(machine.nvertices, dtype=bool)
    allowed[:machine.nnodes] = False
    allowed[allocation.nodes()] = True
    start = _root_node(allocation, root, seed, "shortcut-tree")
    slots = np.bincount(allocation.pes // machine.pes_per_node, minlength=machine.nnodes)
    order: list[np.ndarray] = []
    found, restarts = 0, 0
    while found < n:  # a disconnected allocation: go on from a random node not reached yet
        seen, _ = _bfs(ptr, nbr, start, allowed)
        seen = seen[seen < machine.nnodes]
        allowed[seen] = False
        order.append(seen)
        found += int(slots[seen].sum())
        rest = np.flatnonzero(allowed[:machine.nnodes])
        if rest.size:
            start = int(rest[_draw(seed, "shortcut-tree-restart", rest.size, restarts)])
            restarts += 1
    return _pes_in_node_order(allocation, np.concatenate(order), n)


def ring_placement(allocation: Allocation, n: int, start: int | None = None) -> np.ndarray:
    """Ring-consecutive placement (003 §3.3): nodes ``s, s+1, ...`` (mod N) of the allocation, ranks in ring order.

    ``start`` is the node ``s`` (default: the node of the allocation's first
    PE).  On the shortcut and circulant networks node id = ring position.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("circulant:16").allocate(16)
    >>> ring_placement(alloc, 4, start=14).tolist()
    [14, 15, 0, 1]
    """
    _need(allocation, n, "ring placement")
    machine = allocation.machine
    nodes = allocation.nodes()
    s = int(nodes[0]) if start is None else start
    if not isinstance(s, (int, np.integer)) or not 0 <= s < machine.nnodes:
        raise MappingError(f"start = {start!r} must be a node id in [0, {machine.nnodes})")
    return _pes_in_node_order(allocation, nodes[np.argsort((nodes - s) % machine.nnodes, kind="stable")], n)


def circulant_placement(allocation: Allocation, n: int, seed: int = 0, start: int | None = None) -> np.ndarray:
    """Circulant stride placement (003 §3.4, Alg. 4.1): rank ``j`` on node ``(i0 + j N/n) mod N``.

    Alg. 4.1 assumes every node free; here the stride runs over the
    allocation's ``N`` nodes in id order (on a whole machine, node ids
    themselves), which ``n`` must divide.  ``i0`` is the position of
    ``start`` (a node of the allocation) or drawn from the seed ("i = rand()
    % n"); each node's first allocated PE takes the rank.  On G(N, log2 N)
    with ``n`` a power of two every unicast of binomial broadcast, recursive
    doubling and Bruck is then 1 hop.  More ranks than nodes (the thesis has
    one PE per node): ``n`` must be a multiple of ``N`` and node ``i0 + j // k``,
    ``k = n / N``, takes rank ``j`` on its ``(j mod k)``-th allocated PE, so
    ranks ``2^t >= k`` apart are still ``2^t / k`` nodes, a jump, apart.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("circulant:16").allocate(16)
    >>> circulant_placement(alloc, 4, start=1).tolist()
    [1, 5, 9, 13]
    >>> circulant_placement(tm.machine("circulant:4/2").allocate(8), 8, start=3).tolist()
    [6, 7, 0, 1, 2, 3, 4, 5]
    """
    _need(allocation, n, "circulant placement")
    node = allocation.pes // allocation.machine.pes_per_node
    nodes = np.unique(node)
    N = nodes.size
    if (N % n if n <= N else n % N):
        raise MappingError(f"circulant placement needs n to divide the allocation's {N} nodes or be a multiple of "
                           f"them, got n = {n}")
    if start is None:
        i0 = _draw(seed, "shortcut-circulant", N)
    elif isinstance(start, (int, np.integer)) and int(start) in set(nodes.tolist()):
        i0 = int(np.searchsorted(nodes, start))
    else:
        raise MappingError(f"start = {start!r} must be a node of the allocation")
    j = np.arange(n, dtype=np.int64)
    k = max(1, n // N)  # ranks per node
    want = nodes[(i0 + (j // k) * max(1, N // n)) % N]
    by_node = np.lexsort((np.arange(node.size), node))  # the allocation's PEs grouped by node, in order inside
    first = np.searchsorted(node[by_node], want)
    short = np.searchsorted(node[by_node], want, side="right") - first < k
    if short.any():
        raise MappingError(f"circulant placement puts {k} ranks on each node, but node {int(want[short][0])} "
                           f"has fewer PEs in the allocation")
    return allocation.pes[by_node[first + j % k]].astype(np.int32)


def cco_placement(allocation: Allocation, n: int, root: int | None = None) -> np.ndarray:
    """Chain concatenation ordering (003 §3.7): preorder of the network's BFS tree from the root.

    ``root`` is a PE of the allocation (default its first PE); rank 0, the
    broadcast root, goes there.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("circulant:8").allocate(8)
    >>> cco_placement(alloc, 8).tolist()      # BFS tree of C(8; 1, 2, 4): 0 -> 1, 2, 4, 6, 7; 1 -> 3, 5
    [0, 1, 3, 5, 2, 4, 6, 7]
    """
    _need(allocation, n, "cco placement")
    machine = allocation.machine
    r = int(allocation.pes[0]) if root is None else root
    root_node = _root_node(allocation, r, 0, "cco")
    ptr, nbr = _adjacency(machine)
    order, parent = _bfs(ptr, nbr, root_node, np.ones(machine.nvertices, dtype=bool))
    children: list[list[int]] = [[] for _ in range(machine.nvertices)]
    for v in order[1:].tolist():  # discovery order keeps each child list ascending by discovery
        children[parent[v]].append(v)
    chain, stack = [], [root_node]
    while stack:
        v = stack.pop()
        chain.append(v)
        stack.extend(reversed(children[v]))
    chain_arr = np.asarray(chain, dtype=np.int64)
    chain_arr = chain_arr[chain_arr < machine.nnodes]
    return _pes_in_node_order(allocation, chain_arr[np.isin(chain_arr, allocation.nodes())], n)


# ---------------------------------------------------------------- local search

@dataclass(frozen=True)
class SearchResult:
    """What :func:`two_opt` and :func:`anneal` return.

    Attributes
    ----------
    pe_of : numpy.ndarray
        The improved placement.
    cost, initial_cost : int
        The objective after and before.
    accepted : int
        Swaps kept.
    trace : numpy.ndarray
        The objective every ``trace_every`` iterations (``trace[0]`` the start), empty without it.
    """

    pe_of: np.ndarray
    cost: int
    initial_cost: int
    accepted: int
    trace: np.ndarray


def _search(collective: Collective, allocation: Allocation, pe_of: Any, iterations: int, objective: str, seed: int,
            trace_every: int, progress: Callable[[float], Any] | None, t0: float, t1: float, what: str) -> SearchResult:
    u = unicasts(collective)
    if not isinstance(allocation, Allocation):
        raise MappingError(f"{what} needs an Allocation, got {type(allocation).__name__}")
    pe = _pe_of(pe_of, u.n)
    check_mapping(pe, u.n, allocation, u.n)
    for name, value in (("iterations", iterations), ("trace_every", trace_every)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not 0 <= value < 2**63:
            raise MappingError(f"{what}: {name} = {value!r} must be a non-negative integer")
    obj = _objective(objective)
    m = allocation.machine._core
    try:
        out, start, cost, kept, trace = _core.twoopt(m, u.n, u.stage_ptr, u.src, u.dst, u.count, pe, objective=obj,
                                              iterations=int(iterations), t0=float(t0), t1=float(t1),
                                              trace_every=int(trace_every), seed=int(seed) % 2**64,
                                              progress=progress, what=what)
    except (CoreError, CoreInputError) as exc:
        raise MappingError(f"{what}: {exc}") from None
    return SearchResult(out, int(cost), int(start), int(kept), trace)


def two_opt(collective: Collective, allocation: Allocation, pe_of: Any, *, iterations: int = 200_000,
            objective: str = "hops", seed: int = 0, trace_every: int = 0,
            progress: Callable[[float], Any] | None = None) -> SearchResult:
    """Cui's two-opt (003 §3.6): random pairwise rank swaps, kept only when the objective strictly falls.

    Parameters
    ----------
    collective : Schedule, Pattern or list of them
        The unicasts to place (a list: their costs add up).
    allocation : Allocation
        ``pe_of`` must lie in it; swaps exchange the PEs of two ranks.
    pe_of : array_like
        The starting placement (one PE per rank).
    iterations : int
        Swaps tried (the thesis: 200,000 for collectives, 10^6 for its
        convergence plots).
    objective : {"hops", "contention"}
    seed : int
    trace_every : int
        Record the objective every this many iterations (0: no trace).
    progress : callable, optional
        As for :func:`topomap.map`.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.collectives.schedules import recursive_doubling
    >>> alloc = tm.machine("shortcut:n=64,d=11,seed=0").allocate(32, policy="random", seed=1)
    >>> r = two_opt(recursive_doubling(32), alloc, alloc.pes, iterations=20_000, seed=2)
    >>> bool(r.cost < r.initial_cost), r.cost >= 32 * 5      # at least 1 hop per unicast
    (True, True)
    """
    return _search(collective, allocation, pe_of, iterations, objective, seed, trace_every, progress, 0.0, 0.0,
                   "two-opt")


def anneal(collective: Collective, allocation: Allocation, pe_of: Any, *, iterations: int = 200_000,
           objective: str = "hops", t0: float = 2.0, t1: float = 0.05, seed: int = 0, trace_every: int = 0,
           progress: Callable[[float], Any] | None = None) -> SearchResult:
    """Simulated annealing over two-opt's swap (the thesis's SA competitor, 003 §3.7).

    A swap that raises the objective by ``delta`` is kept with probability
    ``exp(-delta / T)``; ``T`` falls geometrically from ``t0`` to ``t1``
    (objective units) over the iterations; the best placement seen is
    returned.  The thesis gives no schedule; these defaults accept a one-hop
    loss with probability 0.61 at the start and 2e-9 at the end.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.collectives.schedules import binomial_bcast
    >>> alloc = tm.machine("shortcut:n=64,d=11,seed=0").allocate(32, policy="random", seed=1)
    >>> r = anneal(binomial_bcast(32), alloc, alloc.pes, iterations=20_000, seed=2)
    >>> bool(r.cost <= r.initial_cost)
    True
    """
    if not (isinstance(t0, (int, float)) and isinstance(t1, (int, float)) and 0 < t1 <= t0 < float("inf")):
        raise MappingError(f"anneal needs temperatures t0 >= t1 > 0, got t0 = {t0!r}, t1 = {t1!r}")
    return _search(collective, allocation, pe_of, iterations, objective, seed, trace_every, progress, t0, t1,
                   "shortcut-anneal")


def place(collective: Collective, allocation: Allocation, method: str = "two-opt", seed: int = 0,
          progress: Callable[[float], Any] | None = None, **options: Any) -> Mapping:
    """Run a registered mapper on a collective, keeping its stages (``topomap.map`` sees one pattern).

    The contention objective needs the stages; the hop count does not, so
    ``topomap.map(schedule.total, ...)`` finds the same hops placement.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.collectives.schedules import bruck
    >>> alloc = tm.machine("circulant:64").allocate(64)
    >>> mp = place(bruck(16), alloc, method="shortcut-circulant", start=0)
    >>> placement_cost(bruck(16), alloc, mp.pe_of)          # m log2 m, one hop each
    64
    """
    table = methods()
    if method not in table:
        raise MappingError(f"unknown mapping method {method!r}; registered: {', '.join(table)}")
    info = table[method]
    unknown = set(options) - set(info.options)
    if unknown:
        raise MappingError(f"method {method!r} has no option {sorted(unknown)[0]!r}; "
                           f"its options: {', '.join(info.options) or 'none'}")
    opts = {k: d for k, (d, _) in info.options.items()}
    opts.update(options)
    n = unicasts(collective).n
    pe_of = np.asarray(info.func(collective, allocation, seed=int(seed), capacity=1, progress=progress, **opts))
    check_mapping(pe_of, n, allocation, 1)
    return Mapping(pe_of, method=method, seed=int(seed), options=opts, capacity=1)
