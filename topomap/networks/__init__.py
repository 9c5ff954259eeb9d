"""Network kinds.  Each module describes one kind and registers its spec
strings; the routing is in csrc/core/machine_<kind>.c."""

from .base import Network
from .single import SingleNode
from .torus import Torus
from .tree import TreeNetwork

__all__ = ["Network", "SingleNode", "Torus", "TreeNetwork"]
