"""Plots of patterns, machines and experiment results (matplotlib, extra ``plot``).

Every function takes ``ax=None`` (a new figure when None), draws on it and
returns the axes; none calls ``show()``.  matplotlib is imported only when a
function runs, so ``import topomap.plot`` works without it.

========================= =========================================================
:func:`comm_matrix`       communication-matrix heatmap, log colour scale, node lines
:func:`comm_matrix_pair`  the same before and after a mapping, side by side
:func:`machine_links`     the network, links coloured by congestion
:func:`metric_bars`       normalised metrics per method, grouped by metric
:func:`improvement_lines` a normalised metric vs process count or message size
:func:`mapping_time`      mapping time vs size on log-log axes
========================= =========================================================

Examples
--------
>>> import matplotlib; matplotlib.use("Agg")
>>> import topomap as tm, topomap.plot as tp
>>> alloc = tm.machine("torus:4x4/4").allocate(64)
>>> ax = tp.metric_bars(tm.compare(tm.generators.stencil_2d((8, 8)), alloc, ["block", "random"]))
>>> [t.get_text() for t in ax.get_xticklabels()]
['HB', 'MC', 'NZCA', 'NZCV']
"""

from .bars import THESIS_METRICS, metric_bars
from .lines import improvement_lines, mapping_time
from .matrix import comm_matrix, comm_matrix_pair
from .network import LAYOUTS, machine_links

__all__ = ["comm_matrix", "comm_matrix_pair", "machine_links", "metric_bars", "improvement_lines", "mapping_time",
           "THESIS_METRICS", "LAYOUTS"]
