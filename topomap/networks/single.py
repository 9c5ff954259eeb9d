"""No network: the machine is one compute node."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Network


@dataclass(frozen=True)
class SingleNode(Network):
    """One compute node; every PE pair is inside it.

    Examples
    --------
    >>> import topomap as tm
    >>> tm.Machine(tm.SingleNode(), tm.NodeTree.flat(4)).nlinks
    0
    """

    kind = "single"

    def spec_head(self) -> str:
        return "single"
