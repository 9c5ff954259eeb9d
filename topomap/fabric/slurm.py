"""Slurm ``topology.conf`` (topology/tree plugin) as a fabric.

Source: the Slurm ``topology.conf(5)`` manual, topology/tree section.  One
line per switch::

    SwitchName=s0 Nodes=tux[0-3,12,18-20] LinkSpeed=40
    SwitchName=s1 Nodes=rack[1-2]n[01-04]
    SwitchName=top Switches=s[0-1]

``SwitchName`` names the switch; ``Nodes`` lists its compute nodes and
``Switches`` its child switches, both as Slurm hostlist expressions;
``LinkSpeed`` is an optional speed in arbitrary units.  Parameter names are
case-insensitive, ``#`` starts a comment, and a line ending in ``\\``
continues on the next one (as in Slurm's configuration parser).

Choices the manual leaves open, made here:

* Each parent/child pair is one bidirectional cable.  ``LinkSpeed`` on a
  switch line is the capacity of the cables from that switch to each child
  it lists (Slurm stores it but does not use it); without it the capacity
  is 1.
* A node or switch may be listed under several parents (multi-homed nodes,
  several top switches); one cable per listing.  Listing a child twice on
  one line, a switch that is never declared, a switch among its own
  descendants, or a fabric that is not connected is an error (Slurm only
  requires connectivity for RouteTree; a mapping tool needs it).
* Node ids follow the first appearance of each node in the file; switch
  ids follow the ``SwitchName`` lines; cables are in line order, each line's
  ``Nodes`` before its ``Switches``.
* Hostlist ranges keep the width of their lower bound (``[08-10]`` gives
  ``08 09 10``, ``[8-10]`` gives ``8 9 10``); with several bracket groups the
  last varies fastest (``rack[1-2]n[01-02]`` = rack1n01 rack1n02 rack2n01
  rack2n02).  One expression may expand to at most 2**20 names
  (:data:`MAX_HOSTLIST`); its size is checked against that, the links the
  fabric has room for (:data:`~topomap.fabric.model.MAX_LINKS`) and the
  reader's ``max_nodes`` before it is expanded, so a 37-byte line
  ``Nodes=rack[0-1048575]`` costs nothing when it is refused.

The topology/block plugin's ``BlockName`` lines describe no switches and are
refused with a clear error.
"""

from __future__ import annotations

import math
import os
import re
from typing import Iterable, Iterator

from ..errors import FormatError
from .model import MAX_LINKS, Fabric, FabricBuilder, NodeLimit, text_lines

__all__ = ["read_slurm", "parse_slurm", "expand_hostlist"]

MAX_HOSTLIST = 2**20
_KEYS = {"switchname", "switches", "nodes", "linkspeed"}
_RANGE = re.compile(r"(\d{1,18})(?:-(\d{1,18}))?")


def expand_hostlist(expr: str, limit: int = MAX_HOSTLIST) -> list[str]:
    """Expand a Slurm hostlist expression of at most ``limit`` names.

    Raises ``ValueError`` naming the fault (callers add the file and line).

    Examples
    --------
    >>> expand_hostlist("tux[0-3,5]")
    ['tux0', 'tux1', 'tux2', 'tux3', 'tux5']
    >>> expand_hostlist("rack[1-2]n[01-02],login")
    ['rack1n01', 'rack1n02', 'rack2n01', 'rack2n02', 'login']
    """
    out: list[str] = []
    for item in _split_top(expr):
        parts: list[list[str]] = []
        pos = 0
        for m in re.finditer(r"\[([^\[\]]*)\]", item):
            parts.append([item[pos:m.start()]])
            parts.append(_ranges(m.group(1), item, limit))
            pos = m.end()
        parts.append([item[pos:]])
        if any(c in p for group in parts[::2] for p in group for c in "[]"):
            raise ValueError(f"unbalanced brackets in hostlist {item!r}")
        size = math.prod(len(p) for p in parts)
        if size + len(out) > limit:
            raise _TooMany(f"hostlist {expr!r} expands to more than {limit} names")
        names = [""]
        for group in parts:
            names = [n + p for n in names for p in group]
        out.extend(names)
    return out


