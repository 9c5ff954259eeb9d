"""GPU nodes from ``nvidia-smi``: the ``topo -m`` matrix and the ``-q -x`` XML report.

``nvidia-smi topo -m`` names, for each pair of devices (GPUs and NICs), the closest thing
their traffic crosses: ``PIX`` (at most one PCIe bridge), ``PXB`` (several bridges, no
host bridge), ``PHB`` (a host bridge), ``NODE`` (between host bridges of one NUMA node),
``SYS`` (between NUMA nodes, QPI/UPI) or ``NV#`` (# bonded NVLinks).  The tree is rebuilt
by single linkage: one CPU vertex per NUMA node (the ``NUMA Affinity`` column, else the
groups of devices closer than ``SYS``); devices closer than ``PHB`` share a PCIe switch,
those at ``PIX`` a switch below it; devices at ``PHB`` or ``NODE`` hang on the CPU's root
complex directly.  An ``NV#`` pair gets an NVLink of # links (its PCIe relation is then
unknown and links nothing).  The matrix has no bandwidths: every PCIe link gets
``pcie_link`` GB/s (default PCIe 3.0 x16), NVLinks ``nvlink_gbps`` per link, QPI/UPI
``qpi``; ``CPU Affinity`` counts the cores (hardware threads as listed) of each NUMA node.

Examples
--------
>>> from topomap.node.gpu_smi import read_topo_matrix
>>> node = read_topo_matrix("tests/data/gpu/topo-8gpu.txt")
>>> node.ngpus, node.ncores
(8, 48)
>>> [node.channel_name(c) for c in node.route(node.gpu_endpoint(0), node.gpu_endpoint(3))]
['gpu0->gpu1', 'gpu1->sw2', 'sw2->gpu3']
"""

from __future__ import annotations

import os
import re

from ..errors import MachineError
from .gpu import GpuNode, GpuNodeBuilder, pcie
from .gpu_xml import parse_xml, where

