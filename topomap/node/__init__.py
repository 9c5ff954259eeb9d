"""The inside of a compute node: the :class:`NodeTree` of PEs, and where it comes from.

=============================== ==========================================================
:mod:`~topomap.node.nodetree`   the tree (levels, costs, LCA distances; synthetic strings)
:mod:`~topomap.node.hwloc_xml`  hwloc XML exports, read without libhwloc
:mod:`~topomap.node.discover`   this machine: libhwloc, ``lstopo``, Linux sysfs, CPU count;
                                the process's CPU binding
:mod:`~topomap.node.levels`     size caps, hwloc type names, the readers' ``Grouping``
:mod:`~topomap.node.gpu`        GPU nodes: links with bandwidths, routes, intra-node link loads;
                                readers ``gpu_smi``, ``gpu_nccl``, ``gpu_hwloc``, presets
                                ``gpu_presets``, live discovery ``gpu_discover``
=============================== ==========================================================
"""

from .discover import current_binding
from .gpu import GpuNode, GpuNodeTree, node_link_loads
from .gpu_presets import gpu_node
from .levels import MAX_LEVELS, MAX_PES, Grouping, normalize_type
from .nodetree import NodeTree

__all__ = ["NodeTree", "Grouping", "current_binding", "normalize_type", "MAX_PES", "MAX_LEVELS", "GpuNode",
           "GpuNodeTree", "gpu_node", "node_link_loads"]
