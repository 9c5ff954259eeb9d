"""The machine a running MPI job sits on: each rank's host and CPU binding, as an Allocation.

Every rank reports a :class:`RankPlace` (host name, the OS CPU indices it may
run on, its host's CPU count); :func:`job_allocation` turns the list into a
:class:`~topomap.Allocation` whose PE ``i`` is where rank ``i`` runs, so the
launcher's order is the ``block`` mapping, as everywhere in topomap.

Where the pieces come from:

* **host**: ``MPI.Get_processor_name()``.  For tests and for studying a
  multi-host job on one machine, the environment variable
  ``TOPOMAP_MPI_HOSTS`` (or the ``hosts=`` argument) assigns fake names:
  comma-separated Slurm hostlists, each optionally followed by ``*K`` (K
  consecutive ranks per host), e.g. ``n[0-1]*4`` = ``n0`` x4, ``n1`` x4.
  The variable is indexed by ``MPI.COMM_WORLD`` rank, the argument by rank
  in the communicator passed.
* **binding**: ``os.sched_getaffinity(0)`` (:func:`topomap.node.discover.current_binding`);
  on Linux this is the same mask ``hwloc_get_cpubind`` reads.
* **node tree** (inside a host): the user's machine's node tree; or, with no
  machine, ``NodeTree.discover()`` (libhwloc when topomap was built with it,
  else ``lstopo``, sysfs) on one rank per host, when every rank is bound to
  its own CPUs; otherwise a flat node of *slots*, as many as the busiest
  host has ranks, filled in rank order (unbound and oversubscribed ranks
  have no better PE to name).
* **network** between hosts: the user's machine (any spec, a fabric file such
  as Slurm ``topology.conf``, or a :class:`~topomap.Machine`), or by default
  one switch joining the job's hosts (a one-level tree network whose
  distance is 10 x the largest distance inside a node).

Host names meet a machine as follows: a machine read from a fabric file
names its nodes and each host must be one of them; otherwise ``host_nodes``
(a dict or a callable ``host -> node id``) decides, and without it the
hosts, in order of first appearance, take nodes 0, 1, 2, ...

Examples
--------
Eight ranks on two fake hosts, without MPI:

>>> from topomap.mpi.job import RankPlace, job_allocation, parse_hosts
>>> places = [RankPlace(h, (0, 1), 2) for h in parse_hosts("n[0-1]*4")]
>>> job = job_allocation(places)
>>> job.allocation.pes.tolist(), job.node_hosts, job.placement
([0, 1, 2, 3, 4, 5, 6, 7], ('n0', 'n1'), 'slots')
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..node.discover import current_binding
from ..errors import MachineError, TopomapError
from ..fabric.slurm import expand_hostlist
from ..machine import Allocation, Machine
from ..networks import SingleNode, TreeNetwork
from ..node.nodetree import NodeTree
from ..networks.spec import machine as build_machine
from ..networks.spec import parse_node
from ._collective import agree, mpi

__all__ = ["RankPlace", "JobAllocation", "parse_hosts", "local_place", "gather_places", "job_allocation",
           "discover_job", "HOSTS_ENV"]

HOSTS_ENV = "TOPOMAP_MPI_HOSTS"
_NODE_CHOICES = ("auto", "slots")


@dataclass(frozen=True)
class RankPlace:
    """Where one rank runs: its host, the OS CPUs it may use, and its host's CPU count."""

    host: str
    cpus: tuple[int, ...]
    ncpus: int

    @property
    def bound(self) -> bool:
        """True if the rank is restricted to part of its host."""
        return 0 < len(self.cpus) < self.ncpus


