"""Normalised-metric bar charts: one group of bars per metric, one bar per method."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ._common import axes, label, method_order, metric_column, results_frame

__all__ = ["metric_bars", "THESIS_METRICS"]

#: The four metrics of Mirsadeghi's PTRAM figures (thesis Figs. 3.10-3.16).
THESIS_METRICS = ("hop_bytes", "max_congestion", "nz_congestion_avg", "nz_congestion_var")


def metric_bars(results: Any, metrics: Sequence[str] = THESIS_METRICS, methods: Sequence[str] | None = None, *,
                normalized: bool = True, agg: str = "gmean", errorbars: bool = True, ax: Any = None,
                title: str | None = None) -> Any:
    """Bars of each method's metrics, grouped by metric (the thesis's figure style).

    Each bar aggregates the successful runs of one method (e.g. over seeds or
    patterns); error bars span their minimum to maximum.  With normalised
    values a dashed line marks the baseline at 1.

    Parameters
    ----------
    results : DataFrame or list of dicts
        Output of :func:`topomap.experiments.run_grid` or :func:`topomap.compare`.
    metrics : sequence of str
        Metric names (default: HB, MC, NZCA, NZCV).
    methods : sequence of str, optional
        Methods in bar order (default: as they appear in ``results``).
    normalized : bool
        Plot ``<metric>_norm`` (ratio to the baseline) rather than raw values.
    agg : {"gmean", "mean", "median", "min", "max"}
        How the runs of one method combine into one bar.
    errorbars : bool
        Draw min-max error bars when a method has several runs.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax.patches`` holds ``len(metrics) * len(methods)`` bars, metric by metric.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import topomap as tm, topomap.plot as tp
    >>> alloc = tm.machine("torus:4x4/4").allocate(64)
    >>> df = tm.compare(tm.generators.stencil_2d((8, 8)), alloc, ["block", "cyclic", "random"])
    >>> len(tp.metric_bars(df).patches)
    12
    """
    from ..experiments.results import aggregate

    df = results_frame(results)
    meths = method_order(df, methods)
    cols = [metric_column(df, m, normalized) for m in metrics]
    ax = axes(ax)
    width = 0.8 / max(len(meths), 1)
    centres = np.arange(len(cols), dtype=float)
    for j, method in enumerate(meths):
        rows = df[df["method"] == method]
        heights = np.array([aggregate(rows[c], agg) for c in cols])
        x = centres - 0.4 + width * (j + 0.5)
        infinite = np.isinf(heights)  # x/0: the baseline had none of it; a bar cannot show that
        heights[infinite] = np.nan
        ax.bar(x, heights, width=width, label=method, color=f"C{j % 10}")
        for xi in x[infinite]:
            ax.text(xi, 0, "inf", ha="center", va="bottom", rotation=90, fontsize="small")
        if errorbars and len(rows) > 1:
            lo = np.array([rows[c].min() for c in cols], dtype=float)
            hi = np.array([rows[c].max() for c in cols], dtype=float)
            spread = np.where(np.isfinite(hi) & np.isfinite(heights), [heights - lo, hi - heights], np.nan)
            ax.errorbar(x, heights, yerr=np.maximum(spread, 0), fmt="none", ecolor="0.2", capsize=2, linewidth=0.8)
    if normalized:
        ax.axhline(1.0, color="0.3", linestyle="--", linewidth=0.8)
    ax.set_xticks(centres)
    ax.set_xticklabels([label(c) for c in cols])
    ax.set_ylabel("normalised to the baseline" if normalized else "value")
    ax.legend(fontsize="small")
    if title is not None:
        ax.set_title(title)
    return ax
