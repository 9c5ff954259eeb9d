"""The neutral fabric value every fabric file is parsed into.

A :class:`Fabric` is a network of named compute *nodes* and *switches*
joined by directed *links* with capacities, and optionally explicit
per-pair routes.  It knows nothing of file formats; the readers in this
package (JSON, Slurm ``topology.conf``, ``ibnetdiscover``, route files) fill a
:class:`FabricBuilder`, which remembers the ``file:line`` of everything so
that every fault found later names where it came from.  A fabric becomes a
machine through the graph network kind (:meth:`Fabric.to_network`,
:meth:`Fabric.machine`).

Rules shared by every reader (stated once, here):

* **Numbering.** Vertex ids are the nodes in declaration order, then the
  switches in declaration order (the graph kind's convention).  A
  bidirectional cable declared as the ``i``-th link entry expands to two
  consecutive link ids, ``a -> b`` then ``b -> a``; a cable with
  ``count = k`` expands to ``k`` such pairs in a row.  Link ids are therefore
  fixed by the file, and they are the tie-break order of the graph kind's
  ``shortest``/``dmodk`` routing.
* **Ports.** Every link leaves its source vertex through a numbered port.
  A vertex either has all its ports given by the file (``ibnetdiscover``,
  JSON ``"s1[3]"``) or none; then they are numbered 1, 2, ... in link-id
  order.  A route hop ``s1[3]`` means "leave ``s1`` through port 3"; a hop
  without a port takes the lowest-id link to the next vertex named.
* **Names** are non-empty and contain no whitespace, ``[``, ``]``, ``#`` or
  ``"`` (so that route hops and files stay unambiguous); they are unique over
  nodes, switches and aliases.
* **Validity.** Links join distinct existing vertices with finite positive
  capacities; every vertex can reach, and be reached from, every node
  (a disconnected fabric is refused, naming an unreachable vertex); an
  explicit route is a walk over existing links from its source node to its
  destination node that passes only through switches (compute nodes do not
  forward, as InfiniBand HCAs do not; in a fabric without switches, a direct
  network, they must), and a pair has at most one route.  This is the graph
  kind's rule for its own routes too.
* **Size cap.** At most :data:`MAX_LINKS` directed links, so a typo such as
  ``count: 100000000`` is refused instead of exhausting memory (a fabric
  costs about 0.3 kB per link while it is read).  A reader given
  ``max_nodes`` refuses the first compute node beyond it
  (:class:`NodeLimit`): ``file:`` machine specs routed by forwarding tables
  pass the most nodes whose tables fit in
  :data:`topomap.networks.limits.MAX_TABLE_BYTES`, so an oversized fabric is
  refused while it is read rather than after.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

import numpy as np

from ..errors import FormatError, MachineError, TopomapError

if TYPE_CHECKING:
    from ..machine import Machine
    from ..networks.base import Network
    from ..node.nodetree import NodeTree

__all__ = ["Fabric", "FabricBuilder", "Origin", "MAX_LINKS", "MAX_LINE", "MAX_TEXT_BYTES", "NodeLimit", "parse_hop",
           "read_text", "text_lines"]

MAX_LINKS = 2**21
MAX_LINE = 2**20         # bytes in one line of a line-based fabric or route file
MAX_TEXT_BYTES = 2**30   # bytes of a whole-file fabric (JSON)
_NAME = re.compile(r'[^\s\[\]#"]+')
_HOP = re.compile(r'([^\s\[\]#"]+)(?:\[(\d{1,9})\])?')
_ROUTINGS = ("shortest", "dmodk", "table")


def read_text(path: "str | os.PathLike[str]") -> str:
    """The whole of a UTF-8 text file of at most :data:`MAX_TEXT_BYTES` bytes, read in
    chunks so that binary data or an endless stream is refused at once.

    Examples
    --------
    >>> read_text("/dev/zero")
    Traceback (most recent call last):
    ...
    topomap.errors.FormatError: /dev/zero:1: binary data (a NUL byte) in a text file
    """
    label = os.fspath(path)
    chunks: list[bytes] = []
    try:
        with open(label, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                nul = chunk.find(b"\0")
                if nul >= 0:
                    raw = b"".join(chunks) + chunk[:nul]
                    _decode(raw, label)  # text that is not UTF-8 before the NUL is reported as such
                    line = raw.count(b"\n") + 1
                    raise FormatError(f"{label}:{line}: binary data (a NUL byte) in a text file")
                chunks.append(chunk)
                if len(chunks) << 20 > MAX_TEXT_BYTES:
                    raise FormatError(f"{label}: more than {MAX_TEXT_BYTES} bytes "
                                      "(topomap.fabric.model.MAX_TEXT_BYTES)")
    except OSError as err:
        raise FormatError(f"{label}: cannot read: {err.strerror or err}") from None
    return _decode(b"".join(chunks), label)


def _decode(raw: bytes, label: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise FormatError(f"{label}:{line}: not UTF-8 text ({err.reason} at byte {err.start})") from None


def parse_hop(token: str) -> tuple[str, int]:
    """Split a route hop or cable end ``NAME`` or ``NAME[PORT]`` into (name, port); port -1 if absent.

    Examples
    --------
    >>> parse_hop("leaf3[12]"), parse_hop("n0")
    (('leaf3', 12), ('n0', -1))
    """
    m = _HOP.fullmatch(token)
    if not m:
        raise MachineError(f"{token!r} is not a vertex name with an optional [port]")
    return m.group(1), int(m.group(2)) if m.group(2) else -1


def text_lines(path: "str | os.PathLike[str]") -> Iterator[tuple[int, str]]:
    """Stream ``(line number, text)`` from a UTF-8 text file, refusing binary data.

    Errors name the file and line: unreadable files, NUL bytes, invalid UTF-8
    and lines longer than :data:`MAX_LINE` bytes (an endless stream such as
    ``/dev/zero`` is refused at its first line) raise :class:`~topomap.FormatError`.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "f.txt")
    >>> _ = open(path, "wb").write(b"ok\\r\\n\\xff\\n")
    >>> lines = text_lines(path)
    >>> next(lines)
    (1, 'ok')
    >>> next(lines)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    topomap.errors.FormatError: ...f.txt:2: not UTF-8 text (invalid start byte at byte 0)
    """
    label = os.fspath(path)
    try:
        handle = open(label, "rb")
    except OSError as err:
        raise FormatError(f"{label}: cannot read: {err.strerror or err}") from None
    with handle:
        for no, raw in enumerate(iter(lambda: handle.readline(MAX_LINE + 1), b""), 1):
            if b"\0" in raw:
                raise FormatError(f"{label}:{no}: binary data (a NUL byte) in a text file")
            if len(raw) > MAX_LINE:
                raise FormatError(f"{label}:{no}: a line longer than {MAX_LINE} bytes (topomap.fabric.model.MAX_LINE)")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise FormatError(f"{label}:{no}: not UTF-8 text ({err.reason} at byte {err.start})") from None
            yield no, text.rstrip("\r\n")


@dataclass(frozen=True)
class Origin:
    """Where each part of a fabric was declared (``"file:line"`` strings), for error messages."""

    vertex: tuple[str, ...]
    link: tuple[str, ...]
    route: Mapping[tuple[int, int], str] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Fabric:
    """Named nodes and switches joined by directed links, with optional explicit routes.

    Parameters
    ----------
    nodes, switches : sequence of str
        Vertex names; vertex ids are the nodes, then the switches.
    src, dst : array_like of int
        Link ``i`` goes from vertex ``src[i]`` to vertex ``dst[i]``.
    capacity : array_like of float, optional
        Capacity of each link (default 1).
    port : array_like of int, optional
        Port through which each link leaves its source vertex; ``-1``
        entries (and the default) are numbered 1, 2, ... per vertex in link
        order.  A vertex's ports are all given or all ``-1``.
    routes : mapping, optional
        ``{(src_node, dst_node): link ids}`` explicit routes ("table" routing).
    aliases : mapping, optional
        Extra names for vertices (e.g. InfiniBand GUID ids), ``{alias: vertex id}``.
    origin : Origin, optional
        ``file:line`` of each vertex, link and route; faults then raise
        :class:`~topomap.FormatError` naming them instead of
        :class:`~topomap.MachineError`.

    Examples
    --------
    Two nodes on one switch, then as a machine with 4 PEs per node:

    >>> import topomap as tm
    >>> fab = tm.fabric.Fabric(["n0", "n1"], ["s0"], src=[0, 2, 1, 2], dst=[2, 0, 2, 1])
    >>> fab.nlinks, fab.vertex("s0"), fab.resolve_route(["n0", "s0", "n1"])
    (4, 2, (0, 3))
    >>> m = fab.machine(4)
    >>> m.npes, m.route(0, 1).tolist()
    (8, [0, 3])
    """

    nodes: tuple[str, ...]
    switches: tuple[str, ...]
    src: np.ndarray
    dst: np.ndarray
    capacity: Any = None
    port: Any = None
    routes: Mapping[tuple[int, int], tuple[int, ...]] | None = None
    aliases: Mapping[str, int] = field(default_factory=dict)
    origin: Origin | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        put = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        put("nodes", tuple(self.nodes))
        put("switches", tuple(self.switches))
        src, dst = _ids(self.src, "src"), _ids(self.dst, "dst")
        if src.shape != dst.shape:
            raise MachineError(f"fabric has {src.size} link sources but {dst.size} destinations")
        if src.size > MAX_LINKS:
            raise self._fault("link", MAX_LINKS, f"more than {MAX_LINKS} links (the fabric size cap)")
        n = src.size
        try:
            cap = np.ones(n) if self.capacity is None else np.array(self.capacity, dtype=np.float64, copy=True)
        except (TypeError, ValueError):
            raise MachineError(f"fabric capacities must be numbers, got {self.capacity!r}") from None
        port = np.full(n, -1, np.int64) if self.port is None else _ids(self.port, "port")
        if cap.shape != (n,) or port.shape != (n,):
            raise MachineError(f"fabric capacity and port need one entry per link ({n})")
        for name, arr in (("src", src), ("dst", dst)):
            put(name, _frozen(arr.astype(np.int32)))
        put("capacity", _frozen(cap))
        self._check_names()
        self._check_links()
        put("port", _frozen(self._number_ports(port).astype(np.int32)))
        self._check_connected()
        put("aliases", dict(self.aliases))
        if self.routes is not None:
            put("routes", self._checked_routes(self.routes))

    # ------------------------------------------------------------ sizes and names
    @property
    def nnodes(self) -> int:
        """Number of compute nodes."""
        return len(self.nodes)

    @property
    def nswitches(self) -> int:
        """Number of switches."""
        return len(self.switches)

    @property
    def nvertices(self) -> int:
        """Nodes plus switches."""
        return len(self.nodes) + len(self.switches)

    @property
    def nlinks(self) -> int:
        """Number of directed links."""
        return int(self.src.size)

    @property
    def names(self) -> tuple[str, ...]:
        """Name of every vertex: nodes, then switches."""
        return self.nodes + self.switches

    def vertex(self, name: "str | int") -> int:
        """Vertex id of a name or alias (an int is checked and returned)."""
        if isinstance(name, (int, np.integer)) and not isinstance(name, bool):
            if not 0 <= name < self.nvertices:
                raise MachineError(f"vertex {name} is out of range [0, {self.nvertices})")
            return int(name)
        try:
            return self._index[0][name]
        except (KeyError, TypeError):
            raise MachineError(f"the fabric has no node or switch named {name!r}") from None

    def node(self, name: "str | int") -> int:
        """Node id of a compute node name (switches are refused)."""
        v = self.vertex(name)
        if v >= self.nnodes:
            raise MachineError(f"{self.names[v]!r} is a switch, not a compute node")
        return v

    def ports(self) -> np.ndarray:
        """Number of links leaving each vertex (its used ports, one per cable on a bidirectional fabric)."""
        return np.bincount(self.src, minlength=self.nvertices)

    def summary(self) -> dict[str, Any]:
        """Counts: nodes, switches, links, explicit routes, the busiest switch's ports.

        Examples
        --------
        >>> import topomap as tm
        >>> tm.fabric.Fabric(["a", "b"], ["s"], [0, 2, 1, 2], [2, 0, 2, 1]).summary()["max_switch_ports"]
        2
        """
        ports = self.ports()
        return {"nodes": self.nnodes, "switches": self.nswitches, "links": self.nlinks,
                "routes": 0 if self.routes is None else len(self.routes),
                "max_switch_ports": int(ports[self.nnodes:].max()) if self.nswitches else 0,
                "capacity_min": float(self.capacity.min()) if self.nlinks else 0.0,
                "capacity_max": float(self.capacity.max()) if self.nlinks else 0.0}

    # ------------------------------------------------------------ routes
    def resolve_route(self, hops: Sequence[str]) -> tuple[int, ...]:
        """Link ids of a route given as hops ``["n0", "s1[3]", "s2", "n5"]``.

        The first and last hops are the source and destination nodes, the
        others switches; ``NAME[PORT]`` leaves that vertex through ``PORT``,
        a bare name takes the lowest-id link to the next hop.
        """
        if len(hops) < 2:
            raise MachineError(f"a route needs a source and a destination node, got {list(hops)}")
        names, out_port, first_link = self._index
        parsed = [parse_hop(h) for h in hops]
        verts = []
        for i, (name, _) in enumerate(parsed):
            if name not in names:
                raise MachineError(f"route hop {name!r} is not a node or switch of the fabric")
            v = names[name]
            end = i in (0, len(parsed) - 1)
            if end and v >= self.nnodes:
                raise MachineError(f"route {'starts' if i == 0 else 'ends'} at switch {name!r}, not a compute node")
            if not end and v < self.nnodes and self.nswitches:
                raise MachineError(f"route passes through compute node {name!r}; only switches forward")
            verts.append(v)
        if parsed[-1][1] >= 0:
            raise MachineError(f"the last hop {hops[-1]!r} of a route cannot name an output port")
        links = []
        for (name, port), u, v in zip(parsed, verts, verts[1:]):
            if port >= 0:
                link = out_port.get((u, port))
                if link is None:
                    raise MachineError(f"{name!r} has no port {port}")
                if self.dst[link] != v:
                    raise MachineError(f"port {port} of {name!r} leads to {self.names[self.dst[link]]!r}, "
                                       f"not {self.names[v]!r}")
            else:
                link = first_link.get((u, v))
                if link is None:
                    raise MachineError(f"no link from {name!r} to {self.names[v]!r}")
            links.append(link)
        return tuple(links)

    def route_hops(self, links: Sequence[int]) -> list[str]:
        """The hops of a route (inverse of :meth:`resolve_route`), with a port wherever
        parallel links make the bare name ambiguous."""
        if not len(links):
            raise MachineError("an empty route has no hops")
        _, _, first_link = self._index
        hops = []
        for link in links:
            u, v = int(self.src[link]), int(self.dst[link])
            name = self.names[u]
            hops.append(name if first_link[(u, v)] == link else f"{name}[{self.port[link]}]")
        hops.append(self.names[int(self.dst[links[-1]])])
        return hops

    def with_routes(self, routes: Mapping[tuple[Any, Any], Sequence[int]] | None) -> "Fabric":
        """A copy with these explicit routes (keys: node ids or names; values: link ids)."""
        table = None
        if routes is not None:
            table = {}
            for key, links in dict(routes).items():
                if not isinstance(key, tuple) or len(key) != 2:
                    raise MachineError(f"route key {key!r} must be a (source, destination) node pair")
                table[(self.node(key[0]), self.node(key[1]))] = links
        origin = None if self.origin is None else dataclasses.replace(self.origin, route={})
        return dataclasses.replace(self, routes=table, origin=origin)

    # ------------------------------------------------------------ conversion
    def to_network(self, routing: str | None = None) -> "Network":
        """The graph network kind for this fabric.

        ``routing`` is ``"shortest"``, ``"dmodk"`` or ``"table"`` (the
        explicit routes); the default is ``"table"`` when the fabric has
        routes and ``"shortest"`` otherwise.
        """
        from ..networks.graph import GraphNetwork

        routing = self._routing(routing)
        routes = {k: list(v) for k, v in self.routes.items()} if routing == "table" and self.routes else None
        return GraphNetwork(self.nnodes, self.nswitches, self.src, self.dst, capacity=self.capacity,
                            routing=routing, routes=routes, names=list(self.names))

    def machine(self, node: "int | str | NodeTree" = 1, routing: str | None = None,
                spec: str | None = None) -> "Machine":
        """A machine of this fabric's nodes, each holding ``node`` (PEs per node, an
        hwloc synthetic string such as ``"pack:2 core:4"``, or a NodeTree)."""
        from ..machine import Machine
        from ..node.nodetree import NodeTree
        from ..networks.spec import parse_node

        if not isinstance(node, NodeTree):
            node = parse_node(str(node), spec or "fabric")
        net = self.to_network(routing)
        return Machine(net, node, spec=spec)

    def _routing(self, routing: str | None) -> str:
        if routing is None:
            return "table" if self.routes else "shortest"
        if routing not in _ROUTINGS:
            raise MachineError(f"unknown routing {routing!r}; choose one of {', '.join(_ROUTINGS)}")
        if routing == "table" and not self.routes:
            raise MachineError("routing='table' needs explicit routes (a route file or JSON 'routes')")
        return routing

    # ------------------------------------------------------------ equality
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Fabric):
            return NotImplemented
        return (self.nodes == other.nodes and self.switches == other.switches
                and all(np.array_equal(getattr(self, k), getattr(other, k)) for k in ("src", "dst", "capacity", "port"))
                and (self.routes or {}) == (other.routes or {}) and dict(self.aliases) == dict(other.aliases))

    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------ checks
    def _fault(self, what: str, index: Any, message: str) -> TopomapError:
        """The error for a fault in vertex/link/route ``index``: located when the origin is known."""
        where = None
        if self.origin is not None:
            table = {"vertex": self.origin.vertex, "link": self.origin.link}.get(what)
            if table is not None and isinstance(index, (int, np.integer)) and 0 <= index < len(table):
                where = table[index]
            elif what == "route":
                try:
                    where = self.origin.route.get(index)
                except TypeError:  # an unhashable key is the fault being reported
                    where = None
        return FormatError(f"{where}: {message}") if where else MachineError(message)

    def _check_names(self) -> None:
        if not self.nodes:
            raise MachineError("a fabric needs at least one compute node")
        seen: dict[str, int] = {}
        for v, name in enumerate(self.names):
            if not isinstance(name, str) or not _NAME.fullmatch(name):
                raise self._fault("vertex", v, f"vertex name {name!r} is empty or contains whitespace, [, ], # or \"")
            if name in seen:
                raise self._fault("vertex", v, f"{name!r} is declared twice (first as vertex {seen[name]})")
            seen[name] = v
        for alias, v in dict(self.aliases).items():
            if not isinstance(alias, str) or not _NAME.fullmatch(alias):
                raise MachineError(f"alias {alias!r} is not a valid vertex name")
            if not isinstance(v, (int, np.integer)) or not 0 <= v < self.nvertices:
                raise MachineError(f"alias {alias!r} names vertex {v!r}, out of range [0, {self.nvertices})")
            if seen.get(alias, v) != v:
                raise self._fault("vertex", int(v), f"alias {alias!r} is already the name of vertex {seen[alias]}")

    def _check_links(self) -> None:
        nv = self.nvertices
        bad = np.flatnonzero((self.src < 0) | (self.src >= nv) | (self.dst < 0) | (self.dst >= nv))
        if bad.size:
            i = int(bad[0])
            raise self._fault("link", i, f"link {i} joins vertex {int(self.src[i])} to {int(self.dst[i])}, "
                                         f"outside [0, {nv})")
        loops = np.flatnonzero(self.src == self.dst)
        if loops.size:
            i = int(loops[0])
            raise self._fault("link", i, f"link {i} goes from {self.names[self.src[i]]!r} to itself")
        bad = np.flatnonzero(~np.isfinite(self.capacity) | (self.capacity <= 0))
        if bad.size:
            i = int(bad[0])
            raise self._fault("link", i, f"link capacity must be finite and > 0, got {self.capacity[i]!r}")

    def _number_ports(self, port: np.ndarray) -> np.ndarray:
        port = port.copy()
        given = np.zeros(self.nvertices, bool)
        given[self.src[port >= 0]] = True
        mixed = np.flatnonzero(given[self.src] & (port < 0))
        if mixed.size:
            i = int(mixed[0])
            raise self._fault("link", i, f"{self.names[self.src[i]]!r} has numbered ports, "
                                         "but this link from it has none")
        low = np.flatnonzero((port == 0) | (port < -1))
        if low.size:
            raise self._fault("link", int(low[0]), f"port {int(port[low[0]])} is not a positive port number")
        auto = np.flatnonzero(port < 0)
        if auto.size:
            order = auto[np.argsort(self.src[auto], kind="stable")]
            s = self.src[order]
            starts = np.r_[0, np.flatnonzero(s[1:] != s[:-1]) + 1]
            run = np.arange(order.size) - np.repeat(starts, np.diff(np.r_[starts, order.size]))
            port[order] = run + 1
        key = self.src.astype(np.int64) * (2**32) + port
        uniq, first, counts = np.unique(key, return_index=True, return_counts=True)
        if (counts > 1).any():
            dup = int(uniq[counts > 1][0])
            i = int(np.flatnonzero(key == dup)[1])
            raise self._fault("link", i, f"port {int(port[i])} of {self.names[self.src[i]]!r} carries two links")
        return port

    def _check_connected(self) -> None:
        if self.nvertices == 1:
            return
        fwd, back = self._reach(self.src, self.dst), self._reach(self.dst, self.src)
        for v in range(self.nvertices):
            if not (fwd[v] and back[v]):
                how = "cannot be reached from" if not fwd[v] else "cannot reach"
                raise self._fault("vertex", v, f"disconnected fabric: {self.names[v]!r} {how} node {self.nodes[0]!r}")
        if self.nswitches and self.nnodes > 1:
            pair = self._pair_without_switch_path()
            if pair is not None:
                a, b = pair
                raise self._fault("vertex", b, f"disconnected fabric: node {self.names[b]!r} cannot be reached from "
                                               f"node {self.names[a]!r} through switches (compute nodes do not forward)")

    def _pair_without_switch_path(self) -> tuple[int, int] | None:
        """A node pair joined by neither a direct link nor a path whose inner vertices are all switches.

        The switch subgraph is condensed into strongly connected components
        (Kosaraju); reachability between components is a bitset per
        component, so a node's reach is the union over the switches it
        links to, and nodes with equal bitsets are checked as one group.
        """
        nn, ns = self.nnodes, self.nswitches
        src, dst = self.src.tolist(), self.dst.tolist()
        adj: list[list[int]] = [[] for _ in range(ns)]
        radj: list[list[int]] = [[] for _ in range(ns)]
        for u, v in zip(src, dst):
            if u >= nn and v >= nn:
                adj[u - nn].append(v - nn)
                radj[v - nn].append(u - nn)
        finished, seen = [], [False] * ns
        for root in range(ns):
            if seen[root]:
                continue
            seen[root] = True
            stack = [(root, iter(adj[root]))]
            while stack:
                x, rest = stack[-1]
                y = next(rest, None)
                if y is None:
                    finished.append(x)
                    stack.pop()
                elif not seen[y]:
                    seen[y] = True
                    stack.append((y, iter(adj[y])))
        comp, ncomp = [-1] * ns, 0
        for root in reversed(finished):  # components come out in topological order
            if comp[root] >= 0:
                continue
            comp[root], todo = ncomp, [root]
            while todo:
                for y in radj[todo.pop()]:
                    if comp[y] < 0:
                        comp[y] = ncomp
                        todo.append(y)
            ncomp += 1
        reach = [1 << c for c in range(ncomp)]
        later: list[set[int]] = [set() for _ in range(ncomp)]
        for x in range(ns):
            later[comp[x]].update(comp[y] for y in adj[x] if comp[y] != comp[x])
        for c in reversed(range(ncomp)):
            for d in later[c]:
                reach[c] |= reach[d]
        out, into, direct = [0] * nn, [0] * nn, set()
        for u, v in zip(src, dst):
            if u < nn <= v:
                out[u] |= reach[comp[v - nn]]
            elif v < nn <= u:
                into[v] |= 1 << comp[u - nn]
            elif u < nn and v < nn:
                direct.add((u, v))
        sources: dict[int, list[int]] = {}
        targets: dict[int, list[int]] = {}
        for v in range(nn):
            sources.setdefault(out[v], []).append(v)
            targets.setdefault(into[v], []).append(v)
        for bits_a, group_a in sources.items():
            for bits_b, group_b in targets.items():
                if bits_a & bits_b:
                    continue
                for a in group_a:
                    for b in group_b:
                        if a != b and (a, b) not in direct:
                            return a, b
        return None

    def _reach(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        order = np.argsort(a, kind="stable")
        start = np.searchsorted(a[order], np.arange(self.nvertices + 1))
        heads = b[order]
        seen = np.zeros(self.nvertices, bool)
        seen[0] = True
        todo = deque([0])
        while todo:
            v = todo.popleft()
            for w in heads[start[v]:start[v + 1]].tolist():
                if not seen[w]:
                    seen[w] = True
                    todo.append(w)
        return seen

    def _checked_routes(self, routes: Mapping[Any, Sequence[int]]) -> dict[tuple[int, int], tuple[int, ...]]:
        out: dict[tuple[int, int], tuple[int, ...]] = {}
        nn, nl = self.nnodes, self.nlinks
        for key, links in dict(routes).items():
            try:
                a, b = (int(x) for x in key)
                path = tuple(int(x) for x in links)
            except (TypeError, ValueError):
                raise self._fault("route", key, f"route key {key!r} must be a (source, destination) node "
                                                f"pair and its value a list of link ids") from None
            fault = lambda msg: self._fault("route", (a, b), f"route {a}->{b}: {msg}")  # noqa: E731
            if not (0 <= a < nn and 0 <= b < nn) or a == b:
                raise fault(f"the ends must be two distinct nodes in [0, {nn})")
            if not path:
                raise fault("the route is empty")
            at = a
            for link in path:
                if not 0 <= link < nl:
                    raise fault(f"link {link} does not exist")
                if self.src[link] != at:
                    raise fault(f"link {link} leaves {self.names[self.src[link]]!r}, "
                                f"but the route is at {self.names[at]!r}")
                if at != a and at < nn and self.nswitches:
                    raise fault(f"the route passes through compute node {self.names[at]!r}")
                at = int(self.dst[link])
            if at != b:
                raise fault(f"the route ends at {self.names[at]!r}, not at node {self.names[b]!r}")
            out[(a, b)] = path
        return out

    @cached_property
    def _index(self) -> tuple[dict[str, int], dict[tuple[int, int], int], dict[tuple[int, int], int]]:
        """(name or alias -> vertex, (vertex, port) -> link, (u, v) -> lowest link u->v)."""
        names = {name: v for v, name in enumerate(self.names)}
        names.update((a, int(v)) for a, v in self.aliases.items())
        src, dst, port = self.src.tolist(), self.dst.tolist(), self.port.tolist()
        out_port = {(u, p): i for i, (u, p) in enumerate(zip(src, port))}
        first: dict[tuple[int, int], int] = {}
        for i, uv in enumerate(zip(src, dst)):
            first.setdefault(uv, i)
        return names, out_port, first


def _ids(values: Any, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise MachineError(f"fabric {what} must be a 1-D array of integers, got {arr.dtype} with shape {arr.shape}")
    if arr.size and (arr.max() > 2**31 - 1 or arr.min() < -(2**31)):
        raise MachineError(f"fabric {what} has values beyond 32-bit ids")
    return arr.astype(np.int64)


def _frozen(arr: np.ndarray) -> np.ndarray:
    arr = np.ascontiguousarray(arr)
    arr.setflags(write=False)
    return arr


class NodeLimit(FormatError):
    """A fabric has more compute nodes than the ``max_nodes`` it was read with."""

    def __init__(self, where: str, max_nodes: int) -> None:
        super().__init__(f"{where}: more than {max_nodes} compute nodes (max_nodes)")


@dataclass
class _Cable:
    a: str
    b: str
    a_port: int
    b_port: int
    capacity: float
    count: int
    both: bool
    where: str


class FabricBuilder:
    """Collects nodes, switches, cables and routes with their ``file:line``, then builds a :class:`Fabric`.

    Every fault is a :class:`~topomap.FormatError` naming the line it comes
    from (or ``source``, the file, when it has no line, as for a fabric
    without compute nodes).  With ``max_nodes``, declaring more compute nodes
    raises :class:`NodeLimit`.

    Examples
    --------
    >>> b = FabricBuilder("f")
    >>> b.node("n0", "f:1"); b.node("n1", "f:2"); b.switch("s0", "f:3")
    >>> b.cable("n0", "s0", "f:4"); b.cable("n1", "s0", "f:5", capacity=2.0)
    >>> b.route(["n0", "s0", "n1"], "f:6")
    >>> fab = b.build()
    >>> fab.capacity.tolist(), fab.routes
    ([1.0, 1.0, 2.0, 2.0], {(0, 1): (0, 3)})
    """

    def __init__(self, source: str, max_nodes: int | None = None) -> None:
        self.source = source
        self.max_nodes = max_nodes
        self._vertex: dict[str, tuple[bool, int, str]] = {}  # name -> (is node, index, where)
        self._nodes: list[str] = []
        self._switches: list[str] = []
        self._cables: list[_Cable] = []
        self._routes: list[tuple[list[str], str]] = []
        self._aliases: dict[str, tuple[str, str]] = {}
        self._nlinks = 0

    def _declare(self, name: str, where: str, is_node: bool) -> None:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise FormatError(f"{where}: {name!r} is not a valid name (empty, or contains whitespace, [, ], # or \")")
        if name in self._vertex or name in self._aliases:
            first = self._vertex[name][2] if name in self._vertex else self._aliases[name][1]
            raise FormatError(f"{where}: {name!r} is declared twice (first at {first})")
        names = self._nodes if is_node else self._switches
        if is_node and self.max_nodes is not None and len(names) >= self.max_nodes:
            raise NodeLimit(where, self.max_nodes)
        self._vertex[name] = (is_node, len(names), where)
        names.append(name)

    def node(self, name: str, where: str) -> None:
        """Declare a compute node."""
        self._declare(name, where, True)

    def switch(self, name: str, where: str) -> None:
        """Declare a switch."""
        self._declare(name, where, False)

    def alias(self, alias: str, name: str, where: str) -> None:
        """Another name for an already declared vertex."""
        if not isinstance(alias, str) or not _NAME.fullmatch(alias):
            raise FormatError(f"{where}: alias {alias!r} is not a valid name "
                              "(empty, or contains whitespace, [, ], # or \")")
        if alias in self._vertex or alias in self._aliases:
            raise FormatError(f"{where}: {alias!r} is declared twice")
        self._aliases[alias] = (name, where)

    def kind(self, name: str) -> str | None:
        """``"node"``, ``"switch"`` or None for an undeclared name."""
        if name not in self._vertex:
            return None
        return "node" if self._vertex[name][0] else "switch"

    def cable(self, a: str, b: str, where: str, capacity: float = 1.0, count: int = 1,
              both: bool = True, a_port: int = -1, b_port: int = -1) -> None:
        """A cable between ``a`` and ``b`` (two links, or one ``a -> b`` when not ``both``),
        repeated ``count`` times; ports are checked when the fabric is built."""
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise FormatError(f"{where}: cable count must be a positive integer, got {count!r}")
        if count > 1 and (a_port >= 0 or b_port >= 0):
            raise FormatError(f"{where}: a cable with count {count} cannot name ports; list each cable")
        try:
            capacity = float(capacity)
        except (TypeError, ValueError):
            raise FormatError(f"{where}: capacity {capacity!r} is not a number") from None
        if not math.isfinite(capacity) or capacity <= 0:
            raise FormatError(f"{where}: capacity must be finite and > 0, got {capacity!r}")
        self._nlinks += count * (2 if both else 1)
        if self._nlinks > MAX_LINKS:
            raise FormatError(f"{where}: more than {MAX_LINKS} links (the fabric size cap)")
        self._cables.append(_Cable(a, b, a_port, b_port, capacity, count, both, where))

    def route(self, hops: list[str], where: str) -> None:
        """An explicit route as hops (see :meth:`Fabric.resolve_route`)."""
        self._routes.append((list(hops), where))

    def build(self) -> Fabric:
        """Resolve names and check everything; faults name their line."""
        if not self._nodes:
            first = next((where for _, _, where in self._vertex.values()), self.source)
            raise FormatError(f"{first}: the fabric has no compute nodes")
        nn = len(self._nodes)
        vid = {name: (i if is_node else nn + i) for name, (is_node, i, _) in self._vertex.items()}
        vwhere = [""] * len(vid)
        for name, (_, _, where) in self._vertex.items():
            vwhere[vid[name]] = where
        src: list[int] = []
        dst: list[int] = []
        cap: list[float] = []
        port: list[int] = []
        lwhere: list[str] = []
        for c in self._cables:
            for end in (c.a, c.b):
                if end not in vid:
                    raise FormatError(f"{c.where}: link to nowhere: {end!r} is not a declared node or switch")
            ends = [(vid[c.a], vid[c.b], c.a_port)] + ([(vid[c.b], vid[c.a], c.b_port)] if c.both else [])
            for _ in range(c.count):
                for u, v, p in ends:
                    src.append(u)
                    dst.append(v)
                    cap.append(c.capacity)
                    port.append(p)
                    lwhere.append(c.where)
        aliases = {}
        for alias, (name, where) in self._aliases.items():
            if name not in vid:
                raise FormatError(f"{where}: alias {alias!r} names an undeclared vertex {name!r}")
            aliases[alias] = vid[name]
        fab = Fabric(self._nodes, self._switches, np.array(src, np.int64), np.array(dst, np.int64),
                     capacity=np.array(cap), port=np.array(port, np.int64), aliases=aliases,
                     origin=Origin(tuple(vwhere), tuple(lwhere)))
        if not self._routes:
            return fab
        routes: dict[tuple[int, int], tuple[int, ...]] = {}
        rwhere: dict[tuple[int, int], str] = {}
        for hops, where in self._routes:
            try:
                links = fab.resolve_route(hops)
            except MachineError as err:
                raise FormatError(f"{where}: {err}") from None
            pair = (int(fab.src[links[0]]), int(fab.dst[links[-1]]))
            if pair in routes:
                raise FormatError(f"{where}: a second route {hops[0]} -> {hops[-1]} (the first is at {rwhere[pair]})")
            routes[pair], rwhere[pair] = links, where
        return dataclasses.replace(fab, routes=routes, origin=dataclasses.replace(fab.origin, route=rwhere))

