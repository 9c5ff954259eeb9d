"""Arbitrary switch graphs with routing tables (csrc/core/machine_graph.c and
csrc/core/route_build.c; the rules are in csrc/include/topomap/graph.h).

Vertices ``0..nnodes-1`` are compute nodes, ``nnodes..`` switches; link ``i``
goes from ``src[i]`` to ``dst[i]``.  Routing is chosen at construction:

* ``"shortest"``: minimum-hop routes, ties to the lowest link id, stored as
  destination-based forwarding tables (the InfiniBand LFT model: the route
  ``a -> b`` follows the tables of ``b`` from ``a``);
* ``"dmodk"``: minimum-hop, but among the equal-cost next links of a vertex
  (sorted by link id) the ``(b mod count)``-th: destinations spread over
  parallel paths;
* ``"table"``: explicit routes for the listed node pairs only; a pair without
  one is an error when a metric needs it.

Both table routings cost one BFS per node (``O(nnodes * (vertices + links))``
time, threaded) and ``vertices x nodes`` entries of memory: one byte each
(the port, among the vertex's outgoing links in link-id order) when no vertex
has more than 255 outgoing links, else two; refused, before the core builds
them, above :data:`~topomap.networks.limits.MAX_TABLE_BYTES` (1 GiB) or
:data:`~topomap.networks.limits.MAX_ROUTE_WORK` search steps.  Switches always forward; compute nodes forward only when the graph
has no switches (a direct network such as a circulant), so an InfiniBand host
with two ports never carries other hosts' traffic.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MachineError
from .base import Network
from .limits import check_tables

__all__ = ["GraphNetwork", "ROUTINGS"]

ROUTINGS = {"shortest": 0, "dmodk": 1, "table": 2}


def _count(value: Any, what: str, low: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < low:
        raise MachineError(f"{what} must be an integer >= {low}, got {value!r}")
    return int(value)


def _ids(values: Any, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise MachineError(f"{what} must be a 1-D list of ids, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise MachineError(f"{what} must hold integers, got dtype {arr.dtype}")
    if arr.size and (arr.min() < -2**31 or arr.max() >= 2**31):
        raise MachineError(f"{what} holds ids outside the int32 range")
    out = arr.astype(np.int32)
    out.setflags(write=False)
    return out


def _routes(routes: Any) -> Mapping[tuple[int, int], tuple[int, ...]]:
    """Explicit routes as a read-only {(a, b): links} mapping; an iterable of
    ((a, b), links) items may repeat a pair, which is refused."""
    items = routes.items() if isinstance(routes, Mapping) else routes
    if not isinstance(items, Iterable):
        raise MachineError(f"routes must be a mapping {{(src_node, dst_node): [link ids]}}, got {type(routes).__name__}")
    table: dict[tuple[int, int], tuple[int, ...]] = {}
    for item in items:
        try:
            (a, b), links = item
            key = (_count(a, "a route's source node", 0), _count(b, "a route's destination node", 0))
            hops = tuple(int(_count(l, "a link id", 0)) for l in links)
        except (TypeError, ValueError) as exc:
            raise MachineError(f"route entry {item!r} is not ((src_node, dst_node), [link ids]): {exc}") from None
        if key in table:
            raise MachineError(f"route {key[0]} -> {key[1]} is given twice")
        table[key] = hops
    return types.MappingProxyType(table)


@dataclass(frozen=True, eq=False)
class GraphNetwork(Network):
    """A network given as a graph of compute nodes and switches (see the module docstring).

    Parameters
    ----------
    nnodes : int
        Compute nodes: vertices ``0..nnodes-1``.
    nswitches : int
        Switches: vertices ``nnodes..nnodes+nswitches-1``.
    src, dst : array_like of int
        Directed link ``i`` goes from vertex ``src[i]`` to ``dst[i]``; a cable
        is two links.  Parallel links are allowed, loops are not.
    capacity : float or array_like of float, optional
        Capacity of every link or of each link (default 1).
    routing : {"shortest", "dmodk", "table"}
        How routes are chosen (see the module docstring).
    routes : mapping, optional
        ``{(src_node, dst_node): [link ids]}``, required with
        ``routing="table"`` and refused otherwise.  Each route must be a
        connected walk from its source node to its destination node.
    names : sequence of str, optional
        One unique name per vertex (nodes first), for display.

    Examples
    --------
    Two nodes on one switch, two cables (four links):

    >>> import topomap as tm
    >>> net = tm.GraphNetwork(2, 1, src=[0, 2, 1, 2], dst=[2, 0, 2, 1])
    >>> m = tm.Machine(net, tm.NodeTree.flat(4))
    >>> m.route(0, 1).tolist(), m.summary()["diameter"]
    ([0, 3], 2)
    """

    nnodes: int
    nswitches: int
    src: Any
    dst: Any
    capacity: Any = None
    routing: str = "shortest"
    routes: Any = None
    names: Any = None
    kind = "graph"

    def __post_init__(self) -> None:
        put = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        put("nnodes", _count(self.nnodes, "nnodes", 1))
        put("nswitches", _count(self.nswitches, "nswitches", 0))
        src, dst = _ids(self.src, "src"), _ids(self.dst, "dst")
        if src.shape != dst.shape:
            raise MachineError(f"a graph network needs one dst per src, got {src.size} and {dst.size}")
        put("src", src)
        put("dst", dst)
        if self.capacity is not None:
            try:
                cap = np.array(np.broadcast_to(np.asarray(self.capacity, dtype=np.float64), src.shape))
            except (TypeError, ValueError):
                raise MachineError(f"capacity must be a number or one number per link ({src.size})") from None
            cap.setflags(write=False)
            put("capacity", cap)
        if self.routing not in ROUTINGS:
            raise MachineError(f"unknown routing {self.routing!r}; choose one of {', '.join(ROUTINGS)}")
        if (self.routing == "table") != (self.routes is not None):
            raise MachineError("explicit routes go with routing='table' and only with it")
        if self.routes is not None:
            put("routes", _routes(self.routes))
        if self.names is not None:
            names = tuple(str(x) for x in self.names)
            if len(names) != self.nvertices:
                raise MachineError(f"names has {len(names)} entries for {self.nvertices} vertices")
            if len(set(names)) != len(names):
                dup = next(x for x in names if names.count(x) > 1)
                raise MachineError(f"vertex name {dup!r} is used twice")
            put("names", names)

    @property
    def nvertices(self) -> int:
        """Nodes plus switches."""
        return self.nnodes + self.nswitches

    @property
    def nlinks(self) -> int:
        """Number of directed links."""
        return int(self.src.size)

    def vertex_name(self, v: int) -> str:
        """Name of vertex ``v``: the given one, else ``node<v>`` or ``switch<v - nnodes>``."""
        if not 0 <= v < self.nvertices:
            raise MachineError(f"vertex {v} is out of range [0, {self.nvertices})")
        if self.names is not None:
            return self.names[v]
        return f"node{v}" if v < self.nnodes else f"switch{v - self.nnodes}"

    def core_params(self) -> dict[str, np.ndarray]:
        if self.routing != "table":
            out_links = np.unique(self.src, return_counts=True)[1].max(initial=0)
            check_tables(self.nvertices, self.nnodes, self.nlinks, int(out_links), "")  # Machine names the network
        routes = self.routes or {}
        lengths = np.fromiter((len(r) for r in routes.values()), dtype=np.int64, count=len(routes))
        links = [l for r in routes.values() for l in r]
        return {
            "sizes": np.array([self.nnodes, self.nswitches, ROUTINGS[self.routing]], dtype=np.int32),
            "src": self.src,
            "dst": self.dst,
            "capacity": np.ones(self.nlinks) if self.capacity is None else self.capacity,
            "pair_src": np.array([a for a, _ in routes], dtype=np.int64).astype(np.int32),
            "pair_dst": np.array([b for _, b in routes], dtype=np.int64).astype(np.int32),
            "route_ptr": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
            "route_links": np.array(links, dtype=np.int64).astype(np.int32),
        }

    def level_names(self) -> list[str]:
        return ["network"]

    def spec_head(self) -> str:
        return f"graph:nodes={self.nnodes},switches={self.nswitches},links={self.nlinks},routing={self.routing}"

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"switches": self.nswitches, "routing": self.routing}
        if self.routes is not None:
            out["explicit_routes"] = len(self.routes)
        return out

    @classmethod
    def from_networkx(cls, G: Any, nodes: Any = None, capacity: str = "capacity", routing: str = "shortest",
                      routes: Any = None) -> "GraphNetwork":
        """A graph network from a networkx graph.

        Parameters
        ----------
        G : networkx.Graph, DiGraph, MultiGraph or MultiDiGraph
            An undirected edge becomes two links (``u -> v`` then ``v -> u``),
            a directed edge one; parallel edges become parallel links.
        nodes : sequence, optional
            The graph vertices that are compute nodes, in node-id order; the
            others become switches in ``G``'s order.  Default: every vertex
            is a compute node (a direct network).
        capacity : str
            Edge attribute holding the capacity (default 1 where absent).
        routing, routes
            As for :class:`GraphNetwork`; route keys are node ids.

        Examples
        --------
        >>> import networkx as nx
        >>> import topomap as tm
        >>> net = tm.GraphNetwork.from_networkx(nx.star_graph(3), nodes=[1, 2, 3])
        >>> net.nnodes, net.nswitches, net.names
        (3, 1, ('1', '2', '3', '0'))
        """
        order = list(G.nodes) if nodes is None else list(nodes)
        index = {v: i for i, v in enumerate(order)}
        if len(index) != len(order):
            raise MachineError("nodes lists a vertex twice")
        missing = [v for v in order if v not in G]
        if missing:
            raise MachineError(f"node {missing[0]!r} is not a vertex of the graph")
        for v in G.nodes:
            if v not in index:
                index[v] = len(index)
        src, dst, cap = [], [], []
        for u, v, data in G.edges(data=True):
            c = float(data.get(capacity, 1.0))
            ends = [(u, v)] if G.is_directed() else [(u, v), (v, u)]
            for a, b in ends:
                src.append(index[a])
                dst.append(index[b])
                cap.append(c)
        names = [None] * len(index)
        for v, i in index.items():
            names[i] = str(v)
        return cls(len(order), len(index) - len(order), np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
                   capacity=np.array(cap), routing=routing, routes=routes, names=names)
