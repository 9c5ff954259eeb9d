"""Binary hypercubes with e-cube routing (csrc/core/machine_hypercube.c).

``2**dim`` nodes; nodes are adjacent when their ids differ in one bit
(notes 003 §1.3).  E-cube routing (Sullivan & Bashkow 1977; Dally & Towles
2004, §14.2) corrects the differing bits from the lowest to the highest, so
a route has ``popcount(a ^ b)`` links.  Link id ``node*dim + bit`` leaves
``node`` towards ``node ^ (1 << bit)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MachineError
from .spec import parse_node, register_spec, spec_int
from .base import Network


@dataclass(frozen=True)
class Hypercube(Network):
    """Binary hypercube of dimension ``dim`` (1..26) with e-cube routing.

    Examples
    --------
    >>> import topomap as tm
    >>> m = tm.Machine(tm.Hypercube(3), tm.NodeTree.flat(1))
    >>> m.route(0, 7).tolist()    # bit 0 from node 0, bit 1 from 1, bit 2 from 3
    [0, 4, 11]
    >>> m.summary()["diameter"], m.summary()["aspl"]
    (3, 1.7142857142857142)
    """

    dim: int
    kind = "hypercube"

    def __post_init__(self) -> None:
        if not isinstance(self.dim, (int, np.integer)) or isinstance(self.dim, bool) or not 1 <= self.dim <= 26:
            raise MachineError(f"hypercube dimension must be an integer in 1..26, got {self.dim!r}")

    def core_params(self) -> dict[str, np.ndarray]:
        return {"dim": np.array([self.dim], dtype=np.int32)}

    def level_names(self) -> list[str]:
        return ["network"]

    def spec_head(self) -> str:
        return f"hypercube:{self.dim}"


@register_spec("hypercube")
def _parse(kind: str, body: str, spec: str):
    """``hypercube:DIM[/NODE]``."""
    dim_text, slash, node_text = body.partition("/")
    if slash and not node_text.strip():
        raise MachineError(f"machine spec {spec!r} ends in '/' without a node description (e.g. /8)")
    dim = spec_int(dim_text, "hypercube dimension", spec)
    if dim > 26:
        raise MachineError(f"hypercube dimension {dim_text.strip()!r} in machine spec {spec!r} exceeds 26 "
                           f"(2^26 nodes x 26 links is the int32 link-id limit)")
    return Hypercube(dim), parse_node(node_text or "1", spec)
