"""Read hwloc XML exports (1.x, 2.x, 3.x) with :mod:`xml.etree.ElementTree` only.

The CPU tree (Machine, Package/Socket, Die, Group, caches, Core, PU) becomes
the :class:`~topomap.node.levels.Grouping` of a :class:`~topomap.NodeTree`
(:meth:`topomap.NodeTree.from_hwloc_xml`):

* PUs are the leaves, in document order (hwloc logical order).
* Each nesting depth of CPU objects is one level; a CPU object with NUMA memory
  (a ``NUMANode`` child, possibly behind a ``MemCache``) adds a ``NUMANode``
  level just below it, normally merged with it by the redundancy rule
  (``"Package+NUMANode"``).
* hwloc 1.x puts NUMA nodes inside the CPU tree (``NUMANode`` objects with CPU
  children): they are ordinary levels there.  1.x ``Socket`` reads as
  ``Package`` and ``Cache`` as ``L<depth>Cache`` / ``L<depth>iCache``.
* I/O and Misc objects (Bridge, PCIDev, OSDev, Misc) are ignored.
* Irregular trees (fewer cores in one package, offline cores) are fine as long
  as every PU sits at the same nesting depth with the same object types along
  the way; otherwise :class:`~topomap.errors.FormatError` explains which PUs
  differ.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..errors import FormatError, MachineError
from . import levels as _levels
from .levels import MAX_LEVELS, Grouping, normalize_type

__all__ = ["read_hwloc_xml"]

_CPU_TYPES = frozenset(
    ["System", "Machine", "Package", "Socket", "Die", "Group", "Cache", "Core", "PU"]
    + [f"L{n}{i}Cache" for n in range(1, 6) for i in ("", "i")]
)
_MEMORY_TYPES = frozenset(["NUMANode", "MemCache"])
_IGNORED_TYPES = frozenset(["Bridge", "PCIDev", "OSDev", "Misc"])
MAX_XML_BYTES = 2**26  # an hwloc XML of a 1000-PU host with its PCI devices is ~1 MB
_HEX_WORD = re.compile(r"0x[0-9a-fA-F]{1,8}")


def _load(source: str | os.PathLike[str] | bytes) -> tuple[ET.Element, str]:
    if isinstance(source, bytes):
        text, label = source, "<xml bytes>"
    elif isinstance(source, str) and source.lstrip().startswith("<"):
        text, label = source, "<xml string>"
    elif isinstance(source, (str, os.PathLike)):
        label = os.fspath(source)
        try:
            with open(label, "rb") as handle:
                text = handle.read(MAX_XML_BYTES + 1)
        except OSError as err:
            raise FormatError(f"{label}: cannot read hwloc XML: {err.strerror or err}") from None
        if len(text) > MAX_XML_BYTES:  # an endless stream (/dev/zero) stops here
            raise FormatError(f"{label}: more than {MAX_XML_BYTES} bytes, larger than any hwloc XML "
                              "(topomap.node.hwloc_xml.MAX_XML_BYTES)")
    else:
        raise FormatError(f"expected a path or XML text, got {type(source).__name__}")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as err:
        raise FormatError(f"{label}: line {err.position[0]}: not well-formed XML ({err})") from None
    except LookupError as err:  # the XML declaration names an encoding Python does not know
        raise FormatError(f"{label}: line 1: {err}") from None
    if root.tag != "topology":
        raise FormatError(f"{label}: root element is <{root.tag}>, expected <topology> (hwloc XML)")
    return root, label


def _cpu_name(obj: ET.Element, where: str, label: str) -> str:
    kind = obj.get("type", "")
    if kind == "Socket":
        return "Package"
    if kind == "Cache":
        depth, ctype = obj.get("depth", ""), obj.get("cache_type", "0")
        if not depth.isdigit() or not 1 <= int(depth) <= 5 or ctype not in ("0", "1", "2"):
            raise FormatError(f"{label}: {where}: Cache needs depth 1..5 and cache_type 0..2")
        return f"L{depth}{'i' if ctype == '2' else ''}Cache"
    return kind


def _os_index(obj: ET.Element, where: str, label: str) -> int:
    text = obj.get("os_index")
    if text is None or not text.isdigit() or len(text) > 12:
        raise FormatError(
            f"{label}: {where}: os_index must be a non-negative integer, got {text!r}"
        )
    index = int(text)
    cpuset = obj.get("cpuset")
    if cpuset is not None and _bitmap(cpuset, where, label) != 1 << index:
        raise FormatError(f"{label}: {where}: cpuset {cpuset!r} is not PU os_index {index} alone")
    return index


def _bitmap(text: str, where: str, label: str) -> int:
    """hwloc bitmap: 32-bit hex words, most significant first; hwloc writes zero words as empty."""
    words = text.split(",")
    if not any(words) or not all(w == "" or _HEX_WORD.fullmatch(w) for w in words):
        raise FormatError(f"{label}: {where}: invalid cpuset {text!r}")
    value = 0
    for word in words:
        value = (value << 32) | (int(word, 16) if word else 0)
    return value


def _has_numa(obj: ET.Element) -> bool:
    """Whether NUMA memory is attached here (directly or behind a MemCache)."""
    for child in obj.findall("object"):
        kind = child.get("type")
        if kind == "NUMANode" or (
            kind == "MemCache" and child.find(".//object[@type='NUMANode']") is not None
        ):
            return True
    return False


def _is_cpu(obj: ET.Element) -> bool:
    kind = obj.get("type")
    if kind in _CPU_TYPES:
        return True
    # hwloc 1.x nests the CPU tree inside NUMA nodes.
    return kind == "NUMANode" and any(c.get("type") in _CPU_TYPES for c in obj.findall("object"))


def read_hwloc_xml(
    source: str | os.PathLike[str] | bytes, pe: str = "pu", label: str | None = None
) -> Grouping:
    """The PEs and levels of an hwloc XML export (see :meth:`topomap.NodeTree.from_hwloc_xml`).

    Parameters
    ----------
    source : str, path-like or bytes
        A file path, or XML text (a string starting with ``<``, or bytes).
    pe : str
        Type of the leaves: ``"pu"`` (default), ``"core"``, or another CPU type
        present above every PU (``"l2"``...).  For a non-PU leaf, ``os_index``
        is that of its first PU.
    label : str, optional
        Provenance recorded in ``source`` of the result; default ``"xml:<path>"``.

    Returns
    -------
    Grouping
        One column per PE in hwloc logical order, levels bottom-up.

    Raises
    ------
    MachineError
        ``pe`` is not an object type.
    FormatError
        Not XML (with line and column), no ``<topology>`` root, no PU, missing or
        invalid ``type``/``os_index``/``cpuset``, duplicate PU ``os_index``, PUs at
        different depths or under different object types, nesting deeper than
        128 levels, or more than ``topomap.node.levels.MAX_PES`` PUs.

    Examples
    --------
    >>> xml = '''<topology version="2.0"><object type="Machine" os_index="0">
    ...   <object type="Core" os_index="0"><object type="PU" os_index="0"/>
    ...     <object type="PU" os_index="1"/></object></object></topology>'''
    >>> g = read_hwloc_xml(xml, label="mine")
    >>> g.levels, g.groups.tolist(), g.os_index.tolist(), g.source
    (['Core', 'Machine'], [[0, 0], [0, 0]], [0, 1], 'mine')
    """
    root, where_from = _load(source)
    want = normalize_type(pe) if isinstance(pe, str) else None
    if want is None:
        raise MachineError(f"pe={pe!r} is not an hwloc object type")
    tops = [obj for obj in root.findall("object") if _is_cpu(obj)]
    if len(tops) != 1:
        raise FormatError(f"{where_from}: expected one root CPU <object>, found {len(tops)}")

    # chain = top-down tuple of (key, level name) from the root to the PU.
    chains: list[tuple[tuple[object, str], ...]] = []
    os_indices: list[int] = []
    stack = [(tops[0], (), tops[0].get("type", "?"))]
    while stack:
        obj, chain, where = stack.pop()
        if len(chain) >= MAX_LEVELS:
            raise FormatError(
                f"{where_from}: {where}: objects nested deeper than {MAX_LEVELS} levels"
            )
        name = _cpu_name(obj, where, where_from)
        chain = chain + ((id(obj), name),)
        if _has_numa(obj) and name != "NUMANode":
            chain = chain + ((("numa", id(obj)), "NUMANode"),)
        children = []
        for child in obj.findall("object"):
            kind = child.get("type")
            if kind is None:
                raise FormatError(f"{where_from}: {where}: child <object> without a type attribute")
            if _is_cpu(child):
                children.append(child)
            elif kind not in _MEMORY_TYPES and kind not in _IGNORED_TYPES:
                raise FormatError(f"{where_from}: {where}: unknown object type {kind!r}")
        if name == "PU":
            if children:
                raise FormatError(f"{where_from}: {where}: a PU cannot contain CPU objects")
            os_indices.append(_os_index(obj, where, where_from))
            chains.append(chain)
            if len(chains) > _levels.MAX_PES:
                raise FormatError(f"{where_from}: more than {_levels.MAX_PES} PUs (the per-node cap topomap.node.levels.MAX_PES)")
            continue
        seen: dict[str, int] = {}
        entries = []
        for child in children:
            kind = _cpu_name(child, where, where_from)
            entries.append((child, chain, f"{where} > {kind}#{seen.setdefault(kind, 0)}"))
            seen[kind] += 1
        stack.extend(reversed(entries))

    if not chains:
        raise FormatError(f"{where_from}: the topology has no PU object")
    return _tree(chains, os_indices, want, where_from, label or f"xml:{where_from}")


def _tree(
    chains: list[tuple[tuple[object, str], ...]],
    os_indices: list[int],
    want: str,
    where_from: str,
    label: str,
) -> Grouping:
    names = [n for _, n in chains[0]]
    for chain, osi in zip(chains, os_indices):
        if [n for _, n in chain] != names:
            raise FormatError(
                f"{where_from}: PU os_index {osi} sits under {' > '.join(n for _, n in chain)} "
                f"but PU os_index {os_indices[0]} under {' > '.join(names)}; every PU must have "
                "the same object types at every depth"
            )
    seen: set[int] = set()
    for osi in os_indices:
        if osi in seen:
            raise FormatError(f"{where_from}: PU os_index {osi} appears twice")
        seen.add(osi)
    if want not in names[1:]:
        raise FormatError(f"{where_from}: no {want} object below the root above every PU")
    depth = names.index(want, 1)

    # One PE per distinct leaf object; its first PU gives its ancestors and os_index.
    first_pu: dict[object, int] = {}
    for c, chain in enumerate(chains):
        first_pu.setdefault(chain[depth][0], c)
    groups = np.empty((depth, len(first_pu)), dtype=np.int64)
    for k in range(depth):
        ids: dict[object, int] = {}
        keys = (chains[c][depth - 1 - k][0] for c in first_pu.values())
        groups[k] = [ids.setdefault(key, len(ids)) for key in keys]
    levels = [names[depth - 1 - k] for k in range(depth)]
    os_index = np.asarray([os_indices[c] for c in first_pu.values()], dtype=np.int64)
    return Grouping(groups, levels, want, os_index, label)
