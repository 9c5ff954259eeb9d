"""APHiD: top-down hierarchical partitioning along the machine's levels.

Michelogiannakis, Ibrahim, Shalf, Wilke, Knight & Kenny, "APHiD:
Hierarchical Task Placement to Enable a Tapered Fat Tree Topology for Lower
Power and Cost in HPC Networks", LBNL 2017, §II-A (top-down, Fig. 4) and
§II-B (pruning); notes 004 §2.  The processes are split among the children
of the allocation's root (fat tree spine: subtrees; dragonfly: groups), each
part among that subtree's children, and so on down to single PEs, with a
multilevel recursive bisection of the traffic inside each group
(csrc/core/map_aphid.c, which lists the choices the paper left open).

Pruning happens here, once, before the first split: the pattern is
symmetrised (C + C^T, the graph the partitioner sees) and every pair whose
bytes are below ``prune`` x the heaviest pair's is dropped
(:func:`topomap.patterns.util.prune`); 5 % is the paper's choice.  It is
not redone inside the groups of later splits.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _core
from ..errors import MappingError
from ..machine import Allocation
from ..pattern import Pattern
from ..patterns.util import prune as prune_pattern
from ..patterns.util import symmetrize
from ..registry import register
from ._options import core_map, is_int, is_real

__all__ = ["aphid", "allocation_tree"]

PARTITIONERS = ("recursive", "kway")
FILLS = ("proportional", "capacity")


def _check_options(prune: Any, partitioner: Any, fill: Any, ntries: Any) -> None:
    if not is_real(prune) or not 0 <= prune < 1:
        raise MappingError(f"aphid option prune = {prune!r} must be a fraction in [0, 1)")
    if partitioner not in PARTITIONERS:
        raise MappingError(f"aphid option partitioner = {partitioner!r} must be one of {', '.join(PARTITIONERS)}")
    if fill not in FILLS:
        raise MappingError(f"aphid option fill = {fill!r} must be one of {', '.join(FILLS)}")
    if not is_int(ntries) or not 1 <= ntries < 2**31:
        raise MappingError(f"aphid option ntries = {ntries!r} must be a positive integer")


@register("aphid", "top-down hierarchical partitioning following the machine's levels, light edges pruned (APHiD)",
          options={
              "prune": (0.05, "drop pairs whose bytes (C + C^T) are below this fraction of the heaviest pair's, "
                              "once before the first split; 0 keeps every edge"),
              "partitioner": ("recursive", "'recursive' bisection at every split (the paper's choice) or "
                                           "multilevel 'kway'"),
              "fill": ("proportional", "each child of a group takes its exact share of the group's processes, "
                                       "in proportion to its slots ('proportional', the paper's fixed sizes), or "
                                       "the slots are only bounds, so a job smaller than its allocation may "
                                       "gather in fewer subtrees ('capacity')"),
              "ntries": (4, "multilevel runs per bisection, the best kept"),
          },
          source="Michelogiannakis et al. 2017 (APHiD) §II-A top-down, §II-B pruning")
def aphid(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
          progress: Callable[[float], Any] | None, prune: float, partitioner: str, fill: str,
          ntries: int) -> np.ndarray:
    """APHiD placement: ``pe_of`` for ``pattern`` on ``allocation``.

    Parameters
    ----------
    pattern : Pattern
    allocation : Allocation
        Any machine whose routing oracle has levels (fat trees, tree and
        hierarchy networks, dragonflies, a single node); a torus, mesh,
        hypercube or graph fabric spanning several nodes raises
        :class:`~topomap.NotApplicable`.
    seed, capacity, progress
        As for :func:`topomap.map`.
    prune : float
        Pruning fraction in ``[0, 1)`` (0.05).
    partitioner : {"recursive", "kway"}
    fill : {"proportional", "capacity"}
    ntries : int

    Returns
    -------
    numpy.ndarray
        int32 PE of every process.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("fattree:k=2,levels=4").allocate(16)
    >>> pat = tm.generators.stencil_2d((4, 4))
    >>> mp = tm.map(pat, alloc, method="aphid", seed=1)
    >>> met = tm.evaluate(pat, alloc, mp)
    >>> met.level_bytes["spine"] <= tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block")).level_bytes["spine"]
    True
    """
    _check_options(prune, partitioner, fill, ntries)
    graph = pattern
    # A pair weighs at least the lightest message and at most twice the
    # heaviest: when even that cannot fall below the threshold (uniform
    # stencils), nothing would be pruned, so skip the symmetrised copy.
    if prune > 0 and pattern.nnz and pattern.bytes.min() < 2 * prune * pattern.bytes.max():
        graph = prune_pattern(symmetrize(pattern, "sum"), float(prune))
    return core_map(None, _core.map_aphid, graph, allocation, seed, capacity, progress,
                    recursive=partitioner == "recursive", proportional=fill == "proportional", ntries=int(ntries))


def allocation_tree(allocation: Allocation) -> dict[str, np.ndarray]:
    """The tree of groups APHiD follows, read from the machine's routing oracle.

    Two allocated PEs share a group of level ``L`` when
    ``machine.level_of(a, b) <= L``; groups that would have a single child are
    merged into it.  Groups are numbered breadth first from the root (0).

    Returns
    -------
    dict
        ``pes`` (the allocation's PEs in tree order) and, per group,
        ``start``/``size`` (its PEs are ``pes[start:start + size]``),
        ``level`` (of the lowest common ancestor, 0 for a single PE; names in
        ``machine.level_names``), ``first_child`` (-1 for a leaf) and
        ``nchildren``.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.mappers.aphid import allocation_tree
    >>> m = tm.machine("fattree:k=2,levels=3/2")
    >>> t = allocation_tree(m.allocation([0, 1, 2, 9, 8]))
    >>> t["pes"].tolist()                      # nodes 0, 0, 1 under leaf 0; node 4 under leaf 2
    [0, 1, 2, 8, 9]
    >>> [m.level_names[lv] for lv in t["level"][:4]], t["size"][:4].tolist()
    (['spine', 'leaf', 'Node', 'Node'], [5, 3, 2, 2])
    """
    if not isinstance(allocation, Allocation):
        raise MappingError(f"allocation_tree needs an Allocation, got {type(allocation).__name__}")
    return _core.alloc_tree(allocation.machine._core, allocation.pes)
