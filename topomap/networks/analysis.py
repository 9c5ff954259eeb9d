"""Network analysis of a machine: distances, link classes, bisection cuts, degrees.

Everything here uses only the public :class:`~topomap.Machine` API
(``links()``, ``nvertices``, ``hops``, ``network.kind``), so it works for every
network kind, present and future.

Definitions (standard graph notions; textbook forms, e.g. Dally & Towles,
*Principles and Practices of Interconnection Networks*, 2004, ch. 3):

* **Distances** are over ordered pairs of distinct compute nodes, as in
  :meth:`Machine.summary`.  *Routed*: the number of links on the machine's own
  route (``Machine.hops``).  *Graph*: breadth-first search over the directed
  links, through switches, i.e. the minimal hop count; routing may be longer.
* **Vertex level**: 0 for compute nodes; a switch's level is its hop distance
  from the nearest compute node (BFS over the links), which equals the tree
  level on trees and fat trees and 1 for the routers of direct networks.
* **Link classes**: on a torus/mesh, the dimension a link runs along
  (``dim0``, ``dim1``, ...); otherwise the levels of its two endpoints,
  lower first (``node-node``, ``node-switch1``, ``switch1-switch2``...).
* **Bisection**: the compute nodes are split into two halves (sizes
  ``floor(N/2)`` and ``ceil(N/2)``); switches go to whichever side lowers the
  cut.  The cut weight is the capacity of links crossing it in either
  direction; ``bw_per_node`` is the smaller of the two one-way crossing
  capacities divided by the number of nodes in the smaller half, i.e. the
  bandwidth each node of that half gets when all of them send across at once.

Choices the definitions leave open, made here:

* ``halves``: node ids below ``floor(N/2)`` on side 0.  Switch sides: a
  switch starts on the side of its nearest compute nodes (BFS distance; ties
  to side 0), then single switches move while that lowers the cut (in vertex
  order, until no move helps).  Switches are free, so the result is an upper
  bound on the minimum cut for that node split.
* ``kl``: Kernighan & Lin (Bell Syst. Tech. J. 49(2), 1970) pair swaps of
  compute nodes, started from ``halves``.  In each pass the unlocked side-0
  node of largest gain is paired with the side-1 node maximising
  ``D_b - 2 w(a, b)`` (the classic pair choice restricted to the best ``a``,
  O(V) per swap instead of O(V^2)); the best prefix of the pass is kept, then
  switches are re-placed as above.  Passes stop after ``passes`` or when one
  brings no gain.  Deterministic: ties go to the lowest vertex id.  Cost
  O(passes x N x V).  KL is a local search, so ``kl_*`` bounds the true
  bisection from above: on ``torus:16x16x8`` it keeps the 512-link plane cut
  of the id split although cutting a 16-long dimension takes 256.
* Link weights for the cut are capacities; two links between the same pair of
  vertices add up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from .. import _rng
from ..errors import MachineError
from ..machine import Machine

__all__ = ["analyze", "bisection", "vertex_levels", "Cut"]

# Pair/edge work per vectorised chunk: bounds temporary memory (~32 MB of int64).
_CHUNK = 1 << 22


# ---------------------------------------------------------------- graph helpers

def _directed(machine: Machine) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    g = machine.links()
    return g["src"].astype(np.int64), g["dst"].astype(np.int64), g["capacity"].astype(np.float64)


def _bfs_layers(src: np.ndarray, dst: np.ndarray, nvert: int,
                sources: list[np.ndarray]) -> Iterator[tuple[int, np.ndarray]]:
    """Breadth-first layers from many source sets at once.

    Yields ``(level, bits)`` for level 0, 1, ...: ``bits`` is a ``(nvert,
    words)`` uint64 bitset whose bit ``r`` of vertex ``v`` says that ``v`` is
    first reached from ``sources[r]`` at that level.  Bit-parallel
    (64 searches per machine word): a layer reaches the destinations of the
    links leaving it, by an or-reduction over the links sorted by destination.
    """
    words = (len(sources) + 63) // 64
    front = np.zeros((nvert, words), dtype=np.uint64)
    for r, s in enumerate(sources):
        front[s, r >> 6] |= np.uint64(1) << np.uint64(r & 63)
    seen = front.copy()
    yield 0, front
    if src.size == 0:
        return
    order = np.argsort(dst, kind="stable")
    esrc = src[order]
    targets, starts = np.unique(dst[order], return_index=True)
    level = 0
    while True:
        level += 1
        reach = np.zeros_like(front)
        reach[targets] = np.bitwise_or.reduceat(front[esrc], starts, axis=0)
        front = reach & ~seen
        if not front.any():
            return
        seen |= front
        yield level, front


def _bits(bits: np.ndarray, rows: int) -> np.ndarray:
    """A ``(nvert, words)`` uint64 bitset as a bool array ``(rows, nvert)``."""
    little = bits.astype("<u8").view(np.uint8)
    return np.unpackbits(little, axis=1, bitorder="little")[:, :rows].T.astype(bool)


def _bfs(src: np.ndarray, dst: np.ndarray, nvert: int, sources: list[np.ndarray]) -> np.ndarray:
    """Hop distances (-1 = unreachable) from each source set, one row per set."""
    dist = np.full((len(sources), nvert), -1, dtype=np.int32)
    for level, bits in _bfs_layers(src, dst, nvert, sources):
        dist[_bits(bits, len(sources))] = level
    return dist


def vertex_levels(machine: Machine) -> np.ndarray:
    """Level of every network vertex: 0 for nodes, hop distance to the nearest node for switches.

    Switches no compute node reaches get ``-1``.

    Parameters
    ----------
    machine : Machine
        Any machine.

    Returns
    -------
    numpy.ndarray of int32
        One entry per vertex (nodes first, then switches).

    Examples
    --------
    >>> import topomap as tm
    >>> vertex_levels(tm.machine("hierarchy:1:2:2/1:10:100")).tolist()
    [0, 0, 0, 0, 1, 1, 2]
    """
    src, dst, _ = _directed(machine)
    return _bfs(src, dst, machine.nvertices, [np.arange(machine.nnodes)])[0]


def _link_classes(machine: Machine, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Class name of every link (see the module docstring)."""
    net = machine.network
    if net.kind == "torus":
        dims = tuple(int(d) for d in net.dims)
        ca = np.stack(np.unravel_index(src, dims, order="F"))
        cb = np.stack(np.unravel_index(dst, dims, order="F"))
        return np.array([f"dim{d}" for d in np.argmax(ca != cb, axis=0)], dtype=object)
    lev = vertex_levels(machine)
    names = np.array(["switch?" if v < 0 else "node" if v == 0 else f"switch{v}" for v in lev], dtype=object)
    # "switch?" (unreachable) sorts after every reachable level
    key = np.where(lev < 0, np.iinfo(np.int32).max, lev)
    lo = np.where(key[src] <= key[dst], src, dst)
    hi = np.where(key[src] <= key[dst], dst, src)
    return names[lo] + "-" + names[hi]


