"""GPU nodes: the links inside a node (PCIe, host bridges, QPI/UPI, NVLink, NVSwitch) with bandwidths.

A :class:`GpuNode` is a small graph of *vertices* (CPU packages, PCIe switches and host
bridges, GPUs, NVSwitches, the network adapter) joined by full-duplex *links*, each with
a bandwidth per direction in GB/s.  Cores hang on their package's vertex.  The
*endpoints* a process can use are numbered cores first, then GPUs, then the network
adapter; so GPUs are PEs of the node just as cores are.  A message from endpoint ``a``
to ``b`` follows the fastest path (least sum of 1/bandwidth, then fewest links, then the
lowest vertex ids), which on a PCIe tree is its unique path (Mirsadeghi 2017 §5.3:
"the unique path in the hwloc/NVML tree") and between NVLink peers the NVLink.  Each
link gives two directed *channels*: ``2 l`` from ``links[l].a`` to ``links[l].b`` and
``2 l + 1`` back.

:func:`node_link_loads` is the evaluator's separate pass for these links (DESIGN.md §2):
the network's metrics of :func:`topomap.evaluate` stay as they are, and the loads
inside the nodes come back in a :class:`NodeLinkLoads` of their own.

Examples
--------
>>> from topomap.node.gpu import GpuNode, pcie
>>> node = GpuNode.build(sockets=[2], gpus_per_socket=[1], root_link=pcie(3, 16))
>>> node.ncores, node.ngpus, node.nendpoints
(2, 1, 4)
>>> [node.channel_name(c) for c in node.route(0, 2)]
['cpu0->gpu0']
"""

from __future__ import annotations

import heapq
import json
import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from .. import _core
from ..errors import MachineError
from .nodetree import NodeTree

__all__ = ["Link", "GpuNode", "GpuNodeBuilder", "GpuNodeTree", "NodeLinkLoads", "node_link_loads", "pcie", "nvlink",
           "PCIE_LANE_GBPS", "NVLINK_GBPS", "VERTEX_KINDS"]

#: GB/s per lane and direction after line coding, by PCIe generation (PCI-SIG).
PCIE_LANE_GBPS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
#: GB/s per link and direction by NVLink version (P100: 1, V100: 2, A100: 3, H100: 4).
NVLINK_GBPS = {1: 20.0, 2: 25.0, 3: 25.0, 4: 25.0}
VERTEX_KINDS = ("cpu", "bridge", "switch", "gpu", "nvswitch", "nic")


def pcie(gen: int, width: int) -> float:
    """Bandwidth per direction (GB/s) of a PCIe link of generation ``gen`` and ``width`` lanes.

    >>> pcie(3, 16)
    15.76
    """
    if gen not in PCIE_LANE_GBPS:
        raise MachineError(f"PCIe generation {gen!r} is not one of {sorted(PCIE_LANE_GBPS)}")
    if width not in (1, 2, 4, 8, 12, 16, 32):
        raise MachineError(f"PCIe width x{width!r} is not 1, 2, 4, 8, 12, 16 or 32")
    return round(PCIE_LANE_GBPS[gen] * width, 6)


def nvlink(version: int, count: int) -> float:
    """Bandwidth per direction (GB/s) of ``count`` bonded NVLinks of ``version``.

    >>> nvlink(2, 6)
    150.0
    """
    if version not in NVLINK_GBPS:
        raise MachineError(f"NVLink version {version!r} is not one of {sorted(NVLINK_GBPS)}")
    if not isinstance(count, (int, np.integer)) or count < 1:
        raise MachineError(f"NVLink count {count!r} must be a positive integer")
    return NVLINK_GBPS[version] * int(count)


@dataclass(frozen=True)
class Link:
    """A full-duplex link between vertices ``a`` and ``b``: ``bandwidth`` GB/s each way; ``kind`` says what it is
    (``"pcie3x16"``, ``"qpi"``, ``"nvlink2x6"``, ...)."""

    a: int
    b: int
    bandwidth: float
    kind: str


