"""The network between compute nodes.

Each kind (torus, fattree, dragonfly, hypercube, shortcut, graph, tree,
single) is one module that describes it and registers its spec strings with
:mod:`~topomap.networks.spec` (the grammar behind :func:`topomap.machine`);
its routing is in ``csrc/core/machine_<kind>.c``.
:mod:`~topomap.networks.analysis` measures a machine's network (diameter,
path lengths, bisection) and :mod:`~topomap.networks.hilbert` orders torus
nodes along a Hilbert curve.
"""

from .base import Network
from .dragonfly import Dragonfly
from .fattree import FatTree
from .graph import GraphNetwork
from .hypercube import Hypercube
from .shortcut import Circulant, RandomShortcut
from .single import SingleNode
from .torus import Torus
from .tree import TreeNetwork
from . import cell_eib
from . import analysis, hilbert, spec  # noqa: E402  (after the kinds: spec strings are registered by now)

__all__ = ["Network", "Dragonfly", "FatTree", "GraphNetwork", "Hypercube", "Circulant", "RandomShortcut",
           "SingleNode", "Torus", "TreeNetwork"]