def _undirected(nvert: int, src: np.ndarray, dst: np.ndarray, cap: np.ndarray) -> tuple[np.ndarray, ...]:
    """Symmetric CSR (indptr, indices, weights): w(u, v) = capacity of u->v plus v->u links."""
    u = np.concatenate([src, dst])
    v = np.concatenate([dst, src])
    w = np.concatenate([cap, cap])
    key, inv = np.unique(u * nvert + v, return_inverse=True)
    weights = np.bincount(inv, weights=w, minlength=key.size)
    rows, cols = np.divmod(key, nvert)
    indptr = np.zeros(nvert + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=nvert), out=indptr[1:])
    return indptr, cols, weights


# ---------------------------------------------------------------- bisection

@dataclass(frozen=True, eq=False)
class Cut:
    """A split of the network vertices into sides 0 and 1.

    Attributes
    ----------
    side : numpy.ndarray
        int8, one entry per vertex (nodes first, then switches).
    nodes : tuple of int
        Compute nodes on side 0 and on side 1.
    links_fwd, links_back : int
        Directed links from side 0 to side 1, and back.
    capacity_fwd, capacity_back : float
        Their capacities.

    Examples
    --------
    >>> import topomap as tm
    >>> bisection(tm.machine("torus:4x4"), "halves").nodes
    (8, 8)
    """

    side: np.ndarray
    nodes: tuple[int, int]
    links_fwd: int
    links_back: int
    capacity_fwd: float
    capacity_back: float

    @property
    def bw_per_node(self) -> float:
        """Smaller one-way crossing capacity / nodes in the smaller half."""
        return min(self.capacity_fwd, self.capacity_back) / min(self.nodes)

    @classmethod
    def of(cls, machine: Machine, side: Any) -> "Cut":
        """Measure the cut given by ``side`` (0/1 per vertex).

        Examples
        --------
        >>> import topomap as tm
        >>> c = Cut.of(tm.machine("torus:4"), [0, 0, 1, 1])
        >>> c.links_fwd, c.capacity_back, c.bw_per_node
        (2, 2.0, 1.0)
        """
        given = np.asarray(side)
        if given.shape != (machine.nvertices,) or not np.isin(given, (0, 1)).all():
            raise MachineError(f"a cut needs one side (0 or 1) for each of the {machine.nvertices} vertices")
        side = given.astype(np.int8)
        src, dst, cap = _directed(machine)
        fwd = (side[src] == 0) & (side[dst] == 1)
        back = (side[src] == 1) & (side[dst] == 0)
        n1 = int(side[:machine.nnodes].sum())
        side.setflags(write=False)
        return cls(side, (machine.nnodes - n1, n1), int(fwd.sum()), int(back.sum()),
                   float(cap[fwd].sum()), float(cap[back].sum()))


