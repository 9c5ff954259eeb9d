"""What every plot module shares: the lazy matplotlib import, axes, result tables."""

from __future__ import annotations

from typing import Any, Sequence

from ..errors import MissingDependencyError

#: Short names of the metrics, as the thesis's figures label them.
METRIC_LABELS = {"hop_bytes": "HB", "max_congestion": "MC", "nz_congestion_avg": "NZCA",
                 "nz_congestion_var": "NZCV", "hybrid": "hybrid", "dilation": "dilation",
                 "avg_dilation": "avg dilation", "max_dilation": "max dilation", "qap": "J (QAP)",
                 "edge_cut": "edge cut", "seconds": "mapping time (s)"}


def pyplot() -> Any:
    """``matplotlib.pyplot``, or an error naming the extra that brings it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependencyError("topomap.plot needs matplotlib: pip install 'topomap-hpc[plot]'") from None
    return plt


def axes(ax: Any) -> Any:
    """``ax``, or the axes of a new figure."""
    if ax is not None:
        return ax
    _, ax = pyplot().subplots()
    return ax


def results_frame(results: Any) -> Any:
    """A results table (DataFrame or :func:`topomap.compare`'s list of dicts) as a
    DataFrame of its successful rows."""
    from ..experiments.results import pandas

    df = results if hasattr(results, "columns") else pandas().DataFrame(list(results))
    if "method" not in df.columns:
        raise ValueError("the results have no 'method' column (use run_grid or compare output)")
    if "status" in df.columns:
        df = df[df["status"] == "ok"]
    return df.reset_index(drop=True)


def metric_column(df: Any, metric: str, normalized: bool) -> str:
    """The column plotted for ``metric``: ``<metric>_norm`` when normalised."""
    col = f"{metric}_norm" if normalized and not metric.endswith("_norm") else metric
    if col not in df.columns:
        hint = " (normalised columns need a baseline)" if col.endswith("_norm") else ""
        raise ValueError(f"the results have no column {col!r}{hint}")
    return col


def method_order(df: Any, methods: Sequence[str] | None) -> list[str]:
    """``methods``, checked against the table, or the table's methods in order of appearance."""
    present = list(dict.fromkeys(df["method"]))
    if methods is None:
        return present
    missing = [m for m in methods if m not in present]
    if missing:
        raise ValueError(f"no successful run of method {missing[0]!r} in the results; "
                         f"methods there: {', '.join(present)}")
    return list(methods)


def label(metric: str) -> str:
    """A metric's short display name."""
    base = metric[:-5] if metric.endswith("_norm") else metric
    return METRIC_LABELS.get(base, base)
