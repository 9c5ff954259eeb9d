"""Compare several mappers on one pattern and allocation."""

from __future__ import annotations

import warnings
from typing import Any, Sequence

from .errors import MappingError, NotApplicable
from .machine import Allocation
from .metrics import as_pattern, evaluate
from .registry import map as run_mapper
from .registry import methods as registered
from .timemodel import TimeModel, as_time_model, predict

__all__ = ["compare", "compare_rows", "MethodsSkipped", "NORMALIZED", "DEFAULT_METHODS"]

# What ``methods=None`` tries: the mappers that finish in seconds at thousands of processes.
# Those that do not apply to the machine (hilbert off tori and meshes, hierarchy and aphid
# where the machine has no levels) are skipped and listed.  Left out on purpose: GRASP, EMAHD,
# max-contention and Kumar's hybrid grow quadratically or worse with the nodes; gge is
# Kumar's weaker baseline for MAHD; scotch runs an external program.
DEFAULT_METHODS = ("block", "cyclic", "random", "greedy", "recursive", "rcm", "mahd", "ptram", "hilbert",
                   "hierarchy", "aphid", "topdown")

NORMALIZED = ("hop_bytes", "dilation", "max_dilation", "qap", "max_congestion", "nz_congestion_avg",
              "nz_congestion_var", "hybrid", "edge_cut")


class MethodsSkipped(UserWarning):
    """:func:`compare` left out default methods that do not apply to the machine."""


def compare_rows(pattern: Any, allocation: Allocation, methods: Sequence[str] | None = None,
                 normalize: str | None = "block", seed: int = 0, capacity: "int | str" = 1,
                 weights: Sequence[float] = (1.0, 1.0, 1.0, 1.0), time: "bool | TimeModel" = False,
                 bytes_scale: float = 1.0) -> tuple[list[dict], dict[str, str]]:
    """The rows of :func:`compare` as dicts, and the skipped default methods with the reason
    (``{method: message}``; always empty when ``methods`` are named).

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("torus:4x4/4").allocate(64)
    >>> rows, skipped = compare_rows(tm.generators.stencil_2d((8, 8)), alloc)
    >>> [r["method"] for r in rows][:3], sorted(skipped)
    (['block', 'cyclic', 'random'], ['aphid', 'hierarchy'])
    """
    pat = as_pattern(pattern)
    if isinstance(methods, str):
        methods = [methods]
    default = methods is None
    names = [m for m in DEFAULT_METHODS if m in registered()] if default else list(methods)
    if normalize is not None and normalize not in names:
        names = [normalize, *names]
    if not names:
        raise MappingError("compare needs at least one method")
    model = as_time_model(time)
    rows, skipped = [], {}
    for name in names:
        try:
            mp = run_mapper(pat, allocation, method=name, seed=seed, capacity=capacity)
        except NotApplicable as exc:
            if not default or name == normalize:
                raise
            skipped[name] = str(exc)
            continue
        met = evaluate(pat, allocation, mp, weights=weights)
        row = {"method": name, "seconds": mp.seconds, **met.to_dict()}
        if model is not None:
            row["predicted_time"] = predict(pat, allocation, mp, model, bytes_scale=bytes_scale).makespan
        rows.append(row)
    if normalize is not None:
        base = next((r for r in rows if r["method"] == normalize), None)
        if base is None:
            raise MappingError(f"normalize={normalize!r} names no method that ran")
        for r in rows:
            for k in NORMALIZED + (("predicted_time",) if model is not None else ()):
                b = base[k]
                r[f"{k}_norm"] = (r[k] / b) if b else (1.0 if r[k] == 0 else float("inf"))
    return rows, skipped


def compare(pattern: Any, allocation: Allocation, methods: Sequence[str] | None = None,
            normalize: str | None = "block", seed: int = 0, capacity: "int | str" = 1,
            weights: Sequence[float] = (1.0, 1.0, 1.0, 1.0), time: "bool | TimeModel" = False,
            bytes_scale: float = 1.0) -> Any:
    """Run several mappers and tabulate every metric, one row per method.

    ``methods=None`` runs :data:`DEFAULT_METHODS`, skipping those that do
    not apply to the machine (:class:`~topomap.NotApplicable`): they are
    named in a :class:`MethodsSkipped` warning and, on the DataFrame, in
    ``attrs["skipped"]`` (``{method: reason}``).  Methods named explicitly
    must all run.  ``capacity`` may be ``"auto"`` (see :func:`topomap.map`).
    With ``normalize="block"`` each metric in :data:`NORMALIZED` also gets a
    ``<metric>_norm`` column: its value divided by the named method's
    (the thesis's "normalised to the default mapping"; 1.0 when both are 0).
    ``time=True`` (the default model) or a :class:`~topomap.timemodel.TimeModel`
    adds ``predicted_time``: the seconds :func:`topomap.timemodel.predict`
    gives one phase of the pattern (bytes times ``bytes_scale``), with
    max-min link sharing; normalised as the other metrics.

    Returns a pandas DataFrame when pandas is installed, else a list of dicts.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("torus:4x4/4").allocate(64)
    >>> rows = tm.compare(tm.generators.stencil_2d((8, 8)), alloc, ["block", "random"])
    >>> float(rows["hop_bytes_norm"].iloc[0])
    1.0
    >>> rows, _ = compare_rows(tm.generators.stencil_2d((8, 8)), alloc, ["block", "greedy"], time=True,
    ...                        bytes_scale=1e6)
    >>> [round(r["predicted_time_norm"], 3) for r in rows]
    [1.0, 0.118]
    """
    rows, skipped = compare_rows(pattern, allocation, methods, normalize, seed, capacity, weights, time,
                                 bytes_scale)
    if skipped:
        warnings.warn("compare skipped methods that do not apply here: "
                      + "; ".join(f"{k} ({v})" for k, v in skipped.items()), MethodsSkipped, stacklevel=2)
    try:
        import pandas as pd
    except ImportError:
        return rows
    df = pd.DataFrame(rows).set_index("method", drop=False)
    df.attrs["skipped"] = skipped
    return df