class _Partition:
    """Sides and KL gains ``D[v]`` = weight to the other side - weight to its own side."""

    def __init__(self, machine: Machine, side: np.ndarray):
        src, dst, cap = _directed(machine)
        self.nnodes, self.nvert = machine.nnodes, machine.nvertices
        self.indptr, self.nbr, self.w = _undirected(self.nvert, src, dst, cap)
        self.side = side.astype(np.int8)
        owner = np.repeat(np.arange(self.nvert), np.diff(self.indptr))
        sign = np.where(self.side[owner] != self.side[self.nbr], 1.0, -1.0)
        self.gain = np.bincount(owner, weights=sign * self.w, minlength=self.nvert)
        self.tol = 1e-12 * max(1.0, float(self.w.sum()))

    def move(self, v: int) -> None:
        """Move ``v`` to the other side, updating its neighbours' gains."""
        lo, hi = self.indptr[v], self.indptr[v + 1]
        nbr, w = self.nbr[lo:hi], self.w[lo:hi]
        # a neighbour on v's old side now has v across the cut
        np.add.at(self.gain, nbr, np.where(self.side[nbr] == self.side[v], 2.0, -2.0) * w)
        self.gain[v] = -self.gain[v]
        self.side[v] ^= 1

    def place_switches(self) -> None:
        """Move single switches while that lowers the cut (vertex order)."""
        moved = True
        while moved:
            moved = False
            for v in range(self.nnodes, self.nvert):
                if self.gain[v] > self.tol:
                    self.move(v)
                    moved = True

    def kl_pass(self) -> float:
        """One Kernighan-Lin pass over node pairs; keeps the best prefix, returns its gain."""
        locked = np.zeros(self.nnodes, dtype=bool)
        history: list[int] = []
        total, best, best_len = 0.0, 0.0, 0
        for _ in range(min(self.nnodes - int(self.side[:self.nnodes].sum()), int(self.side[:self.nnodes].sum()))):
            gain = self.gain[:self.nnodes]
            cand_a = np.where(~locked & (self.side[:self.nnodes] == 0), gain, -np.inf)
            a = int(np.argmax(cand_a))
            total += gain[a]
            self.move(a)  # b's gain now includes the -2 w(a, b) correction
            cand_b = np.where(~locked & (self.side[:self.nnodes] == 1), self.gain[:self.nnodes], -np.inf)
            cand_b[a] = -np.inf
            b = int(np.argmax(cand_b))
            total += self.gain[b]
            self.move(b)
            locked[[a, b]] = True
            history += [a, b]
            if total > best + self.tol:
                best, best_len = total, len(history)
        for v in reversed(history[best_len:]):
            self.move(v)
        return best


