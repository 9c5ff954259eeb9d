"""This machine's GPU node: NVML through ``pynvml`` (the optional extra ``topomap[gpu]``), else
``nvidia-smi topo -m``.

NVML gives, per GPU pair, the closest common PCIe ancestor (``nvmlDeviceGetTopologyCommonAncestor``:
internal/single/multiple/host bridge/NUMA node/system, the same ranks as ``topo -m``), each GPU's
current PCIe generation and width, its CPU affinity, and its active NVLinks with the remote PCI
bus id (a GPU, or else an NVSwitch).  The tree is built as for ``topo -m``
(:func:`topomap.node.gpu_smi.assemble`), with the PCIe links at the slowest GPU's measured
generation and width.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from ..errors import MachineError
from .gpu import GpuNode, pcie
from .gpu_smi import assemble, parse_topo_matrix

__all__ = ["discover_gpu_node", "nvml_gpu_node", "smi_gpu_node"]

# NVML_TOPOLOGY_* values (nvml.h) -> the ranks of topo -m (PIX 1 ... SYS 5)
_NVML_RANK = {0: 1, 10: 1, 20: 2, 30: 3, 40: 4, 50: 5}


def _bus(info: Any) -> str:
    bus = info.busId
    bus = bus.decode() if isinstance(bus, bytes) else str(bus)
    return bus.lower()[-12:]  # NVML pads the domain to 8 digits, NCCL and nvidia-smi do not


def nvml_gpu_node(nvml: Any) -> GpuNode:
    """Build the node through an imported ``pynvml`` module (``nvml``)."""
    nvml.nvmlInit()
    try:
        count = nvml.nvmlDeviceGetCount()
        if count < 1:
            raise MachineError("NVML sees no GPU")
        handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        bus = [_bus(nvml.nvmlDeviceGetPciInfo(h)) for h in handles]
        close, nv, numa, ncpu, nvswitch = {}, {}, {}, {}, {}
        slowest = None
        for i, h in enumerate(handles):
            gen, width = nvml.nvmlDeviceGetCurrPcieLinkGeneration(h), nvml.nvmlDeviceGetCurrPcieLinkWidth(h)
            bw = pcie(int(gen), int(width))
            slowest = bw if slowest is None else min(slowest, bw)
            words = nvml.nvmlDeviceGetCpuAffinity(h, 64)
            ncpu[i] = sum(bin(int(w)).count("1") for w in words)
            numa[i] = ",".join(str(int(w)) for w in words)  # GPUs with one CPU set share a NUMA node
            for j in range(i + 1, count):
                level = int(nvml.nvmlDeviceGetTopologyCommonAncestor(h, handles[j]))
                close[i, j] = _NVML_RANK.get(level, 5)
            for link in range(int(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18))):
                try:
                    if not nvml.nvmlDeviceGetNvLinkState(h, link):
                        continue
                    remote = _bus(nvml.nvmlDeviceGetNvLinkRemotePciInfo(h, link))
                except nvml.NVMLError:
                    continue  # links beyond the GPU's count answer "not supported"
                if remote in bus:
                    j = bus.index(remote)
                    if j > i:
                        nv[i, j] = nv.get((i, j), 0) + 1
                else:
                    nvswitch[i] = nvswitch.get(i, 0) + 1
        devices = [f"GPU{i}" for i in range(count)]
        return assemble("nvml", devices, close, nv, numa, ncpu, slowest, 25.0, 32.0, None, nvswitch)
    finally:
        nvml.nvmlShutdown()


def smi_gpu_node(executable: str = "nvidia-smi", timeout: float = 30.0) -> GpuNode:
    """Build the node from ``nvidia-smi topo -m`` run now."""
    path = shutil.which(executable)
    if path is None:
        raise MachineError(f"{executable} is not on PATH: no NVIDIA driver here")
    try:
        out = subprocess.run([path, "topo", "-m"], capture_output=True, text=True, timeout=timeout, check=True)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        raise MachineError(f"{executable} topo -m failed: {exc}") from None
    return parse_topo_matrix(out.stdout, f"{executable} topo -m")


def discover_gpu_node() -> GpuNode:
    """This machine's GPU node: NVML when ``pynvml`` imports and works, else ``nvidia-smi topo -m``.

    Raises MachineError saying both reasons when neither works.
    """
    try:
        import pynvml  # type: ignore[import-not-found]
    except ImportError:
        why = "pynvml is not installed (pip install topomap[gpu])"
    else:
        try:
            return nvml_gpu_node(pynvml)
        except (MachineError, pynvml.NVMLError) as exc:
            why = f"NVML: {exc}"
    try:
        return smi_gpu_node()
    except MachineError as exc:
        raise MachineError(f"no GPU node found: {why}; {exc}") from None
