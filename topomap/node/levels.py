"""What every node-tree reader shares: the size caps, hwloc's type names and
the :class:`Grouping` a reader returns (per-level ancestor ids of each PE,
before :meth:`topomap.NodeTree.from_groups` merges redundant levels).

Readers (:mod:`~topomap.node.hwloc_xml`, :mod:`~topomap.node.discover`)
build a Grouping, not a NodeTree, so that the tree depends on them and not
the other way round.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

__all__ = ["MAX_PES", "MAX_LEVELS", "Grouping", "normalize_type"]

MAX_PES = 2**16  # PEs per node; read at each check, so a caller may raise it
MAX_LEVELS = 128


class Grouping(NamedTuple):
    """A reader's result: the arguments of :meth:`topomap.NodeTree.from_groups`."""

    groups: np.ndarray        # (L, P) ancestor ids per level, bottom-up; the last row is the root
    levels: list[str]         # the L level names
    pe_type: str              # what a PE is ("PU", "Core", ...)
    os_index: np.ndarray | None  # OS index of each PE, None where unknown
    source: str               # provenance, e.g. "xml:node.xml", "sysfs", "lstopo"


_TYPE_ALIASES = {
    "pack": "Package", "package": "Package", "socket": "Package",
    "numa": "NUMANode", "node": "NUMANode", "numanode": "NUMANode",
    "group": "Group", "die": "Die", "core": "Core", "pu": "PU",
}
_CACHE_TYPE = re.compile(r"l([1-5])([diu]?)(?:cache)?")


def normalize_type(name: str) -> str | None:
    """Map an hwloc type name or synthetic abbreviation to its hwloc 2.x name.

    Parameters
    ----------
    name : str
        Case-insensitive type such as ``"pack"``, ``"socket"``, ``"numa"``,
        ``"l3"``, ``"L1iCache"``, ``"core"`` or ``"pu"``.

    Returns
    -------
    str or None
        ``"Package"``, ``"NUMANode"``, ``"Group"``, ``"Die"``, ``"L3Cache"``,
        ``"L1iCache"``, ``"Core"``, ``"PU"``...; ``None`` if unknown.  Data and
        unified caches share hwloc's name (``l1d`` -> ``"L1Cache"``).

    Examples
    --------
    >>> normalize_type("socket"), normalize_type("l1d"), normalize_type("L2i")
    ('Package', 'L1Cache', 'L2iCache')
    """
    low = name.lower()
    if low in _TYPE_ALIASES:
        return _TYPE_ALIASES[low]
    m = _CACHE_TYPE.fullmatch(low)
    if m:
        return f"L{m.group(1)}{'i' if m.group(2) == 'i' else ''}Cache"
    return None