class _TooMany(ValueError):
    """A hostlist expands to more names than allowed."""


def _split_top(expr: str) -> Iterator[str]:
    depth, start = 0, 0
    for i, c in enumerate(expr):
        depth += (c == "[") - (c == "]")
        if depth < 0 or depth > 1:
            raise ValueError(f"unbalanced or nested brackets in hostlist {expr!r}")
        if c == "," and depth == 0:
            yield _nonempty(expr[start:i], expr)
            start = i + 1
    if depth:
        raise ValueError(f"unclosed '[' in hostlist {expr!r}")
    yield _nonempty(expr[start:], expr)


def _nonempty(item: str, expr: str) -> str:
    if not item:
        raise ValueError(f"empty name in hostlist {expr!r}")
    return item


def _ranges(body: str, item: str, limit: int) -> list[str]:
    out: list[str] = []
    for part in body.split(","):
        m = _RANGE.fullmatch(part)
        if not m:
            raise ValueError(f"{part!r} in hostlist {item!r} is not a number or a range lo-hi")
        lo, hi = m.group(1), m.group(2) or m.group(1)
        if int(hi) < int(lo):
            raise ValueError(f"range {part!r} in hostlist {item!r} runs backwards")
        if len(out) + int(hi) - int(lo) >= limit:
            raise _TooMany(f"hostlist {item!r} has more than {limit} names")
        out.extend(str(k).zfill(len(lo)) for k in range(int(lo), int(hi) + 1))
    return out


def parse_slurm(text: str, name: str = "<string>", max_nodes: int | None = None) -> Fabric:
    """Parse ``topology.conf`` text (see the module docstring).

    Examples
    --------
    >>> from topomap.fabric.slurm import parse_slurm
    >>> fab = parse_slurm('''
    ... SwitchName=s0 Nodes=n[0-1]
    ... SwitchName=s1 Nodes=n[2-3] LinkSpeed=2
    ... SwitchName=top Switches=s[0-1]
    ... ''')
    >>> fab.nodes, fab.switches, fab.nlinks
    (('n0', 'n1', 'n2', 'n3'), ('s0', 's1', 'top'), 12)
    """
    return _parse(enumerate(text.splitlines(), 1), name, max_nodes)


def read_slurm(path: "str | os.PathLike[str]", max_nodes: int | None = None) -> Fabric:
    """Read a Slurm ``topology.conf`` file (see the module docstring).

    Parameters
    ----------
    path : path-like
        The file; faults raise :class:`~topomap.FormatError` naming ``path:line``.

    Examples
    --------
    >>> import os, tempfile
    >>> from topomap.fabric import read_slurm
    >>> path = os.path.join(tempfile.mkdtemp(), "topology.conf")
    >>> _ = open(path, "w").write("SwitchName=s0 Nodes=n[0-1]\\nSwitchName=s1 Nodes=n[2-3]\\n"
    ...                           "SwitchName=top Switches=s[0-1]\\n")
    >>> read_slurm(path).nswitches
    3
    """
    return _parse(text_lines(path), os.fspath(path), max_nodes)


def _logical_lines(lines: Iterable[tuple[int, str]], label: str) -> Iterator[tuple[str, str]]:
    """Comment-free lines with continuations joined, each with the ``file:line`` it starts on."""
    pending, start = "", 0
    for no, raw in lines:
        text = raw.split("#", 1)[0].rstrip()
        if not pending:
            start = no
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        text, pending = pending + text, ""
        if text.strip():
            yield f"{label}:{start}", text
    if pending:
        raise FormatError(f"{label}:{start}: the file ends inside a line continued with '\\'")


