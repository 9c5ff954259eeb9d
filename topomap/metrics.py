"""Metrics of a placement, computed by the one C evaluator.

All metrics count directed messages ``p -> q`` weighted by ``bytes[p, q]``
(Mirsadeghi 2017, §3 eq. 3.1-3.3; Hoefler & Snir 2011):

* ``hop_bytes`` = sum of bytes x hops, hops = network links on the route
  (0 inside a node); ``dilation`` = total hops over the communicating pairs
  ``p -> q``, ``avg_dilation`` per pair, ``max_dilation`` the longest.
* ``pairs`` = communicating pairs; ``messages`` = the messages they carry when
  the pattern counts them (``Pattern.msgs``, e.g. from a profiler or a trace),
  else one per pair; ``edge_cut_messages`` = the messages between different
  nodes, by the same rule.
* ``qap`` = J(C, D, Pi) = sum over directed messages of bytes x distance(PE_p, PE_q):
  a symmetric pattern counts each undirected pair twice, as KaHIP/VieM do.
* link congestion = bytes through the link / capacity; ``max_congestion``;
  ``nz_congestion_avg`` / ``nz_congestion_var`` = mean and population variance
  over links carrying at least one message (``nz_links``).
* ``hybrid`` = w0 HB + w1 MC + w2 NZCA + w3 NZCV, raw values, weights 1,1,1,1
  by default as in the thesis.
* ``edge_cut`` = bytes between different nodes; ``level_bytes`` = bytes by the
  level of the lowest common ancestor (see ``Machine.level_names``).

A metric past the largest double (finite bytes near 1e308 times hops, or the
variance of huge loads) raises :class:`~topomap.errors.PatternError` naming it
rather than returning ``inf``.  Why an error, not a flag: ``inf`` compares
equal to ``inf``, so every caller comparing placements (mappers' searches,
:func:`topomap.compare`) would silently rank them at random unless it checked
a flag; scaling the pattern down (``topomap pattern --scale``) loses nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from . import _core
from .errors import MappingError, PatternError
from .machine import Allocation, Machine
from .mapping import Mapping
from .pattern import Pattern

__all__ = ["Metrics", "evaluate", "Evaluator", "as_pattern"]

_SCALARS = ("hop_bytes", "dilation", "avg_dilation", "max_dilation", "pairs", "messages", "total_bytes", "qap",
            "max_congestion", "nz_links", "nz_congestion_avg", "nz_congestion_var", "hybrid",
            "edge_cut", "edge_cut_messages")


@dataclass(frozen=True, eq=False)
class Metrics:
    """Every metric of one placement (see the module docstring for definitions).

    Examples
    --------
    >>> import topomap as tm
    >>> pat = tm.Pattern.from_edges([0, 1], [1, 0], [3.0, 1.0])
    >>> met = tm.evaluate(pat, tm.machine("torus:4"), [0, 2])
    >>> met.hop_bytes, met.max_congestion, met.max_dilation
    (8.0, 3.0, 2)
    >>> counted = tm.Pattern.from_edges([0, 1], [1, 0], [3.0, 1.0], msgs=[3, 1])   # 3 messages of 1 byte, 1 of 1
    >>> met = tm.evaluate(counted, tm.machine("torus:4"), [0, 2])
    >>> met.pairs, met.messages, met.edge_cut_messages
    (2, 4, 4)
    """

    hop_bytes: float
    dilation: float
    avg_dilation: float
    max_dilation: int
    pairs: int
    messages: float
    total_bytes: float
    qap: float
    max_congestion: float
    nz_links: int
    nz_congestion_avg: float
    nz_congestion_var: float
    hybrid: float
    edge_cut: float
    edge_cut_messages: float
    level_bytes: dict = field(default_factory=dict)
    link_load: np.ndarray | None = None

    @classmethod
    def _from_core(cls, d: dict, machine: Machine, level_bytes: np.ndarray, link_load: np.ndarray | None) -> "Metrics":
        d = dict(d)
        d["pairs"] = d["messages"]
        d["avg_dilation"] = d["dilation"] / d["pairs"] if d["pairs"] else 0.0
        # message counts are whole numbers unless the pattern says otherwise
        d["messages"], d["edge_cut_messages"] = (int(v) if float(v).is_integer() else v
                                                 for v in (d["msgs"], d["cut_msgs"]))
        names = machine.level_names
        over = [k for k in _SCALARS if not math.isfinite(d[k])]  # math: per-move calls are hot
        if not over and not np.isfinite(level_bytes).all():
            over = [f"bytes_{names[int(np.flatnonzero(~np.isfinite(level_bytes))[0])]}"]
        if over:
            raise PatternError(f"{over[0]} overflows the double range (the pattern's bytes are too large for "
                               "this metric: scale them down, e.g. topomap pattern --scale)")
        return cls(**{k: d[k] for k in _SCALARS},
                   level_bytes={names[i]: float(level_bytes[i]) for i in range(len(names))},
                   link_load=link_load)

    def to_dict(self) -> dict:
        """Scalars plus ``bytes_<level>`` entries (no per-link arrays)."""
        out = {k: getattr(self, k) for k in _SCALARS}
        out.update({f"bytes_{name}": v for name, v in self.level_bytes.items()})
        return out


def as_pattern(obj: Any) -> Pattern:
    """Accept a Pattern, a dense array, a scipy.sparse matrix, a networkx graph
    or a collective's Schedule (its stages summed: ``Schedule.total``)."""
    if isinstance(obj, Pattern):
        return obj
    if isinstance(getattr(obj, "total", None), Pattern) and hasattr(obj, "stages"):
        return obj.total
    if hasattr(obj, "tocoo"):
        return Pattern.from_sparse(obj)
    if hasattr(obj, "edges") and hasattr(obj, "nodes"):
        return Pattern.from_networkx(obj)
    if isinstance(obj, (np.ndarray, list, tuple)):
        return Pattern.from_dense(np.asarray(obj))
    raise PatternError(f"cannot use a {type(obj).__name__} as a communication pattern")