@dataclass(frozen=True, eq=False)
class GpuNode:
    """One GPU node: vertices, links, and the cores on each CPU package.

    Parameters
    ----------
    names : sequence of str
        Vertex names, distinct (``"cpu0"``, ``"sw1"``, ``"gpu3"``, ``"nic"``...).
    kinds : sequence of str
        Kind of each vertex, one of :data:`VERTEX_KINDS`; GPUs are numbered in vertex order.
    links : sequence of Link
        Each joins two distinct vertices with a finite bandwidth > 0; the graph must be connected.
    cores : sequence of int
        For each core, the ``cpu`` vertex it belongs to.
    source : str
        Provenance.

    Examples
    --------
    >>> n = GpuNode(["cpu0", "gpu0"], ["cpu", "gpu"], [Link(0, 1, 16.0, "pcie")], [0, 0])
    >>> n.gpu_endpoint(0), n.nic_endpoint
    (2, 3)
    """

    names: tuple[str, ...]
    kinds: tuple[str, ...]
    links: tuple[Link, ...]
    cores: tuple[int, ...]
    source: str = ""

    def __post_init__(self) -> None:
        names, kinds = tuple(map(str, self.names)), tuple(map(str, self.kinds))
        links = tuple(self.links)
        cores = tuple(int(c) for c in self.cores)
        where = f" ({self.source})" if self.source else ""
        if len(names) != len(kinds) or not names:
            raise MachineError(f"gpu node{where}: {len(names)} vertex names but {len(kinds)} kinds")
        if len(set(names)) != len(names):
            raise MachineError(f"gpu node{where}: a vertex name is used twice")
        for name, kind in zip(names, kinds):
            if kind not in VERTEX_KINDS:
                raise MachineError(f"gpu node{where}: vertex {name!r} has kind {kind!r}, not one of {VERTEX_KINDS}")
        if kinds.count("nic") > 1:
            raise MachineError(f"gpu node{where}: more than one network adapter")
        for link in links:
            if not (0 <= link.a < len(names) and 0 <= link.b < len(names)) or link.a == link.b:
                raise MachineError(f"gpu node{where}: link {link} does not join two distinct vertices")
            if not (np.isfinite(link.bandwidth) and link.bandwidth > 0):
                raise MachineError(f"gpu node{where}: link {names[link.a]}-{names[link.b]} has bandwidth "
                                   f"{link.bandwidth!r}, not finite > 0")
        for i, c in enumerate(cores):
            if not 0 <= c < len(names) or kinds[c] != "cpu":
                raise MachineError(f"gpu node{where}: core {i} is on vertex {c}, which is not a cpu vertex")
        if not cores:
            raise MachineError(f"gpu node{where}: no cores")
        set_ = object.__setattr__
        set_(self, "names", names)
        set_(self, "kinds", kinds)
        set_(self, "links", links)
        set_(self, "cores", cores)
        set_(self, "_table", None)
        seen = _reachable(len(names), links)
        if len(seen) != len(names):
            lost = min(set(range(len(names))) - seen)
            raise MachineError(f"gpu node{where}: vertex {names[lost]!r} is not connected to {names[0]!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GpuNode):
            return NotImplemented
        return (self.names, self.kinds, self.links, self.cores) == (other.names, other.kinds, other.links,
                                                                     other.cores)

    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------------ sizes
    @property
    def gpus(self) -> tuple[int, ...]:
        """Vertex of each GPU, in GPU order."""
        return tuple(v for v, k in enumerate(self.kinds) if k == "gpu")

    @property
    def ngpus(self) -> int:
        return len(self.gpus)

    @property
    def ncores(self) -> int:
        return len(self.cores)

    @property
    def nic(self) -> int:
        """Vertex of the network adapter (the first CPU package when the node names none)."""
        return self.kinds.index("nic") if "nic" in self.kinds else self.kinds.index("cpu")

    @property
    def nendpoints(self) -> int:
        return self.ncores + self.ngpus + 1

    def gpu_endpoint(self, g: int) -> int:
        """Endpoint of local GPU ``g``."""
        return self.ncores + int(g)

    @property
    def nic_endpoint(self) -> int:
        return self.ncores + self.ngpus

    def endpoint_vertex(self, e: int) -> int:
        """The vertex endpoint ``e`` sits on."""
        if e < self.ncores:
            return self.cores[e]
        return self.gpus[e - self.ncores] if e < self.nic_endpoint else self.nic

    @property
    def nchannels(self) -> int:
        return 2 * len(self.links)

    @property
    def bandwidths(self) -> np.ndarray:
        """GB/s of every channel."""
        return np.repeat(np.array([ln.bandwidth for ln in self.links], dtype=np.float64), 2)

    def channel_name(self, c: int) -> str:
        """``"from->to"`` of channel ``c``."""
        link = self.links[c // 2]
        a, b = (link.a, link.b) if c % 2 == 0 else (link.b, link.a)
        return f"{self.names[a]}->{self.names[b]}"

    # ----------------------------------------------------------------- routes
    def route_table(self) -> tuple[np.ndarray, np.ndarray]:
        """``(route_ptr, route_chan)``: the channels from endpoint a to b are
        ``route_chan[route_ptr[a * E + b]:route_ptr[a * E + b + 1]]`` (E = :attr:`nendpoints`)."""
        if self._table is None:
            paths = [_fastest_paths(len(self.names), self.links, v) for v in range(len(self.names))]
            ptr, chans = [0], []
            for a in range(self.nendpoints):
                va = self.endpoint_vertex(a)
                for b in range(self.nendpoints):
                    chans.extend(paths[va][self.endpoint_vertex(b)])
                    ptr.append(len(chans))
            table = (np.array(ptr, dtype=np.int64), np.array(chans, dtype=np.int32))
            for arr in table:
                arr.setflags(write=False)
            object.__setattr__(self, "_table", table)
        return self._table

    def route(self, a: int, b: int) -> list[int]:
        """Channels a message from endpoint ``a`` to endpoint ``b`` crosses."""
        e = self.nendpoints
        if not (0 <= a < e and 0 <= b < e):
            raise MachineError(f"endpoints {a}, {b}: this node has {e}")
        ptr, chans = self.route_table()
        return chans[ptr[a * e + b]:ptr[a * e + b + 1]].tolist()

    # ------------------------------------------------------------ conversions
    def cpu_tree(self) -> NodeTree:
        """The cores as a :class:`NodeTree` (cores grouped by package), for the network-level machine."""
        packages = {v: i for i, v in enumerate(dict.fromkeys(self.cores))}
        groups = [[packages[c] for c in self.cores], [0] * self.ncores]
        return NodeTree.from_groups(groups, ("Package", "Machine"), pe_type="Core", source=f"gpu:{self.source}")

    def node_tree(self, costs: Sequence[float] | None = None) -> "GpuNodeTree":
        """:meth:`cpu_tree` carrying this node (what a machine spec's ``/gpu:...`` suffix gives)."""
        tree = self.cpu_tree()
        return GpuNodeTree(tree.pe_type, tree.levels, tree.groups,
                           tree.costs if costs is None else list(costs), None, tree.source, gpu=self)

    def to_dict(self) -> dict[str, Any]:
        """Our JSON form (see :meth:`from_dict`)."""
        return {"format": "topomap-gpu-node", "version": 1,
                "vertices": [{"name": n, "kind": k} for n, k in zip(self.names, self.kinds)],
                "links": [{"a": self.names[ln.a], "b": self.names[ln.b], "bandwidth": ln.bandwidth,
                           "kind": ln.kind} for ln in self.links],
                "cores": [self.names[c] for c in self.cores], "source": self.source}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "json") -> "GpuNode":
        """Build from :meth:`to_dict`'s form: ``vertices`` [{name, kind}], ``links`` [{a, b, bandwidth, kind}]
        (a and b are names), ``cores`` (names of cpu vertices, one per core).

        >>> n = GpuNode.build([1], [1])
        >>> GpuNode.from_dict(n.to_dict()) == n
        True
        """
        try:
            names = [str(v["name"]) for v in data["vertices"]]
            kinds = [str(v["kind"]) for v in data["vertices"]]
            index = {n: i for i, n in enumerate(names)}
            links = [Link(index[ln["a"]], index[ln["b"]], float(ln["bandwidth"]), str(ln.get("kind", "")))
                     for ln in data["links"]]
            cores = [index[c] for c in data["cores"]]
        except (KeyError, TypeError, ValueError) as exc:
            raise MachineError(f"gpu node {source}: missing or bad entry {exc}") from None
        return cls(names, kinds, links, cores, source=str(data.get("source", source)))

    @classmethod
    def read_json(cls, path: str | os.PathLike[str]) -> "GpuNode":
        """Read :meth:`to_dict`'s form from a JSON file."""
        with open(path, encoding="utf-8") as fh:
            try:
                data = json.load(fh)
            except json.JSONDecodeError as exc:
                raise MachineError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
        return cls.from_dict(data, source=f"json:{path}")

    @classmethod
    def build(cls, sockets: Sequence[int], gpus_per_socket: Sequence[int], *, root_link: float = 15.76,
              gpu_link: float = 15.76, switch_fanout: int = 0, qpi: float = 16.0, nic_link: float = 7.88,
              source: str = "build") -> "GpuNode":
        """A regular PCIe tree: package ``s`` has ``sockets[s]`` cores and ``gpus_per_socket[s]`` GPUs.

        With ``switch_fanout = f > 0`` the GPUs of a package hang in groups of ``f`` below a PCIe
        switch on a ``root_link`` to the package (``gpu_link`` below); with 0 they hang directly on
        the package through ``root_link``.  Packages form a chain of ``qpi`` links; the network
        adapter hangs on package 0 through ``nic_link``.  Bandwidths in GB/s per direction.
        """
        if len(sockets) != len(gpus_per_socket) or not sockets:
            raise MachineError("build: one core count and one GPU count per package")
        b = GpuNodeBuilder(source)
        cpus = [b.vertex(f"cpu{s}", "cpu") for s in range(len(sockets))]
        for x, y in zip(cpus, cpus[1:]):
            b.link(x, y, qpi, "qpi")
        gpu = switch = 0
        for s, count in enumerate(gpus_per_socket):
            parent = cpus[s]
            for k in range(count):
                if switch_fanout and k % switch_fanout == 0:
                    parent = b.vertex(f"sw{switch}", "switch")
                    b.link(cpus[s], parent, root_link, "pcie")
                    switch += 1
                b.link(parent, b.vertex(f"gpu{gpu}", "gpu"), gpu_link if switch_fanout else root_link, "pcie")
                gpu += 1
        b.link(cpus[0], b.vertex("nic", "nic"), nic_link, "pcie")
        for s, n in enumerate(sockets):
            b.cores(cpus[s], n)
        return b.done()


class GpuNodeBuilder:
    """Adds vertices, links and cores one at a time, then :meth:`done` makes the :class:`GpuNode`
    (what the readers and presets use).

    >>> b = GpuNodeBuilder("example")
    >>> cpu = b.vertex("cpu0", "cpu"); b.cores(cpu, 4)
    >>> b.link(cpu, b.vertex("gpu0", "gpu"), pcie(4, 16), "pcie4x16")
    >>> b.done().ngpus
    1
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.names: list[str] = []
        self.kinds: list[str] = []
        self.links: list[Link] = []
        self.core_of: list[int] = []

    def vertex(self, name: str, kind: str) -> int:
        self.names.append(name)
        self.kinds.append(kind)
        return len(self.names) - 1

    def link(self, a: int, b: int, bandwidth: float, kind: str) -> None:
        self.links.append(Link(a, b, float(bandwidth), kind))

    def cores(self, cpu: int, count: int) -> None:
        self.core_of.extend([cpu] * int(count))

    def done(self) -> "GpuNode":
        return GpuNode(self.names, self.kinds, self.links, self.core_of, source=self.source)


def _reachable(nv: int, links: Sequence[Link]) -> set[int]:
    adj: list[list[int]] = [[] for _ in range(nv)]
    for ln in links:
        adj[ln.a].append(ln.b)
        adj[ln.b].append(ln.a)
    seen, todo = {0}, [0]
    while todo:
        for w in adj[todo.pop()]:
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def _fastest_paths(nv: int, links: Sequence[Link], src: int) -> list[list[int]]:
    """Channel lists from ``src`` to every vertex: least sum of 1/bandwidth (rounded, so equal
    paths tie), then fewest links, then the lexicographically smallest vertex sequence."""
    adj: list[list[tuple[int, int]]] = [[] for _ in range(nv)]
    for i, ln in enumerate(links):
        adj[ln.a].append((ln.b, 2 * i))
        adj[ln.b].append((ln.a, 2 * i + 1))
    best: dict[int, tuple[float, int, tuple[int, ...], tuple[int, ...]]] = {}
    heap = [(0.0, 0, (src,), ())]
    while heap:
        cost, hops, verts, chans = heapq.heappop(heap)
        v = verts[-1]
        if v in best:
            continue
        best[v] = (cost, hops, verts, chans)
        for w, ch in adj[v]:
            if w not in best:
                heapq.heappush(heap, (round(cost + 1.0 / links[ch // 2].bandwidth, 9), hops + 1, verts + (w,),
                                      chans + (ch,)))
    return [list(best[v][3]) for v in range(nv)]


@dataclass(frozen=True, eq=False)
class GpuNodeTree(NodeTree):
    """A :class:`NodeTree` of cores that also carries the node's :class:`GpuNode` (``gpu``).

    Everything that reads a NodeTree sees the cores; GPU-aware code (MAGC, :func:`node_link_loads`)
    finds the links in ``gpu``.
    """

    gpu: GpuNode | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.gpu, GpuNode) or self.gpu.ncores != self.groups.shape[1]:
            raise MachineError("a GpuNodeTree needs a GpuNode with one core per PE")

    def __eq__(self, other: object) -> bool:
        same = super().__eq__(other)
        if same is NotImplemented or not same:
            return same
        return isinstance(other, GpuNodeTree) and self.gpu == other.gpu

    __hash__ = None  # type: ignore[assignment]

    def with_costs(self, costs: Any) -> "GpuNodeTree":
        return self.gpu.node_tree(costs)  # type: ignore[union-attr]


@dataclass(frozen=True)
class NodeLinkLoads:
    """Loads on the links inside the nodes, apart from the network's metrics.

    Attributes
    ----------
    load : numpy.ndarray
        Bytes per ``(node, channel)``, shape ``(nodes, channels)``.
    congestion : numpy.ndarray
        ``load / (bandwidth * 1e9)``: seconds each channel is busy at full bandwidth (000 §1.4, eq. 3.1
        on the node's links).
    max_congestion, nz_congestion_avg, nz_congestion_var : float
        MC, NZCA, NZCV over the channels with non-zero load (population variance).
    nz_links : int
    """

    load: np.ndarray
    congestion: np.ndarray
    max_congestion: float
    nz_links: int
    nz_congestion_avg: float
    nz_congestion_var: float

    def to_dict(self) -> dict[str, float]:
        """The scalars."""
        return {"node_max_congestion": self.max_congestion, "node_nz_links": self.nz_links,
                "node_nz_congestion_avg": self.nz_congestion_avg, "node_nz_congestion_var": self.nz_congestion_var}


def _pattern_arrays(pattern: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return pattern.indptr, pattern.indices, pattern.bytes


def node_link_loads(node: GpuNode, nnodes: int, node_of: Any, cpu_pattern: Any = None, cpu_ep: Any = None,
                    gpu_pattern: Any = None, gpu_ep: Any = None) -> NodeLinkLoads:
    """Load of every channel of every node (one C pass per pattern, csrc/core/gpu_loads.c).

    CPU traffic runs between the processes' cores, GPU traffic between their GPUs; a message
    between nodes loads the path to the network adapter on the sender's node and from it on
    the receiver's (the network in between is :func:`topomap.evaluate`'s).

    Parameters
    ----------
    node : GpuNode
    nnodes : int
        Nodes of the machine.
    node_of : array_like of int
        Node of each process.
    cpu_pattern, gpu_pattern : Pattern, optional
        Host and device traffic (at least one).
    cpu_ep : array_like of int
        Local core of each process (needed with ``cpu_pattern``).
    gpu_ep : array_like of int
        Local GPU of each process (needed with ``gpu_pattern``).

    Examples
    --------
    >>> import topomap as tm
    >>> node = GpuNode.build([1, 1], [1, 1], qpi=10.0, root_link=10.0)
    >>> gpu = tm.Pattern.from_edges([0], [1], [5e9])
    >>> res = node_link_loads(node, 1, [0, 0], gpu_pattern=gpu, gpu_ep=[0, 1])
    >>> res.max_congestion, res.nz_links
    (0.5, 3)
    """
    if cpu_pattern is None and gpu_pattern is None:
        raise MachineError("node_link_loads needs a CPU or a GPU pattern")
    ptr, chans = node.route_table()
    bw = node.bandwidths
    total = np.zeros((int(nnodes), node.nchannels))
    node_of = np.ascontiguousarray(node_of, dtype=np.int32)
    for pattern, local, offset, what in ((cpu_pattern, cpu_ep, 0, "core"), (gpu_pattern, gpu_ep, node.ncores, "GPU")):
        if pattern is None:
            continue
        if local is None:
            raise MachineError(f"node_link_loads: a {what} pattern needs the local {what} of each process")
        if pattern.n != node_of.size:
            raise MachineError(f"node_link_loads: the {what} pattern has {pattern.n} processes, node_of {node_of.size}")
        local = np.asarray(local, dtype=np.int64)
        limit = node.ncores if offset == 0 else node.ngpus
        if local.shape != node_of.shape or (local.size and (local.min() < 0 or local.max() >= limit)):
            raise MachineError(f"node_link_loads: local {what} ids must be {node_of.size} values in [0, {limit})")
        ep = np.ascontiguousarray(local + offset, dtype=np.int32)
        total += _core.gpu_loads(bw, ptr, chans, node.nic_endpoint, *_pattern_arrays(pattern), node_of, ep,
                                 int(nnodes))
    cong = total / (bw * 1e9)
    nz = cong[total > 0]
    return NodeLinkLoads(total, cong, float(cong.max(initial=0.0)), int(nz.size),
                         float(nz.mean()) if nz.size else 0.0, float(nz.var()) if nz.size else 0.0)
