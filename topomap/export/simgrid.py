"""SimGrid platform XML and SMPI host files, so that SimGrid replays topomap's routes.

Format: SimGrid platform DTD version 4.1 (``simgrid.dtd``, SimGrid >= 3.16;
read by SimGrid 3.x and 4.x).  The platform is one ``<zone routing="Full">``
holding

* a ``<prop id="topomap_spec">`` with the machine's spec string;
* one ``<host id="nodeN">`` per compute node, with ``core`` = PEs per node;
* one ``<router id="switchV">`` per switch (for reading only: Full routing
  takes routes as lists of links);
* one ``<link id="lK">`` per directed topomap link ``K``, ``SHARED``, with
  bandwidth = ``capacity x bandwidth`` and the same ``latency`` for all;
* one ``<route src= dst= symmetrical="NO">`` per ordered pair of distinct
  nodes listing the links of :meth:`Machine.route`, so SimGrid's flows use
  exactly topomap's routes (Floyd or Dijkstra zones would pick their own
  shortest paths).

Choices the formats leave open, made here:

* Units: bandwidth in bytes/s (``Bps``), latency in seconds, host speed in
  flop/s, always written with their unit (SimGrid warns on unit-less values).
  Defaults are InfiniBand-class figures: 12.5 GB/s per unit of capacity
  (100 Gb/s), 100 ns per link, 1 Gflop/s per core.  Pass your own.
* Inside a node SimGrid uses its loopback link; the node tree is not modelled.
* Full routing stores N(N-1) routes, so :func:`platform` refuses more than
  ``max_nodes`` nodes (default 512: 261,632 routes, about 50 MB for a 3-D
  torus) unless told otherwise.
* Host file (``smpirun -hostfile``): one line per rank, the host of the node
  whose PE the rank is mapped to; SMPI gives rank ``i`` the ``i``-th line.
"""

from __future__ import annotations

import math
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np

from ..errors import MachineError, MappingError
from ..machine import Allocation, Machine
from ..mapping import Mapping

__all__ = ["platform", "hostfile", "host_name", "link_name"]


def host_name(node: int) -> str:
    """SimGrid host id of a compute node.

    Examples
    --------
    >>> host_name(3)
    'node3'
    """
    return f"node{node}"


def link_name(link: int) -> str:
    """SimGrid link id of a topomap link.

    Examples
    --------
    >>> link_name(12)
    'l12'
    """
    return f"l{link}"


def _positive(value: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value) or value <= 0:
        raise MachineError(f"{what} must be a positive finite number, got {value!r}")
    return float(value)


def platform(machine: Machine, bandwidth: float = 1.25e10, latency: float = 1e-7, speed: float = 1e9,
             max_nodes: int = 512) -> str:
    """SimGrid platform XML (DTD 4.1) of a machine with topomap's own routes.

    Parameters
    ----------
    machine : Machine
        Any machine.
    bandwidth : float
        Bytes per second of a link of capacity 1.
    latency : float
        Seconds per link.
    speed : float
        Flop/s of each core.
    max_nodes : int
        Refuse machines with more compute nodes (the file holds N(N-1) routes).

    Returns
    -------
    str
        The XML document.

    Examples
    --------
    >>> import topomap as tm
    >>> xml = platform(tm.machine("torus:2x2"))
    >>> xml.count("<route "), xml.count("<link ")
    (12, 16)
    >>> [line.strip() for line in xml.splitlines() if 'src="node0" dst="node3"' in line]
    ['<route src="node0" dst="node3" symmetrical="NO"><link_ctn id="l0"/><link_ctn id="l6"/></route>']
    """
    bw = _positive(bandwidth, "bandwidth")
    lat = _positive(latency, "latency")
    spd = _positive(speed, "speed")
    n = machine.nnodes
    if n > max_nodes:
        raise MachineError(f"{machine.spec!r} has {n} nodes: a Full-routing platform would hold {n * (n - 1)} "
                           f"routes; pass max_nodes={n} to write it anyway")
    g = machine.links()
    lines = ["<?xml version='1.0'?>",
             '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">',
             '  <zone id="topomap" routing="Full">',
             f'    <prop id="topomap_spec" value={quoteattr(machine.spec)}/>']
    lines += [f'    <host id="{host_name(v)}" speed="{spd!r}f" core="{machine.pes_per_node}"/>' for v in range(n)]
    lines += [f'    <router id="switch{v}"/>' for v in range(n, machine.nvertices)]
    lines += [f'    <link id="{link_name(k)}" bandwidth="{c * bw!r}Bps" latency="{lat!r}s" '
              f'sharing_policy="SHARED"/>' for k, c in zip(g["link"].tolist(), g["capacity"].tolist())]
    for a in range(n):
        for b in range(n):
            if a != b:
                ctn = "".join(f'<link_ctn id="{link_name(k)}"/>' for k in machine.route(a, b).tolist())
                lines.append(f'    <route src="{host_name(a)}" dst="{host_name(b)}" symmetrical="NO">{ctn}</route>')
    lines += ["  </zone>", "</platform>"]
    return "\n".join(lines) + "\n"


def hostfile(where: "Allocation | Machine", mapping: "Mapping | Any | None" = None) -> str:
    """SMPI host file: the host of each rank, one line per rank.

    Parameters
    ----------
    where : Allocation or Machine
        With an Allocation and no mapping, rank ``i`` runs on ``pes[i]`` (the
        launcher's order); with a Machine and no mapping, on PE ``i`` of the
        whole machine.
    mapping : Mapping or array of PE ids, optional
        ``pe_of[rank]``; with an Allocation every PE must be in it.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("torus:2x2/2").allocate(4)
    >>> hostfile(alloc, [3, 2, 1, 0]).split()
    ['node1', 'node1', 'node0', 'node0']
    """
    machine = where.machine if isinstance(where, Allocation) else where
    if not isinstance(machine, Machine):
        raise MappingError(f"a host file needs an Allocation or a Machine, got {type(where).__name__}")
    if mapping is None:
        pe = where.pes if isinstance(where, Allocation) else np.arange(machine.npes)
    else:
        pe = mapping.pe_of if isinstance(mapping, Mapping) else Mapping(np.asarray(mapping)).pe_of
        if isinstance(where, Allocation):
            outside = ~np.isin(pe, where.pes)
            if outside.any():
                r = int(np.flatnonzero(outside)[0])
                raise MappingError(f"rank {r} is mapped to PE {pe[r]}, which is not in the allocation")
    return "".join(f"{host_name(v)}\n" for v in machine.node_of(pe).tolist())