__all__ = ["read_topo_matrix", "parse_topo_matrix", "read_smi_xml", "parse_cpu_list", "assemble"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_DEVICE = re.compile(r"(GPU|NIC)\d+$")
_RANK = {"X": 0, "PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5}


def parse_cpu_list(text: str) -> int:
    """Number of CPUs in a list such as ``"0-23,48-71"``.

    >>> parse_cpu_list("0-23,48-71")
    48
    """
    count = 0
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()) or (hi and int(hi) < int(lo)):
            raise ValueError(f"bad CPU list {text!r}")
        count += int(hi) - int(lo) + 1 if hi else 1
    return count


def _clusters(members: list[int], close: dict[tuple[int, int], int], limit: int) -> list[list[int]]:
    """Single-linkage groups of ``members``: pairs whose rank is <= limit are joined."""
    parent = {m: m for m in members}

    def root(m: int) -> int:
        while parent[m] != m:
            m = parent[m]
        return m

    for (a, b), rank in close.items():
        if a in parent and b in parent and rank <= limit:
            ra, rb = root(a), root(b)
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for m in members:
        groups.setdefault(root(m), []).append(m)
    return list(groups.values())


def read_topo_matrix(path: str | os.PathLike[str], *, pcie_link: float = pcie(3, 16), nvlink_gbps: float = 25.0,
                     qpi: float = 32.0, cores: int | None = None) -> GpuNode:
    """Read ``nvidia-smi topo -m`` (or ``-mp``) output into a :class:`GpuNode` (see the module docstring).

    ``cores`` (per NUMA node) replaces the count from ``CPU Affinity``; without either, one core each.
    Malformed input raises MachineError ``"path:line: ..."``.
    """
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise MachineError(f"{path}: cannot read ({exc.strerror})") from None
    return parse_topo_matrix(text, str(path), pcie_link=pcie_link, nvlink_gbps=nvlink_gbps, qpi=qpi, cores=cores)


def parse_topo_matrix(text: str, path: str = "<nvidia-smi topo -m>", *, pcie_link: float = pcie(3, 16),
                      nvlink_gbps: float = 25.0, qpi: float = 32.0, cores: int | None = None) -> GpuNode:
    """:func:`read_topo_matrix` on the text itself; ``path`` names it in errors."""
    lines = [_ANSI.sub("", ln) for ln in text.splitlines()]

    def fail(lineno: int, why: str) -> MachineError:
        return MachineError(f"{path}:{lineno}: {why}")

    head = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if head is None:
        raise fail(1, "empty file, not nvidia-smi topo -m output")
    header = [c.strip() for c in lines[head].split("\t")]
    devices = [c for c in header[1:] if _DEVICE.match(c)]
    if not devices or header[1:1 + len(devices)] != devices:
        raise fail(head + 1, "the header row does not start with GPU0/NIC0 columns (not nvidia-smi topo -m?)")
    extra = header[1 + len(devices):]
    close: dict[tuple[int, int], int] = {}
    nv: dict[tuple[int, int], int] = {}
    numa: dict[int, str] = {}
    ncpu: dict[int, int] = {}
    seen: list[str] = []
    for lineno, ln in enumerate(lines[head + 1:], head + 2):
        cells = [c.strip() for c in ln.split("\t")]
        if not ln.strip() or not _DEVICE.match(cells[0]):
            if seen:
                break
            continue
        name = cells[0]
        if name not in devices or name in seen:
            raise fail(lineno, f"row {name!r} is not a column of the header or comes twice")
        i = devices.index(name)
        seen.append(name)
        if len(cells) < 1 + len(devices):
            raise fail(lineno, f"row {name} has {len(cells) - 1} entries for {len(devices)} devices")
        for j, rel in enumerate(cells[1:1 + len(devices)]):
            m = re.fullmatch(r"NV(\d+)", rel)
            if m and i != j:
                nv[min(i, j), max(i, j)] = int(m.group(1))
            elif rel in _RANK and (rel == "X") == (i == j):
                if i != j:
                    close[min(i, j), max(i, j)] = _RANK[rel]
            else:
                raise fail(lineno, f"entry {rel!r} for {name}-{devices[j]} is not X, NV#, PIX, PXB, PHB, NODE or SYS")
        info = dict(zip(extra, cells[1 + len(devices):]))
        if info.get("NUMA Affinity", "").strip() not in ("", "N/A"):
            numa[i] = info["NUMA Affinity"].strip()
        if info.get("CPU Affinity", "").strip() not in ("", "N/A"):
            try:
                ncpu[i] = parse_cpu_list(info["CPU Affinity"])
            except ValueError as exc:
                raise fail(lineno, str(exc)) from None
    missing = [d for d in devices if d not in seen]
    if missing:
        raise fail(len(lines), f"no row for {missing[0]}")
    return assemble(f"nvidia-smi-topo:{path}", devices, close, nv, numa, ncpu, pcie_link, nvlink_gbps, qpi, cores)


def assemble(source: str, devices: list[str], close: dict, nv: dict, numa: dict, ncpu: dict, pcie_link: float,
             nvlink_gbps: float, qpi: float, cores: int | None, nvswitch: dict | None = None) -> GpuNode:
    """The tree from pairwise relations (shared with NVML discovery).

    ``devices`` are ``GPU<k>``/``NIC<k>`` names; ``close[i, j]`` (i < j) the PCIe relation rank
    (X 0, PIX 1, PXB 2, PHB 3, NODE 4, SYS 5); ``nv[i, j]`` NVLink counts; ``numa[i]`` and
    ``ncpu[i]`` a device's NUMA node and CPU count; ``nvswitch[i]`` links from GPU i to an NVSwitch.
    """
    everyone = list(range(len(devices)))
    if numa:
        by_numa: dict[str, list[int]] = {}
        for d in everyone:
            by_numa.setdefault(numa.get(d, min(numa.values())), []).append(d)
        sockets = [by_numa[k] for k in sorted(by_numa, key=lambda k: min(by_numa[k]))]
    else:
        sockets = _clusters(everyone, close, _RANK["NODE"])
    b = GpuNodeBuilder(source)
    cpus = [b.vertex(f"cpu{s}", "cpu") for s in range(len(sockets))]
    for x, y in zip(cpus, cpus[1:]):
        b.link(x, y, qpi, "qpi")
    # GPU vertices first, in nvidia-smi's order, so local GPU k is the device GPUk
    vertex_of = {d: b.vertex(devices[d].lower(), "gpu") for d in everyone if devices[d].startswith("GPU")}
    nics = [d for d in everyone if devices[d].startswith("NIC")]
    if nics:  # the model has one network adapter per node: the first
        vertex_of[nics[0]] = b.vertex("nic", "nic")
    names = iter(f"sw{k}" for k in range(len(devices) * 2))

    def attach(group: list[int], parent: int, limit: int) -> None:
        for sub in _clusters(group, close, limit):
            if len(sub) > 1 and limit > 0:
                here = parent
                if len(sub) < len(group) or limit == _RANK["PXB"]:
                    here = b.vertex(next(names), "switch")
                    b.link(parent, here, pcie_link, "pcie")
                attach(sub, here, limit - 1)
            else:
                for d in sub:
                    if d in vertex_of:
                        b.link(parent, vertex_of[d], pcie_link, "pcie")

    for s, members in enumerate(sockets):
        attach(members, cpus[s], _RANK["PXB"])
        per = cores if cores is not None else max((ncpu.get(d, 1) for d in members), default=1)
        b.cores(cpus[s], per)
    for (i, j), count in sorted(nv.items()):
        if i in vertex_of and j in vertex_of:
            b.link(vertex_of[i], vertex_of[j], nvlink_gbps * count, f"nvlink x{count}")
    if nvswitch:
        hub = b.vertex("nvswitch", "nvswitch")
        for i, count in sorted(nvswitch.items()):
            b.link(vertex_of[i], hub, nvlink_gbps * count, f"nvlink x{count}")
    return b.done()


def read_smi_xml(path: str | os.PathLike[str], *, qpi: float = 32.0, cores: int = 1) -> GpuNode:
    """Read ``nvidia-smi -q -x`` into a :class:`GpuNode`: each GPU on its NUMA node's CPU (node 0
    when the report gives none) through PCIe of its current generation and width.

    The report has no switches or peer links, so GPUs hang directly on the CPUs; ``cores`` per CPU.
    """
    root = parse_xml(path)
    if root.tag != "nvidia_smi_log":
        raise MachineError(f"{where(path, root)}: root element <{root.tag}>, not <nvidia_smi_log> (nvidia-smi -q -x)")
    gpus = root.findall("gpu")
    if not gpus:
        raise MachineError(f"{where(path, root)}: no <gpu> element")
    placed: list[tuple[int, str, float, str]] = []
    for g in gpus:
        gen = g.findtext("pci/pci_gpu_link_info/pcie_gen/current_link_gen", "").strip()
        width = g.findtext("pci/pci_gpu_link_info/link_widths/current_link_width", "").strip().rstrip("x")
        numa = g.findtext("numa_id", "").strip()
        try:
            bw = pcie(int(gen), int(width))
        except (ValueError, MachineError) as exc:
            raise MachineError(f"{where(path, g)}: GPU {g.get('id')}: PCIe generation {gen!r} width {width!r} "
                               f"({exc})") from None
        placed.append((int(numa) if numa.isdigit() else 0, g.get("id", ""), bw, f"pcie{gen}x{width}"))
    numas = sorted({p[0] for p in placed})
    b = GpuNodeBuilder(f"nvidia-smi-q:{path}")
    cpus = {n: b.vertex(f"cpu{k}", "cpu") for k, n in enumerate(numas)}
    for x, y in zip(numas, numas[1:]):
        b.link(cpus[x], cpus[y], qpi, "qpi")
    for k, (n, _, bw, kind) in enumerate(placed):
        b.link(cpus[n], b.vertex(f"gpu{k}", "gpu"), bw, kind)
    for n in numas:
        b.cores(cpus[n], cores)
    return b.done()
