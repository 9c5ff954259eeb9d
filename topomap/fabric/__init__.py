"""Fabrics from files: the network between compute nodes as switches, cables and routes.

Readers turn each source into the neutral :class:`Fabric` value
(:mod:`topomap.fabric.model`), which becomes a machine through the graph
network kind:

==================================== ===============================================
:func:`read_fabric`                  any of the formats below, chosen from the name/content
:mod:`~topomap.fabric.json_fabric`   topomap's own JSON description (with routes)
:mod:`~topomap.fabric.slurm`         Slurm ``topology.conf`` (topology/tree)
:mod:`~topomap.fabric.ibnetdiscover` InfiniBand ``ibnetdiscover`` dumps
:mod:`~topomap.fabric.routefile`     ibtracert-style per-pair route files (streamed)
:mod:`~topomap.fabric.gpc`           the SciNet GPC QDR fat tree of Mirsadeghi's thesis
==================================== ===============================================

Machine spec strings::

    file:PATH[,routing=shortest|dmodk|table][,routes=ROUTEFILE][,format=json|slurm|ibnetdiscover][/NODE]
    gpc:[routing=...,capacity=...][/NODE]        (NODE 8, the default, is the GPC node pack:2 core:4)

``/NODE`` is taken as the node description when it is a PE count or an
hwloc synthetic string (``type:N`` words); otherwise the whole body is the
path (so a file whose name is all digits needs an explicit ``/1``).  Paths
cannot contain commas.  Routing defaults to ``table`` when the fabric has
routes (from the JSON file or ``routes=``) and ``shortest`` otherwise.
A spec routed by forwarding tables reads at most ``isqrt(MAX_TABLE_BYTES)``
(32768) compute nodes and refuses the next one while the file is read (see
:mod:`topomap.networks.limits`).
"""

from __future__ import annotations

import math
import os
import re

from ..errors import FormatError, MachineError
from ..networks import limits
from ..networks.spec import parse_node, register_spec
from .gpc import gpc_fabric, gpc_machine
from .ibnetdiscover import parse_ibnetdiscover, read_ibnetdiscover
from .json_fabric import dumps, loads, read_json, write_json
from .model import Fabric, FabricBuilder, NodeLimit
from .routefile import read_routes, write_routes
from .slurm import expand_hostlist, parse_slurm, read_slurm

__all__ = ["Fabric", "FabricBuilder", "read_fabric", "read_json", "loads", "dumps", "write_json",
           "read_slurm", "parse_slurm", "expand_hostlist", "read_ibnetdiscover", "parse_ibnetdiscover",
           "read_routes", "write_routes", "gpc_fabric", "gpc_machine"]

_READERS = {"json": read_json, "slurm": read_slurm, "ibnetdiscover": read_ibnetdiscover}


def read_fabric(path: "str | os.PathLike[str]", format: str | None = None, max_nodes: int | None = None) -> Fabric:
    """Read a fabric file, telling the format from its name or content unless ``format`` is given;
    more than ``max_nodes`` compute nodes raise :class:`~topomap.fabric.model.NodeLimit`.

    ``.json`` or a first character ``{`` means JSON; ``topology.conf``,
    ``.conf`` or a first line starting with ``SwitchName=`` means Slurm;
    ``vendid=``/``Switch``/``Ca`` lines mean ``ibnetdiscover``.

    Examples
    --------
    >>> import os, tempfile, topomap as tm
    >>> path = os.path.join(tempfile.mkdtemp(), "topology.conf")
    >>> _ = open(path, "w").write("SwitchName=s0 Nodes=n[0-3]\\n")
    >>> tm.fabric.read_fabric(path).nodes
    ('n0', 'n1', 'n2', 'n3')
    """
    label = os.fspath(path)
    if format is None:
        format = _sniff(label)
    if format not in _READERS:
        raise FormatError(f"{label}: unknown fabric format {format!r}; known: {', '.join(sorted(_READERS))}")
    return _READERS[format](label, max_nodes)


def _sniff(label: str) -> str:
    lower = os.path.basename(label).lower()
    if lower.endswith(".json"):
        return "json"
    if lower.endswith(".conf"):
        return "slurm"
    try:
        with open(label, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError as err:
        raise FormatError(f"{label}: cannot read: {err.strerror or err}") from None
    for no, raw in enumerate(head.splitlines(), 1):
        text = raw.strip()
        if not text or text.startswith(b"#"):
            continue
        if text.startswith(b"{"):
            return "json"
        if text.lower().startswith(b"switchname="):
            return "slurm"
        if re.match(rb"(vendid|devid|sysimgguid|switchguid|caguid|rtguid)=|(Switch|Ca|Rt)\s+\d+\s+\"", text) \
                or text.startswith((b"Non-Chassis", b"Chassis")):
            return "ibnetdiscover"
        raise FormatError(f"{label}:{no}: cannot tell the fabric format from this line; "
                          "name the file *.json or *.conf, or pass format=")
    raise FormatError(f"{label}: the file is empty: no fabric")


@register_spec("file")
def _file_spec(kind: str, body: str, spec: str):
    head, slash, tail = body.rpartition("/")
    if slash and re.fullmatch(r"\s*(\d+|([A-Za-z]\w*:\d+\s*)+)\s*", tail):
        body, node = head, tail
    else:
        node = "1"
    path, *opts = body.split(",")
    options: dict[str, str] = {}
    for opt in opts:
        key, eq, value = opt.partition("=")
        key = key.strip()
        if not eq or key not in ("routing", "routes", "format") or key in options:
            raise MachineError(f"bad file option {opt!r} in machine spec {spec!r}; known: routing, routes, format")
        options[key] = value.strip()
    if not path.strip():
        raise MachineError(f"machine spec {spec!r} names no fabric file")
    tree = parse_node(node, spec)
    fabric = _read_for_machine(path.strip(), options)
    if "routes" in options:
        fabric = fabric.with_routes(read_routes(options["routes"], fabric))
    return fabric.to_network(options.get("routing")), tree


def _read_for_machine(path: str, options: dict[str, str]) -> Fabric:
    """Read a ``file:`` spec's fabric, refusing one too large for forwarding tables while it
    is read (see :mod:`topomap.networks.limits`): with ``routing=shortest|dmodk``, or by
    default when neither ``routes=`` nor a JSON file can supply explicit routes."""
    fmt = options.get("format")
    routing = options.get("routing")
    tables = routing in ("shortest", "dmodk") or (
        routing is None and "routes" not in options and (fmt or _sniff(path)) != "json")
    max_nodes = math.isqrt(limits.MAX_TABLE_BYTES) if tables else None
    try:
        return read_fabric(path, fmt, max_nodes)
    except NodeLimit as err:
        raise MachineError(f"{err}: the forwarding tables of more nodes would exceed "
                           f"{limits.MAX_TABLE_BYTES >> 20} MiB (topomap.networks.limits.MAX_TABLE_BYTES); "
                           "routing=table with routes=ROUTEFILE needs none") from None
