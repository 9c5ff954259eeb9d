"""The machine: a network of compute nodes, each holding the same node tree.

Every question about distances and routes goes to the C routing oracle
(``topomap._core.Machine``); this module only describes and composes.

Numbering (shared with Scotch and KaHIP): torus/mesh node id =
``x0 + d0*(x1 + d1*(x2 + ...))``; PE id = node id x PEs-per-node + local index;
inside a node, local indices follow the node tree (top level most significant).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _core
from .errors import MachineError, MappingError
from .node.nodetree import NodeTree

if TYPE_CHECKING:
    from .networks import Network

__all__ = ["Machine", "Allocation"]

_POLICIES = {"contiguous": 0, "random": 1, "fragmented": 2}


class Machine:
    """A machine: ``network`` of nodes x ``node`` tree of PEs, with link capacities.

    Build one from a spec string with :func:`topomap.machine` or directly.

    Parameters
    ----------
    network : Network
        How nodes are connected: :class:`SingleNode`, :class:`Torus`,
        :class:`TreeNetwork`, ... (see :mod:`topomap.networks`).
    node : NodeTree
        The inside of every node (its leaves are the PEs).
    capacity : array_like, optional
        Capacity of each directed link (default 1 for all).
    spec : str, optional
        The spec string this machine was built from, for display.

    Examples
    --------
    >>> import topomap as tm
    >>> m = tm.machine("torus:4x4/2")
    >>> m.nnodes, m.npes, m.route(0, 5).tolist()
    (16, 32, [0, 6])
    """

    def __init__(self, network: Network, node: NodeTree, capacity: Any = None, spec: str | None = None):
        self.network = network
        self.node = node
        groups = np.ascontiguousarray(node.groups, dtype=np.int32)
        costs = np.ascontiguousarray(node.costs, dtype=np.float64)
        try:
            core = _core.Machine.create(network.kind, groups, costs, network.core_params())
        except (ValueError, KeyError) as exc:
            raise MachineError(f"{network.spec_head()}: {exc}") from None
        self._core = core
        self.spec = spec or self._describe()
        if capacity is not None:
            self.set_capacities(capacity)

    # ---------------------------------------------------------------- sizes
    @property
    def nnodes(self) -> int:
        """Number of compute nodes."""
        return self._core.nnodes

    @property
    def npes(self) -> int:
        """Number of processing elements."""
        return self._core.npes

    @property
    def pes_per_node(self) -> int:
        """PEs in each node."""
        return self._core.pes_per_node

    @property
    def nlinks(self) -> int:
        """Number of directed link ids (some mesh ids are not real links; see :meth:`links_exist`)."""
        return self._core.nlinks

    @property
    def max_route(self) -> int:
        """The longest route in links: the diameter of a torus, mesh or tree network."""
        return self._core.max_route

    @property
    def level_names(self) -> list[str]:
        """Name of each lowest-common-ancestor level: 0 = same PE, then the node
        tree levels bottom-up, then the network levels."""
        names = ["PE", *self.node.levels, *self.network.level_names()]
        # Metrics.level_bytes is keyed by these names: a network level named
        # like a node level must not merge with it.
        seen: dict[str, int] = {}
        for i, name in enumerate(names):
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:
                names[i] = f"{name}#{seen[name]}"
        return names

    # ---------------------------------------------------------------- oracle
    def node_of(self, pe: Any) -> np.ndarray:
        """Node of each PE."""
        pe = np.asarray(pe)
        self._check_pes(pe)
        return pe // self.pes_per_node

    def route(self, node_a: int, node_b: int) -> np.ndarray:
        """Directed link ids of the route from ``node_a`` to ``node_b``."""
        try:
            return self._core.route(int(node_a), int(node_b))
        except (IndexError, ValueError) as exc:
            raise MachineError(str(exc)) from None

    def hops(self, node_a: Any, node_b: Any) -> np.ndarray:
        """Number of links between node pairs (vectorised).

        Raises MachineError for a pair the machine has no route for (a
        ``"table"``-routed graph given routes for some pairs only)."""
        h = self._pairwise(self._core.route_counts, node_a, node_b)
        if h.size and h.min() < 0:
            i = int(np.argmin(h.ravel()))
            a, b = np.broadcast_arrays(np.asarray(node_a), np.asarray(node_b))
            raise MachineError(f"the machine has no route from node {a.ravel()[i]} to node {b.ravel()[i]}")
        return h

    def distance(self, pe_a: Any, pe_b: Any) -> np.ndarray:
        """QAP distance between PE pairs (vectorised): node tree cost inside a
        node, hops on a torus/mesh, the level cost on a tree network."""
        return self._pairwise(self._core.distances, pe_a, pe_b)

    def level_of(self, pe_a: Any, pe_b: Any) -> np.ndarray:
        """Level of the lowest common ancestor of PE pairs (see :attr:`level_names`)."""
        return self._pairwise(self._core.levels, pe_a, pe_b)

    def distance_matrix(self, pes: Any = None) -> np.ndarray:
        """Dense distance matrix between ``pes`` (default: all PEs; refused above 2**14)."""
        pes = np.arange(self.npes) if pes is None else np.asarray(pes, dtype=np.int64)
        if pes.size > 2**14:
            raise MachineError(f"a dense {pes.size}x{pes.size} distance matrix is too large")
        a, b = np.meshgrid(pes, pes, indexing="ij")
        return self.distance(a, b)

    def capacities(self) -> np.ndarray:
        """Capacity of every directed link."""
        return self._core.capacities()

    def set_capacities(self, capacity: Any) -> None:
        """Set link capacities: a scalar or one positive value per link id."""
        try:
            cap = np.asarray(capacity, dtype=np.float64)
        except (TypeError, ValueError):
            raise MachineError(f"capacities must be numbers, got {capacity!r}") from None
        if cap.ndim == 0:
            cap = np.full(self.nlinks, float(cap))
        try:
            self._core.set_capacities(cap)
        except ValueError as exc:
            raise MachineError(str(exc)) from None

    def links_exist(self) -> np.ndarray:
        """Boolean mask over link ids: False for ids that are not real links (mesh
        borders, dimensions of size 1).  A ring of 2 keeps both directions even
        though the + tie-break never routes over the - one."""
        return self._core.links_exist()

    @property
    def nvertices(self) -> int:
        """Vertices of the network graph: nodes ``0..nnodes-1``, then the switches."""
        return self._core.nvertices

    def links(self) -> dict[str, np.ndarray]:
        """The network as a graph: one row per real directed link.

        Returns a dict of equal-length arrays: ``link`` (id), ``src`` and
        ``dst`` (vertex ids: nodes first, then switches) and ``capacity``.

        Examples
        --------
        >>> import topomap as tm
        >>> g = tm.machine("mesh:3").links()
        >>> list(zip(g["src"].tolist(), g["dst"].tolist()))
        [(0, 1), (1, 2), (1, 0), (2, 1)]
        """
        src, dst = self._core.link_ends()
        ids = np.flatnonzero(src >= 0).astype(np.int32)
        return {"link": ids, "src": src[ids], "dst": dst[ids], "capacity": self.capacities()[ids]}

    # ---------------------------------------------------------------- allocation
    def allocate(self, n: int, policy: str = "contiguous", seed: int = 0, runs: int = 4) -> "Allocation":
        """The PEs a job of ``n`` processes is given, in launcher rank order.

        Whole nodes are taken (``ceil(n / pes_per_node)``), their PEs in local
        order; the last node may be used in part.

        Parameters
        ----------
        n : int
            Number of PEs wanted.
        policy : {"contiguous", "random", "fragmented"}
            Which nodes: the first ones; random ones in random order; or
            ``runs`` runs of consecutive nodes at random places (like Cray
            allocations), in increasing node order.
        seed : int
            Seed for the random policies.
        runs : int
            Number of runs of a fragmented allocation (fewer when the job
            needs so many nodes that the free ones cannot separate that many).

        Examples
        --------
        >>> import topomap as tm
        >>> tm.machine("torus:4x4/2").allocate(6).pes.tolist()
        [0, 1, 2, 3, 4, 5]
        """
        if policy not in _POLICIES:
            raise MachineError(f"unknown allocation policy {policy!r}; choose one of {sorted(_POLICIES)}")
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
            raise MachineError(f"allocate needs a positive number of PEs, got {n!r}")
        if n > self.npes:
            raise MachineError(f"cannot allocate {n} PEs on a machine with {self.npes}")
        if not isinstance(runs, (int, np.integer)) or isinstance(runs, bool) or runs < 1:
            raise MachineError(f"runs must be a positive integer, got {runs!r}")
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or not 0 <= seed < 2**64:
            raise MachineError(f"seed must be an integer in [0, 2**64), got {seed!r}")
        k = -(-int(n) // self.pes_per_node)
        try:
            nodes = _core.allocate_nodes(self._core, k, _POLICIES[policy], runs, int(seed))
        except ValueError as exc:
            raise MachineError(str(exc)) from None
        pes = (nodes[:, None].astype(np.int64) * self.pes_per_node + np.arange(self.pes_per_node)).ravel()[:n]
        return Allocation(self, pes.astype(np.int32), policy=policy, seed=int(seed))

    def allocation(self, pes: Any) -> "Allocation":
        """An allocation of explicitly listed PEs (in rank order)."""
        return Allocation(self, np.asarray(pes), policy="explicit", seed=0)

    # ---------------------------------------------------------------- summary
    def summary(self, exact_limit: int = 2048, samples: int = 200_000) -> dict:
        """Sizes and shape of the network: nodes, PEs, links, diameter, ASPL.

        The diameter and average shortest path length (in links, over ordered
        pairs of distinct nodes) are exact when ``nnodes <= exact_limit`` and
        otherwise estimated from ``samples`` seeded random pairs
        (``aspl_exact`` tells which).

        Examples
        --------
        >>> import topomap as tm
        >>> s = tm.machine("torus:4x4").summary()
        >>> s["diameter"], s["aspl"]
        (4, 2.1333333333333333)
        """
        nn = self.nnodes
        out: dict[str, Any] = {
            "spec": self.spec,
            "network": self.network.kind,
            "nodes": nn,
            "pes_per_node": self.pes_per_node,
            "pes": self.npes,
            "links": int(self.links_exist().sum()),
            "node_levels": list(self.node.levels),
            **self.network.summary(),
        }
        if nn == 1:
            out.update(diameter=0, aspl=0.0, aspl_exact=True)
            return out
        if nn <= exact_limit:
            a, b = np.divmod(np.arange(nn * nn, dtype=np.int64), nn)
            keep = a != b
            h = self.hops(a[keep], b[keep])
            exact = True
        else:
            rng = np.random.Generator(np.random.PCG64(0))
            a = rng.integers(0, nn, samples)
            b = (a + rng.integers(1, nn, samples)) % nn
            h = self.hops(a, b)
            exact = False
        diameter = int(h.max()) if exact else int(self.max_route)
        out.update(diameter=diameter, aspl=float(h.mean()), aspl_exact=exact)
        return out

    @staticmethod
    def _pairwise(fn: Any, a: Any, b: Any) -> np.ndarray:
        """Apply a vectorised oracle call to broadcast pairs, keeping the shape."""
        a, b = np.broadcast_arrays(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
        try:
            return fn(a.ravel(), b.ravel()).reshape(a.shape)
        except IndexError as exc:
            raise MachineError(str(exc)) from None

    def _check_pes(self, pe: np.ndarray) -> None:
        if pe.size and (pe.min() < 0 or pe.max() >= self.npes):
            bad = pe.ravel()[(pe.ravel() < 0) | (pe.ravel() >= self.npes)][0]
            raise MachineError(f"PE {bad} is out of range [0, {self.npes})")

    def _describe(self) -> str:
        return f"{self.network.spec_head()}/{self.pes_per_node}"

    def __repr__(self) -> str:
        return f"Machine({self.spec!r}, nodes={self.nnodes}, pes={self.npes}, links={self.nlinks})"


@dataclass(frozen=True, eq=False)
class Allocation:
    """The PEs a job was given, in the order the launcher hands out ranks.

    That order *is* the default ("block", in-order) mapping: rank ``i`` runs on
    ``pes[i]``.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("torus:8x8/4").allocate(64, policy="fragmented", seed=1)
    >>> len(alloc), len(alloc.nodes())
    (64, 16)
    """

    machine: Machine
    pes: np.ndarray
    policy: str = "explicit"
    seed: int = 0

    def __post_init__(self) -> None:
        pes = np.asarray(self.pes)
        if pes.ndim != 1 or pes.size == 0:
            raise MappingError("an allocation needs a non-empty 1-D list of PEs")
        if pes.dtype.kind not in "iu":
            raise MappingError(f"allocation PEs must be integers, got dtype {pes.dtype}")
        self.machine._check_pes(pes)
        uniq, counts = np.unique(pes, return_counts=True)
        if (counts > 1).any():
            raise MappingError(f"PE {uniq[counts > 1][0]} appears twice in the allocation")
        pes = np.array(pes, dtype=np.int32, order="C", copy=True)  # never freeze the caller's array
        pes.setflags(write=False)
        object.__setattr__(self, "pes", pes)

    def __len__(self) -> int:
        return int(self.pes.size)

    def nodes(self) -> np.ndarray:
        """The allocation's nodes in order of first appearance."""
        node = self.pes // self.machine.pes_per_node
        _, first = np.unique(node, return_index=True)
        return node[np.sort(first)]

    def __repr__(self) -> str:
        return f"Allocation({len(self)} PEs on {len(self.nodes())} nodes of {self.machine.spec!r}, policy={self.policy!r})"
