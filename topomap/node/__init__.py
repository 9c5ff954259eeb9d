"""The inside of a compute node: the :class:`NodeTree` of PEs, and where it comes from.

=============================== ==========================================================
:mod:`~topomap.node.nodetree`   the tree (levels, costs, LCA distances; synthetic strings)
:mod:`~topomap.node.hwloc_xml`  hwloc XML exports, read without libhwloc
:mod:`~topomap.node.discover`   this machine: libhwloc, ``lstopo``, Linux sysfs, CPU count;
                                the process's CPU binding
:mod:`~topomap.node.levels`     size caps, hwloc type names, the readers' ``Grouping``
=============================== ==========================================================
"""

from .discover import current_binding
from .levels import MAX_LEVELS, MAX_PES, Grouping, normalize_type
from .nodetree import NodeTree

__all__ = ["NodeTree", "Grouping", "current_binding", "normalize_type", "MAX_PES", "MAX_LEVELS"]
