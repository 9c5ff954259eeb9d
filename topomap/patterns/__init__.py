"""Communication patterns to map: generators and functions over patterns.

======================================= ==============================================================
:mod:`~topomap.patterns.generators`     stencils, Moore neighbourhoods, random graphs, all-to-all
                                        groups; the spec strings of the command line (``from_spec``)
:mod:`~topomap.patterns.nas`            NAS Parallel Benchmark process layouts (CG, MG, FT, LU, BT, SP)
:mod:`~topomap.patterns.util`           restrict, scale, add, symmetrize, prune, time windows, summaries
======================================= ==============================================================

The three are also ``topomap.generators``, ``topomap.generators_nas`` and
``topomap.patterns_util``.  Stage-by-stage collective schedules are in
:mod:`topomap.collectives`.
"""

from . import generators, nas, util

__all__ = ["generators", "nas", "util"]
