"""GPU nodes from NCCL's topology XML (the ``<system>`` schema of ``NCCL_TOPO_FILE`` / ``NCCL_TOPO_DUMP_FILE``).

``<cpu>`` elements become CPU vertices (chained by ``qpi`` GB/s links, in file order), nested
``<pci>`` elements PCIe switches, a ``<pci>`` holding a ``<gpu>`` that GPU (numbered by its
``dev``), ``<nic>``/``<net>`` the network adapter (the first one).  A ``<pci>`` link's bandwidth
is :func:`~topomap.node.gpu.pcie` of its ``link_speed`` (2.5/5/8/16/32/64 GT/s = generations
1-6) and ``link_width``; NCCL writes width 0 or leaves it out for links it cannot read (virtual
machines), which then count as ``default_width`` lanes.  ``<nvlink target=... count=...>``
joins two GPUs by ``count`` NVLinks of the GPU's generation (``sm`` 60: NVLink 1, 70: 2,
80: 3, 90: 4), or the GPU to the node's NVSwitch when the target class is ``0x068000``.
Cores: the bits of the ``<cpu affinity>`` mask, else ``cores`` per CPU.

Examples
--------
>>> from topomap.node.gpu_nccl import read_nccl_xml
>>> node = read_nccl_xml("tests/data/gpu/nccl-4gpu-nvlink.xml")
>>> node.ngpus, [node.channel_name(c) for c in node.route(node.gpu_endpoint(0), node.gpu_endpoint(1))]
(4, ['gpu0->gpu1'])
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from ..errors import MachineError
from .gpu import GpuNode, GpuNodeBuilder, nvlink, pcie
from .gpu_xml import parse_xml, where

__all__ = ["read_nccl_xml"]

_GEN = {"2.5": 1, "5.0": 2, "5": 2, "8.0": 3, "8": 3, "16.0": 4, "16": 4, "32.0": 5, "32": 5, "64.0": 6, "64": 6}
_NVSWITCH_CLASS = "0x068000"


def _nvlink_version(sm: str) -> int:
    value = int(sm)
    return 1 if value < 70 else 2 if value < 80 else 3 if value < 90 else 4


def read_nccl_xml(path: str | os.PathLike[str], *, qpi: float = 32.0, cores: int = 1,
                  default_width: int = 16) -> GpuNode:
    """Read an NCCL topology XML file into a :class:`GpuNode` (see the module docstring).

    Malformed input raises MachineError ``"path:line: ..."``.
    """
    root = parse_xml(path)
    if root.tag != "system":
        raise MachineError(f"{where(path, root)}: root element <{root.tag}>, not NCCL's <system>")
    cpus = root.findall("cpu")
    if not cpus:
        raise MachineError(f"{where(path, root)}: no <cpu> element")
    b = GpuNodeBuilder(f"nccl:{path}")
    gpu_elems = [(pci, gpu) for pci in root.iter("pci") for gpu in pci.findall("gpu")]
    try:
        gpu_elems.sort(key=lambda e: int(e[1].get("dev", "")))
    except ValueError:
        bad = next(g for _, g in gpu_elems if not g.get("dev", "").isdigit())
        raise MachineError(f"{where(path, bad)}: <gpu> without a numeric dev attribute") from None
    vertex_of = {pci: b.vertex(f"gpu{k}", "gpu") for k, (pci, _) in enumerate(gpu_elems)}
    by_bus = {pci.get("busid", "").lower(): pci for pci, _ in gpu_elems}
    nic: list[int] = []

    def bandwidth(pci: ET.Element) -> tuple[float, str]:
        speed = pci.get("link_speed", "").split(" ")[0]
        width = pci.get("link_width", "0")
        if speed not in _GEN or not width.isdigit():
            raise MachineError(f"{where(path, pci)}: <pci busid={pci.get('busid')!r}> link_speed {speed!r} / "
                               f"link_width {width!r} is not a PCIe rate in GT/s and a lane count")
        lanes = int(width) or default_width
        return pcie(_GEN[speed], lanes), f"pcie{_GEN[speed]}x{lanes}"

    def add_nic(parent: int, bw: float, kind: str) -> None:
        if not nic:
            nic.append(b.vertex("nic", "nic"))
            b.link(parent, nic[0], bw, kind)

    def walk(elem: ET.Element, parent: int) -> None:
        for child in elem:
            if child.tag == "pci":
                bw, kind = bandwidth(child)
                if child in vertex_of:
                    b.link(parent, vertex_of[child], bw, kind)
                elif child.find("nic") is not None:
                    add_nic(parent, bw, kind)
                else:
                    switch = b.vertex(f"sw{sum(k == 'switch' for k in b.kinds)}", "switch")
                    b.link(parent, switch, bw, kind)
                    walk(child, switch)
            elif child.tag == "nic" and elem.tag == "cpu":
                net = child.find("net")
                speed = float(net.get("speed", "0")) if net is not None else 0.0
                add_nic(parent, speed / 8000 if speed > 0 else pcie(3, 8), "nic")

    prev = None
    for k, cpu in enumerate(cpus):
        v = b.vertex(f"cpu{k}", "cpu")
        if prev is not None:
            b.link(prev, v, qpi, "qpi")
        prev = v
        mask = cpu.get("affinity", "").replace(",", "").removeprefix("0x")
        try:
            count = bin(int(mask, 16)).count("1") if mask else cores
        except ValueError:
            raise MachineError(f"{where(path, cpu)}: <cpu affinity={mask!r}> is not a hex CPU mask") from None
        b.cores(v, count or cores)
        walk(cpu, v)
    nvswitch: list[int] = []
    seen: set[tuple[int, int]] = set()
    for pci, gpu in gpu_elems:
        for link in gpu.findall("nvlink"):
            count, target = link.get("count", ""), link.get("target", "").lower()
            if not count.isdigit() or int(count) < 1:
                raise MachineError(f"{where(path, link)}: <nvlink count={count!r}> is not a positive integer")
            bw = nvlink(_nvlink_version(gpu.get("sm", "70")), int(count))
            if link.get("tclass", "").lower() == _NVSWITCH_CLASS:
                if not nvswitch:
                    nvswitch.append(b.vertex("nvswitch", "nvswitch"))
                b.link(vertex_of[pci], nvswitch[0], bw, f"nvlink x{count}")
            elif target in by_bus:
                pair = tuple(sorted((vertex_of[pci], vertex_of[by_bus[target]])))
                if pair not in seen:
                    seen.add(pair)  # type: ignore[arg-type]
                    b.link(pair[0], pair[1], bw, f"nvlink x{count}")
            else:
                raise MachineError(f"{where(path, link)}: <nvlink target={target!r}> is neither a GPU of this file "
                                   "nor an NVSwitch")
    return b.done()
