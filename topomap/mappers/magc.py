"""MAGC: mapping for GPU clusters (Mirsadeghi 2017, ch. 5; notes 000 §4, §6.3).

Each process has a CPU pattern (host traffic) and a GPU pattern (device traffic), one core and
one GPU of its node.  MAGC maps in three phases:

1. processes to nodes on ``C_cpu + C_gpu`` over the network, with one of the project's
   mappers (``phase1``, default ``ptram``, the thesis's ch. 3 approach) on as many PEs per node
   as the node has GPUs (or allocated cores, if fewer), so no process ever gets a GPU of
   another node;
2. per node, processes to the node's allocated cores on the CPU sub-pattern;
3. per node, processes to the node's GPUs on the GPU sub-pattern;

phases 2 and 3 by Alg. 5.1 (``intra="greedy"``, csrc/core/magc_greedy.c: congestion greedy over
the node's links with their bandwidths) or by the ``scotch`` mapper on the node alone
(``intra="scotch"``, needs Scotch's ``gmap``).  The thesis's baselines (§6.3):

``default``     block mapping, GPU = local rank;
``strategy1``   the three phases with phase 1 on the CPU pattern only;
``strategy2``   phases 1 and 2 on the CPU pattern, GPU = local rank.

:func:`evaluate_gpu` scores a result: the network metrics of :func:`topomap.evaluate` on the
combined pattern, and the loads on the links inside the nodes (:func:`topomap.node.gpu.node_link_loads`).

Examples
--------
>>> import topomap as tm
>>> from topomap.mappers.magc import magc, evaluate_gpu
>>> m = tm.machine("fattree:k=4,levels=1/gpu:clusterB")
>>> alloc = m.allocate(m.npes)
>>> cpu = tm.generators.stencil_2d((8, 4))
>>> gpu = tm.generators.subcomm_alltoall((8, 4), axes=0)
>>> mp = magc(cpu, gpu, alloc)
>>> mp.gpu_of.max() < 8 and evaluate_gpu(cpu, gpu, alloc, mp).node.max_congestion > 0
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _core
from ..errors import MappingError
from ..machine import Allocation, Machine
from ..mapping import Mapping
from ..metrics import Metrics, as_pattern, evaluate
from ..networks.single import SingleNode
from ..node.gpu import GpuNode, GpuNodeTree, NodeLinkLoads, node_link_loads
from ..node.nodetree import NodeTree
from ..pattern import Pattern
from ..registry import map as map_pattern

__all__ = ["magc", "evaluate_gpu", "GpuMetrics", "STRATEGIES", "combined"]

STRATEGIES = ("magc", "strategy1", "strategy2", "default")


def _gpu_node(allocation: Allocation) -> GpuNode:
    node = allocation.machine.node
    if not isinstance(node, GpuNodeTree):
        raise MappingError(f"MAGC needs a machine of GPU nodes (a spec ending in /gpu:...), got "
                           f"{allocation.machine.spec!r}")
    return node.gpu  # type: ignore[return-value]


def combined(cpu: Pattern, gpu: Pattern) -> Pattern:
    """``C_cpu + C_gpu`` (phase 1's pattern)."""
    src = np.concatenate([np.repeat(np.arange(p.n), np.diff(p.indptr)) for p in (cpu, gpu)])
    dst = np.concatenate([cpu.indices, gpu.indices])
    return Pattern.from_edges(src, dst, np.concatenate([cpu.bytes, gpu.bytes]), n=cpu.n)


def _dense(pattern: Pattern, members: np.ndarray) -> np.ndarray:
    """The sub-pattern among ``members`` as a dense matrix (rows and columns in members' order)."""
    local = np.full(pattern.n, -1, dtype=np.int64)
    local[members] = np.arange(members.size)
    out = np.zeros((members.size, members.size))
    for i, p in enumerate(members):
        row = slice(pattern.indptr[p], pattern.indptr[p + 1])
        cols = local[pattern.indices[row]]
        keep = cols >= 0
        out[i, cols[keep]] = pattern.bytes[row][keep]
    return out


def _assign(node: GpuNode, c: np.ndarray, cand: np.ndarray, intra: str, seed: int) -> np.ndarray:
    """Endpoints (from ``cand``) for processes with dense traffic ``c`` on one node."""
    if intra == "greedy":
        ptr, chans = node.route_table()
        ep, _ = _core.magc_greedy(node.bandwidths, ptr, chans, c, cand.astype(np.int32))
        return ep
    # Scotch on the node alone, its target a tleaf: the candidates grouped by single linkage at
    # each distinct route length (on a PCIe tree, the levels of the tree), costs = those lengths
    hops = np.array([[len(node.route(a, b)) for b in cand] for a in cand])
    rows = []
    for limit in sorted(set(hops.ravel().tolist())):
        group = np.arange(cand.size)
        for a, b in zip(*np.nonzero(hops <= limit)):
            ga, gb = group[a], group[b]
            group[group == max(ga, gb)] = min(ga, gb)
        rows.append((group, float(limit)))
    if len(set(rows[-1][0].tolist())) > 1 or len(rows) == 1:
        rows.append((np.zeros(cand.size, dtype=np.int64), rows[-1][1] + 1))
    tree = NodeTree.from_groups([g for g, _ in rows], [f"hops{d:g}" for _, d in rows], pe_type="Endpoint",
                                costs=[d for _, d in rows], source="magc")
    sub = Pattern.from_dense(c)
    pe = map_pattern(sub, Machine(SingleNode(), tree).allocate(cand.size), method="scotch", seed=seed).pe_of
    return cand[pe]


def magc(cpu: Any, gpu: Any, allocation: Allocation, *, strategy: str = "magc", intra: str = "greedy",
         phase1: str = "ptram", seed: int = 0) -> Mapping:
    """Map processes to cores and GPUs of GPU nodes by MAGC or one of the thesis's baselines.

    Parameters
    ----------
    cpu, gpu : Pattern or array-like
        Host and device traffic of the same ``n`` processes.
    allocation : Allocation
        PEs (cores) of a machine of GPU nodes; each node takes at most ``min(allocated cores,
        GPUs)`` processes.
    strategy : {"magc", "strategy1", "strategy2", "default"}
        See the module docstring.
    intra : {"greedy", "scotch"}
        Phases 2 and 3: Alg. 5.1 or Scotch.
    phase1 : str
        The registered mapper of phase 1 (any of :func:`topomap.methods`).
    seed : int

    Returns
    -------
    Mapping
        ``pe_of`` (the core) and ``gpu_of`` (the local GPU, the CUDA device ordinal) per process.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("gpu:clusterB").allocate(8)
    >>> pat = tm.generators.stencil_2d((4, 2))
    >>> sorted(magc(pat, pat, alloc).gpu_of.tolist())
    [0, 1, 2, 3, 4, 5, 6, 7]
    """
    start = time.perf_counter()
    cpu, gpu = as_pattern(cpu), as_pattern(gpu)
    if cpu.n != gpu.n:
        raise MappingError(f"the CPU pattern has {cpu.n} processes, the GPU pattern {gpu.n}")
    if strategy not in STRATEGIES:
        raise MappingError(f"unknown MAGC strategy {strategy!r}; one of {', '.join(STRATEGIES)}")
    if intra not in ("greedy", "scotch"):
        raise MappingError(f"intra must be 'greedy' or 'scotch', got {intra!r}")
    node = _gpu_node(allocation)
    machine = allocation.machine
    pes = np.sort(np.asarray(allocation.pes))
    node_of_pe = machine.node_of(pes)
    # phase 1's PEs: the first min(cores, GPUs) allocated cores of every node
    rank_in_node = np.arange(pes.size) - np.searchsorted(node_of_pe, node_of_pe)
    slots = pes[rank_in_node < node.ngpus]
    if slots.size < cpu.n:
        raise MappingError(f"{cpu.n} processes but the allocation offers only {slots.size} core+GPU pairs "
                           f"({node.ngpus} GPUs per node)")
    sub = machine.allocation(slots)
    if strategy == "default":
        pe_of = map_pattern(cpu, sub, method="block").pe_of.copy()
    else:
        pattern = combined(cpu, gpu) if strategy == "magc" else cpu
        pe_of = map_pattern(pattern, sub, method=phase1, seed=seed).pe_of.copy()
    nodes = machine.node_of(pe_of)
    gpu_of = np.zeros(cpu.n, dtype=np.int32)
    ppn = machine.pes_per_node
    for nd in np.unique(nodes):
        members = np.flatnonzero(nodes == nd)
        if strategy in ("magc", "strategy1", "strategy2"):
            cores = pes[node_of_pe == nd] - nd * ppn
            pe_of[members] = nd * ppn + _assign(node, _dense(cpu, members), cores, intra, seed)
        if strategy in ("magc", "strategy1"):
            gpus = np.arange(node.ngpus) + node.ncores
            gpu_of[members] = _assign(node, _dense(gpu, members), gpus, intra, seed) - node.ncores
        else:  # GPU = local rank
            gpu_of[members] = np.arange(members.size)
    return Mapping(pe_of, method=strategy if strategy != "magc" else f"magc-{intra}", seed=seed,
                   seconds=time.perf_counter() - start,
                   options={"intra": intra, "phase1": phase1}, gpu_of=gpu_of)


@dataclass(frozen=True)
class GpuMetrics:
    """:func:`evaluate_gpu`'s result: ``network`` (Metrics of ``C_cpu + C_gpu``) and ``node`` (the loads
    on the links inside the nodes)."""

    network: Metrics
    node: NodeLinkLoads

    def to_dict(self) -> dict[str, float]:
        return {**self.network.to_dict(), **self.node.to_dict()}


def evaluate_gpu(cpu: Any, gpu: Any, allocation: Allocation, mapping: Mapping) -> GpuMetrics:
    """Score a mapping with GPUs: network metrics and intra-node link loads (separately).

    Parameters
    ----------
    cpu, gpu : Pattern or array-like
    allocation : Allocation
        Of a machine of GPU nodes.
    mapping : Mapping
        With ``gpu_of`` set (e.g. from :func:`magc`).

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("gpu:clusterB").allocate(8)
    >>> pat = tm.generators.stencil_2d((4, 2))
    >>> res = evaluate_gpu(pat, pat, alloc, magc(pat, pat, alloc, strategy="default"))
    >>> res.network.hop_bytes, res.node.nz_links > 0
    (0.0, True)
    """
    cpu, gpu = as_pattern(cpu), as_pattern(gpu)
    node = _gpu_node(allocation)
    if mapping.gpu_of is None:
        raise MappingError("the mapping has no GPU per process (gpu_of)")
    if mapping.gpu_of.size and mapping.gpu_of.max() >= node.ngpus:
        raise MappingError(f"gpu_of names GPU {int(mapping.gpu_of.max())} but nodes have {node.ngpus}")
    machine = allocation.machine
    network = evaluate(combined(cpu, gpu), allocation, mapping)
    nodes = machine.node_of(mapping.pe_of)
    loads = node_link_loads(node, machine.nnodes, nodes, cpu, mapping.pe_of - nodes * machine.pes_per_node,
                            gpu, mapping.gpu_of)
    return GpuMetrics(network, loads)
