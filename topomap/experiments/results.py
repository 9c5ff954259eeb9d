"""Result tables of experiment grids: columns, normalisation, CSV/Parquet files, summaries."""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from ..compare import NORMALIZED
from ..errors import MissingDependencyError
from ..io.atomic import atomic_write

__all__ = ["KEY", "CELL", "STRING_COLUMNS", "AGGS", "normalize", "save", "load", "summarize", "aggregate", "pandas",
           "file_format"]

#: Columns that identify one run; resuming skips a run whose key is in the file.
KEY = ("pattern", "machine", "allocation", "method", "options", "seed", "capacity", "weights")

#: Columns that identify the baseline run a row is normalised by (the key without the method).
CELL = ("pattern", "machine", "allocation", "seed", "capacity", "weights")

#: Text columns (read back as strings, never as numbers or NaN).
STRING_COLUMNS = ("pattern", "machine", "allocation", "method", "options", "weights", "method_name",
                  "method_options", "status", "error", "pattern_digest", "machine_spec", "machine_digest",
                  "topomap_version", "numpy_version", "python_version", "timestamp")

_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
#: Ways to combine the runs of one group; ``gmean`` (geometric mean) suits ratios.
AGGS = ("gmean", "mean", "median", "min", "max")


def pandas() -> Any:
    """Import pandas or say which extra brings it."""
    try:
        import pandas as pd
    except ImportError:
        raise MissingDependencyError("experiment grids return pandas DataFrames: "
                                     "pip install 'topomap-hpc[experiments]' (or pandas)") from None
    return pd


def _ratio(value: np.ndarray, base: np.ndarray) -> np.ndarray:
    # compare()'s rule: 0/0 is 1 (both placements equally good), x/0 is inf
    with np.errstate(divide="ignore", invalid="ignore"):
        out = value / base
    out = np.where((base == 0) & (value == 0), 1.0, out)
    return np.where((base == 0) & (value > 0), np.inf, out)


def normalize(df: Any, baseline: str) -> Any:
    """Add ``<metric>_norm`` columns: each metric over the baseline run of the same cell.

    The cell is pattern, machine, allocation, seed, capacity and weights
    (:data:`CELL`); ``baseline`` is the baseline's ``method`` label.  Ratios
    follow :func:`topomap.compare`: 0/0 is 1, x/0 is inf; a row whose
    baseline failed or is missing gets NaN.

    Examples
    --------
    >>> import pandas as pd
    >>> from topomap.experiments import normalize
    >>> cell = dict(pattern="p", machine="m", allocation="contiguous", seed=0, capacity=1, weights="1,1,1,1",
    ...             status="ok")
    >>> df = pd.DataFrame([dict(cell, method="block", hop_bytes=4.0), dict(cell, method="x", hop_bytes=3.0)])
    >>> normalize(df, "block")["hop_bytes_norm"].tolist()
    [1.0, 0.75]
    """
    pd = pandas()
    out = df.copy()
    metrics = [m for m in (*NORMALIZED, "predicted_time") if m in out.columns]
    for m in metrics:
        out[f"{m}_norm"] = np.nan
    if out.empty or not metrics:
        return out
    ok = out["status"] == "ok"
    base = out.loc[ok & (out["method"] == baseline), [*CELL, *metrics]].drop_duplicates(list(CELL), keep="last")
    joined = out[list(CELL)].merge(base, on=list(CELL), how="left")
    for m in metrics:
        value = pd.to_numeric(out[m], errors="coerce").to_numpy(dtype=float)
        ratio = _ratio(value, joined[m].to_numpy(dtype=float))
        out[f"{m}_norm"] = np.where(ok.to_numpy(), ratio, np.nan)
    return out


