"""Graph partitioning: ``k`` parts of bounded weight with a small edge cut.

The mappers group processes with it (PTRAM's step 1, processes into nodes:
Mirsadeghi 2017, ch. 3; LibTopoMap's multicore step; APHiD's recursive
bisection, §II-A).
Two partitioners sit behind one call:

* ``"builtin"``: topomap's multilevel k-way partitioner in C (heavy-edge
  matching, recursive greedy-growing bisection of the coarsest graph, FM
  refinement with a balancing pass; Karypis & Kumar 1998, Fiduccia &
  Mattheyses 1982).  The choices the papers leave open are listed in
  ``csrc/core/partition*.c``.
* ``"metis"``: METIS through ``pymetis`` (optional: ``pip install
  'topomap-hpc[metis]'``).

The graph
---------
A :class:`~topomap.Pattern` is directed traffic; the partitioner works on the
undirected graph ``C + C^T``: the weight of ``{p, q}`` is
``bytes[p, q] + bytes[q, p]``, so the edge cut is the traffic that crosses
parts, both directions counted, as :attr:`topomap.Metrics.edge_cut` counts
it.  With ``undirected=True`` the pattern must already be symmetric (each
edge stored both ways with the same weight, as in a METIS file or
``Pattern.from_networkx`` of an undirected graph) and each edge weighs
``bytes[p, q]`` once.

Balance
-------
``t_i`` is part ``i``'s target: the total vertex weight ``W`` split evenly,
or in proportion to ``targets``; with ``capacities`` it is ``W * cap_i /
sum(cap)``.  The builtin partitioner guarantees ``weight(i) <= L_i``:

* soft (no capacities): ``L_i = max((1 + imbalance) * t_i, R_i)`` with
  ``R_i = w * ceil(t_i / w)`` when every vertex weighs ``w``, else
  ``R_i = t_i + max vertex weight`` (the least a greedy pass can always
  reach: 10 unit vertices into 3 parts may be 4 + 3 + 3);
* hard (``capacities``): ``L_i = cap_i`` exactly.  With equal vertex weights
  this always succeeds when the capacities can hold the vertices; with
  unequal ones the call may fail (packing is NP-hard) with
  :class:`PartitionError` naming the part.

METIS balances by its own rule (``ufactor = 1000 * imbalance``); its answer
is returned as is, except that with ``capacities`` METIS runs with its
tightest balance (``ufactor = 1``) and its answer goes through topomap's
balancing and FM pass, which makes the capacities exact.  METIS needs integer
weights: integral weights that sum below 2^31 are passed unchanged, others
are scaled to sum to about 2^30 and rounded (edge weights to at least 1).
The reported cut and part weights are always recomputed from the real
weights.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from . import _core
from .errors import Cancelled, CoreInputError, MissingDependencyError, TopomapError
from .metrics import as_pattern
from .pattern import Pattern

__all__ = ["partition", "PartitionResult", "PartitionError", "PartitionCancelled"]

METHODS = ("auto", "builtin", "metis")


class PartitionError(TopomapError, ValueError):
    """A partitioning request is invalid (k, weights, capacities, graph)."""


#: The former name of :class:`topomap.Cancelled`, which every long call raises now.
PartitionCancelled = Cancelled


@dataclass(frozen=True, eq=False)
class PartitionResult:
    """A partition and how good it is.

    Attributes
    ----------
    parts : numpy.ndarray
        int32 part id in ``[0, k)`` of every vertex (read-only).
    edge_cut : float
        Sum of the weights of the edges between parts, each edge once.
    part_weights : numpy.ndarray
        Vertex weight of each part (length ``k``).
    bounds : numpy.ndarray
        The bound ``L_i`` of each part (see the module docstring).
    k : int
        Number of parts.
    method : str
        ``"builtin"`` or ``"metis"``.
    seed : int
        Seed it ran with.
    seconds : float
        Time of the partitioner itself (the graph already built).
    options : dict
        imbalance, recursive, hard (capacities given) and undirected.
    source : Pattern
        The pattern that was partitioned (for :meth:`quotient`).

    Examples
    --------
    >>> import topomap as tm
    >>> res = tm.partition(tm.generators.stencil_2d((4, 4)), 2, method="builtin")
    >>> res.edge_cut, res.part_weights.tolist()
    (8.0, [8.0, 8.0])
    """

    parts: np.ndarray = field(repr=False)
    edge_cut: float
    part_weights: np.ndarray
    bounds: np.ndarray = field(repr=False)
    k: int
    method: str
    seed: int = 0
    seconds: float = 0.0
    options: dict = field(default_factory=dict)
    source: Pattern | None = field(default=None, repr=False)

    @property
    def imbalance(self) -> float:
        """Largest part weight over the average part weight, minus 1."""
        mean = float(self.part_weights.sum()) / self.k
        return float(self.part_weights.max()) / mean - 1 if mean > 0 else 0.0

    def quotient(self) -> Pattern:
        """The pattern between parts: traffic inside a part disappears.

        Examples
        --------
        >>> import topomap as tm
        >>> pat = tm.generators.stencil_2d((4, 2))
        >>> q = tm.partition(pat, 2, method="builtin").quotient()
        >>> q.n, q.total_bytes
        (2, 4.0)
        """
        if self.source is None:
            raise PartitionError("this result does not know the pattern it came from")
        return self.source.quotient(self.parts, self.k)

    def to_dict(self) -> dict:
        """Plain values (lists, floats) for JSON."""
        return {"k": self.k, "method": self.method, "seed": self.seed, "seconds": self.seconds,
                "edge_cut": self.edge_cut, "imbalance": self.imbalance,
                "part_weights": self.part_weights.tolist(), "bounds": self.bounds.tolist(),
                "parts": self.parts.tolist(), "options": dict(self.options)}


def _int(value: Any, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise PartitionError(f"{name} must be an integer, got {value!r}")
    if not low <= int(value) < 2**31:
        raise PartitionError(f"{name} = {value} must be in [{low}, 2^31)")
    return int(value)


def _weights(values: Any, size: int, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.shape != (size,):
        raise PartitionError(f"{name} has shape {arr.shape}, expected ({size},)")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise PartitionError(f"{name} must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    bad = ~np.isfinite(arr) | (arr < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise PartitionError(f"{name}[{i}] = {float(arr[i])!r} must be finite and >= 0")
    return arr


def _graph(pat: Pattern, undirected: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR arrays of the undirected graph the partitioner sees."""
    if not undirected:
        return _core.ugraph_from_pattern(pat.indptr, pat.indices, pat.bytes)
    try:
        _core.ugraph_validate(pat.indptr, pat.indices, pat.bytes, None)
    except CoreInputError as exc:
        raise PartitionError(f"undirected=True needs a symmetric pattern: {exc}") from None
    return pat.indptr, pat.indices, pat.bytes


