"""The SciNet GPC QDR InfiniBand fat tree, the machine of Mirsadeghi's experiments.

Source: Mirsadeghi's thesis, section 3.4 and Fig. 3.8 (000 notes section
6.1).  The QDR partition is a fat tree of two 324-port core switches and 103
36-port leaf switches; each leaf switch has 30 compute nodes and 3 uplinks
to each of the two core switches (30 down : 6 up, the 5:1 blocking).  Each
core switch is itself a 2-level fat tree of 18 *line* and 9 *spine* 36-port
switches; each line switch serves 6 leaf switches (the last one serves 1)
and has 2 uplinks to each of the 9 spines.  A node has two quad-core
sockets: node tree ``pack:2 core:4``, 8 PEs.

Built here (counts checked in tests/test_gpc.py): 3090 nodes, 157 switches
(103 leaves + 2 x (18 line + 9 spine)), 4356 cables = 8712 directed links:
3090 node cables, 103 x 6 leaf uplinks, 2 x 18 x 9 x 2 line-spine cables.
The longest route is 6 links (node, leaf, line, spine, line, leaf, node).

Choices the thesis leaves open, made here:

* Wiring: leaf ``L`` hangs off line switch ``L // 6`` of each core; line
  switch ports 1-18 go down (3 per leaf, in leaf order), 19-36 up (2 per
  spine, in spine order); a leaf's ports 1-30 are its nodes, 31-33 go to
  core 0 and 34-36 to core 1.  Node ``30 L + s`` is slot ``s`` of leaf ``L``.
* Routing: the thesis read GPC's real OpenSM tables, which are not
  published.  Its stand-in is the graph kind's ``dmodk`` routing:
  minimum-hop, and among the equal-cost next links of a switch (in link-id
  order, which is the port order above) the ``(d mod count)``-th for
  destination node ``d``.  So a leaf sends traffic for ``d`` (on another
  leaf) up its uplink ``d mod 6``: to core ``(d mod 6) // 3`` over that
  core's cable ``d mod 3``; a line switch sends it up to spine
  ``(d mod 18) // 2`` over cable ``d mod 2``; the spine comes down to the
  destination's line switch over cable ``d mod 2`` and that line switch to
  the destination's leaf over cable ``d mod 3``.  Every destination thus
  has one fixed path per source leaf, as with InfiniBand's
  destination-based forwarding tables.
* Capacities: every link is QDR 4x; they are all 1 by default (so
  congestion is traffic, as the thesis counts it), or ``capacity`` for all.
* Names: nodes ``leaf000-n00`` ... ``leaf102-n29``, switches ``leaf000``
  ... ``leaf102``, ``core0-line00`` ... ``core1-line17``, ``core0-spine0``
  ... ``core1-spine8``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import MachineError
from ..networks.spec import parse_node, register_spec
from .model import Fabric

if TYPE_CHECKING:
    from ..machine import Machine
    from ..node.nodetree import NodeTree

__all__ = ["gpc_fabric", "gpc_machine", "LEAVES", "NODES_PER_LEAF", "CORES", "LINES", "SPINES",
           "LEAVES_PER_LINE", "UPLINKS_PER_CORE", "LINE_SPINE_CABLES", "GPC_NODE"]

LEAVES = 103
NODES_PER_LEAF = 30
CORES = 2
LINES = 18
SPINES = 9
LEAVES_PER_LINE = 6
UPLINKS_PER_CORE = 3
LINE_SPINE_CABLES = 2
GPC_NODE = "pack:2 core:4"


def gpc_fabric(capacity: float = 1.0) -> Fabric:
    """The GPC QDR fat tree as a :class:`Fabric` (layout in the module docstring).

    Examples
    --------
    >>> from topomap.fabric import gpc_fabric
    >>> fab = gpc_fabric()
    >>> fab.nnodes, fab.nswitches, fab.nlinks, int(fab.ports()[fab.nnodes:].max())
    (3090, 157, 8712, 36)
    """
    nn = LEAVES * NODES_PER_LEAF
    leaf0 = nn
    core0 = leaf0 + LEAVES
    per_core = LINES + SPINES

    def line(c: np.ndarray, i: np.ndarray) -> np.ndarray:
        return core0 + c * per_core + i

    def spine(c: np.ndarray, j: np.ndarray) -> np.ndarray:
        return core0 + c * per_core + LINES + j

    node = np.arange(nn)
    L, c, _ = np.meshgrid(np.arange(LEAVES), np.arange(CORES), np.arange(UPLINKS_PER_CORE), indexing="ij")
    c2, i, j, _ = np.meshgrid(np.arange(CORES), np.arange(LINES), np.arange(SPINES),
                              np.arange(LINE_SPINE_CABLES), indexing="ij")
    a = np.concatenate([node, leaf0 + L.ravel(), line(c2, i).ravel()])
    b = np.concatenate([leaf0 + node // NODES_PER_LEAF, line(c, L // LEAVES_PER_LINE).ravel(), spine(c2, j).ravel()])
    src = np.column_stack([a, b]).ravel()
    dst = np.column_stack([b, a]).ravel()
    nodes = [f"leaf{n // NODES_PER_LEAF:03d}-n{n % NODES_PER_LEAF:02d}" for n in range(nn)]
    switches = [f"leaf{k:03d}" for k in range(LEAVES)] + [
        name for k in range(CORES) for name in
        [f"core{k}-line{x:02d}" for x in range(LINES)] + [f"core{k}-spine{x}" for x in range(SPINES)]]
    return Fabric(nodes, switches, src, dst, capacity=np.full(src.size, float(capacity)))


def gpc_machine(node: "int | str | NodeTree" = GPC_NODE, routing: str = "dmodk", capacity: float = 1.0,
                spec: str | None = None) -> "Machine":
    """The GPC machine: :func:`gpc_fabric` with ``node`` in every node (default the
    real ``pack:2 core:4``) and ``dmodk`` routing.

    Examples
    --------
    >>> from topomap.fabric import gpc_machine
    >>> m = gpc_machine()
    >>> m.nnodes, m.npes, m.max_route
    (3090, 24720, 6)
    """
    return gpc_fabric(capacity).machine(node, routing=routing, spec=spec)


@register_spec("gpc", bare=True)
def _parse(kind: str, body: str, spec: str):
    """``gpc:[routing=R,capacity=C][/NODE]`` or ``gpc:NODE``; NODE 8 is the GPC node ``pack:2 core:4``."""
    head, slash, node = body.partition("/")
    if not slash and "=" not in head:
        head, node = "", head
    options = {"routing": "dmodk", "capacity": "1"}
    for opt in filter(None, (o.strip() for o in head.split(","))):
        key, eq, value = opt.partition("=")
        if not eq or key.strip() not in options:
            raise MachineError(f"unknown gpc option {opt!r} in machine spec {spec!r}; known: routing, capacity")
        options[key.strip()] = value.strip()
    node = node.strip() or "8"
    try:
        capacity = float(options["capacity"])
    except ValueError:
        raise MachineError(f"capacity {options['capacity']!r} in machine spec {spec!r} is not a number") from None
    tree = parse_node(GPC_NODE if node == "8" else node, spec)
    return gpc_fabric(capacity).to_network(options["routing"]), tree