def _parse(lines: Iterable[tuple[int, str]], label: str, max_nodes: int | None) -> Fabric:
    switches: list[tuple[str, str, list[str], list[str], float]] = []  # name, where, nodes, children, speed
    listed = 0
    for where, text in _logical_lines(lines, label):
        fields: dict[str, str] = {}
        for token in text.split():
            key, eq, value = token.partition("=")
            key = key.lower()
            if key in ("blockname", "blocksizes"):
                raise FormatError(f"{where}: {token.split('=')[0]} belongs to the topology/block plugin; "
                                  "only topology/tree switch lines describe a fabric")
            if key not in _KEYS:
                raise FormatError(f"{where}: unknown parameter {token.split('=')[0]!r}; "
                                  "expected SwitchName, Switches, Nodes or LinkSpeed")
            if not eq or not value:
                raise FormatError(f"{where}: {token!r} needs the form Key=Value")
            if key in fields:
                raise FormatError(f"{where}: {token.split('=')[0]} is given twice on one line")
            fields[key] = value
        if "switchname" not in fields:
            raise FormatError(f"{where}: a topology.conf line must name its switch (SwitchName=...)")
        sw = fields["switchname"]
        if any(c in sw for c in "[],"):
            raise FormatError(f"{where}: SwitchName must be one switch name, got {sw!r}")
        speed = 1.0
        if "linkspeed" in fields:
            try:
                speed = float(fields["linkspeed"])
            except ValueError:
                raise FormatError(f"{where}: LinkSpeed {fields['linkspeed']!r} is not a number") from None
            if not math.isfinite(speed) or speed <= 0:
                raise FormatError(f"{where}: LinkSpeed must be finite and > 0, got {fields['linkspeed']!r}")
        lists = []
        for key in ("nodes", "switches"):
            # A line lists each name once and every listing is a cable of two links, so a
            # hostlist is refused from its size before it is expanded into names.
            room = MAX_LINKS // 2 - listed
            node_cap = max_nodes if key == "nodes" and max_nodes is not None else MAX_HOSTLIST
            cap = min(MAX_HOSTLIST, room, node_cap)
            try:
                names = expand_hostlist(fields[key], cap) if key in fields else []
            except _TooMany as err:
                if cap == node_cap < MAX_HOSTLIST:
                    raise NodeLimit(where, node_cap) from None
                if cap == room:
                    raise FormatError(f"{where}: more than {MAX_LINKS} links (the fabric size cap)") from None
                raise FormatError(f"{where}: {err}") from None
            except ValueError as err:
                raise FormatError(f"{where}: {err}") from None
            listed += len(names)
            seen: set[str] = set()
            for child in names:
                if child in seen:
                    raise FormatError(f"{where}: {child!r} is listed twice under switch {sw!r}")
                seen.add(child)
            lists.append(names)
        switches.append((sw, where, lists[0], lists[1], speed))
    if not switches:
        raise FormatError(f"{label}: no SwitchName lines: the file describes no fabric")
    return _build(switches, label, max_nodes)


def _build(switches: list[tuple[str, str, list[str], list[str], float]], label: str,
           max_nodes: int | None) -> Fabric:
    b = FabricBuilder(label, max_nodes)
    declared = {sw: where for sw, where, *_ in switches}
    for sw, where, nodes, _, _ in switches:
        for node in nodes:
            if b.kind(node) is None:
                if node in declared:
                    raise FormatError(f"{where}: {node!r} is listed as a node but is a switch (line {declared[node]})")
                b.node(node, where)
    for sw, where, _, _, _ in switches:
        b.switch(sw, where)
    children = {sw: kids for sw, _, _, kids, _ in switches}
    for sw, where, nodes, kids, speed in switches:
        for kid in kids:
            if kid not in declared:
                raise FormatError(f"{where}: unknown switch {kid!r} under {sw!r} (no SwitchName={kid} line)")
        for child in nodes + kids:
            b.cable(sw, child, where, capacity=speed)
    _refuse_loops(children, declared)
    return b.build()


def _refuse_loops(children: dict[str, list[str]], where: dict[str, str]) -> None:
    """A switch must not be among its own descendants (the file describes a hierarchy)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for root in children:
        if state.get(root):
            continue
        stack = [(root, iter(children[root]))]
        state[root] = 1
        while stack:
            sw, kids = stack[-1]
            kid = next(kids, None)
            if kid is None:
                state[sw] = 2
                stack.pop()
            elif state.get(kid) == 1:
                path = [s for s, _ in stack]
                loop = path[path.index(kid):] + [kid]
                raise FormatError(f"{where[sw]}: the switch hierarchy loops: {' -> '.join(loop)}")
            elif not state.get(kid):
                state[kid] = 1
                stack.append((kid, iter(children[kid])))