def file_format(path: str) -> str:
    """``"csv"`` or ``"parquet"`` from the suffix; a Parquet file without pyarrow is an error."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in _SUFFIXES:
        raise ValueError(f"{path}: results files are .csv, .parquet or .pq, not {suffix or 'no suffix'!r}")
    fmt = _SUFFIXES[suffix]
    if fmt == "parquet":
        import importlib.util
        if importlib.util.find_spec("pyarrow") is None:
            raise MissingDependencyError(f"{path}: Parquet files need pyarrow (pip install pyarrow); "
                                         "use a .csv file otherwise")
    return fmt


def save(df: Any, path: "str | os.PathLike[str]") -> None:
    """Write a results table to ``.csv`` or ``.parquet``/``.pq`` (Parquet needs pyarrow).

    The file is replaced atomically: an interrupted save leaves the previous
    file intact.

    Examples
    --------
    >>> import os, tempfile, pandas as pd
    >>> from topomap.experiments import save, load
    >>> path = os.path.join(tempfile.mkdtemp(), "r.csv")
    >>> save(pd.DataFrame({"pattern": ["1"], "hop_bytes": [2.5], "error": [""]}), path)
    >>> load(path).iloc[0].to_dict()
    {'pattern': '1', 'hop_bytes': 2.5, 'error': ''}
    """
    path = os.fspath(path)
    fmt = file_format(path)
    with atomic_write(path, "w" if fmt == "csv" else "wb", newline="") as fh:
        if fmt == "csv":
            df.to_csv(fh, index=False)
        else:
            df.to_parquet(fh, index=False)


def load(path: "str | os.PathLike[str]") -> Any:
    """Read a results table written by :func:`save` (or by ``run_grid(out=...)``).

    Text columns (:data:`STRING_COLUMNS`) stay strings, so a pattern labelled
    ``"1"`` or ``"NA"`` and an empty ``error`` read back as written.
    """
    pd = pandas()
    path = os.fspath(path)
    if file_format(path) == "parquet":
        return pd.read_parquet(path)
    header = pd.read_csv(path, nrows=0).columns
    text = [c for c in header if c in STRING_COLUMNS]
    numeric = [c for c in header if c not in STRING_COLUMNS]
    return pd.read_csv(path, dtype={c: str for c in text}, keep_default_na=False,
                       na_values={c: ["", "nan", "NaN"] for c in numeric})


def aggregate(values: Any, agg: str) -> float:
    """Combine a column's non-NaN values: ``gmean``, ``mean``, ``median``, ``min`` or ``max`` (NaN when none)."""
    if agg not in AGGS:
        raise ValueError(f"agg must be one of {', '.join(AGGS)}, got {agg!r}")
    v = values.to_numpy(dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return float("nan")
    if v.size == 1:  # exp(log(x)) is not always x
        return float(v[0])
    if agg == "gmean":
        with np.errstate(divide="ignore"):
            return float(np.exp(np.mean(np.log(v))))
    return float(getattr(np, agg)(v))


def summarize(df: Any, metrics: Sequence[str] | None = None, by: "str | Sequence[str]" = "method",
              agg: str = "gmean") -> Any:
    """One row per ``by`` group: the aggregated metrics of the successful runs,
    the number of runs and of failed runs.

    Parameters
    ----------
    df : pandas.DataFrame
        A results table from :func:`run_grid` or :func:`load`.
    metrics : sequence of str, optional
        Columns to aggregate (default: every ``<metric>_norm`` column present
        and the mapping time ``seconds``).
    by : str or sequence of str
        Grouping columns, in order of first appearance.
    agg : {"gmean", "mean", "median", "min", "max"}
        ``gmean`` (geometric mean) is the mean that suits ratios.

    Examples
    --------
    >>> import pandas as pd
    >>> from topomap.experiments import summarize
    >>> df = pd.DataFrame({"method": ["a", "a"], "status": ["ok", "ok"], "hop_bytes_norm": [0.5, 2.0]})
    >>> float(summarize(df)["hop_bytes_norm"].iloc[0])
    1.0
    """
    pd = pandas()
    if agg not in AGGS:
        raise ValueError(f"agg must be one of {', '.join(AGGS)}, got {agg!r}")
    by = [by] if isinstance(by, str) else list(by)
    if metrics is None:
        metrics = [c for c in df.columns if c.endswith("_norm")] + (["seconds"] if "seconds" in df.columns else [])
    missing = [c for c in [*by, *metrics] if c not in df.columns]
    if missing:
        raise ValueError(f"the results have no column {missing[0]!r}")
    rows = []
    for key, group in df.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        ok = group[group["status"] == "ok"] if "status" in group.columns else group
        row = dict(zip(by, key))
        row.update({m: aggregate(ok[m], agg) for m in metrics})
        row.update(runs=len(group), errors=len(group) - len(ok))
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, *metrics, "runs", "errors"]).set_index(by)
