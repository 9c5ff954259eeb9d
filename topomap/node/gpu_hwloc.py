"""GPU nodes from hwloc XML with I/O objects (``lstopo --of xml``, hwloc 1.x or 2.x).

Each ``Package`` (``Socket`` in hwloc 1.x) is a CPU vertex with its ``Core`` objects (PUs when
there are none) as cores; packages are chained by ``qpi`` GB/s links.  I/O hangs below the
package that contains it, or below the first package when hwloc attaches it to the
``Machine``.  A host bridge (``bridge_type="0-1"``) is the package's root complex, so its
children hang on the package directly; a PCI-to-PCI bridge (``"1-1"``) is a PCIe switch
vertex.  A ``PCIDev`` of class ``03xx`` (display/3D controller) is a GPU, numbered in PCI
order (CUDA's order with ``CUDA_DEVICE_ORDER=PCI_BUS_ID``); the first of class ``02xx``
(network, InfiniBand) is the network adapter.  A link's bandwidth is the device's or bridge's
``pci_link_speed`` (GB/s, as hwloc reports it), or ``unknown_link`` when hwloc says 0
(virtual machines).  hwloc has no NVLink objects: use ``nvidia-smi topo -m`` or NCCL's XML for
peer links.

Examples
--------
>>> from topomap.node.gpu_hwloc import read_hwloc_gpu
>>> node = read_hwloc_gpu("tests/data/gpu/hwloc-2gpu.xml")
>>> node.ngpus, node.ncores, [node.channel_name(c) for c in node.route(node.gpu_endpoint(0), node.gpu_endpoint(1))]
(2, 4, ['gpu0->sw0', 'sw0->gpu1'])
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from ..errors import MachineError
from .gpu import GpuNode, GpuNodeBuilder, pcie
from .gpu_xml import parse_xml, where

__all__ = ["read_hwloc_gpu"]

_PACKAGE = ("Package", "Socket")


def _objects(elem: ET.Element) -> list[ET.Element]:
    return [c for c in elem if c.tag == "object"]


def _count(elem: ET.Element, kind: str) -> int:
    return sum(1 for o in elem.iter("object") if o.get("type") == kind)


def read_hwloc_gpu(path: str | os.PathLike[str], *, qpi: float = 32.0, unknown_link: float = pcie(3, 16)) -> GpuNode:
    """Read an hwloc XML export with PCI devices into a :class:`GpuNode` (see the module docstring).

    Malformed input raises MachineError ``"path:line: ..."``.
    """
    root = parse_xml(path)
    machine = next((o for o in root.iter("object") if o.get("type") == "Machine"), None)
    if root.tag not in ("topology", "root") or machine is None:
        raise MachineError(f"{where(path, root)}: no hwloc <topology> with a Machine object")
    packages = [o for o in machine.iter("object") if o.get("type") in _PACKAGE]
    if not packages:
        raise MachineError(f"{where(path, machine)}: no Package objects (hwloc XML without CPU packages)")
    b = GpuNodeBuilder(f"hwloc:{path}")
    cpu_of = {}
    for k, pkg in enumerate(packages):
        cpu_of[pkg] = b.vertex(f"cpu{k}", "cpu")
        if k:
            b.link(cpu_of[packages[k - 1]], cpu_of[pkg], qpi, "qpi")
        b.cores(cpu_of[pkg], _count(pkg, "Core") or _count(pkg, "PU"))
    nic: list[int] = []

    def speed(obj: ET.Element) -> float:
        text = obj.get("pci_link_speed", "0")
        try:
            value = float(text)
        except ValueError:
            raise MachineError(f"{where(path, obj)}: pci_link_speed {text!r} is not a number") from None
        return value if value > 0 else unknown_link

    def pci_class(obj: ET.Element) -> str:
        pci_type = obj.get("pci_type", "")
        if len(pci_type) < 4:
            raise MachineError(f"{where(path, obj)}: PCIDev without a pci_type class")
        return pci_type[:4]

    def io(obj: ET.Element, parent: int) -> None:
        kind = obj.get("type")
        if kind == "Bridge":
            if obj.get("bridge_type", "").startswith("0-"):
                here = parent  # the host bridge is the package's root complex
            else:
                here = b.vertex(f"sw{sum(k == 'switch' for k in b.kinds)}", "switch")
                b.link(parent, here, speed(obj), "pcie")
            for child in _objects(obj):
                io(child, here)
        elif kind == "PCIDev":
            cls = pci_class(obj)
            if cls.startswith("03"):
                b.link(parent, b.vertex(f"gpu{b.kinds.count('gpu')}", "gpu"), speed(obj), "pcie")
            elif cls.startswith("02") and not nic:
                nic.append(b.vertex("nic", "nic"))
                b.link(parent, nic[0], speed(obj), "pcie")

    def walk(obj: ET.Element, cpu: int) -> None:
        for child in _objects(obj):
            here = cpu_of.get(child, cpu)
            if child.get("type") in ("Bridge", "PCIDev"):
                io(child, here)
            else:
                walk(child, here)

    walk(machine, cpu_of[packages[0]])
    return b.done()