def _initial_sides(machine: Machine) -> np.ndarray:
    """Node ids below floor(N/2) on side 0; each switch on the side of its nearest nodes."""
    n, nvert = machine.nnodes, machine.nvertices
    side = np.zeros(nvert, dtype=np.int8)
    side[n // 2:n] = 1
    if nvert > n:
        src, dst, _ = _directed(machine)
        both = (np.concatenate([src, dst]), np.concatenate([dst, src]))
        d0, d1 = _bfs(*both, nvert, [np.arange(n // 2), np.arange(n // 2, n)])
        far = np.iinfo(np.int32).max
        d0, d1 = np.where(d0 < 0, far, d0), np.where(d1 < 0, far, d1)
        side[n:] = (d1[n:] < d0[n:]).astype(np.int8)
    return side


def bisection(machine: Machine, method: str = "kl", passes: int = 4) -> Cut:
    """A balanced cut of the compute nodes (see the module docstring).

    Parameters
    ----------
    machine : Machine
        A machine with at least two compute nodes.
    method : {"kl", "halves"}
        ``"halves"``: node ids split at ``floor(N/2)``; ``"kl"``: improved from
        there by Kernighan-Lin pair swaps.
    passes : int
        Most Kernighan-Lin passes.

    Returns
    -------
    Cut

    Examples
    --------
    A 4x2 mesh split by node id (rows) cuts 4 links each way; KL finds the
    cut between columns 0-1 and 2-3 (2 links):

    >>> import topomap as tm
    >>> m = tm.machine("mesh:4x2")
    >>> bisection(m, "halves").links_fwd, bisection(m, "kl").links_fwd
    (4, 2)
    """
    if method not in ("kl", "halves"):
        raise MachineError(f"unknown bisection method {method!r}; choose 'kl' or 'halves'")
    if not isinstance(passes, (int, np.integer)) or isinstance(passes, bool) or passes < 0:
        raise MachineError(f"passes must be a non-negative integer, got {passes!r}")
    if machine.nnodes < 2:
        raise MachineError(f"a bisection needs at least 2 compute nodes; {machine.spec!r} has {machine.nnodes}")
    part = _Partition(machine, _initial_sides(machine))
    part.place_switches()
    if method == "kl":
        for _ in range(passes):
            if part.kl_pass() <= part.tol:
                break
            part.place_switches()
    return Cut.of(machine, part.side)


# ---------------------------------------------------------------- distances

def _sources(n: int, sample: int | None, seed: int) -> np.ndarray:
    if sample is None or sample >= n:
        return np.arange(n)
    if not isinstance(sample, (int, np.integer)) or isinstance(sample, bool) or sample < 1:
        raise MachineError(f"sample must be a positive number of source nodes, got {sample!r}")
    # version-proof seeded choice: the `sample` nodes with the smallest uniforms
    return np.sort(np.argsort(_rng.uniform(seed, np.arange(n)), kind="stable")[:sample])


def _routed(machine: Machine, sources: np.ndarray) -> tuple[int, int]:
    """(max, sum) of route lengths from ``sources`` to every other node."""
    n = machine.nnodes
    rows = max(1, _CHUNK // n)
    longest = total = 0
    dst = np.arange(n)
    for i in range(0, sources.size, rows):
        a = np.repeat(sources[i:i + rows], n)
        b = np.tile(dst, sources[i:i + rows].size)
        h = machine.hops(a, b)
        longest = max(longest, int(h.max()))
        total += int(h.sum())
    return longest, total


def _graph(machine: Machine, sources: np.ndarray) -> tuple[int, int, bool]:
    """(max, sum, every pair reachable) of BFS distances from ``sources`` to the nodes."""
    src, dst, _ = _directed(machine)
    n = machine.nnodes
    # 64 searches per word; bound the (links x words) temporary of one layer
    rows = 64 * max(1, _CHUNK // (8 * max(src.size, machine.nvertices)))
    longest = total = reached = 0
    for i in range(0, sources.size, rows):
        for level, bits in _bfs_layers(src, dst, machine.nvertices, [np.array([s]) for s in sources[i:i + rows]]):
            count = int(np.unpackbits(bits[:n].astype("<u8").view(np.uint8)).sum())
            if level and count:
                longest = max(longest, level)
                total += level * count
                reached += count
    return longest, total, reached == sources.size * (n - 1)


# ---------------------------------------------------------------- entry point

def _stats(prefix: str, values: np.ndarray) -> dict[str, Any]:
    return {f"{prefix}_min": int(values.min()), f"{prefix}_max": int(values.max()),
            f"{prefix}_mean": float(values.mean())}


def analyze(machine: Machine, sample: int | None = None, seed: int = 0, passes: int = 4) -> dict[str, Any]:
    """Distances, link classes, bisection cuts and degrees of a machine's network.

    Parameters
    ----------
    machine : Machine
        Any machine.
    sample : int, optional
        Measure distances from this many seeded random source nodes instead of
        all (``distances_exact`` tells which); the default is exact, which
        costs O(N^2) route lengths and N breadth-first searches.
    seed : int
        Seed of the source sample.
    passes : int
        Most Kernighan-Lin passes of the ``kl`` bisection.

    Returns
    -------
    dict
        Flat and JSON-ready: ``nodes``, ``switches``, ``links`` (directed),
        ``routed_diameter``/``routed_aspl`` (the machine's routes),
        ``graph_diameter``/``graph_aspl`` (BFS; ``None`` when some node cannot
        reach another), ``distances_exact``, ``links[CLASS]`` and
        ``capacity[CLASS]`` per link class, ``node_degree_*`` and
        ``switch_degree_*`` (outgoing links; min, max, mean), and for each
        bisection ``halves`` and ``kl``: ``*_links`` and ``*_capacity`` (side 0
        to side 1) and ``*_bw_per_node``.  See the module docstring.

    Examples
    --------
    A ring of 8 nodes: routes are shortest, 2 links cross each way between
    nodes 0-3 and 4-7, so each node of a half gets 2/4 of a link's capacity:

    >>> import topomap as tm
    >>> a = analyze(tm.machine("torus:8"))
    >>> a["routed_diameter"], a["graph_aspl"], a["links[dim0]"], a["kl_bw_per_node"]
    (4, 2.2857142857142856, 16, 0.5)
    """
    n = machine.nnodes
    src, dst, cap = _directed(machine)
    out: dict[str, Any] = {"nodes": n, "switches": machine.nvertices - n, "links": int(src.size),
                           "total_capacity": float(cap.sum())}
    sources = _sources(n, sample, seed)
    pairs = sources.size * (n - 1)
    if pairs:
        r_max, r_sum = _routed(machine, sources)
        g_max, g_sum, connected = _graph(machine, sources)
        out.update(routed_diameter=r_max, routed_aspl=r_sum / pairs,
                   graph_diameter=g_max if connected else None,
                   graph_aspl=g_sum / pairs if connected else None)
    else:
        out.update(routed_diameter=0, routed_aspl=0.0, graph_diameter=0, graph_aspl=0.0)
    out["distances_exact"] = bool(sources.size == n)
    if src.size:
        classes = _link_classes(machine, src, dst)
        for name in sorted(set(classes)):
            sel = classes == name
            out[f"links[{name}]"] = int(sel.sum())
            out[f"capacity[{name}]"] = float(cap[sel].sum())
    degree = np.bincount(src, minlength=machine.nvertices)
    out.update(_stats("node_degree", degree[:n]))
    if machine.nvertices > n:
        out.update(_stats("switch_degree", degree[n:]))
    if n >= 2:
        for method in ("halves", "kl"):
            cut = bisection(machine, method, passes)
            out.update({f"{method}_links": cut.links_fwd, f"{method}_capacity": cut.capacity_fwd,
                        f"{method}_bw_per_node": cut.bw_per_node})
    return out
