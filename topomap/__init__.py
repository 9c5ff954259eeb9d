"""topomap: topology-aware process mapping for HPC.

The four values: :class:`Pattern` (who sends how much to whom),
:class:`Machine` (nodes, node trees, network, routing), :class:`Allocation`
(the PEs a job was given, in rank order) and :class:`Mapping` (``pe_of``).

Examples
--------
>>> import topomap as tm
>>> pat = tm.generators.stencil_3d((8, 8, 8), points=7)
>>> alloc = tm.machine("torus:4x4x4/8").allocate(512)
>>> met = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block"))
>>> met.messages
2688
"""

try:
    from . import _core  # noqa: F401
except ImportError as _exc:  # the source tree of a checkout whose extension was built elsewhere
    from ._source_tree import explain
    raise ImportError(explain(__path__[0], _exc)) from None

from ._version import __version__
from .compare import compare
from .errors import (Cancelled, CoreError, CoreInputError, FormatError, MachineError, MappingError, MissingDependencyError,
                     NotApplicable, PatternError, TimeModelError, TopomapError)
from .features import features
from .machine import Allocation, Machine
from .mapping import Mapping
from .metrics import Evaluator, Metrics, evaluate
from .networks import (Circulant, Dragonfly, FatTree, GraphNetwork, Hypercube, Network, RandomShortcut, SingleNode,
                       Torus, TreeNetwork)
from .networks.spec import machine
from .node import NodeTree
from .partition import PartitionCancelled, PartitionError, PartitionResult, partition
from .pattern import Pattern
from .registry import map, methods
from . import cabling, collectives, io, mappers, node, patterns  # noqa: F401  (mappers register themselves)
from . import export, fabric, mpi, profiler  # noqa: F401  (fabric registers the file: and gpc specs; mpi4py loads on use)

# The short names of the pattern modules, and those of topomap 0.1's loose modules
generators = patterns.generators
generators_nas = patterns.nas
patterns_util = patterns.util
generators_collective = collectives.schedules
analysis = networks.analysis

__all__ = [
    "Pattern", "Machine", "Allocation", "Mapping", "NodeTree", "Metrics", "Evaluator",
    "Network", "SingleNode", "Torus", "TreeNetwork",
    "Dragonfly", "Hypercube",
    "FatTree",
    "GraphNetwork", "Circulant", "RandomShortcut",
    "machine", "map", "evaluate", "compare", "methods", "features", "partition", "PartitionResult",
    "generators", "generators_nas", "generators_collective", "patterns_util", "io", "fabric", "analysis", "export",
    "profiler", "patterns", "collectives", "cabling", "node", "networks", "mappers", "mpi",
    "PartitionError", "PartitionCancelled",
    "TopomapError", "PatternError", "MachineError", "MappingError", "NotApplicable", "FormatError",
    "MissingDependencyError", "TimeModelError",
    "CoreError", "CoreInputError", "Cancelled", "__version__",
]
