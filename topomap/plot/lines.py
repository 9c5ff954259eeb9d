"""Line plots over a swept quantity: improvement vs message size or process count, mapping-time scaling."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ._common import axes, label, method_order, metric_column, results_frame

__all__ = ["improvement_lines", "mapping_time"]

#: Columns :func:`improvement_lines` derives when the results lack them.
DERIVED = {"message_bytes": ("total_bytes", "messages")}


def _x_column(df: Any, x: str) -> Any:
    if x in df.columns:
        return df
    if x in DERIVED:
        num, den = DERIVED[x]
        if num in df.columns and den in df.columns:
            return df.assign(**{x: df[num] / df[den]})
    raise ValueError(f"the results have no column {x!r} to plot against"
                     + (f" (derived from {' / '.join(DERIVED[x])})" if x in DERIVED else ""))


def _series(df: Any, method: str, x: str, y: str, agg: str) -> tuple[np.ndarray, np.ndarray]:
    from ..experiments.results import aggregate

    rows = df[df["method"] == method]
    xs = np.array(sorted(set(rows[x].dropna())), dtype=float)
    ys = np.array([aggregate(rows.loc[rows[x] == v, y], agg) for v in xs])
    return xs, ys


def improvement_lines(results: Any, x: str = "n", metric: str = "hop_bytes", methods: Sequence[str] | None = None,
                      *, percent: bool = False, agg: str = "gmean", logx: bool = True, ax: Any = None,
                      title: str | None = None) -> Any:
    """One line per method: a normalised metric against a swept quantity.

    Parameters
    ----------
    results : DataFrame or list of dicts
        Output of :func:`topomap.experiments.run_grid` (a grid over patterns
        of several sizes or volumes) or of several :func:`topomap.compare` calls.
    x : str
        Column on the x axis: ``"n"`` (process count), ``"message_bytes"``
        (bytes per message, derived as ``total_bytes / messages``) or any
        other column.
    metric : str
        The metric; its ``<metric>_norm`` column is plotted.
    methods : sequence of str, optional
        Methods to draw (default: all in ``results``).
    percent : bool
        Plot the improvement over the baseline, ``100 * (1 - ratio)`` %,
        instead of the ratio.
    agg : {"gmean", "mean", "median", "min", "max"}
        How runs at the same x combine.
    logx : bool
        Logarithmic x axis (sizes usually grow geometrically).
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
        One line per method, plus the dashed baseline line.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import topomap.plot as tp
    >>> from topomap.experiments import run_grid
    >>> df = run_grid(["stencil2d:4x4", "stencil2d:8x8"], ["torus:4x4/4"], ["block", "random"], progress=False)
    >>> len(tp.improvement_lines(df, x="n", metric="hop_bytes").lines)
    3
    """
    df = _x_column(results_frame(results), x)
    col = metric_column(df, metric, True)
    ax = axes(ax)
    for j, method in enumerate(method_order(df, methods)):
        xs, ys = _series(df, method, x, col, agg)
        ax.plot(xs, 100 * (1 - ys) if percent else ys, marker="o", label=method, color=f"C{j % 10}")
    ax.axhline(0.0 if percent else 1.0, color="0.3", linestyle="--", linewidth=0.8)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel({"n": "processes", "message_bytes": "bytes per message"}.get(x, x))
    ax.set_ylabel(f"{label(metric)} improvement over the baseline (%)" if percent
                  else f"{label(metric)} / baseline")
    ax.legend(fontsize="small")
    if title is not None:
        ax.set_title(title)
    return ax


def mapping_time(results: Any, x: str = "n", methods: Sequence[str] | None = None, *, agg: str = "median",
                 reference: Sequence[float] = (1.0,), ax: Any = None, title: str | None = None) -> Any:
    """Mapping time against problem size on log-log axes, one line per method.

    Parameters
    ----------
    results : DataFrame or list of dicts
        Runs with a ``seconds`` column (run_grid or compare output).
    x : str
        Size column (default ``"n"``, the process count).
    methods : sequence of str, optional
        Methods to draw (default: all in ``results``).
    agg : {"median", "gmean", "mean", "min", "max"}
        How runs at the same size combine (median resists timing noise).
    reference : sequence of float
        Exponents k of dashed ``x**k`` guide lines through the first point of
        the slowest method (default: linear); empty for none.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
        One line per method, then one per reference exponent.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import topomap.plot as tp
    >>> from topomap.experiments import run_grid
    >>> df = run_grid(["stencil2d:4x4", "stencil2d:8x8"], ["torus:4x4/4"], ["block", "random"], progress=False)
    >>> ax = tp.mapping_time(df)
    >>> ax.get_xscale(), ax.get_yscale(), len(ax.lines)
    ('log', 'log', 3)
    """
    df = _x_column(results_frame(results), x)
    metric_column(df, "seconds", False)
    ax = axes(ax)
    series = []
    for j, method in enumerate(method_order(df, methods)):
        xs, ys = _series(df, method, x, "seconds", agg)
        ax.plot(xs, ys, marker="o", label=method, color=f"C{j % 10}")
        series.append((xs, ys))
    slowest = max(series, key=lambda s: np.nanmax(s[1]) if s[1].size else -np.inf)
    if slowest[0].size:
        x0, y0 = slowest[0][0], slowest[1][0]
        span = np.array([slowest[0].min(), slowest[0].max()])
        for k in reference:
            ax.plot(span, y0 * (span / x0) ** k, linestyle="--", color="0.5", linewidth=0.8,
                    label=f"∝ {x}^{k:g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel({"n": "processes"}.get(x, x))
    ax.set_ylabel("mapping time (s)")
    ax.legend(fontsize="small")
    if title is not None:
        ax.set_title(title)
    return ax
