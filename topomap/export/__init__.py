"""Export a machine to the tools people map and simulate with.

* :mod:`~topomap.export.scotch`: Scotch targets (``tleaf``, ``torusXD``/``meshXD``)
  and the network as a source graph plus vertex list for ``amk_grf``;
* :mod:`~topomap.export.simgrid`: SimGrid platform XML that replays topomap's
  routes, and SMPI host files from an allocation and a mapping;
* :mod:`~topomap.export.dot`: Graphviz drawing with link loads;
* :mod:`~topomap.export.goal`: patterns and schedules as LogGOPSim GOAL text.

Every exporter returns the file's text; ``topomap export`` writes it.

Examples
--------
>>> import topomap as tm
>>> tm.export.scotch.tleaf(tm.machine("hierarchy:2:2/1:10"))
'tleaf 2 2 9 2 1\\n'
"""

from . import dot, goal, scotch, simgrid

__all__ = ["dot", "goal", "scotch", "simgrid"]
