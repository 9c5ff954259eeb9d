"""Thread-to-SPE affinity on the Cell BE and thread partitions on the QS20 Blade.

Kumar (PhD thesis 2012, ch. 4; notes 001 §4.1) placed the 8 threads of an
SPE program on the 8 physical SPEs so that large messages (over 16 KB) do
not crowd the EIB rings (:mod:`~topomap.networks.cell_eib`).  Here:

* :data:`AFFINITIES`: the five named placements (thread -> physical SPE);
* :data:`PATTERNS`: the phases of Table 4.4.1 as ``(sender, receiver)`` lists;
* :func:`ring_counts`: per pattern and affinity, transfers going clockwise,
  counter-clockwise and half-way, and the most same-direction transfers on
  one segment (the notes' validation table);
* :func:`score`, :func:`auto_affinity`: the search over all 8! placements
  with the notes' lexicographic score [R] (the thesis does not give its own):
  (i) transfers above two on a segment in one direction (two rings per
  direction), summed over segments; (ii) ``|#cw - #ccw|``; (iii) half-way
  transfers; (iv) transfers of two or more segments that cross a side of the
  ring (PPE-MIC or BIF-IOIF1, the thesis's observed anomaly).  Half-way
  transfers take, of the ``2^h`` direction choices, the one best for (i) and
  then (ii) (the arbiter's choice is unknown; (iii) and (iv) do not depend on
  it: a half-way arc always crosses exactly one side).  Phases are scored
  separately and summed;
* :func:`blade_partition`: the best of the C(16, 8) = 12,870 balanced splits
  of 16 threads between the two Cells of a Blade (least cross-chip volume;
  the side sending more across goes to processor 0, the faster direction).

Examples
--------
>>> from topomap.networks.cell_affinity import ring_counts
>>> ring_counts("Ring", "Leap2")        # 4 clockwise, 4 counter-clockwise, no half-way
RingCounts(cw=4, ccw=4, halfway=0, max_cw=1, max_ccw=1)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import MachineError
from . import cell_eib

__all__ = ["AFFINITIES", "PATTERNS", "RingCounts", "ring_counts", "score", "auto_affinity", "blade_partition",
           "BladePartition"]


def _from_pairs(pairs: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """(physical SPE, thread) pairs -> physical SPE of each thread."""
    phys = [0] * 8
    for spe, thread in pairs:
        phys[thread] = spe
    return tuple(phys)


#: Physical SPE of each thread, for the thesis's five affinities (Table of notes 001 §4.1).
AFFINITIES: dict[str, tuple[int, ...]] = {
    "Identity": tuple(range(8)),
    "Ring": _from_pairs([(0, 0), (1, 7), (2, 1), (3, 6), (4, 2), (5, 5), (6, 3), (7, 4)]),
    "Overlap": _from_pairs([(0, 0), (1, 7), (2, 2), (3, 5), (4, 4), (5, 3), (6, 6), (7, 1)]),
    "EvenOdd": _from_pairs([(0, 0), (1, 4), (2, 2), (3, 6), (4, 1), (5, 5), (6, 3), (7, 7)]),
    "Leap2": _from_pairs([(0, 0), (1, 4), (2, 7), (3, 3), (4, 1), (5, 5), (6, 6), (7, 2)]),
}


def _exchange(stride: int) -> tuple[tuple[int, int], ...]:
    return tuple((r, r ^ stride) for r in range(8))


#: Table 4.4.1 as (sender thread, receiver thread) messages of one phase.
PATTERNS: dict[str, tuple[tuple[int, int], ...]] = {
    "Ring": tuple(((i - 1) % 8, i) for i in range(8)),
    "RD1": _exchange(1),
    "RD2": _exchange(2),
    "RD3": _exchange(4),
    "Bruck2": tuple(((r + 2) % 8, r) for r in range(8)),
    "Binomial3": ((0, 1), (2, 3), (4, 5), (6, 7)),
}


def _placement(affinity: "str | Sequence[int]") -> tuple[int, ...]:
    if isinstance(affinity, str):
        if affinity not in AFFINITIES:
            raise MachineError(f"unknown Cell affinity {affinity!r}; known: {', '.join(AFFINITIES)}")
        return AFFINITIES[affinity]
    phys = tuple(int(x) for x in affinity)
    if sorted(phys) != list(range(8)):
        raise MachineError(f"a Cell affinity places threads 0..7 on SPEs 0..7 one each, got {list(affinity)}")
    return phys


def _messages(pattern: "str | Sequence[tuple[int, int]]") -> tuple[tuple[int, int], ...]:
    if isinstance(pattern, str):
        if pattern not in PATTERNS:
            raise MachineError(f"unknown Cell pattern {pattern!r}; known: {', '.join(PATTERNS)}")
        return PATTERNS[pattern]
    msgs = tuple((int(a), int(b)) for a, b in pattern)
    for i, (a, b) in enumerate(msgs):
        if not (0 <= a < 8 and 0 <= b < 8) or a == b:
            raise MachineError(f"message {i} ({a} -> {b}) is not between two different threads 0..7")
    return msgs


@dataclass(frozen=True)
class RingCounts:
    """Transfers of one phase by direction, and the most same-direction transfers on one segment
    (half-way transfers, whose direction the arbiter picks, are left out of the maxima)."""

    cw: int
    ccw: int
    halfway: int
    max_cw: int
    max_ccw: int


def ring_counts(pattern: "str | Sequence[tuple[int, int]]", affinity: "str | Sequence[int]") -> RingCounts:
    """Directions and overlaps of a phase under an affinity (the notes' validation table).

    Examples
    --------
    >>> ring_counts("RD3", "Ring")          # every exchange half-way round the ring
    RingCounts(cw=0, ccw=0, halfway=8, max_cw=0, max_ccw=0)
    """
    phys = _placement(affinity)
    load = {1: np.zeros(12, dtype=int), -1: np.zeros(12, dtype=int)}
    count = {1: 0, -1: 0, 0: 0}
    for a, b in _messages(pattern):
        if cell_eib.is_halfway(phys[a], phys[b]):
            count[0] += 1
            continue
        d, segs = cell_eib.route(phys[a], phys[b])
        count[d] += 1
        load[d][list(segs)] += 1
    return RingCounts(count[1], count[-1], count[0], int(load[1].max()), int(load[-1].max()))


# ---------------------------------------------------------------- the search

def _tables() -> tuple[np.ndarray, ...]:
    """Per physical pair: half-way?, short way clockwise?, segments each way (2, 12), side crossing."""
    half = np.zeros((8, 8), dtype=bool)
    short_cw = np.zeros((8, 8), dtype=bool)
    segs = np.zeros((8, 8, 2, 12), dtype=np.int8)      # [.., 0, :] counter-clockwise, [.., 1, :] clockwise
    crossing = np.zeros((8, 8), dtype=np.int8)
    for a in range(8):
        for b in range(8):
            if a == b:
                continue
            half[a, b] = cell_eib.is_halfway(a, b)
            for way, name in ((1, "cw"), (0, "ccw")):
                d, s = cell_eib.route(a, b, halfway=name)
                segs[a, b, int(d > 0), list(s)] = 1
                if way == 1:
                    short_cw[a, b] = d > 0 and not half[a, b]
                    crossing[a, b] = len(s) >= 2 and bool(set(s) & set(cell_eib.SIDES))
    return half, short_cw, segs, crossing


_HALF, _SHORT_CW, _SEGS, _CROSSING = _tables()
_PERMS = np.array(list(itertools.permutations(range(8))), dtype=np.int8)


def _phase_scores(perms: np.ndarray, msgs: tuple[tuple[int, int], ...]) -> np.ndarray:
    """(len(perms), 4) score components of one phase (module docstring)."""
    n, m = perms.shape[0], len(msgs)
    out = np.zeros((n, 4), dtype=np.int64)
    if m == 0:
        return out
    s = np.array([a for a, _ in msgs])
    d = np.array([b for _, b in msgs])
    a, b = perms[:, s].astype(np.intp), perms[:, d].astype(np.intp)
    half = _HALF[a, b]
    bits = 1 << np.arange(m)
    halfmask = (half * bits).sum(axis=1)
    best = np.full(n, np.iinfo(np.int64).max)
    for combo in range(1 << m):
        # each half-way set tries each of its direction choices once
        rows = np.flatnonzero((halfmask & combo) == combo)
        if rows.size == 0:
            continue
        ra, rb, rh = a[rows], b[rows], half[rows]
        cw = _SHORT_CW[ra, rb] | (rh & ((combo & bits) != 0))
        seg = _SEGS[ra, rb, cw.astype(np.intp)]                          # (rows, m, 12)
        over = (np.maximum(np.einsum("rm,rms->rs", cw.astype(np.int64), seg) - 2, 0).sum(axis=1)
                + np.maximum(np.einsum("rm,rms->rs", (~cw).astype(np.int64), seg) - 2, 0).sum(axis=1))
        value = over * 64 + np.abs(2 * cw.sum(axis=1) - m)
        best[rows] = np.minimum(best[rows], value)
    out[:, 0], out[:, 1] = divmod(best, 64)
    out[:, 2] = half.sum(axis=1)
    out[:, 3] = _CROSSING[a, b].sum(axis=1)
    return out


def _phases(pattern: Any) -> list[tuple[tuple[int, int], ...]]:
    if isinstance(pattern, str):
        return [_messages(pattern)]
    items = list(pattern)
    if items and (isinstance(items[0], str) or (len(items[0]) and not isinstance(items[0][0], (int, np.integer)))):
        return [_messages(p) for p in items]
    return [_messages(items)]


def score(pattern: Any, affinity: "str | Sequence[int]") -> tuple[int, int, int, int]:
    """Lexicographic score (i, ii, iii, iv) of a placement, lower is better (module docstring).

    ``pattern`` is a name of :data:`PATTERNS`, one phase (a list of
    ``(sender, receiver)`` threads) or a list of phases (names or lists).

    Examples
    --------
    >>> score("Ring", "Leap2"), score("Ring", "Overlap")
    ((0, 0, 0, 2), (3, 2, 4, 8))
    """
    perm = np.array([_placement(affinity)], dtype=np.int8)
    total = sum(_phase_scores(perm, ph) for ph in _phases(pattern))
    return tuple(int(x) for x in np.asarray(total)[0])


def auto_affinity(pattern: Any) -> tuple[tuple[int, ...], tuple[int, int, int, int]]:
    """The best of all 8! = 40,320 placements by :func:`score` (ties: the first in lexicographic order).

    Returns the physical SPE of each thread and its score.

    Examples
    --------
    >>> auto_affinity("Ring")          # as good as Leap2, which comes later in the order
    ((0, 1, 5, 7, 3, 2, 4, 6), (0, 0, 0, 2))
    """
    phases = _phases(pattern)
    total = sum(_phase_scores(_PERMS, ph) for ph in phases)
    key = np.lexsort(np.asarray(total).T[::-1])[0]
    return tuple(int(x) for x in _PERMS[key]), tuple(int(x) for x in np.asarray(total)[key])


@dataclass(frozen=True)
class BladePartition:
    """The threads on each Cell of a Blade and the volume that crosses between them.

    ``evaluated`` counts the balanced splits tried (C(16, 8) = 12,870).
    """

    processor0: tuple[int, ...]
    processor1: tuple[int, ...]
    cross_bytes: float
    bytes_0_to_1: float
    bytes_1_to_0: float
    evaluated: int


def blade_partition(volume: Any) -> BladePartition:
    """The balanced split of 16 threads over a Blade's two Cells with the least cross-chip volume.

    ``volume`` is a 16 x 16 array (or a :class:`~topomap.Pattern` of 16
    processes) of bytes sent ``[sender, receiver]``.  Of equal splits the
    first in ``itertools.combinations`` order wins; the side that sends more
    across goes to processor 0 (Blade 0 -> 1 is the faster direction).

    Examples
    --------
    >>> import numpy as np
    >>> ring = np.roll(np.eye(16), 1, axis=1)          # thread i sends to i + 1
    >>> p = blade_partition(ring)
    >>> p.processor0, p.cross_bytes, p.evaluated
    ((0, 1, 2, 3, 4, 5, 6, 7), 2.0, 12870)
    """
    w = np.asarray(volume.to_dense() if hasattr(volume, "to_dense") else volume, dtype=float)
    if w.shape != (16, 16):
        raise MachineError(f"a Blade partition needs a 16 x 16 volume matrix, got shape {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise MachineError("the Blade volume matrix must hold finite, non-negative bytes")
    sides = np.array([[i in c for i in range(16)] for c in itertools.combinations(range(16), 8)], dtype=float)
    out0 = ((sides @ w) * (1 - sides)).sum(axis=1)         # bytes from the chosen 8 to the others
    out1 = (((1 - sides) @ w) * sides).sum(axis=1)
    best = int(np.argmin(out0 + out1))
    first = tuple(int(i) for i in np.flatnonzero(sides[best]))
    second = tuple(i for i in range(16) if i not in first)
    a, b = float(out0[best]), float(out1[best])
    if b > a:
        first, second, a, b = second, first, b, a
    return BladePartition(first, second, a + b, a, b, len(sides))
