"""The hierarchy mapper: n-to-1 mapping that minimises the QAP objective J.

For machines whose PE distance depends only on the lowest common group of
a hierarchy (``hierarchy:`` and ``tree:`` specs, fat trees, any allocation
that sits inside such a structure): the KaHIP/VieM/SharedMap problem
``J(C, D, Pi) = sum of bytes x distance`` over directed messages
(:attr:`topomap.Metrics.qap`; a symmetric pattern counts each undirected
edge twice, as KaHIP does).  Sources: KaHIP's ``global_multisection``
(Schulz & Träff, SEA 2017), SharedMap's hierarchical multisection (Schulz &
Woydt, ACDA 2025), VieM's communication-neighbourhood swaps ``N_C^d``;
notes/anchors.md §1.1-1.4.  The C core (``csrc/core/map_hierarchy.c``)
lists every choice the sources leave open:

1. the allocation's PEs are grouped into a tree from the machine's
   distances (checked against the routing oracle; machines that are not a
   hierarchy over the allocation, such as tori and dragonflies, are
   refused);
2. top-down multisection: the processes of each group are partitioned
   among its children (multilevel partitioning of ``C + C^T``), each split
   improved by V-cycles;
3. a local search through the evaluator moves processes into PEs with
   room and swaps pairs within ``depth`` hops in the communication graph;
4. ``tries`` complete runs, the lowest J kept.

Balance: every PE holds at most ``min(capacity, ceil((1 + imbalance) * n /
PEs))`` processes.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _core
from ..errors import CoreInputError, CoreNotSupported, MappingError, NotApplicable
from ..machine import Allocation
from ..pattern import Pattern
from ..registry import register
from ._options import is_int, is_real

__all__ = ["hierarchy", "EFFORTS"]

#: Effort presets, fastest first (their settings: ``csrc/core/map_hierarchy.c``).
EFFORTS = ("fast", "eco", "strong")


def _check(imbalance: Any, depth: Any, effort: Any, tries: Any) -> None:
    if not is_real(imbalance) or not np.isfinite(imbalance) or imbalance < 0:
        raise MappingError(f"hierarchy option imbalance = {imbalance!r} must be a finite number >= 0")
    if not is_int(depth) or not 0 <= depth < 2**31:
        raise MappingError(f"hierarchy option depth = {depth!r} must be an integer >= 0")
    if effort not in EFFORTS:
        raise MappingError(f"hierarchy option effort = {effort!r} must be one of {', '.join(EFFORTS)}")
    if not is_int(tries) or not 1 <= tries < 2**31:
        raise MappingError(f"hierarchy option tries = {tries!r} must be an integer >= 1")


@register("hierarchy", "minimise the hierarchy QAP objective J: multisection along the machine's levels, "
                       "V-cycles, then moves and N_C^d swaps",
          options={
              "imbalance": (0.03, "epsilon: each PE holds at most ceil((1 + eps) n / PEs) processes (and capacity)"),
              "depth": (1, "swap partners within this many hops in the communication graph (VieM's N_C^d); "
                           "0 = moves only"),
              "effort": ("eco", "preset: fast | eco | strong"),
              "tries": (1, "complete runs with derived seeds, the lowest J kept"),
          },
          source="KaHIP global_multisection (Schulz & Träff 2017); SharedMap (Schulz & Woydt 2025); "
                 "VieM N_C^d swaps; notes/anchors.md §1.1-1.4")
def hierarchy(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
              progress: Callable[[float], Any] | None, imbalance: float, depth: int, effort: str,
              tries: int) -> np.ndarray:
    """Hierarchy mapping: ``pe_of`` for ``pattern`` on ``allocation``, minimising J.

    Parameters
    ----------
    pattern : Pattern
    allocation : Allocation
        PEs of a machine whose distances form a hierarchy over them.
    seed, capacity, progress
        As for :func:`topomap.map`.
    imbalance : float
        ``eps >= 0``: every PE holds at most ``ceil((1 + eps) n / PEs)``
        processes (never more than ``capacity``).
    depth : int
        Swap partners are the processes within ``depth`` hops in the
        communication graph (0: moves only).
    effort : {"fast", "eco", "strong"}
        How much partitioning work each level gets.  Above 2^17 processes
        ``eco`` makes one multilevel run per split and one V-cycle after
        each split below the root (10^6 processes on a fat tree: 29 s
        instead of 65 s of CPU, hop-bytes +0.8 %; on a 2 GHz Zen 1 EPYC the
        100^3 stencil onto ``fattree:k=40,levels=3/16`` takes 27-28.5 s);
        ``strong`` does not scale down.
    tries : int
        Complete runs with seeds derived from ``seed``; the lowest J wins.

    Returns
    -------
    numpy.ndarray
        int32 PE of every process.

    Raises
    ------
    NotApplicable
        On a machine that is not a hierarchy over the allocation (the
        message names its network kind).
    MappingError
        On an option out of range.

    Examples
    --------
    A 2-D stencil in a random rank order on 8 nodes of 4 PEs under two
    switches: the hierarchy mapper puts neighbours together, better than
    the launcher's order does even for the stencil in its natural order.

    >>> import numpy as np, topomap as tm
    >>> alloc = tm.machine("hierarchy:4:4:2/1:10:100").allocate(32)
    >>> natural = tm.generators.stencil_2d((8, 4))
    >>> order = np.random.default_rng(0).permutation(32)
    >>> pat = tm.Pattern.from_edges(order[natural.senders()], order[natural.indices], natural.bytes)
    >>> ours = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="hierarchy", seed=0)).qap
    >>> block = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block")).qap
    >>> in_order = tm.evaluate(natural, alloc, tm.map(natural, alloc, method="block")).qap
    >>> bool(ours < in_order < block)
    True
    """
    _check(imbalance, depth, effort, tries)
    try:
        pe_of, _ = _core.map_hierarchy(allocation.machine._core, pattern.indptr, pattern.indices, pattern.bytes,
                                       allocation.pes, capacity, seed % 2**64, imbalance=float(imbalance),
                                       depth=int(depth), effort=EFFORTS.index(effort), tries=int(tries),
                                       progress=progress)
    except CoreInputError as exc:
        raise MappingError(f"hierarchy: {exc}") from None
    except CoreNotSupported as exc:
        m = allocation.machine
        raise NotApplicable(f"hierarchy: method 'hierarchy' needs a machine whose PE distances form a hierarchy "
                           f"over the allocation (hierarchy:, tree: or fat-tree machines); {m.spec!r} has a "
                           f"{m.network.kind} network: {exc}") from None
    return pe_of