def _resolve(pattern: Any, where: Any, mapping: Any) -> tuple[Pattern, Machine, np.ndarray]:
    pat = as_pattern(pattern)
    machine = where.machine if isinstance(where, Allocation) else where
    if not isinstance(machine, Machine):
        from .networks.spec import machine as build
        machine = build(machine)
    pe = mapping.pe_of if isinstance(mapping, Mapping) else Mapping(np.asarray(mapping)).pe_of
    if pe.shape != (pat.n,):
        raise MappingError(f"the mapping has {pe.size} entries but the pattern has {pat.n} processes")
    if pe.max() >= machine.npes:
        p = int(np.flatnonzero(pe >= machine.npes)[0])
        raise MappingError(f"process {p} is mapped to PE {pe[p]}, outside the machine's {machine.npes} PEs")
    if isinstance(where, Allocation):
        allowed = np.zeros(machine.npes, dtype=bool)
        allowed[where.pes] = True
        inside = allowed[pe]
        if not inside.all():
            p = int(np.flatnonzero(~inside)[0])
            raise MappingError(f"process {p} is mapped to PE {pe[p]}, which is not in the allocation")
    return pat, machine, pe


def _weights(weights: Sequence[float]) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (4,) or not np.isfinite(w).all() or (w < 0).any():
        raise MappingError(f"hybrid weights must be 4 finite non-negative numbers, got {weights!r}")
    return w


def evaluate(pattern: Any, allocation: "Allocation | Machine | str", mapping: "Mapping | Any",
             weights: Sequence[float] = (1.0, 1.0, 1.0, 1.0), link_load: bool = False) -> Metrics:
    """Evaluate a placement with the C evaluator (one pass over the messages).

    Parameters
    ----------
    pattern : Pattern or array-like
        Who sends how much to whom.
    allocation : Allocation, Machine or spec string
        Where the job runs; with an Allocation every PE used must be in it.
    mapping : Mapping or array of PE ids
        ``pe_of[p]`` for every process.
    weights : 4 floats
        Hybrid metric weights for HB, MC, NZCA, NZCV.
    link_load : bool
        Keep the per-link byte loads in ``Metrics.link_load``.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("torus:4x4/2").allocate(32)
    >>> pat = tm.generators.stencil_2d((8, 4))
    >>> tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block")).max_dilation
    1
    """
    pat, machine, pe = _resolve(pattern, allocation, mapping)
    d, load, lev = _core.evaluate(machine._core, pat.indptr, pat.indices, pat.bytes, pe, _weights(weights),
                                  pat.msgs)
    return Metrics._from_core(d, machine, lev, load if link_load else None)


class Evaluator:
    """Incremental metrics for local search: try or apply moves and swaps.

    Each move or swap costs O(degree x route length x log links): only the
    moved processes' messages are re-routed.

    Examples
    --------
    >>> import topomap as tm
    >>> pat = tm.Pattern.from_edges([0, 1], [1, 0], [3.0, 1.0])
    >>> ev = tm.Evaluator(pat, tm.machine("torus:4"), [0, 2])
    >>> ev.try_move(1, 1).hop_bytes     # what if process 1 moved to PE 1?
    4.0
    >>> ev.swap(0, 1); ev.mapping().tolist()
    [2, 0]
    """

    def __init__(self, pattern: Any, allocation: "Allocation | Machine | str", mapping: Any,
                 weights: Sequence[float] = (1.0, 1.0, 1.0, 1.0)):
        pat, machine, pe = _resolve(pattern, allocation, mapping)
        self.pattern, self.machine = pat, machine
        self._ev = _core.Evaluator(machine._core, pat.indptr, pat.indices, pat.bytes, pe, _weights(weights), pat.msgs)

    def _wrap(self, d: dict, levels: bool = True) -> Metrics:
        m = Metrics._from_core(d, self.machine, self._ev.level_bytes(), None)
        return m if levels else Metrics(**{**m.__dict__, "level_bytes": {}})

    def metrics(self) -> Metrics:
        """Metrics of the current mapping."""
        return self._wrap(self._ev.metrics())

    def try_move(self, p: int, pe: int) -> Metrics:
        """Metrics after moving process ``p`` to ``pe`` (without ``level_bytes``); nothing changes."""
        return self._wrap(self._call(self._ev.try_move, p, pe), levels=False)

    def try_swap(self, p: int, q: int) -> Metrics:
        """Metrics after swapping the PEs of ``p`` and ``q`` (without ``level_bytes``); nothing changes."""
        return self._wrap(self._call(self._ev.try_swap, p, q), levels=False)

    def move(self, p: int, pe: int) -> None:
        """Move process ``p`` to PE ``pe``."""
        self._call(self._ev.move, p, pe)

    def swap(self, p: int, q: int) -> None:
        """Swap the PEs of processes ``p`` and ``q``."""
        self._call(self._ev.swap, p, q)

    def mapping(self) -> np.ndarray:
        """Copy of the current ``pe_of``."""
        return self._ev.mapping()

    def link_loads(self) -> np.ndarray:
        """Copy of the current bytes per link."""
        return self._ev.link_loads()

    @staticmethod
    def _call(fn: Any, a: int, b: int) -> Any:
        try:
            return fn(int(a), int(b))
        except IndexError as exc:
            raise MappingError(str(exc)) from None