@dataclass(frozen=True, eq=False)
class JobAllocation:
    """A job's allocation and how it was derived.

    Attributes
    ----------
    allocation : Allocation
        ``allocation.pes[r]`` is the PE of rank ``r``.
    places : tuple of RankPlace
        What each rank reported.
    node_hosts : tuple of str
        Host of each node the job uses, in order of first appearance.
    nodes : tuple of int
        Machine node id of each of those hosts.
    placement : {"binding", "slots"}
        Whether PEs come from the CPU bindings or from rank order on each host.
    """

    allocation: Allocation
    places: tuple[RankPlace, ...]
    node_hosts: tuple[str, ...]
    nodes: tuple[int, ...]
    placement: str

    @property
    def machine(self) -> Machine:
        """The machine the allocation is on."""
        return self.allocation.machine

    def host_of_node(self) -> dict[int, str]:
        """``{node id: host name}`` for the job's nodes (what launcher files need)."""
        return dict(zip(self.nodes, self.node_hosts))

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form (for JSON)."""
        return {"pes": self.allocation.pes.tolist(), "hosts": [p.host for p in self.places],
                "node_hosts": list(self.node_hosts), "nodes": list(self.nodes), "placement": self.placement,
                "machine": self.machine.spec}


def parse_hosts(text: str) -> list[str]:
    """Expand a per-rank host list: comma-separated Slurm hostlists, each with an optional ``*K``.

    Examples
    --------
    >>> parse_hosts("a*2,b,c[1-2]*2")
    ['a', 'a', 'b', 'c1', 'c1', 'c2', 'c2']
    """
    out: list[str] = []
    for item in _split_items(text):
        name, star, count = item.rpartition("*") if "*" in item else (item, "", "")
        if star and not re.fullmatch(r"[1-9][0-9]*", count.strip()):
            raise MachineError(f"host list {text!r}: repeat count {count!r} in {item!r} is not a positive integer")
        try:
            names = expand_hostlist(name.strip())
        except ValueError as exc:
            raise MachineError(f"host list {text!r}: {exc}") from None
        if not names or any(not n for n in names):
            raise MachineError(f"host list {text!r}: empty host name in {item!r}")
        k = int(count) if star else 1
        out.extend(n for n in names for _ in range(k))
    if not out:
        raise MachineError(f"host list {text!r} names no host")
    return out


def _split_items(text: str) -> list[str]:
    """Split at commas outside brackets (Slurm hostlists contain commas inside them)."""
    items, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c == "[") - (c == "]")
        if c == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [s.strip() for s in items if s.strip()]


def local_place(host: str | None = None) -> RankPlace:
    """This process's :class:`RankPlace` (``host`` overrides the real host name).

    Examples
    --------
    >>> local_place("h0").host
    'h0'
    """
    if host is None:
        import socket
        host = socket.gethostname()
    return RankPlace(str(host), tuple(current_binding()), os.cpu_count() or 1)


def _host_override(comm: Any, hosts: "Sequence[str] | str | None") -> tuple[str | None, str | None]:
    """(this rank's host override or None, an error message or None)."""
    MPI = mpi()
    try:
        if hosts is not None:
            names = parse_hosts(hosts) if isinstance(hosts, str) else [str(h) for h in hosts]
            if len(names) != comm.size:
                return None, f"hosts= names {len(names)} hosts for a communicator of {comm.size} ranks"
            return names[comm.rank], None
        env = os.environ.get(HOSTS_ENV)
        if env:
            names = parse_hosts(env)
            world = MPI.COMM_WORLD
            if len(names) != world.size:
                return None, f"{HOSTS_ENV} names {len(names)} hosts for {world.size} MPI_COMM_WORLD ranks"
            return names[world.rank], None
    except MachineError as exc:
        return None, str(exc)
    return MPI.Get_processor_name(), None


def gather_places(comm: Any, hosts: "Sequence[str] | str | None" = None) -> list[RankPlace]:
    """Every rank's :class:`RankPlace`, on every rank (collective over ``comm``).

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
        The job (or part of it).
    hosts : list of str or str, optional
        Fake host name per rank of ``comm`` (a list, or a string as for
        :func:`parse_hosts`); default ``TOPOMAP_MPI_HOSTS``, else the real
        host names.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> [p.host for p in gather_places(MPI.COMM_SELF, hosts=["h"])]
    ['h']
    """
    host, error = _host_override(comm, hosts)
    agree(comm, error, "cannot name the hosts")
    return comm.allgather(local_place(host))


def job_allocation(places: Sequence[RankPlace], machine: "Machine | str | None" = None,
                   node: "str | NodeTree" = "auto", host_nodes: "Mapping[str, int] | Callable[[str], int] | None" = None,
                   node_trees: Mapping[str, NodeTree] | None = None) -> JobAllocation:
    """Build the job's allocation from the ranks' places (pure: no MPI).

    Parameters
    ----------
    places : sequence of RankPlace
        One per rank, in rank order.
    machine : Machine or spec string, optional
        The machine the hosts are part of; default one switch joining them.
    node : "auto", "slots", a node spec (``"16"``, ``"pack:2 core:8"``) or NodeTree
        The inside of a host when ``machine`` is None.  ``"auto"`` uses
        ``node_trees`` (the discovered tree of each host) when all hosts agree
        and every rank is bound to its own PE, else slots.
    host_nodes : dict or callable, optional
        Node id of each host on a machine whose nodes have no names.
    node_trees : mapping, optional
        ``{host: NodeTree}`` as discovered on each host (used by ``"auto"``).

    Raises
    ------
    MachineError
        A rank on a host the machine does not know, two hosts on one node,
        more ranks on a host than its node has PEs.

    Examples
    --------
    Bound ranks on a machine with a node tree:

    >>> import topomap as tm
    >>> tree = tm.NodeTree.from_synthetic("core:4 pu:1")
    >>> places = [RankPlace("a", (3,), 4), RankPlace("a", (1,), 4)]
    >>> job_allocation(places, node=tree).allocation.pes.tolist()
    [3, 1]
    """
    if not places:
        raise MachineError("a job needs at least one rank")
    hosts = [p.host for p in places]
    ranks_on = _ranks_on(places)
    node_hosts = tuple(ranks_on)
    busiest = max(len(v) for v in ranks_on.values())
    if machine is None:
        tree = _job_node_tree(places, node, node_trees, busiest)
        net_cost = 10.0 * max(1.0, float(np.max(tree.costs)) if len(tree.costs) else 1.0)
        network = SingleNode() if len(node_hosts) == 1 else TreeNetwork((len(node_hosts),), (net_cost,))
        mach = Machine(network, tree, spec=f"job:{len(node_hosts)} hosts/{tree.npes}")
        nodes = tuple(range(len(node_hosts)))
    else:
        if node_trees is not None or not (isinstance(node, str) and node == "auto"):
            raise MachineError("node= and node_trees= describe a host only when no machine is given; "
                               "the machine's node tree is used")
        mach = build_machine(machine)
        nodes = _nodes_of_hosts(mach, node_hosts, ranks_on, host_nodes)
    local, placement = _local_pes(places, mach.node, ranks_on)
    ppn = mach.pes_per_node
    for h in node_hosts:
        if len(ranks_on[h]) > ppn:
            raise MachineError(f"host {h!r} runs {len(ranks_on[h])} ranks (ranks {_few(ranks_on[h])}) but a node "
                               f"of {mach.spec!r} has {ppn} PEs")
    node_of_host = dict(zip(node_hosts, nodes))
    pes = np.array([node_of_host[h] * ppn + local[r] for r, h in enumerate(hosts)], dtype=np.int64)
    return JobAllocation(mach.allocation(pes), tuple(places), node_hosts, tuple(int(n) for n in nodes), placement)


def _job_node_tree(places: Sequence[RankPlace], node: "str | NodeTree", node_trees: Mapping[str, NodeTree] | None,
                   busiest: int) -> NodeTree:
    if isinstance(node, NodeTree):
        return node
    if not isinstance(node, str):
        raise MachineError(f"node must be 'auto', 'slots', a node spec or a NodeTree, got {type(node).__name__}")
    if node == "slots" or (node == "auto" and not node_trees):
        return NodeTree.flat(busiest)
    if node == "auto":
        trees = list(node_trees.values())
        hosts = {p.host for p in places}
        if hosts <= set(node_trees) and all(t == trees[0] for t in trees) and \
                _local_pes(places, trees[0], _ranks_on(places))[1] == "binding":
            return trees[0]
        return NodeTree.flat(busiest)
    return parse_node(node, f"node={node!r}", cost=None)


def _ranks_on(places: Sequence[RankPlace]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for r, p in enumerate(places):
        out.setdefault(p.host, []).append(r)
    return out


def _local_pes(places: Sequence[RankPlace], tree: NodeTree, ranks_on: Mapping[str, list[int]]) -> tuple[list[int], str]:
    """Local PE of each rank: from its binding if every rank is bound to its own leaf, else slots."""
    local = [0] * len(places)
    if tree.os_index is not None and all(p.bound for p in places):
        leaf_of_cpu = {int(c): i for i, c in enumerate(tree.os_index)}
        ok = True
        for ranks in ranks_on.values():
            leaves = [min((leaf_of_cpu[c] for c in places[r].cpus if c in leaf_of_cpu), default=-1) for r in ranks]
            if min(leaves) < 0 or len(set(leaves)) != len(leaves):
                ok = False
                break
            for r, leaf in zip(ranks, leaves):
                local[r] = leaf
        if ok:
            return local, "binding"
    for ranks in ranks_on.values():
        for slot, r in enumerate(ranks):
            local[r] = slot
    return local, "slots"


def _nodes_of_hosts(mach: Machine, node_hosts: Sequence[str], ranks_on: Mapping[str, list[int]],
                    host_nodes: "Mapping[str, int] | Callable[[str], int] | None") -> tuple[int, ...]:
    names = getattr(mach.network, "names", None)
    if host_nodes is not None:
        lookup = host_nodes if callable(host_nodes) else host_nodes.get
        source = "host_nodes"
    elif names is not None:
        index = {n: i for i, n in enumerate(names[:mach.nnodes])}
        lookup, source = index.get, f"the machine {mach.spec!r}"
    else:
        if len(node_hosts) > mach.nnodes:
            raise MachineError(f"the job runs on {len(node_hosts)} hosts but {mach.spec!r} has {mach.nnodes} nodes")
        return tuple(range(len(node_hosts)))
    nodes = []
    for h in node_hosts:
        try:
            n = lookup(h)
        except (KeyError, ValueError, TypeError) as exc:
            raise MachineError(f"host_nodes failed for host {h!r} (ranks {_few(ranks_on[h])}): {exc}") from None
        if n is None:
            raise MachineError(f"ranks {_few(ranks_on[h])} run on host {h!r}, unknown to {source}")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n < mach.nnodes:
            raise MachineError(f"host {h!r} maps to node {n!r}, not a node id of {mach.spec!r} (0..{mach.nnodes - 1})")
        nodes.append(int(n))
    seen: dict[int, str] = {}
    for h, n in zip(node_hosts, nodes):
        if n in seen:
            raise MachineError(f"hosts {seen[n]!r} and {h!r} both map to node {n}")
        seen[n] = h
    return tuple(nodes)


def _few(ranks: Sequence[int], k: int = 8) -> str:
    text = ", ".join(map(str, ranks[:k]))
    return text + (", ..." if len(ranks) > k else "")


def discover_job(comm: Any, machine: "Machine | str | None" = None, hosts: "Sequence[str] | str | None" = None,
                 node: "str | NodeTree" = "auto",
                 host_nodes: "Mapping[str, int] | Callable[[str], int] | None" = None,
                 root: int | None = None) -> JobAllocation | None:
    """Discover the job's allocation (collective over ``comm``).

    Parameters are those of :func:`gather_places` and :func:`job_allocation`.
    ``root=None`` returns the result on every rank; an int returns it on that
    rank and None elsewhere.  A fault raises :class:`CollectiveError` on
    every rank.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> job = discover_job(MPI.COMM_WORLD, hosts=["h0"] * MPI.COMM_WORLD.size, node="slots")
    >>> len(job.allocation) == MPI.COMM_WORLD.size
    True
    """
    places = gather_places(comm, hosts)
    trees: dict[str, NodeTree] | None = None
    if machine is None and isinstance(node, str) and node == "auto" and all(p.bound for p in places):
        # one rank per host looks inside it; the others only wait for the result
        first = {p.host: r for r, p in reversed(list(enumerate(places)))}
        mine, error = None, None
        if first[places[comm.rank].host] == comm.rank:
            try:
                mine = NodeTree.discover().to_dict()
            except Exception as exc:  # noqa: BLE001 - discovery failures must reach every rank
                error = f"node tree discovery failed: {exc}"
        agree(comm, error, "cannot discover the node tree")
        got = comm.allgather(mine)
        trees = {places[r].host: NodeTree.from_dict(got[r]) for r in first.values()}
    result, error = None, None
    if root is None or comm.rank == root:
        try:
            result = job_allocation(places, machine, node, host_nodes, trees)
        except (TopomapError, OSError) as exc:
            error = str(exc)
    agree(comm, error, "cannot build the job's allocation")
    return result
