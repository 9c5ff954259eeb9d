"""GPU node presets (000's clusters A and B, a DGX-class node) and the ``gpu:`` description resolver.

The thesis draws the GPU nodes (Mirsadeghi 2017, Fig. 5.1/5.2) but gives no link bandwidths,
so these are **assumed** from the parts' data sheets (notes 000 §9: "assume per-level
values"), all GB/s per direction:

``clusterA`` (Helios K80): 2 Ivy Bridge packages of 12 cores joined by 2 QPI links at 8 GT/s
    (2 x 16 = 32).  Each package: a PCIe 3.0 x16 link (15.76) to a top switch; two x16 links to
    second-level switches; each of those two K80 boards on x16 links, each board's on-board
    PLX switch two GK210 GPUs on x16 links: 8 GPUs per package, 16 per node.  The QDR
    InfiniBand HCA hangs on package 0 through PCIe 3.0 x8 (7.88).
``clusterB`` (Helios K20): 2 packages of 10 cores, QPI 32.  Each package: two PCIe 3.0 x16
    links to switches, each switch two K20s on PCIe 2.0 x16 (8.0): 4 GPUs per package, 8 per
    node; HCA as on A.
``dgx`` (DGX H100 class): 2 packages of 56 cores, 3 UPI links at 16 GT/s (3 x 20.8 = 62.4).
    Each package: two PCIe 5.0 x16 switches (63.0) with two H100s each (x16); every GPU has 18
    NVLink 4 links (450) to the NVSwitch fabric, modelled as one NVSwitch vertex; a 400 Gb/s
    adapter on package 0 through PCIe 5.0 x16.

Examples
--------
>>> from topomap.node.gpu_presets import gpu_node
>>> a = gpu_node("clusterA")
>>> a.ngpus, a.ncores, len(a.route(a.gpu_endpoint(0), a.gpu_endpoint(1)))
(16, 24, 2)
"""

from __future__ import annotations

import os
from typing import Callable

from ..errors import MachineError
from .gpu import GpuNode, GpuNodeBuilder, nvlink, pcie

__all__ = ["gpu_node", "cluster_a", "cluster_b", "dgx", "PRESETS"]


def _tree(b: GpuNodeBuilder, parent: int, fanouts: list[int], links: list[float], kinds: list[str]) -> None:
    """Below ``parent``: ``fanouts[0]`` children over ``links[0]``; switches until the last level, GPUs there."""
    for _ in range(fanouts[0]):
        last = len(fanouts) == 1
        child = (b.vertex(f"gpu{b.kinds.count('gpu')}", "gpu") if last
                 else b.vertex(f"sw{b.kinds.count('switch')}", "switch"))
        b.link(parent, child, links[0], kinds[0])
        if not last:
            _tree(b, child, fanouts[1:], links[1:], kinds[1:])


def _node(name: str, cores: int, cpu_link: float, cpu_kind: str, fanouts: list[int], links: list[float],
          kinds: list[str], nic: float) -> GpuNodeBuilder:
    b = GpuNodeBuilder(name)
    cpus = [b.vertex("cpu0", "cpu"), b.vertex("cpu1", "cpu")]
    b.link(cpus[0], cpus[1], cpu_link, cpu_kind)
    for cpu in cpus:
        b.cores(cpu, cores)
        _tree(b, cpu, fanouts, links, kinds)
    b.link(cpus[0], b.vertex("nic", "nic"), nic, "pcie")
    return b


def cluster_a() -> GpuNode:
    """000's cluster A node: 16 K80 GPUs, 2 x 12 cores (module docstring for the assumed bandwidths)."""
    x16 = pcie(3, 16)
    return _node("clusterA", 12, 32.0, "qpi", [1, 2, 2, 2], [x16] * 4, ["pcie3x16"] * 4, pcie(3, 8)).done()


def cluster_b() -> GpuNode:
    """000's cluster B node: 8 K20 GPUs, 2 x 10 cores."""
    return _node("clusterB", 10, 32.0, "qpi", [2, 2], [pcie(3, 16), pcie(2, 16)], ["pcie3x16", "pcie2x16"],
                 pcie(3, 8)).done()


def dgx() -> GpuNode:
    """A DGX H100-class node: 8 GPUs on PCIe 5.0 switches and one NVSwitch fabric, 2 x 56 cores."""
    x16 = pcie(5, 16)
    b = _node("dgx", 56, 62.4, "upi", [2, 2], [x16, x16], ["pcie5x16"] * 2, x16)
    hub = b.vertex("nvswitch", "nvswitch")
    for v, kind in enumerate(list(b.kinds)):
        if kind == "gpu":
            b.link(v, hub, nvlink(4, 18), "nvlink4x18")
    return b.done()


PRESETS: dict[str, Callable[[], GpuNode]] = {"clustera": cluster_a, "clusterb": cluster_b, "dgx": dgx}


def gpu_node(text: str) -> GpuNode:
    """The node a ``gpu:...`` description names: a preset (``clusterA``, ``clusterB``, ``dgx``),
    ``discover`` (this machine, :func:`topomap.node.gpu_discover.discover_gpu_node`), or a file:
    our JSON, NCCL topology XML, ``nvidia-smi -q -x``, hwloc XML, or ``nvidia-smi topo -m`` text
    (told apart by content).

    >>> gpu_node("dgx").ngpus
    8
    """
    name = text.strip()
    if name.lower() in PRESETS:
        return PRESETS[name.lower()]()
    if name.lower() == "discover":
        from .gpu_discover import discover_gpu_node
        return discover_gpu_node()
    if not os.path.isfile(name):
        raise MachineError(f"GPU node {name!r} is neither a preset ({', '.join(['clusterA', 'clusterB', 'dgx'])}), "
                           "'discover', nor a readable file")
    return read_gpu_file(name)


def read_gpu_file(path: str | os.PathLike[str]) -> GpuNode:
    """Read any of the supported GPU node files, telling the format from the content."""
    with open(path, "rb") as fh:
        head = fh.read(4096).decode("utf-8", "replace").lstrip()
    if head.startswith("{"):
        return GpuNode.read_json(path)
    if head.startswith("<"):
        from .gpu_xml import parse_xml
        tag = parse_xml(path).tag
        if tag == "system":
            from .gpu_nccl import read_nccl_xml
            return read_nccl_xml(path)
        if tag == "nvidia_smi_log":
            from .gpu_smi import read_smi_xml
            return read_smi_xml(path)
        from .gpu_hwloc import read_hwloc_gpu
        return read_hwloc_gpu(path)
    from .gpu_smi import read_topo_matrix
    return read_topo_matrix(path)
