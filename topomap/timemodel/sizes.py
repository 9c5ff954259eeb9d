"""Predicted time of several placements over a range of message sizes.

The seed theses' figure type: the improvement of a mapping over the default
one against message size.  Small messages are latency-bound, where a mapping
gains little; as messages grow, congested links start to dominate and a
mapping that spreads or shortens the traffic pulls ahead: the crossover
:func:`crossover` finds.
"""

from __future__ import annotations

from typing import Any, Mapping as MappingABC, Sequence

import numpy as np

from ..errors import TimeModelError
from ..machine import Allocation, Machine
from .model import TimeModel
from .predict import predict, stages_of

__all__ = ["sweep", "crossover", "DEFAULT_SIZES"]

#: 8 B to 4 MB, every power of two.
DEFAULT_SIZES = tuple(2 ** k for k in range(3, 23))


def _mean_message(work: Any) -> float:
    stages = stages_of(work)
    total = sum(st.total_bytes for st in stages)
    msgs = sum(float(st.msgs.sum()) if st.msgs is not None else st.nnz for st in stages)
    if total <= 0 or msgs <= 0:
        raise TimeModelError("the work has no bytes to scale: a size sweep needs messages of positive size")
    return total / msgs


def sweep(work: Any, where: "Allocation | Machine | str", mappings: "MappingABC[str, Any]",
          sizes: Sequence[float] = DEFAULT_SIZES, model: TimeModel | None = None, *, baseline: str | None = None,
          method: str = "flow", sync: str = "barrier", iterations: int = 1) -> Any:
    """Predicted time of every placement at every message size.

    Each size ``s`` scales the work's bytes so that its average message
    (total bytes / total messages) is ``s`` bytes.

    Parameters
    ----------
    work : Pattern, Schedule or sequence of Pattern
        The communication (its relative volumes are kept).
    where : Allocation, Machine or spec string
    mappings : dict of str to Mapping or PE array
        The placements to compare, by label.
    sizes : sequence of float
        Average message sizes in bytes (default 8 B ... 4 MB).
    model : TimeModel, optional
    baseline : str, optional
        Label of the placement the others are divided by (default: the first).
    method, sync, iterations
        As for :func:`~topomap.timemodel.predict`.

    Returns
    -------
    pandas.DataFrame or list of dict
        One row per (placement, size): ``method`` (the label),
        ``message_bytes``, ``predicted_time`` (seconds) and
        ``predicted_time_norm`` (divided by the baseline's at the same size),
        so that :func:`topomap.plot.improvement_lines` draws it with
        ``x="message_bytes", metric="predicted_time"``.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.timemodel import sweep
    >>> alloc = tm.machine("torus:4x4/4").allocate(64)
    >>> pat = tm.generators.stencil_2d((8, 8))
    >>> maps = {m: tm.map(pat, alloc, method=m) for m in ("block", "greedy")}
    >>> rows = sweep(pat, alloc, maps, sizes=[8, 1 << 20])
    >>> r = {(x["method"], x["message_bytes"]): x["predicted_time_norm"]
    ...      for x in (rows.to_dict("records") if hasattr(rows, "to_dict") else rows)}
    >>> round(r["greedy", 8], 3), round(r["greedy", 1 << 20], 3)   # latency-bound, then congestion-bound
    (0.844, 0.118)
    """
    if not isinstance(mappings, MappingABC) or not mappings:
        raise TimeModelError("mappings must be a non-empty dict of label to mapping")
    labels = list(mappings)
    base = labels[0] if baseline is None else baseline
    if base not in mappings:
        raise TimeModelError(f"baseline {base!r} is not one of the mappings {labels}")
    sizes = np.asarray(sizes, dtype=np.float64)
    if sizes.ndim != 1 or not sizes.size or not np.isfinite(sizes).all() or (sizes <= 0).any():
        raise TimeModelError(f"sizes must be positive finite numbers, got {sizes!r}")
    unit = _mean_message(work)
    rows = []
    for size in sizes:
        times = {label: predict(work, where, mp, model, sync=sync, iterations=iterations, method=method,
                                bytes_scale=float(size) / unit).makespan for label, mp in mappings.items()}
        for label in labels:
            rows.append({"method": label, "message_bytes": float(size), "predicted_time": times[label],
                         "predicted_time_norm": times[label] / times[base] if times[base] else 1.0})
    try:
        import pandas as pd
    except ImportError:
        return rows
    return pd.DataFrame(rows)


def crossover(rows: Any, label: str, threshold: float = 0.95) -> float | None:
    """Smallest message size from which ``label`` stays below ``threshold``
    times the baseline's predicted time (None if it never does).

    Examples
    --------
    >>> crossover([{"method": "x", "message_bytes": 8, "predicted_time_norm": 1.0},
    ...            {"method": "x", "message_bytes": 64, "predicted_time_norm": 0.8}], "x")
    64.0
    """
    recs = rows.to_dict("records") if hasattr(rows, "to_dict") else list(rows)
    mine = sorted((r["message_bytes"], r["predicted_time_norm"]) for r in recs if r["method"] == label)
    if not mine:
        raise TimeModelError(f"no rows for {label!r}")
    found = None
    for size, ratio in reversed(mine):
        if ratio >= threshold:
            break
        found = float(size)
    return found
