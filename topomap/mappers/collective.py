"""Mirsadeghi's collective-aware reorderings as mappers (notes 000 §3).

The pattern only gives the number of ranks: the heuristics follow in closed
form from the collective's algorithm (RDMH: recursive doubling, RMH: ring,
BBMH: binomial broadcast, BGMH: binomial gather).  The initial layout is the
allocation's PE order (``layout="allocation"``) or one of the thesis's
(:data:`topomap.collectives.reorder.LAYOUTS`); rank ``j`` of the result is
the new rank ``j`` of :func:`topomap.collectives.reorder.reorder`.

``reorder-collective`` takes the collective as an option (``collective="alltoall/bruck"``)
and runs its heuristic from :mod:`topomap.collectives.reorder_more`, our
extension to Bruck, allreduce and alltoall.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..collectives.reorder import LAYOUTS, initial_layout, reorder
from ..collectives.reorder_more import heuristic_for, reorder_collective
from ..errors import Cancelled, MappingError
from ..machine import Allocation
from ..pattern import Pattern
from ..registry import register

_OPTIONS = {"layout": ("allocation", "the initial layout: 'allocation' (its PE order) or "
                       + ", ".join(repr(x) for x in LAYOUTS))}
_SUMMARY = {
    "rdmh": "recursive-doubling allgather: latest-stage partners next to each other (Alg. 4.2)",
    "rmh": "ring allgather: each rank next to the one before (Alg. 4.3)",
    "bbmh": "binomial broadcast: children next to parents, smaller subtrees first (Alg. 4.4)",
    "bgmh": "binomial gather: heaviest tree edges first (Alg. 4.5)",
}


def _mapper_run(name: str, pattern: Pattern, allocation: Allocation, seed: int, capacity: int, progress: Any,
                layout: str, old_of_new) -> np.ndarray:
    # milliseconds in C: the one progress report comes before the work, so the rule still holds
    if progress is not None and progress(0.0):
        raise Cancelled.by_progress(name, 0.0)
    n = pattern.n
    if capacity != 1:
        raise MappingError(f"{name} places one rank per core; capacity = {capacity} is not supported")
    if n > len(allocation.pes):
        raise MappingError(f"{name}: {n} ranks do not fit the allocation's {len(allocation.pes)} PEs")
    pes = (np.asarray(allocation.pes[:n], dtype=np.int64) if layout == "allocation"
           else initial_layout(allocation, n, layout))
    return pes[old_of_new(pes)].astype(np.int32)


def _mapper(heuristic: str):
    def run(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int, progress: Any,
            layout: str = "allocation") -> np.ndarray:
        return _mapper_run(heuristic, pattern, allocation, seed, capacity, progress, layout,
                           lambda pes: reorder(heuristic, allocation, pes, seed))

    run.__name__ = heuristic
    return register(heuristic, _SUMMARY[heuristic], options=_OPTIONS, c_file="coll_order.c",
                    source=f"Mirsadeghi 2017 §4 ({heuristic.upper()}, notes 000 §3)")(run)


rdmh, rmh, bbmh, bgmh = (_mapper(h) for h in ("rdmh", "rmh", "bbmh", "bgmh"))


@register("reorder-collective", "collective-aware reordering for the collective named by the option (RDMH ... PWMH)",
          options={**_OPTIONS, "collective": ("allgather/recursive_doubling", "'op/algorithm', a key of "
                                              "topomap.collectives.reorder_more.COLLECTIVES")},
          c_file="coll_more_order.c", source="topomap's extension of Mirsadeghi 2017 §4 (notes 000 §3)")
def reorder_collective_mapper(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int, progress: Any,
                              layout: str = "allocation",
                              collective: str = "allgather/recursive_doubling") -> np.ndarray:
    """Bruck, allreduce and alltoall too: :mod:`topomap.collectives.reorder_more`."""
    heuristic_for(collective)       # names the choices before anything runs
    return _mapper_run("reorder-collective", pattern, allocation, seed, capacity, progress, layout,
                       lambda pes: reorder_collective(collective, allocation, pes, seed))
