"""The message-combining pattern T of every rank (Phase 1's output, note 002 s2), checkable
and serialisable.

Rank ``p``'s combining steps are (iteration t, friend f, CN_on): at step t it swaps data with
f and sends one combined message carrying the blocks of origins ``{p, f}`` to each rank of
CN_on; f covers CN_off(p) = CN_on(f).  Then p sends directly to what is left of its
destinations (``final``).  Receives follow: q gets at step t, from p, the origins
``sorted({p, f})`` when q is in CN_on of p's step t, and from p directly at the final step.

With cumulative combining (``cumulative=True``, beyond the papers, csrc/core/nbr_phase1.c) CN_on
is what p takes on at step t: the friend hands over the blocks it holds for those
destinations, p keeps them and may hand them on or combine them again; it sends each the
message of all origins it holds after its last step that took it on
(:mod:`topomap.neighborhood.flows`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .flows import FINAL, Flows, flows
from .graph import NeighborGraph, NeighborhoodError

__all__ = ["CombiningPattern", "RankPattern", "FINAL"]

Carried = list[tuple[int, tuple[int, ...]]]


@dataclass(frozen=True)
class RankPattern:
    """What one rank knows of T: its steps (iteration, friend, CN_on, CN_off), its final
    direct destinations and its receives (step, sender, origins), as Alg. 1 leaves them.

    ``carried`` (cumulative combining only, else None): per step, the blocks handed to the
    friend, those taken from it and the messages sent right after the step, each a list of
    (destination, origins) in ascending destination order."""

    rank: int
    steps: list[tuple[int, int, list[int], list[int]]]
    final: list[int]
    receives: list[tuple[int, int, tuple[int, ...]]]
    carried: list[tuple[Carried, Carried, Carried]] | None = None


@dataclass(frozen=True, eq=False)
class CombiningPattern:
    """Pattern T of all ranks: CSR arrays as returned by :func:`topomap.neighborhood.combine`.

    Examples
    --------
    >>> from topomap.neighborhood import NeighborGraph, combine
    >>> g = NeighborGraph.from_lists([[2, 3, 4, 5], [2, 3, 4, 5], [], [], [], []])
    >>> t = combine(g, theta=4)
    >>> t.steps(0), t.receives(4)
    ([(0, 1, [2, 3])], [(0, 1, (0, 1))])
    >>> t.check(g)
    """

    n: int
    theta: int
    step_ptr: np.ndarray
    step_iter: np.ndarray
    step_friend: np.ndarray
    on_ptr: np.ndarray
    on_idx: np.ndarray
    final_ptr: np.ndarray
    final_idx: np.ndarray
    done_iter: np.ndarray
    friends0: np.ndarray
    alg2_rounds: np.ndarray
    iterations: dict[str, np.ndarray] = field(default_factory=dict)
    seconds: float = 0.0
    cumulative: bool = False

    _ARRAYS = ("step_ptr", "step_iter", "step_friend", "on_ptr", "on_idx", "final_ptr", "final_idx", "done_iter",
               "friends0", "alg2_rounds")

    def steps(self, p: int) -> list[tuple[int, int, list[int]]]:
        """(iteration, friend, CN_on) of each combining step of rank ``p``, in order."""
        return [(int(self.step_iter[s]), int(self.step_friend[s]),
                 self.on_idx[self.on_ptr[s]:self.on_ptr[s + 1]].tolist())
                for s in range(self.step_ptr[p], self.step_ptr[p + 1])]

    def final(self, p: int) -> list[int]:
        """The destinations ``p`` sends to directly, after its combining steps."""
        return self.final_idx[self.final_ptr[p]:self.final_ptr[p + 1]].tolist()

    def offload(self, p: int, s: int) -> list[int]:
        """CN_off of rank ``p``'s ``s``-th step: the friend's CN_on at the same iteration."""
        t, f, _ = self.steps(p)[s]
        for tf, g, on in self.steps(f):
            if tf == t and g == p:
                return on
        raise NeighborhoodError(f"rank {f} has no step {t} with friend {p} to match rank {p}'s")

    def rank_view(self, p: int) -> RankPattern:
        """Rank ``p``'s share of T (what the distributed Phase 1 leaves on ``p``)."""
        steps = [(t, f, on, self.offload(p, s)) for s, (t, f, on) in enumerate(self.steps(p))]
        if not self.cumulative:
            return RankPattern(p, steps, self.final(p), self.receives(p))
        fl = self.flows()
        sent = {int(fl.msg_dest[m]): fl.msg_org[fl.msg_ptr[m]:fl.msg_ptr[m + 1]]
                for m in np.flatnonzero(fl.msg_sender == p)}
        carried = []
        for s, (t, f, on, off) in zip(range(self.step_ptr[p], self.step_ptr[p + 1]), steps):
            fs = next(i for i in range(self.step_ptr[f], self.step_ptr[f + 1]) if self.step_iter[i] == t)
            js, fj = range(self.on_ptr[s], self.on_ptr[s + 1]), range(self.on_ptr[fs], self.on_ptr[fs + 1])
            carried.append(([(int(self.on_idx[j]), _ints(fl.take_org[fl.take_ptr[j]:fl.take_ptr[j + 1]])) for j in fj],
                            [(int(self.on_idx[j]), _ints(fl.take_org[fl.take_ptr[j]:fl.take_ptr[j + 1]])) for j in js],
                            [(int(self.on_idx[j]), _ints(sent[int(self.on_idx[j])])) for j in js if fl.sends[j]]))
        return RankPattern(p, steps, self.final(p), self.receives(p), carried)

    def flows(self) -> Flows:
        """Where every block travels (:func:`topomap.neighborhood.flows.flows`), computed once."""
        fl = self.__dict__.get("_flows")
        if fl is None:
            fl = flows(self.n, self.step_ptr, self.step_iter, self.step_friend, self.on_ptr, self.on_idx,
                       self.final_ptr, self.final_idx)
            object.__setattr__(self, "_flows", fl)
        return fl

    def receives(self, q: int) -> list[tuple[int, int, tuple[int, ...]]]:
        """(step, sender, origins) of every message rank ``q`` gets; ``FINAL`` steps last."""
        if self.cumulative:
            fl = self.flows()
            lo, hi = np.searchsorted(fl.msg_dest, [q, q + 1])
            return [(int(fl.msg_step[m]), int(fl.msg_sender[m]), _ints(fl.msg_org[fl.msg_ptr[m]:fl.msg_ptr[m + 1]]))
                    for m in range(lo, hi)]
        ptr, step, sender, other = self._receive_table()
        out = []
        for i in range(ptr[q], ptr[q + 1]):
            s, o = int(sender[i]), int(other[i])
            out.append((int(step[i]), s, (s,) if o < 0 else (min(s, o), max(s, o))))
        return out

    def _receive_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """All receives as CSR by receiver: (ptr, step, sender, other origin or -1), sorted
        like :meth:`receives`."""
        table = self.__dict__.get("_recv")
        if table is None:
            owner = np.repeat(np.arange(self.n, dtype=np.int32), np.diff(self.step_ptr))
            at = np.repeat(np.arange(self.step_iter.size), np.diff(self.on_ptr))
            final_from = np.repeat(np.arange(self.n, dtype=np.int32), np.diff(self.final_ptr))
            q = np.concatenate([self.on_idx, self.final_idx]).astype(np.int64)
            step = np.concatenate([self.step_iter[at], np.full(self.final_idx.size, FINAL, np.int32)])
            sender = np.concatenate([owner[at], final_from])
            other = np.concatenate([self.step_friend[at], np.full(self.final_idx.size, -1, np.int32)])
            order = np.lexsort((sender, step, step == FINAL, q))
            ptr = np.zeros(self.n + 1, dtype=np.int64)
            ptr[1:] = np.cumsum(np.bincount(q, minlength=self.n))
            table = (ptr, step[order], sender[order], other[order])
            object.__setattr__(self, "_recv", table)
        return table

    def check(self, graph: NeighborGraph) -> None:
        """Raise :class:`NeighborhoodError` unless T fits ``graph``.

        Checked: every edge origin -> destination is delivered exactly once; friends' steps
        match (same iteration, each other as friend); the split of 000 s5.2 holds (CN_on and
        CN_off disjoint, CN_on(p) = CN_off(f), both inside O(p) & O(f), at least theta in all,
        the lower rank holding the ascending first ceil(``|CN|``/2)).
        """
        if graph.n != self.n:
            raise NeighborhoodError(f"the pattern has {self.n} ranks, the graph {graph.n}")
        outs = [set(graph.destinations(p).tolist()) for p in range(self.n)]
        for p in range(self.n):
            for s, (t, f, on) in enumerate(self.steps(p)):
                off = self.offload(p, s)
                if set(on) & set(off):
                    raise NeighborhoodError(f"rank {p} step {t}: {sorted(set(on) & set(off))} both on- and offloaded")
                cn = sorted(on + off)
                if not set(cn) <= outs[p] & outs[f]:
                    raise NeighborhoodError(f"rank {p} step {t}: {sorted(set(cn) - (outs[p] & outs[f]))} are not "
                                            f"common neighbours of {p} and {f}")
                if len(cn) < self.theta:
                    raise NeighborhoodError(f"ranks {p} and {f} combine {len(cn)} < theta = {self.theta} neighbours")
                first = cn[:(len(cn) + 1) // 2]
                if (on == first) != (p < f):
                    raise NeighborhoodError(f"rank {p} step {t}: the split with friend {f} is not by rank order")
        got: dict[tuple[int, int], int] = {}
        for q in range(self.n):
            for _, _, origins in self.receives(q):
                for o in origins:
                    got[(o, q)] = got.get((o, q), 0) + 1
        for p in range(self.n):
            for q in outs[p]:
                if got.pop((p, q), 0) != 1:
                    raise NeighborhoodError(f"edge {p} -> {q} is not delivered exactly once")
        if got:
            (p, q), _ = next(iter(got.items()))
            raise NeighborhoodError(f"the pattern delivers {p} -> {q}, which is not an edge")

    # ---- statistics -------------------------------------------------------------------
    def stats(self) -> dict[str, np.ndarray]:
        """Per rank: combining ``steps``, initial ``friends``, messages sent (``sends``: friend
        exchanges + combined + direct, the paper's send stages) and received (``recvs``), the
        Alg. 1 ``iterations`` spent in the loop and the Alg. 2 ``rounds``.

        Examples
        --------
        >>> from topomap.neighborhood import NeighborGraph, combine
        >>> g = NeighborGraph.from_lists([[2, 3, 4, 5], [2, 3, 4, 5], [], [], [], []])
        >>> s = combine(g).stats()
        >>> s["sends"].tolist(), s["recvs"].tolist()
        ([3, 3, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1])
        """
        nsteps = np.diff(self.step_ptr)
        owner = np.repeat(np.arange(self.n), nsteps)
        direct = np.diff(self.final_ptr)
        if self.cumulative:
            fl = self.flows()
            combined = np.bincount(np.repeat(owner, np.diff(self.on_ptr)), weights=fl.sends,
                                   minlength=self.n).astype(np.int64)
            recvs = np.bincount(fl.msg_dest, minlength=self.n) + nsteps
        else:
            combined = np.bincount(owner, weights=np.diff(self.on_ptr), minlength=self.n).astype(np.int64)
            recvs = np.diff(self._receive_table()[0]) + nsteps
        return {"steps": nsteps, "friends": self.friends0, "sends": nsteps + combined + direct, "recvs": recvs,
                "iterations": self.done_iter, "rounds": self.alg2_rounds}

    # ---- serialisation ----------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (lists of ints); :meth:`from_dict` reads it back."""
        d: dict[str, Any] = {"n": self.n, "theta": self.theta, "seconds": self.seconds, "cumulative": self.cumulative}
        d.update({k: getattr(self, k).tolist() for k in self._ARRAYS})
        d["iterations"] = {k: v.tolist() for k, v in self.iterations.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CombiningPattern":
        """Inverse of :meth:`to_dict`.

        Examples
        --------
        >>> from topomap.neighborhood import moore_graph, combine
        >>> g = moore_graph((5, 5), 1); t = combine(g)
        >>> CombiningPattern.from_json(t.to_json()).steps(3) == t.steps(3)
        True
        """
        dt = {"step_ptr": np.int64, "on_ptr": np.int64, "final_ptr": np.int64}
        arrays = {k: np.asarray(d[k], dtype=dt.get(k, np.int32)) for k in cls._ARRAYS}
        its = {k: np.asarray(v) for k, v in d.get("iterations", {}).items()}
        return cls(int(d["n"]), int(d["theta"]), iterations=its, seconds=float(d.get("seconds", 0.0)),
                   cumulative=bool(d.get("cumulative", False)), **arrays)

    def to_json(self) -> str:
        """The pattern as JSON text."""
        return json.dumps(self.to_dict())

    @classmethod
    def from_json(cls, text: str) -> "CombiningPattern":
        """Read :meth:`to_json`'s text."""
        return cls.from_dict(json.loads(text))


def _ints(a: np.ndarray) -> tuple[int, ...]:
    return tuple(int(x) for x in a)
