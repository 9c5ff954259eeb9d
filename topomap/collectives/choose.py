"""Do no harm: reorder for a collective only when the time model says it pays.

:func:`reorder_for` predicts (:func:`topomap.timemodel.predict`) the
collective's time on the caller's layout and after each candidate
reordering (:func:`~topomap.collectives.reorder.reorder`), the candidate
paying for its output-order plan: vector collectives whose blocks must stay
contiguous (recursive doubling, Bruck, hierarchical allgather; binomial
gather) add InitComm's exchange as a first stage (notes 000 §3.7), the ring
allgather, bcast, allreduce and alltoall add nothing.  The identity is kept
unless a candidate is strictly faster for the given message size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..errors import MappingError
from ..machine import Allocation, Machine
from ..timemodel.predict import predict
from ..timemodel.model import TimeModel
from .build import build
from .plans import InitComm
from .reorder import HEURISTICS, run_heuristic
from .reorder_more import COLLECTIVES

__all__ = ["reorder_for", "ReorderChoice", "MATCHING"]

#: The heuristic written for each algorithm (000 §3.3-3.6); the others try all four.
MATCHING = {("allgather", "recursive_doubling"): "rdmh", ("allreduce", "recursive_doubling"): "rdmh",
            ("allgather", "ring"): "rmh", ("bcast", "binomial"): "bbmh", ("gather", "binomial"): "bgmh"}


@dataclass(frozen=True, eq=False)
class ReorderChoice:
    """What :func:`reorder_for` chose.

    Attributes
    ----------
    old_of_new : ndarray
        New rank ``j`` is played by old rank ``old_of_new[j]`` (the identity
        when nothing pays).
    heuristic : str or None
        The winning heuristic, None for the identity.
    seconds : dict
        Predicted time of ``"identity"`` and of every candidate tried (its
        output-order plan included).
    """

    old_of_new: np.ndarray
    heuristic: str | None
    seconds: dict = field(default_factory=dict)

    @property
    def improved(self) -> bool:
        """Whether a reordering was chosen."""
        return self.heuristic is not None


def _needs_initcomm(op: str, algorithm: str) -> bool:
    return op == "gather" or (op == "allgather" and algorithm != "ring")


def reorder_for(op: str, algorithm: str, where: "Allocation | Machine | str", pes: Any, bytes: float, *,
                heuristics: Sequence[str] | None = None, seed: int = 0, model: TimeModel | None = None,
                method: str = "flow", **build_options: Any) -> ReorderChoice:
    """The reordering of ``pes`` that makes collective ``op`` fastest, or the identity.

    Parameters
    ----------
    op, algorithm : str
        As :func:`topomap.collectives.build`.
    where : Allocation, Machine or spec string
    pes : array of int
        Core of every old rank (the current layout); its length is the number of ranks.
    bytes : float
        Message size as :func:`~topomap.collectives.build` takes it.
    heuristics : sequence of str, optional
        Candidates among the thesis's four and the extension's ``bkmh``,
        ``armh``, ``pwmh`` (:mod:`~topomap.collectives.reorder_more`); default:
        :data:`MATCHING`'s and the extension's for the algorithm, else the thesis's four.
    seed : int
        Tie-breaks of the heuristics.
    model, method :
        As :func:`topomap.timemodel.predict`.
    **build_options
        ``root``, ``ppn``, ``intra``, ``leaders``.

    Examples
    --------
    A ring allgather of 64 KB blocks on a cyclic layout gains from RMH; on
    the block layout nothing is faster, so nothing moves:

    >>> import topomap as tm
    >>> from topomap.collectives import reorder_for
    >>> from topomap.collectives.reorder import initial_layout
    >>> alloc = tm.machine("torus:4x4/8").allocate(128)
    >>> reorder_for("allgather", "ring", alloc, initial_layout(alloc, layout="cyclic-bunch"), 65536).heuristic
    'rmh'
    >>> c = reorder_for("allgather", "ring", alloc, initial_layout(alloc, layout="block-bunch"), 65536)
    >>> c.heuristic, (c.old_of_new == range(128)).all()
    (None, np.True_)
    """
    pes = np.asarray(pes)
    if pes.ndim != 1 or pes.size == 0:
        raise MappingError("pes must be a non-empty 1-D array of PE ids (the core of every old rank)")
    schedule = build(op, algorithm, int(pes.size), bytes, **build_options)
    known = (*HEURISTICS, *sorted(set(COLLECTIVES.values()) - set(HEURISTICS)))
    written = list(dict.fromkeys(h for h in (MATCHING.get((op, algorithm)), COLLECTIVES.get((op, algorithm))) if h))
    cands = list(heuristics) if heuristics is not None else (written or list(HEURISTICS))
    for h in cands:
        if h not in known:
            raise MappingError(f"heuristic = {h!r} must be one of {', '.join(map(repr, known))}")

    def seconds(pe_of: np.ndarray, stages: list) -> float:
        return predict(stages, where, pe_of, model, method=method).makespan

    identity = np.arange(pes.size)
    times = {"identity": seconds(pes, list(schedule.stages)) if schedule.stages else 0.0}
    best, best_h = identity, None
    for h in cands:
        old = run_heuristic(h, where, pes, seed)
        if np.array_equal(old, identity) or not schedule.stages:
            times[h] = times["identity"]
            continue
        stages = list(schedule.stages)
        if _needs_initcomm(op, algorithm):
            stages.insert(0, InitComm.of(old).stage(bytes))
        times[h] = seconds(pes[old], stages)
        if times[h] < times[best_h or "identity"]:
            best, best_h = old, h
    return ReorderChoice(best, best_h, times)
