"""InfiniBand ``ibnetdiscover`` topology dumps as a fabric.

Source: the "TOPOLOGY FILE FORMAT" section of the ``ibnetdiscover(8)``
manual (infiniband-diags / rdma-core).  A dump is a sequence of blocks, one
per IB node::

    vendid=0x2c9
    switchguid=0x2c903004a1a00(2c903004a1a00)
    Switch  36 "S-0002c903004a1a00"   # "MF0;leaf01:IS5030/U1" enhanced port 0 lid 1 lmc 0
    [1]     "H-0002c90300a0b010"[1](2c90300a0b011)   # "node001 HCA-1" lid 10 4xQDR
    [31]    "S-0002c903004a1c00"[1]                  # "MF0;spine01:IS5030/U1" lid 3 4xQDR

    caguid=0x2c90300a0b010
    Ca      2 "H-0002c90300a0b010"   # "node001 HCA-1"
    [1](2c90300a0b011)  "S-0002c903004a1a00"[1]  # lid 10 lmc 0 "MF0;leaf01:IS5030/U1" lid 1 4xQDR

The node line gives the type (``Switch``, ``Ca``, ``Rt``), the number of
ports and the quoted id (``S-``/``H-``/``R-`` and the node GUID); each
``[port]`` line gives the peer's id and port; the comment ends with the
active width and speed.  ``Chassis``/``Non-Chassis Nodes`` grouping lines
(``-g``) and ``#`` comments are skipped.

Choices the format leaves open, made here:

* Channel adapters (``Ca``) are compute nodes, switches and routers are
  switches.  A node is named by the first word of its NodeDescription (the
  host name in ``"node001 HCA-1"``) when no other adapter shares that word,
  otherwise by its id ``H-<guid>`` (so a host with two adapters gives two
  nodes named by id); switches are named by their id.  Every id is also an
  alias, so route files may use either.
* A cable is listed from both ends; both must agree (peer port, width and
  speed).  A port whose peer block is missing is a "link to nowhere", a
  peer that does not list the cable back means a truncated or inconsistent
  dump; both are errors.
* Capacity = width x per-lane *data* rate in Gb/s after line encoding:
  SDR 2, DDR 4, QDR 8, FDR10 10, FDR 14.0625*64/66, EDR 25, HDR 50, NDR 100,
  XDR 200 (so ``4xQDR`` = 32).  A dump without any width/speed gives
  capacity 1 everywhere; a dump where only some cables have it is an error.
* Vertex and link order follow the dump: adapters in block order, then
  switches and routers in block order; cables in order of their first
  listing.  Port numbers are kept, so route hops such as ``S-...[31]`` name
  the real cable.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from ..errors import FormatError
from .model import Fabric, FabricBuilder, text_lines

__all__ = ["read_ibnetdiscover", "parse_ibnetdiscover", "LANE_GBPS"]

LANE_GBPS = {"SDR": 2.0, "DDR": 4.0, "QDR": 8.0, "FDR10": 10.0, "FDR": 14.0625 * 64 / 66,
             "EDR": 25.0, "HDR": 50.0, "NDR": 100.0, "XDR": 200.0}
_WIDTHS = {1, 2, 4, 8, 12}
_ID = r'"([SHR])-([0-9a-fA-F]{1,16})"'
_HEADER = re.compile(r"(vendid|devid|sysimgguid|switchguid|caguid|rtguid)=0x[0-9a-fA-F]{1,16}(\([0-9a-fA-F]{1,16}\))?")
_NODE = re.compile(r"(Switch|Ca|Rt)\s+(\d{1,4})\s+" + _ID + r"\s*(#.*)?")
_PORT = re.compile(r"\[(\d{1,4})\](?:\[ext \d{1,4}\])?(?:\([0-9a-fA-F]{1,16}\))?\s*" + _ID
                   + r"\[(\d{1,4})\](?:\([0-9a-fA-F]{1,16}\))?\s*(#.*)?")
_SPEED = re.compile(r"\b(\d{1,2})x(SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR)\b")
_DESC = re.compile(r'#\s*"([^"]*)"')
_TYPES = {"Switch": "S", "Ca": "H", "Rt": "R"}


@dataclass
class _Block:
    kind: str
    ident: str
    nports: int
    desc: str
    where: str
    ports: dict[int, tuple[str, int, float | None, str]] = field(default_factory=dict)


def parse_ibnetdiscover(text: str, name: str = "<string>", max_nodes: int | None = None) -> Fabric:
    """Parse ``ibnetdiscover`` output (see the module docstring).

    Examples
    --------
    >>> from topomap.fabric.ibnetdiscover import parse_ibnetdiscover
    >>> fab = parse_ibnetdiscover('''
    ... Switch 8 "S-0008f10400410015"  # "SW-6IB4 Voltaire" base port 0 lid 3 lmc 0
    ... [1] "H-0008f10403960984"[1](8f10403960985)  # "hostA mlx4_0" lid 16 4xQDR
    ... [2] "H-005442b100004900"[1](5442b100004901) # "hostB mlx4_0" lid 12 4xDDR
    ... Ca 2 "H-0008f10403960984"  # "hostA mlx4_0"
    ... [1](8f10403960985) "S-0008f10400410015"[1]  # lid 16 lmc 0 "SW-6IB4 Voltaire" lid 3 4xQDR
    ... Ca 2 "H-005442b100004900"  # "hostB mlx4_0"
    ... [1](5442b100004901) "S-0008f10400410015"[2]  # lid 12 lmc 0 "SW-6IB4 Voltaire" lid 3 4xDDR
    ... ''')
    >>> fab.nodes, fab.switches, fab.capacity.tolist()
    (('hostA', 'hostB'), ('S-0008f10400410015',), [32.0, 32.0, 16.0, 16.0])
    """
    return _parse(enumerate(text.splitlines(), 1), name, max_nodes)


def read_ibnetdiscover(path: "str | os.PathLike[str]", max_nodes: int | None = None) -> Fabric:
    """Read an ``ibnetdiscover`` dump file (see the module docstring).

    Parameters
    ----------
    path : path-like
        The dump; faults raise :class:`~topomap.FormatError` naming ``path:line``.

    Examples
    --------
    >>> import os, tempfile
    >>> from topomap.fabric import read_ibnetdiscover
    >>> path = os.path.join(tempfile.mkdtemp(), "fabric.ibnd")
    >>> _ = open(path, "w").write(
    ...     'Ca 1 "H-0a"  # "hostA mlx5_0"\\n[1](0b) "H-0c"[1](0d)  # lid 1 lmc 0 "hostB mlx5_0" lid 2 4xEDR\\n'
    ...     'Ca 1 "H-0c"  # "hostB mlx5_0"\\n[1](0d) "H-0a"[1](0b)  # lid 2 lmc 0 "hostA mlx5_0" lid 1 4xEDR\\n')
    >>> fab = read_ibnetdiscover(path)
    >>> fab.nodes, fab.capacity.tolist()
    (('hostA', 'hostB'), [100.0, 100.0])
    """
    return _parse(text_lines(path), os.fspath(path), max_nodes)


def _parse(lines: Iterable[tuple[int, str]], label: str, max_nodes: int | None) -> Fabric:
    blocks: dict[str, _Block] = {}
    block: _Block | None = None
    header_at: str | None = None
    for no, raw in lines:
        where = f"{label}:{no}"
        text = raw.strip()
        if not text or text.startswith("#") or text.startswith(("Chassis", "Non-Chassis")):
            continue
        if _HEADER.fullmatch(text):
            header_at = header_at or where
            block = None
            continue
        m = _NODE.fullmatch(text)
        if m:
            kind, nports, letter, guid, comment = m.groups()
            ident = f"{letter}-{guid}"
            if _TYPES[kind] != letter:
                raise FormatError(f"{where}: a {kind} cannot have the id {ident!r}")
            if ident in blocks:
                raise FormatError(f"{where}: {ident} is listed twice (first at {blocks[ident].where})")
            desc = _DESC.match(comment or "")
            block = blocks[ident] = _Block(kind, ident, int(nports), desc.group(1) if desc else "", where)
            header_at = None
            continue
        m = _PORT.fullmatch(text)
        if not m:
            raise FormatError(f"{where}: not an ibnetdiscover line: {_clip(text)!r}")
        if block is None:
            raise FormatError(f"{where}: a [port] line outside a Switch/Ca block")
        port, letter, guid, peer_port, comment = m.groups()
        port, peer_port = int(port), int(peer_port)
        if not 1 <= port <= block.nports:
            raise FormatError(f"{where}: port {port} of {block.ident}, which has {block.nports} ports")
        if port in block.ports:
            raise FormatError(f"{where}: port {port} of {block.ident} is listed twice (first at "
                              f"{block.ports[port][3]})")
        block.ports[port] = (f"{letter}-{guid}", peer_port, _capacity(comment or "", where), where)
    if header_at is not None:
        raise FormatError(f"{header_at}: truncated: a block header without its Switch/Ca line")
    if not blocks:
        raise FormatError(f"{label}: no Switch or Ca blocks: not an ibnetdiscover dump")
    return _build(blocks, label, max_nodes)


def _capacity(comment: str, where: str) -> float | None:
    tail = comment[comment.rfind('"') + 1:]
    m = None
    for m in _SPEED.finditer(tail):
        pass
    if m is None:
        return None
    width = int(m.group(1))
    if width not in _WIDTHS:
        raise FormatError(f"{where}: link width {width}x is not an InfiniBand width (1x, 2x, 4x, 8x, 12x)")
    return width * LANE_GBPS[m.group(2)]


def _build(blocks: dict[str, _Block], label: str, max_nodes: int | None) -> Fabric:
    cas = [b for b in blocks.values() if b.kind == "Ca"]
    hosts = Counter(b.desc.split()[0] if b.desc.split() else "" for b in cas)
    b = FabricBuilder(label, max_nodes)
    name: dict[str, str] = {}
    for blk in cas:
        host = blk.desc.split()[0] if blk.desc.split() else ""
        usable = host and hosts[host] == 1 and host not in blocks and re.fullmatch(r'[^\s\[\]#"]+', host)
        name[blk.ident] = host if usable else blk.ident
        b.node(name[blk.ident], blk.where)
        if usable:
            b.alias(blk.ident, host, blk.where)
    for blk in blocks.values():
        if blk.kind != "Ca":
            name[blk.ident] = blk.ident
            b.switch(blk.ident, blk.where)
    speeds = [p[2] for blk in blocks.values() for p in blk.ports.values()]
    some = any(s is not None for s in speeds)
    done: set[tuple[str, int]] = set()
    for blk in blocks.values():
        for port, (peer, peer_port, cap, where) in blk.ports.items():
            if (blk.ident, port) in done:
                continue
            other = blocks.get(peer)
            if other is None:
                raise FormatError(f"{where}: link to nowhere: port {port} of {blk.ident} leads to {peer}, "
                                  "which has no block in the dump")
            back = other.ports.get(peer_port)
            if back is None:
                raise FormatError(f"{where}: {peer} does not list port {peer_port} back to {blk.ident}[{port}] "
                                  "(truncated or inconsistent dump)")
            if back[:2] != (blk.ident, port):
                raise FormatError(f"{where}: {blk.ident}[{port}] leads to {peer}[{peer_port}], but that port "
                                  f"leads to {back[0]}[{back[1]}] ({back[3]})")
            if some and (cap is None or back[2] is None):
                missing = where if cap is None else back[3]
                raise FormatError(f"{missing}: this link has no width/speed (such as 4xQDR) but others have")
            if cap != back[2]:
                raise FormatError(f"{where}: the two ends of {blk.ident}[{port}] -- {peer}[{peer_port}] report "
                                  f"different width/speed (see {back[3]})")
            done.add((peer, peer_port))
            b.cable(name[blk.ident], name[peer], where, capacity=cap if some else 1.0,
                    a_port=port, b_port=peer_port)
    return b.build()


def _clip(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."
