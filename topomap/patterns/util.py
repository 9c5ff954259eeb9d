"""Functions over patterns: restrict, scale, add, symmetrize, prune, time windows, summaries.

Every function returns a new :class:`~topomap.Pattern` (patterns are
immutable) whose provenance records the operation.  Message counts
(``msgs``) follow the bytes: kept by restriction, pruning and addition
(when every operand has them), summed by symmetrization, unchanged by
scaling (scaling changes volumes, not how many messages there are).

Timestamps.  A pattern has no time; a trace does.  Timed traffic is carried
as *events*: a NumPy structured array of dtype :data:`EVENT_DTYPE`
(``t`` float64 seconds, ``src``/``dst`` int32 ranks, ``bytes`` float64),
one row per message, built with :func:`events`.  Trace readers (OTF2, ...)
produce it; :func:`time_window` turns the events of ``[start, stop)`` into a
pattern with one message per event.

Pruning follows APHiD (notes 004 §2.4): drop every edge whose weight is
below ``fraction`` x the largest edge weight (default 5 %), applied once to
the pattern as given (directed weights); symmetrize first to prune
undirected weights, the order APHiD's partitioner would see.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..errors import PatternError
from ..pattern import Pattern

__all__ = ["EVENT_DTYPE", "events", "time_window", "restrict", "scale", "add", "symmetrize", "prune",
           "PatternSummary", "summary"]

EVENT_DTYPE = np.dtype([("t", np.float64), ("src", np.int32), ("dst", np.int32), ("bytes", np.float64)])


def _edges(p: Pattern) -> tuple[np.ndarray, np.ndarray]:
    return p.senders().astype(np.int64), p.indices.astype(np.int64)


def _check_pattern(p: Any, what: str = "pattern") -> Pattern:
    if not isinstance(p, Pattern):
        raise TypeError(f"{what} must be a topomap.Pattern, got {type(p).__name__}")
    return p


# ---------------------------------------------------------------- events
def events(t: Any, src: Any, dst: Any, bytes: Any) -> np.ndarray:
    """Timed messages as an :data:`EVENT_DTYPE` array (validated, sorted by time, stable).

    Parameters
    ----------
    t : array_like of float
        Time of each message (seconds, any origin); finite.
    src, dst : array_like of int
        Sender and receiver rank of each message (non-negative).
    bytes : array_like of float or scalar
        Size of each message; finite and non-negative.

    Examples
    --------
    >>> from topomap.patterns.util import events
    >>> ev = events([0.5, 0.1], [0, 1], [1, 0], 8)
    >>> ev["t"].tolist(), ev["src"].tolist()
    ([0.1, 0.5], [1, 0])
    """
    tt = np.asarray(t, dtype=np.float64)
    if tt.ndim != 1:
        raise PatternError(f"t must be one-dimensional, got shape {tt.shape}")
    out = np.zeros(tt.size, dtype=EVENT_DTYPE)
    for name, vals in (("src", src), ("dst", dst)):
        arr = np.asarray(vals)
        if arr.shape != tt.shape or (arr.size and arr.dtype.kind not in "iu"):
            raise PatternError(f"{name} must be {tt.size} integers, got shape {arr.shape} dtype {arr.dtype}")
        if arr.size and (arr.min() < 0 or arr.max() >= 2**31):
            i = int(np.flatnonzero((arr < 0) | (arr >= 2**31))[0])
            raise PatternError(f"{name}[{i}] = {arr[i]} is not a rank")
        out[name] = arr
    b = np.broadcast_to(np.asarray(bytes, dtype=np.float64), tt.shape)
    bad = ~np.isfinite(tt) | ~np.isfinite(b) | (b < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise PatternError(f"event {i}: t = {tt[i]!r}, bytes = {b[i]!r} must be finite (bytes >= 0)")
    out["t"], out["bytes"] = tt, b
    return out[np.argsort(tt, kind="stable")]


def time_window(ev: np.ndarray, n: int, start: float = -np.inf, stop: float = np.inf) -> Pattern:
    """Pattern of the events with ``start <= t < stop`` (one message per event).

    Examples
    --------
    >>> from topomap.patterns.util import events, time_window
    >>> ev = events([0.0, 1.0, 2.0], [0, 0, 1], [1, 1, 0], [4, 5, 6])
    >>> time_window(ev, 2, 0.5, 2.5).to_dense().tolist()
    [[0.0, 5.0], [6.0, 0.0]]
    """
    if not isinstance(ev, np.ndarray) or ev.dtype != EVENT_DTYPE:
        raise TypeError("events must be an EVENT_DTYPE array: build it with topomap.patterns.util.events")
    if not start <= stop:
        raise PatternError(f"empty or reversed window [{start}, {stop})")
    sel = ev[(ev["t"] >= start) & (ev["t"] < stop)]
    return Pattern.from_edges(sel["src"], sel["dst"], sel["bytes"], np.ones(sel.size), n=n,
                              provenance={"source": "events", "window": [float(start), float(stop)],
                                          "events": int(sel.size)})


# ---------------------------------------------------------------- transforms
def restrict(pattern: Pattern, processes: Any) -> tuple[Pattern, np.ndarray]:
    """Traffic among a subset of processes, renumbered ``0..k-1`` in the given order.

    For a communicator, pass its members' ranks in communicator-rank order:
    the result is the pattern in communicator ranks.

    Parameters
    ----------
    pattern : Pattern
    processes : array_like of int, or boolean mask of length ``n``
        The processes kept; new rank ``i`` is old rank ``processes[i]``.

    Returns
    -------
    (Pattern, numpy.ndarray)
        The restricted pattern and ``old_of_new`` (int32, length ``k``).
        Bytes to or from dropped processes are recorded in
        ``provenance["dropped_outside_bytes"]``.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.patterns.util import restrict
    >>> pat = tm.Pattern.from_edges([0, 1, 2, 3], [2, 2, 0, 0], [1.0, 2.0, 3.0, 4.0])
    >>> sub, old = restrict(pat, [2, 0])
    >>> sub.to_dense().tolist(), old.tolist(), sub.provenance["dropped_outside_bytes"]
    ([[0.0, 3.0], [1.0, 0.0]], [2, 0], 6.0)
    """
    p = _check_pattern(pattern)
    sel = np.asarray(processes)
    if sel.dtype == bool:
        if sel.shape != (p.n,):
            raise PatternError(f"a mask must have {p.n} entries, got shape {sel.shape}")
        sel = np.flatnonzero(sel)
    if sel.ndim != 1 or (sel.size and sel.dtype.kind not in "iu"):
        raise PatternError(f"processes must be a list of ranks, got shape {sel.shape} dtype {sel.dtype}")
    if sel.size == 0:
        raise PatternError("processes is empty: a pattern needs at least one process")
    sel = sel.astype(np.int64)
    if sel.min() < 0 or sel.max() >= p.n:
        i = int(np.flatnonzero((sel < 0) | (sel >= p.n))[0])
        raise PatternError(f"processes[{i}] = {sel[i]} is out of range [0, {p.n})")
    if np.unique(sel).size != sel.size:
        raise PatternError("processes lists a rank twice")
    new_of_old = np.full(p.n, -1, dtype=np.int64)
    new_of_old[sel] = np.arange(sel.size)
    s, d = _edges(p)
    keep = (new_of_old[s] >= 0) & (new_of_old[d] >= 0)
    prov = {"source": "restrict", "of": dict(p.provenance), "processes": int(sel.size),
            "dropped_outside_bytes": float(p.bytes[~keep].sum())}
    sub = Pattern.from_edges(new_of_old[s[keep]], new_of_old[d[keep]], p.bytes[keep],
                             None if p.msgs is None else p.msgs[keep], n=int(sel.size), provenance=prov)
    return sub, sel.astype(np.int32)


def scale(pattern: Pattern, factor: float) -> Pattern:
    """Bytes multiplied by ``factor`` (> 0); message counts unchanged.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.patterns.util import scale
    >>> scale(tm.Pattern.from_edges([0], [1], [3.0]), 2.5).total_bytes
    7.5
    """
    p = _check_pattern(pattern)
    if isinstance(factor, bool) or not isinstance(factor, (int, float, np.integer, np.floating)) \
            or not (np.isfinite(factor) and factor > 0):
        raise PatternError(f"factor = {factor!r} must be a positive finite number")
    with np.errstate(over="ignore"):
        byts = p.bytes * float(factor)
    over = np.flatnonzero(~np.isfinite(byts))
    if over.size:
        k = int(over[0])
        src = int(np.searchsorted(p.indptr, k, side="right") - 1)
        raise PatternError(f"scaling by {factor:g} overflows the bytes of {src} -> {int(p.indices[k])} "
                           f"({p.bytes[k]:g}) past the largest double")
    return Pattern(p.n, p.indptr, p.indices, byts, p.msgs,
                   {"source": "scale", "of": dict(p.provenance), "factor": float(factor),
                    "dropped_self_bytes": float(p.provenance.get("dropped_self_bytes", 0.0)) * float(factor)})


def add(*patterns: Pattern) -> Pattern:
    """Sum of patterns over the same processes (bytes; message counts when all have them).

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.patterns.util import add
    >>> a = tm.Pattern.from_edges([0], [1], [1.0], n=3)
    >>> add(a, a, tm.Pattern.from_edges([2], [1], [4.0], n=3)).to_dense().tolist()
    [[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [0.0, 4.0, 0.0]]
    """
    if not patterns:
        raise PatternError("add needs at least one pattern")
    ps = [_check_pattern(p, f"patterns[{i}]") for i, p in enumerate(patterns)]
    n = ps[0].n
    for i, p in enumerate(ps):
        if p.n != n:
            raise PatternError(f"patterns[{i}] has {p.n} processes, patterns[0] has {n}")
    edges = [_edges(p) for p in ps]
    msgs = None if any(p.msgs is None for p in ps) else np.concatenate([p.msgs for p in ps])
    return Pattern.from_edges(np.concatenate([e[0] for e in edges]), np.concatenate([e[1] for e in edges]),
                              np.concatenate([p.bytes for p in ps]), msgs, n=n,
                              provenance={"source": "add", "of": [dict(p.provenance) for p in ps],
                                          "dropped_self_bytes": sum(float(p.provenance.get("dropped_self_bytes", 0))
                                                                    for p in ps)})


def symmetrize(pattern: Pattern, how: str = "sum") -> Pattern:
    """Undirected view: ``"sum"`` ``C + C^T``, ``"max"`` ``max(C, C^T)``, ``"mean"`` ``(C + C^T) / 2``.

    ``"mean"`` is what Open MPI's ``profile2mat.pl`` writes ("symmetrises and
    halves"); ``"sum"`` is the pair weight METIS-based mappers use.
    Message counts are combined the same way.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.patterns.util import symmetrize
    >>> pat = tm.Pattern.from_edges([0, 1], [1, 0], [4.0, 2.0])
    >>> [symmetrize(pat, h).to_dense()[0, 1].item() for h in ("sum", "max", "mean")]
    [6.0, 4.0, 3.0]
    """
    p = _check_pattern(pattern)
    if how not in ("sum", "max", "mean"):
        raise PatternError(f"how = {how!r} must be 'sum', 'max' or 'mean'")
    s, d = _edges(p)
    src, dst = np.concatenate([s, d]), np.concatenate([d, s])
    w = np.concatenate([p.bytes, p.bytes])
    m = None if p.msgs is None else np.concatenate([p.msgs, p.msgs])
    prov = {"source": "symmetrize", "how": how, "of": dict(p.provenance)}
    if how != "max":
        out = Pattern.from_edges(src, dst, w, m, n=p.n, provenance=prov)
        return out if how == "sum" else _scale_all(out, 0.5, prov)
    key = src * p.n + dst
    order = np.lexsort((-w, key))          # per pair, the heavier direction first
    first = np.ones(order.size, dtype=bool)
    first[1:] = key[order][1:] != key[order][:-1]
    pick = order[first]
    return Pattern.from_edges(src[pick], dst[pick], w[pick], None if m is None else m[pick], n=p.n, provenance=prov)


def _scale_all(p: Pattern, factor: float, provenance: dict) -> Pattern:
    """``p`` with bytes and message counts multiplied by ``factor``, given provenance."""
    return Pattern(p.n, p.indptr, p.indices, p.bytes * factor, None if p.msgs is None else p.msgs * factor,
                   provenance)


def prune(pattern: Pattern, fraction: float = 0.05) -> Pattern:
    """Drop the edges lighter than ``fraction`` of the heaviest (APHiD, notes 004 §2.4).

    An edge ``p -> q`` is kept iff ``bytes[p, q] >= fraction * max(bytes)``.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.patterns.util import prune
    >>> pat = tm.Pattern.from_edges([0, 0, 1], [1, 2, 2], [100.0, 5.0, 4.99])
    >>> out = prune(pat)                      # threshold 5 % of 100 = 5: 5.0 stays, 4.99 goes
    >>> out.nnz, out.provenance["pruned_bytes"]
    (2, 4.99)
    """
    p = _check_pattern(pattern)
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float, np.integer, np.floating)) \
            or not 0 <= fraction <= 1:
        raise PatternError(f"fraction = {fraction!r} must lie in [0, 1]")
    threshold = float(fraction) * float(p.bytes.max()) if p.nnz else 0.0
    keep = p.bytes >= threshold
    s, d = _edges(p)
    prov = {"source": "prune", "of": dict(p.provenance), "fraction": float(fraction), "threshold": threshold,
            "pruned_bytes": float(p.bytes[~keep].sum()), "pruned_edges": int((~keep).sum()),
            "dropped_self_bytes": float(p.provenance.get("dropped_self_bytes", 0.0))}
    return Pattern.from_edges(s[keep], d[keep], p.bytes[keep], None if p.msgs is None else p.msgs[keep],
                              n=p.n, provenance=prov)


# ---------------------------------------------------------------- statistics
@dataclass(frozen=True)
class PatternSummary:
    """Statistics of a pattern (see :func:`summary`)."""

    n: int
    nnz: int
    total_bytes: float
    total_msgs: float | None
    density: float
    max_edge_bytes: float
    out_degree_min: int
    out_degree_mean: float
    out_degree_max: int
    in_degree_min: int
    in_degree_max: int
    isolated: int
    degree_histogram: dict[int, int]
    structurally_symmetric: bool
    symmetric: bool
    asymmetry: float
    dropped_self_bytes: float

    def to_dict(self) -> dict:
        """Plain dict (degree histogram keys as strings, JSON-ready)."""
        out = asdict(self)
        out["degree_histogram"] = {str(k): v for k, v in self.degree_histogram.items()}
        return out


def summary(pattern: Pattern) -> PatternSummary:
    """Size, volume, degree distribution and symmetry of a pattern.

    ``degree_histogram`` maps an out-degree to the number of processes with
    it.  ``asymmetry`` is ``sum |C - C^T| / sum (C + C^T)``: 0 for a
    symmetric pattern, 1 when no pair talks both ways.  ``isolated`` counts
    processes that neither send nor receive.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.patterns.util import summary
    >>> s = summary(tm.Pattern.from_edges([0, 1, 1], [1, 0, 2], [2.0, 2.0, 1.0], n=4))
    >>> s.nnz, s.degree_histogram, s.structurally_symmetric, s.asymmetry, s.isolated
    (3, {0: 2, 1: 1, 2: 1}, False, 0.2, 1)
    """
    p = _check_pattern(pattern)
    out_deg = np.diff(p.indptr)
    in_deg = np.bincount(p.indices, minlength=p.n)
    s, d = _edges(p)
    fwd = s * p.n + d
    rev = d * p.n + s
    order = np.argsort(fwd)
    pos = np.searchsorted(fwd[order], rev)
    pos_c = np.minimum(pos, max(p.nnz - 1, 0))
    has_rev = (pos < p.nnz) & (fwd[order][pos_c] == rev) if p.nnz else np.zeros(0, dtype=bool)
    rev_bytes = np.where(has_rev, p.bytes[order][pos_c] if p.nnz else 0.0, 0.0)
    diff = float(np.abs(p.bytes - rev_bytes).sum() + p.bytes[~has_rev].sum()) if p.nnz else 0.0
    total = float(p.bytes.sum())
    degs, counts = np.unique(out_deg, return_counts=True)
    return PatternSummary(
        n=p.n, nnz=p.nnz, total_bytes=total, total_msgs=None if p.msgs is None else float(p.msgs.sum()),
        density=p.nnz / (p.n * (p.n - 1)) if p.n > 1 else 0.0,
        max_edge_bytes=float(p.bytes.max()) if p.nnz else 0.0,
        out_degree_min=int(out_deg.min()), out_degree_mean=float(out_deg.mean()), out_degree_max=int(out_deg.max()),
        in_degree_min=int(in_deg.min()), in_degree_max=int(in_deg.max()),
        isolated=int(((out_deg == 0) & (in_deg == 0)).sum()),
        degree_histogram={int(k): int(v) for k, v in zip(degs, counts)},
        structurally_symmetric=bool(has_rev.all()),
        symmetric=bool(has_rev.all() and np.array_equal(rev_bytes, p.bytes)),
        asymmetry=diff / (2 * total) if total else 0.0,
        dropped_self_bytes=float(p.provenance.get("dropped_self_bytes", 0.0)),
    )
