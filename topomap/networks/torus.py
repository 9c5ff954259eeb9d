"""Tori and meshes with dimension-order routing (csrc/core/machine_torus.c)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MachineError
from .spec import grid, parse_node, register_spec
from .base import Network


@dataclass(frozen=True)
class Torus(Network):
    """n-D torus (``wrap[d]`` true) or mesh with dimension-order routing.

    DOR corrects dimension 0 first; on a torus it takes the shorter way and,
    when both ways are equally long, the + direction.  Node distance = hops.
    Node id = ``x0 + d0*(x1 + d1*x2)`` (Scotch ``torusXD`` numbering).

    Examples
    --------
    >>> import topomap as tm
    >>> m = tm.Machine(tm.Torus((4, 4), (True, False)), tm.NodeTree.flat(1))
    >>> m.summary()["diameter"]
    5
    """

    dims: tuple[int, ...]
    wrap: tuple[bool, ...]
    kind = "torus"

    def __post_init__(self) -> None:
        if not self.dims or any(int(d) < 1 for d in self.dims):
            raise MachineError(f"torus dimensions must be positive, got {self.dims}")
        if len(self.wrap) != len(self.dims):
            raise MachineError(f"torus has {len(self.dims)} dimensions but {len(self.wrap)} wrap flags")

    def core_params(self) -> dict[str, np.ndarray]:
        return {"dims": np.asarray(self.dims, dtype=np.int32), "wrap": np.asarray(self.wrap, dtype=np.uint8)}

    def level_names(self) -> list[str]:
        return ["network"]

    def spec_head(self) -> str:
        kind = "torus" if all(self.wrap) else "mesh" if not any(self.wrap) else "torus-mesh"
        return f"{kind}:{'x'.join(map(str, self.dims))}"


@register_spec("torus", "mesh")
def _parse(kind: str, body: str, spec: str):
    shape, slash, node_text = body.partition("/")
    if slash and not node_text.strip():
        raise MachineError(f"machine spec {spec!r} ends in '/' without a node description (e.g. /8)")
    dims = grid(shape, spec)
    node = parse_node(node_text or "1", spec)
    return Torus(dims, tuple([kind == "torus"] * len(dims))), node
