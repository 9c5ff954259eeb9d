"""Baseline mappers: what users get without topomap.

``block`` is the launcher's default in-order placement (Mirsadeghi 2017, §3.5:
"adjacent ranks fill one node before moving to the next"); ``cyclic`` deals
ranks round robin over nodes (SLURM/Hydra ``cyclic``); ``random`` is a seeded
random placement.  The loops are in csrc/core/map_baseline.c.
"""

from __future__ import annotations

import numpy as np

from .. import _core
from ..machine import Allocation
from ..pattern import Pattern
from ..registry import register


@register("block", "in allocation order, filling each PE up to capacity (the launcher default)",
          source="Mirsadeghi 2017 §3.5 (default block in-order mapping)", c_file="map_baseline.c")
def block(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int, progress: object) -> np.ndarray:
    return _core.map_block(pattern.n, allocation.pes, capacity)


@register("cyclic", "round robin over the allocation's nodes, each node's PEs in allocation order",
          source="Mirsadeghi 2017 §4 (cyclic initial layout)", c_file="map_baseline.c")
def cyclic(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int, progress: object) -> np.ndarray:
    return _core.map_cyclic(allocation.machine._core, pattern.n, allocation.pes, capacity)


@register("random", "seeded uniformly random placement onto the allocation's PE slots", c_file="map_baseline.c")
def random(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int, progress: object) -> np.ndarray:
    return _core.map_random(pattern.n, allocation.pes, capacity, seed % 2**64)