def _bounds(vw: np.ndarray, tgt: np.ndarray, caps: np.ndarray | None, imbalance: float) -> np.ndarray:
    """L_i of the module docstring."""
    if caps is not None:
        return caps.copy()
    w = float(vw.max()) if vw.size else 0.0
    if vw.size and vw.min() == w:
        reach = w * np.ceil(tgt / w - 1e-9) if w > 0 else np.zeros_like(tgt)
    else:
        reach = tgt + w
    return np.maximum((1 + imbalance) * tgt, reach)


def _metis_ints(w: np.ndarray, minimum: int) -> np.ndarray:
    """Integer weights for METIS (see the module docstring).

    Why divide by the largest weight first: the total of weights near 1e308
    overflows, and 2^30 over a total of 1e-300 weights is infinite; ``w / max``
    lies in [0, 1] and sums to between 1 and ``len(w)``, so the scale is finite.
    """
    top = float(w.max()) if w.size else 0.0
    if np.array_equal(w, np.round(w)) and top < 2**31 and float(w.sum()) < 2**31:
        return w.astype(np.int64)
    share = w / top
    return np.maximum(np.round(share * (2**30 / float(share.sum()))), minimum).astype(np.int64)


def _run_metis(xadj: np.ndarray, adjncy: np.ndarray, adjwgt: np.ndarray, vw: np.ndarray | None, k: int,
               shares: np.ndarray | None, imbalance: float, seed: int, recursive: bool) -> np.ndarray:
    try:
        import pymetis
    except ImportError as exc:
        raise MissingDependencyError("method='metis' needs pymetis: pip install 'topomap-hpc[metis]'") from exc
    opts = pymetis.Options(seed=seed % 2**31, ufactor=max(1, int(round(1000 * imbalance))))
    kw: dict[str, Any] = {
        "eweights": _metis_ints(adjwgt, 1) if adjwgt.size else None,
        "vweights": None if vw is None else _metis_ints(vw, 0),
        "tpwgts": None if shares is None else (shares / shares.sum()).tolist(),
        "recursive": recursive, "options": opts,
    }
    res = pymetis.part_graph(k, adjacency=pymetis.CSRAdjacency(xadj, adjncy), **kw)  # pymetis >= 2025.2
    return np.asarray(res.vertex_part, dtype=np.int32)


