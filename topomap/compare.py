"""Compare several mappers on one pattern and allocation."""

from __future__ import annotations

from typing import Any, Sequence

from .errors import MappingError
from .machine import Allocation
from .metrics import as_pattern, evaluate
from .registry import map as run_mapper
from .registry import methods as registered

__all__ = ["compare", "NORMALIZED", "DEFAULT_METHODS"]

# What ``methods=None`` runs: the mappers that work on every machine kind and
# finish in seconds at thousands of processes.  The others are left out on
# purpose: GRASP, EMAHD, max-contention and Kumar's hybrid grow quadratically
# or worse with the nodes; aphid and hierarchy need hierarchical machines;
# scotch needs Debian's scotch.
DEFAULT_METHODS = ("block", "cyclic", "random", "greedy", "recursive", "rcm", "mahd", "ptram")

NORMALIZED = ("hop_bytes", "dilation", "max_dilation", "qap", "max_congestion", "nz_congestion_avg",
              "nz_congestion_var", "hybrid", "edge_cut")


def compare(pattern: Any, allocation: Allocation, methods: Sequence[str] | None = None,
            normalize: str | None = "block", seed: int = 0, capacity: int = 1,
            weights: Sequence[float] = (1.0, 1.0, 1.0, 1.0)) -> Any:
    """Run several mappers and tabulate every metric, one row per method.

    ``methods=None`` runs :data:`DEFAULT_METHODS`.  With
    ``normalize="block"`` each metric in :data:`NORMALIZED` also gets a
    ``<metric>_norm`` column: its value divided by the named method's
    (the thesis's "normalised to the default mapping"; 1.0 when both are 0).

    Returns a pandas DataFrame when pandas is installed, else a list of dicts.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("torus:4x4/4").allocate(64)
    >>> rows = tm.compare(tm.generators.stencil_2d((8, 8)), alloc, ["block", "random"])
    >>> float(rows["hop_bytes_norm"].iloc[0])
    1.0
    """
    pat = as_pattern(pattern)
    if isinstance(methods, str):
        methods = [methods]
    if methods is None:
        known = registered()
        methods = [m for m in DEFAULT_METHODS if m in known]
    names = list(methods)
    if normalize is not None and normalize not in names:
        names = [normalize, *names]
    if not names:
        raise MappingError("compare needs at least one method")
    rows = []
    for name in names:
        mp = run_mapper(pat, allocation, method=name, seed=seed, capacity=capacity)
        met = evaluate(pat, allocation, mp, weights=weights)
        rows.append({"method": name, "seconds": mp.seconds, **met.to_dict()})
    if normalize is not None:
        base = next((r for r in rows if r["method"] == normalize), None)
        if base is None:
            raise MappingError(f"normalize={normalize!r} names no method that ran")
        for r in rows:
            for k in NORMALIZED:
                b = base[k]
                r[f"{k}_norm"] = (r[k] / b) if b else (1.0 if r[k] == 0 else float("inf"))
    try:
        import pandas as pd
    except ImportError:
        return rows
    return pd.DataFrame(rows).set_index("method", drop=False)
