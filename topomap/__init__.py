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

from . import generators, io, mappers  # noqa: F401  (mappers register themselves)
from ._version import __version__
from .compare import compare
from .errors import (Cancelled, CoreError, CoreInputError, FormatError, MachineError, MappingError, MissingDependencyError,
                     PatternError, TopomapError)
from .features import features
from .machine import Allocation, Machine
from .networks import (Circulant, Dragonfly, FatTree, GraphNetwork, Hypercube, Network, RandomShortcut, SingleNode,
                       Torus, TreeNetwork)
from .mapping import Mapping
from .metrics import Evaluator, Metrics, evaluate
from .nodetree import NodeTree
from .pattern import Pattern
from .partition import PartitionCancelled, PartitionError, PartitionResult, partition
from .registry import map, methods
from .spec import machine
from . import analysis, export, fabric  # noqa: F401  (fabric registers the file: and gpc specs)
from . import generators_collective, generators_nas, patterns_util, profiler  # noqa: F401
from . import mpi  # noqa: F401  (mpi4py itself is imported on first use)
from . import hilbert  # noqa: F401

__all__ = [
    "Pattern", "Machine", "Allocation", "Mapping", "NodeTree", "Metrics", "Evaluator",
    "Network", "SingleNode", "Torus", "TreeNetwork",
    "Dragonfly", "Hypercube",
    "FatTree",
    "GraphNetwork", "Circulant", "RandomShortcut",
    "machine", "map", "evaluate", "compare", "methods", "features", "partition", "PartitionResult",
    "generators", "generators_nas", "generators_collective", "patterns_util", "io", "fabric", "analysis", "export",
    "profiler", "PartitionError", "PartitionCancelled",
    "TopomapError", "PatternError", "MachineError", "MappingError", "FormatError", "MissingDependencyError",
    "CoreError", "CoreInputError", "Cancelled", "__version__",
]