def _method(method: str) -> str:
    if method not in METHODS:
        raise PartitionError(f"unknown method {method!r}; known: {', '.join(METHODS)}")
    if method != "auto":
        return method
    try:
        import pymetis  # noqa: F401
    except ImportError:
        return "builtin"
    return "metis"


def partition(
    pattern_or_graph: Any,
    k: int,
    *,
    weights: Any = None,
    targets: Any = None,
    capacities: Any = None,
    imbalance: float = 0.03,
    seed: int = 0,
    method: str = "auto",
    undirected: bool = False,
    recursive: bool | None = None,
    flows: bool = False,
    progress: Callable[[float], Any] | None = None,
) -> PartitionResult:
    """Split the vertices into ``k`` parts of bounded weight with a small edge cut.

    Parameters
    ----------
    pattern_or_graph : Pattern or array-like
        A :class:`~topomap.Pattern`, or anything :func:`topomap.map` accepts
        (dense matrix, ``scipy.sparse``, networkx graph).  Directed traffic is
        symmetrised as ``C + C^T`` unless ``undirected`` is set.
    k : int
        Number of parts, ``>= 1`` (may exceed the number of vertices).
    weights : array_like, optional
        Vertex weights (finite, ``>= 0``); default 1 each.
    targets : array_like, optional
        Relative part sizes (length ``k``, soft bound); default equal.
    capacities : array_like, optional
        Absolute part capacities (length ``k``) never to be exceeded: e.g.
        cores per node, a smaller last node, or 1 per part.  Excludes
        ``targets``.
    imbalance : float
        ``epsilon`` of the soft bound (ignored with ``capacities``).
    seed : int
        Same seed, same partition.
    method : {"auto", "builtin", "metis"}
        ``"auto"`` uses METIS when pymetis is installed, else the builtin
        partitioner.
    undirected : bool
        The pattern is an undirected graph stored both ways; weigh each edge
        once instead of summing both directions.
    recursive : bool, optional
        Recursive bisection (APHiD's choice) instead of multilevel k-way.
        Default: builtin with ``capacities`` only.  The builtin recursive
        bisection mostly gives smaller cuts (benchmarks/bench_partition.py:
        up to 17% with soft bounds, 2% larger on 3elt with k = 8; 15% on
        rgg_n_2_15_s0 into 64 full parts) but takes 2-6 times as long;
        processes-into-nodes problems are small, so there quality wins.
        METIS keeps its k-way scheme unless asked.
    flows : bool
        Builtin partitioner: also refine every 2-way level (each bisection
        of ``recursive``, or ``k = 2``) by a max flow on a band around the
        cut and keep its most balanced minimum cut (KaHIP strong's flow
        refinement; csrc/core/partition_flow.c).  Recursive bisection, seed
        0: delaunay_n15 and rgg_n_2_15_s0 cut 1-19 % less into 2 and 16
        parts, 3elt 1 % less into 2 and 2 % more into 16, at 2-6 times the
        time.  Ignored by METIS.
    progress : callable, optional
        ``progress(fraction)`` is called now and then by the builtin
        partitioner (only at 1.0 by METIS); a true return value stops it with
        :class:`~topomap.Cancelled`, an exception it raises propagates, and
        Ctrl-C raises KeyboardInterrupt.

    Returns
    -------
    PartitionResult

    Raises
    ------
    PartitionError
        Bad ``k``, weights, targets or capacities (named), capacities that
        cannot hold the vertices, or an asymmetric ``undirected`` pattern.
    MissingDependencyError
        ``method="metis"`` without pymetis.

    Examples
    --------
    Two 4-cliques joined by one edge split at that edge:

    >>> import numpy as np, topomap as tm
    >>> c = np.zeros((8, 8)); c[:4, :4] = c[4:, 4:] = 1; c[3, 4] = c[4, 3] = 1
    >>> res = tm.partition(c, 2, method="builtin", undirected=True)
    >>> res.edge_cut, sorted(set(res.parts[:4])) != sorted(set(res.parts[4:]))
    (1.0, True)

    Processes into nodes of 8 cores, every node exactly full (PTRAM step 1):

    >>> pat = tm.generators.stencil_3d((4, 4, 4), points=7)
    >>> res = tm.partition(pat, 8, capacities=[8] * 8, method="builtin")
    >>> res.part_weights.tolist() == [8.0] * 8, res.quotient().n
    (True, 8)
    """
    pat = as_pattern(pattern_or_graph)
    k = _int(k, "k", 1)
    n = pat.n
    if isinstance(imbalance, bool) or not isinstance(imbalance, numbers.Real) or not 0 <= imbalance < float("inf"):
        raise PartitionError(f"imbalance must be a finite number >= 0, got {imbalance!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise PartitionError(f"seed must be an integer, got {seed!r}")
    if targets is not None and capacities is not None:
        raise PartitionError("give targets (soft) or capacities (hard), not both")
    vw = None if weights is None else _weights(weights, n, "weights")
    tg = None if targets is None else _weights(targets, k, "targets")
    caps = None if capacities is None else _weights(capacities, k, "capacities")
    shares = caps if caps is not None else tg
    if shares is not None and not shares.sum() > 0:
        raise PartitionError(f"the {'capacities' if caps is not None else 'targets'} of the {k} parts sum to 0")
    name = _method(method)
    if recursive is None:
        recursive = caps is not None and name == "builtin"
    if progress is not None and not callable(progress):
        raise PartitionError(f"progress must be callable, got {type(progress).__name__}")
    xadj, adjncy, adjwgt = _graph(pat, bool(undirected))
    args = (xadj, adjncy, adjwgt, vw, k)
    common = {"targets": shares, "hard": caps is not None, "imbalance": float(imbalance), "seed": int(seed) % 2**64,
              "recursive": bool(recursive), "flows": bool(flows) and name == "builtin", "progress": progress}
    start = time.perf_counter()
    try:
        if name == "builtin":
            parts, pw, cut = _core.partition(*args, **common)
        else:
            # exact capacities: METIS's tightest balance (ufactor 1) leaves the repair least to do
            slack = 0.0 if caps is not None else float(imbalance)
            parts = _run_metis(xadj, adjncy, adjwgt, vw, k, shares, slack, int(seed), bool(recursive))
            if caps is not None:
                parts, pw, cut = _core.partition(*args, **common, part=parts)
            else:
                pw, cut = _core.partition_stats(*args, parts)
            if progress is not None and progress(1.0):
                raise Cancelled.by_progress("partition", 1.0)
    except CoreInputError as exc:
        raise PartitionError(str(exc)) from None
    seconds = time.perf_counter() - start
    parts.setflags(write=False)
    w = np.ones(n) if vw is None else vw
    rel = np.ones(k) if shares is None else shares
    bounds = _bounds(w, w.sum() * rel / rel.sum(), caps, float(imbalance))
    return PartitionResult(parts, float(cut), pw, bounds, k, name, int(seed), seconds,
                           {"imbalance": float(imbalance), "recursive": bool(recursive), "hard": caps is not None,
                            "undirected": bool(undirected), "flows": bool(flows) and name == "builtin"}, pat)
