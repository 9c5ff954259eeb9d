"""Stage-by-stage costs of a schedule on a placement, through the one evaluator.

Per stage: the hops of its unicasts (network links between the two ranks'
nodes, 0 inside a node; each direction of an exchange counts), their sum over
stages, the total hop count H(pi) of Cui's thesis (notes 003 §2.3); the
stage's maximum link congestion (bytes / capacity, :func:`topomap.evaluate`);
the contention objective of 003 §2.4 in the notes' concrete form, the sum
over links of ``max(0, unicasts crossing it - 1)``, every unicast routed on
the machine's deterministic route; and the stage's predicted time
(:func:`topomap.timemodel.predict`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import PatternError
from ..metrics import _resolve, evaluate
from ..pattern import Pattern
from ..timemodel.predict import predict
from ..timemodel.model import TimeModel
from .schedules import Schedule

__all__ = ["StageCosts", "stage_costs"]


@dataclass(frozen=True, eq=False)
class StageCosts:
    """What :func:`stage_costs` found; arrays have one entry per stage.

    Attributes
    ----------
    hops : ndarray of int
        Network hops of the stage's unicasts, summed.
    total_hops : int
        H(pi): ``hops.sum()``.
    max_congestion : ndarray
        Largest bytes / capacity over the links, per stage.
    contention : ndarray of int
        Sum over links of ``max(0, unicasts on the link - 1)``.
    time : ndarray or None
        Predicted seconds per stage (``None`` when ``time=False``).
    """

    hops: np.ndarray
    total_hops: int
    max_congestion: np.ndarray
    contention: np.ndarray
    time: np.ndarray | None

    @property
    def total_contention(self) -> int:
        """The contention objective summed over stages."""
        return int(self.contention.sum())


def stage_costs(schedule: Schedule, where: Any, mapping: Any, model: TimeModel | None = None, *,
                time: bool = True, sync: str = "barrier", method: str = "flow") -> StageCosts:
    """Hops, H(pi), congestion, contention and predicted time of every stage.

    Parameters
    ----------
    schedule : Schedule
        Any schedule (its stages must not repeat a pair, as built ones never do).
    where : Allocation, Machine or spec string
    mapping : Mapping or array of PE ids
        PE of every rank.
    model : TimeModel, optional
        For the predicted time (default :meth:`TimeModel.default`).
    time : bool
        Predict the stage times (the flow simulation is the slow part).
    sync, method : str
        As :func:`topomap.timemodel.predict`.

    Examples
    --------
    On the circulant G(16, 4) every binomial-broadcast unicast is one hop
    (003 §2.5: H = n - 1):

    >>> import topomap as tm
    >>> from topomap.collectives import build, stage_costs
    >>> c = stage_costs(build("bcast", "binomial", 16), tm.machine("circulant:16"), range(16), time=False)
    >>> c.hops.tolist(), c.total_hops, c.contention.tolist()
    ([1, 2, 4, 8], 15, [0, 0, 0, 0])
    """
    if not isinstance(schedule, Schedule):
        raise PatternError(f"stage_costs needs a Schedule, not {type(schedule).__name__}")
    if not schedule.stages:
        empty = np.zeros(0)
        return StageCosts(empty.astype(np.int64), 0, empty, empty.astype(np.int64), empty if time else None)
    _, machine, pe = _resolve(schedule.stages[0], where, np.asarray(getattr(mapping, "pe_of", mapping)))
    hops, cong, cont = [], [], []
    for st in schedule.stages:
        if st.msgs is not None and (st.msgs > 1).any():
            raise PatternError("a stage repeats a (src, dst) pair; hops would count it once")
        unit = Pattern(st.n, st.indptr, st.indices, np.ones(st.nnz))
        ones = evaluate(unit, machine, pe, link_load=True)
        hops.append(int(ones.dilation))
        cont.append(int(np.maximum(ones.link_load - 1, 0).sum()))
        cong.append(evaluate(st, machine, pe).max_congestion)
    times = predict(schedule, where, pe, model, sync=sync, method=method).stage_time[0] if time else None
    h = np.asarray(hops, dtype=np.int64)
    return StageCosts(h, int(h.sum()), np.asarray(cong), np.asarray(cont, dtype=np.int64), times)
