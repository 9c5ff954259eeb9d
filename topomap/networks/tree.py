"""Tree of switches above the nodes: the upper levels of a KaHIP/VieM/Scotch
``tleaf`` hierarchy (csrc/core/machine_tree.c)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MachineError
from .base import Network


@dataclass(frozen=True)
class TreeNetwork(Network):
    """Tree of switches above the nodes.

    ``arities`` bottom-up: ``arities[0]`` nodes per level-1 switch, ...;
    ``costs[h-1]`` is the distance between nodes whose ancestors meet at level h.
    Each tree edge is an up and a down link.

    Examples
    --------
    >>> import topomap as tm
    >>> m = tm.Machine(tm.TreeNetwork((2, 2), (10.0, 100.0)), tm.NodeTree.flat(2))
    >>> m.route(0, 3).tolist(), float(m.distance(0, 6))
    ([0, 8, 11, 7], 100.0)
    """

    arities: tuple[int, ...]
    costs: tuple[float, ...]
    kind = "tree"

    def __post_init__(self) -> None:
        if not self.arities or any(int(a) < 1 for a in self.arities):
            raise MachineError(f"tree arities must be positive, got {self.arities}")
        if len(self.costs) != len(self.arities):
            raise MachineError(f"tree has {len(self.arities)} levels but {len(self.costs)} costs")

    def core_params(self) -> dict[str, np.ndarray]:
        return {"arities": np.asarray(self.arities, dtype=np.int32),
                "costs": np.asarray(self.costs, dtype=np.float64)}

    def level_names(self) -> list[str]:
        return [f"switch{i + 1}" for i in range(len(self.arities))]

    def spec_head(self) -> str:
        return "tree-network:" + ":".join(map(str, self.arities))
