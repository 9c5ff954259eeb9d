"""Network kinds.  Each module describes one kind and registers its spec
strings; the routing is in csrc/core/machine_<kind>.c."""

from .base import Network
from .dragonfly import Dragonfly
from .fattree import FatTree
from .graph import GraphNetwork
from .hypercube import Hypercube
from .shortcut import Circulant, RandomShortcut
from .single import SingleNode
from .torus import Torus
from .tree import TreeNetwork

__all__ = ["Network", "Dragonfly", "FatTree", "GraphNetwork", "Hypercube", "Circulant", "RandomShortcut",
           "SingleNode", "Torus", "TreeNetwork"]
