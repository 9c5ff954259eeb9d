"""Predicted communication time of a pattern or a schedule on a placement.

Every message (one entry ``p -> q`` of a stage's pattern) is one **flow**.
Its link class (:mod:`topomap.timemodel.model`) gives its latency (``alpha``
per message of the entry, plus ``hop_latency`` per network link) and its own
rate limit (the class bandwidth); network flows also use the links of the
machine's route, each of bandwidth ``capacity x link_bandwidth``.

Methods
-------
``"flow"`` (default)
    Fluid, flow-level simulation in the C core: a released flow waits its
    latency, then transfers at its **max-min fair** share of every link it
    crosses (progressive filling), re-shared each time a flow starts
    transferring or finishes.  Flows inside a node use no modelled link (the
    node tree has no link model yet), so only their class bandwidth limits them.
``"hockney"``
    The same, without sharing: every flow alone on its route.
``"loggp"``
    LogGP per class without congestion: a rank sends its messages one after
    another (in destination order), each occupying it ``max(g, o + (m-1) G)``;
    a message arrives ``o + (m-1) G + L`` after it starts; a rank handles its
    arrivals one at a time, ``o`` each, in arrival order.

Stages and synchronisation
--------------------------
``sync="barrier"``: a stage starts when the previous one has finished
everywhere.  ``sync="ranks"``: a rank starts stage ``s + 1`` when all its
receives of stage ``s`` are complete; its stage-``s`` messages leave when it
starts stage ``s``.  ``iterations`` repeats the stages (iteration ``i + 1``'s
stage 0 follows iteration ``i``'s last stage under the same rule).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .. import _core
from ..errors import TimeModelError
from ..machine import Allocation, Machine
from ..mapping import Mapping
from ..metrics import _resolve, as_pattern
from ..pattern import Pattern
from .model import TimeModel

__all__ = ["predict", "TimePrediction", "METHODS", "SYNCS", "stages_of", "message_table"]

METHODS = ("flow", "hockney", "loggp")
SYNCS = ("barrier", "ranks")


@dataclass(frozen=True, eq=False)
class TimePrediction:
    """What :func:`predict` found.

    Attributes
    ----------
    makespan : float
        Seconds until the last message of the last iteration is complete.
    finish : ndarray, shape (iterations, flows)
        Completion time of every message (column order: :attr:`messages`).
    stage_end : ndarray, shape (iterations, stages)
        When each stage is over: its last message's completion (an empty
        stage ends when the one before it did).
    bottleneck : ndarray of int, shape (stages,)
        Per stage, the network link that needs longest to carry the stage's
        bytes at full bandwidth (``-1``: no network traffic).
    bottleneck_time : ndarray, shape (stages,)
        That link's bytes / bandwidth: a lower bound on the stage's transfer time.
    messages : dict of ndarray
        One row per flow: ``src``, ``dst`` (ranks), ``stage``, ``bytes``,
        ``level`` (LCA level of the two PEs), ``latency``.
    method, sync : str
    iterations : int
    events : int
        Simulation events (flows starting to transfer or finishing in one
        batch); 0 for ``"loggp"``.
    """

    makespan: float
    finish: np.ndarray
    stage_end: np.ndarray
    bottleneck: np.ndarray
    bottleneck_time: np.ndarray
    messages: dict = field(repr=False)
    method: str = "flow"
    sync: str = "barrier"
    iterations: int = 1
    events: int = 0

    @property
    def stage_time(self) -> np.ndarray:
        """Duration of every (iteration, stage): its end minus the previous stage's end."""
        flat = self.stage_end.ravel()
        return np.diff(flat, prepend=0.0).reshape(self.stage_end.shape)

    def to_dict(self) -> dict:
        """Plain JSON-able dict (lists for arrays)."""
        return {
            "makespan": self.makespan, "method": self.method, "sync": self.sync, "iterations": self.iterations,
            "events": self.events, "stage_end": self.stage_end.tolist(), "stage_time": self.stage_time.tolist(),
            "bottleneck": self.bottleneck.tolist(), "bottleneck_time": self.bottleneck_time.tolist(),
            "finish": self.finish.tolist(), "messages": {k: v.tolist() for k, v in self.messages.items()},
        }

    def __repr__(self) -> str:
        s = self.stage_end.shape[1]
        return (f"TimePrediction({self.makespan:.6g} s, {self.finish.shape[1]} messages, {s} stage"
                f"{'s' * (s != 1)} x {self.iterations}, method={self.method!r}, sync={self.sync!r})")


def stages_of(work: Any) -> tuple[Pattern, ...]:
    """The stages of the work :func:`predict` takes: a Schedule's, a list of
    Patterns, or one pattern (anything :func:`topomap.evaluate` accepts) as
    one stage; every stage must have the same number of processes.

    Examples
    --------
    >>> from topomap.collectives.schedules import ring_allgather
    >>> [st.nnz for st in stages_of(ring_allgather(4))]
    [4, 4, 4]
    """
    stages = getattr(work, "stages", None)
    if stages is None:
        if isinstance(work, (list, tuple)) and work and all(isinstance(s, Pattern) for s in work):
            stages = tuple(work)
        else:
            stages = (as_pattern(work),)
    stages = tuple(stages)
    if not stages:
        raise TimeModelError("the schedule has no stages")
    n = stages[0].n
    for k, st in enumerate(stages):
        if not isinstance(st, Pattern):
            raise TimeModelError(f"stage {k} is a {type(st).__name__}, not a Pattern")
        if st.n != n:
            raise TimeModelError(f"stage {k} has {st.n} processes but stage 0 has {n}: every stage of a "
                                 f"schedule must describe the same ranks")
    return stages


def _check_choice(value: Any, allowed: Sequence[str], what: str) -> str:
    if value not in allowed:
        raise TimeModelError(f"{what} must be one of {', '.join(map(repr, allowed))}, not {value!r}")
    return value


def message_table(stages: tuple[Pattern, ...]) -> dict[str, np.ndarray]:
    """One row per message entry of the stages, stage by stage in CSR order
    (by sender, then receiver): ``src``, ``dst``, ``stage``, ``bytes`` and
    ``msgs`` (1 where a pattern counts no messages).  The flows' order in
    :attr:`TimePrediction.finish` and in the SimGrid replay.

    Examples
    --------
    >>> from topomap.collectives.schedules import binomial_bcast
    >>> t = message_table(stages_of(binomial_bcast(4, bytes=10)))
    >>> t["stage"].tolist(), t["src"].tolist(), t["dst"].tolist()
    ([0, 1, 1], [0, 0, 2], [2, 1, 3])
    """
    return {"src": np.concatenate([np.repeat(np.arange(st.n, dtype=np.int32), np.diff(st.indptr)) for st in stages]),
            "dst": np.concatenate([st.indices.astype(np.int32) for st in stages]),
            "stage": np.repeat(np.arange(len(stages), dtype=np.int32), [st.nnz for st in stages]),
            "bytes": np.concatenate([st.bytes for st in stages]),
            "msgs": np.concatenate([st.msgs if st.msgs is not None else np.ones(st.nnz) for st in stages])}


def _flows(stages: tuple[Pattern, ...], scale: float) -> dict[str, np.ndarray]:
    out = message_table(stages)
    with np.errstate(over="ignore"):
        out["bytes"] = out["bytes"] * scale
    bad = np.flatnonzero(~np.isfinite(out["bytes"]))
    if bad.size:
        i = int(bad[0])
        raise TimeModelError(f"stage {out['stage'][i]}: message {out['src'][i]} -> {out['dst'][i]} has bytes "
                             f"{out['bytes'][i]} after bytes_scale={scale}")
    return out


def predict(work: Any, where: "Allocation | Machine | str", mapping: "Mapping | Any",
            model: TimeModel | None = None, *, sync: str = "barrier", iterations: int = 1,
            method: str = "flow", bytes_scale: float = 1.0) -> TimePrediction:
    """Predict the time a pattern or a schedule takes on a placement.

    Parameters
    ----------
    work : Pattern, Schedule or sequence of Pattern
        One phase (every message starts together) or stages.
    where : Allocation, Machine or spec string
        The machine (and, with an Allocation, the PEs the mapping may use).
    mapping : Mapping or array of PE ids
        PE of every rank.
    model : TimeModel, optional
        Default :meth:`TimeModel.default`.
    sync : {"barrier", "ranks"}
        How stages follow each other (module docstring).
    iterations : int
        How many times the stages run.
    method : {"flow", "hockney", "loggp"}
        Congestion-aware max-min simulation, or contention-free models.
    bytes_scale : float
        Multiplies every message's bytes (e.g. to sweep message sizes).

    Returns
    -------
    TimePrediction

    Examples
    --------
    Two 1 MB messages share the one link between nodes 0 and 1 of a 2-node
    mesh; alone, each would take 1 MB / 1 GB/s = 1 ms:

    >>> import topomap as tm
    >>> from topomap.timemodel import TimeModel, predict
    >>> model = TimeModel({"PE": (0, 1e9), "intra-node": (0, 1e9), "network": (0, 1e9)},
    ...                   link_bandwidth=1e9, hop_latency=0)
    >>> pat = tm.Pattern.from_edges([0, 1], [2, 3], [1e6, 1e6], n=4)
    >>> predict(pat, tm.machine("mesh:2/2"), [0, 1, 2, 3], model).makespan
    0.002
    >>> predict(pat, tm.machine("mesh:2/2"), [0, 1, 2, 3], model, method="hockney").makespan
    0.001
    """
    model = TimeModel.default() if model is None else model
    if not isinstance(model, TimeModel):
        raise TimeModelError(f"model must be a TimeModel, not {type(model).__name__}")
    _check_choice(sync, SYNCS, "sync")
    _check_choice(method, METHODS, "method")
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise TimeModelError(f"iterations must be a positive integer, got {iterations!r}")
    if isinstance(bytes_scale, bool) or not isinstance(bytes_scale, (int, float, np.integer, np.floating)) \
            or not math.isfinite(bytes_scale) or bytes_scale <= 0:
        raise TimeModelError(f"bytes_scale must be a positive finite number, got {bytes_scale!r}")
    stages = stages_of(work)
    _, machine, pe = _resolve(stages[0], where, mapping)
    f = _flows(stages, float(bytes_scale))
    pa, pb = pe[f["src"]], pe[f["dst"]]
    level = machine.level_of(pa, pb).astype(np.int32)
    used = np.unique(level)
    alpha, bw = model.level_arrays(machine, used)
    names = model.level_classes(machine, used)
    na, nb = machine.node_of(pa), machine.node_of(pb)
    hops = np.zeros(len(pa), dtype=np.int64)
    inter = na != nb
    if inter.any():
        hops[inter] = machine.hops(na[inter], nb[inter])
    latency = f["msgs"] * alpha[level] + hops * model.hop_latency
    cap = bw[level]
    unlimited = np.flatnonzero(~inter & np.isinf(cap) & (f["bytes"] > 0))
    if unlimited.size:
        i = int(unlimited[0])
        raise TimeModelError(f"link class {names[level[i]]!r} has infinite bandwidth, but message "
                             f"{f['src'][i]} -> {f['dst'][i]} stays inside a node, where no link limits it")
    link_bw = machine.capacities() * model.link_bandwidth
    messages = {"src": f["src"], "dst": f["dst"], "stage": f["stage"], "bytes": f["bytes"], "level": level,
                "latency": latency}
    bottleneck, bottleneck_time = _bottlenecks(stages, machine, pe, link_bw, float(bytes_scale))
    if method == "loggp":
        finish, stage_end = _loggp(f, level, hops * model.hop_latency, model.level_loggp(machine, used), len(stages), stages[0].n, sync, iterations)
        return TimePrediction(float(finish.max(initial=0.0)), finish, stage_end, bottleneck, bottleneck_time,
                              messages, method, sync, int(iterations), 0)
    res = _core.flowsim(machine._core, pa.astype(np.int32), pb.astype(np.int32), f["bytes"], latency, cap,
                        f["stage"], f["src"], f["dst"], link_bw, len(stages), stages[0].n,
                        SYNCS.index(sync), int(iterations), method == "flow")
    return TimePrediction(float(res["makespan"]), res["finish"], res["stage_end"], bottleneck, bottleneck_time,
                          messages, method, sync, int(iterations), int(res["events"]))


def _bottlenecks(stages: tuple[Pattern, ...], machine: Machine, pe: np.ndarray, link_bw: np.ndarray,
                 scale: float) -> tuple[np.ndarray, np.ndarray]:
    link = np.full(len(stages), -1, dtype=np.int64)
    secs = np.zeros(len(stages))
    ones = np.ones(4)
    for k, st in enumerate(stages):
        if st.nnz == 0:
            continue
        _, load, _ = _core.evaluate(machine._core, st.indptr, st.indices, st.bytes, pe, ones, None)
        t = load * scale / link_bw
        if t.size and t.max() > 0:
            link[k] = int(np.argmax(t))
            secs[k] = float(t[link[k]])
    return link, secs


def _group_cummax(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Running maximum of ``values`` restarting at every index in ``starts``:
    each group is lifted above all earlier ones, so one accumulate serves all."""
    gid = np.cumsum(np.isin(np.arange(values.size), starts)) - 1
    lift = gid * (float(values.max() - values.min()) + 1.0)
    return np.maximum.accumulate(values + lift) - lift


def _loggp(f: dict, level: np.ndarray, wire: np.ndarray, params: list, nstages: int, nranks: int, sync: str,
           iterations: int) -> tuple[np.ndarray, np.ndarray]:
    L, o, g, G = (np.array([getattr(p, k) if p else np.nan for p in params])[level] for k in ("L", "o", "g", "G"))
    L = L + wire                                 # the route's hop latencies, as in the flow model
    k = np.maximum(f["msgs"], 1.0)
    m = np.maximum(f["bytes"] / k, 1.0)
    inject = o + (m - 1) * G
    step = k * np.maximum(g, inject)            # the sender's time for the entry's messages
    flight = inject + L                          # from the last message's start to its arrival
    nflows = len(level)
    finish = np.zeros((iterations, nflows))
    stage_end = np.zeros((iterations, nstages))
    ready = np.zeros(nranks)
    last = 0.0
    order_by_stage = [np.flatnonzero(f["stage"] == s) for s in range(nstages)]
    for it in range(iterations):
        for s in range(nstages):
            idx = order_by_stage[s]            # CSR order: by sender, then destination
            if idx.size == 0:
                stage_end[it, s] = last
                continue
            src, dst = f["src"][idx], f["dst"][idx]
            # each sender's entries one after another, from when it is ready
            done_sending = np.cumsum(step[idx])
            first = np.r_[True, src[1:] != src[:-1]]
            base = np.maximum.accumulate(np.where(first, np.arange(idx.size), 0))
            before = done_sending - step[idx] - (done_sending[base] - step[idx][base])
            start_last = ready[src] + before + step[idx] - np.maximum(g[idx], inject[idx])
            arrive = start_last + flight[idx]
            # each receiver handles its arrivals one at a time, o per message
            order = np.lexsort((arrive, dst))
            d, a = dst[order], arrive[order]
            over = (o[idx] * k[idx])[order]
            starts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]])
            csum = np.cumsum(over)
            group_base = np.repeat(csum[starts] - over[starts], np.diff(np.append(starts, d.size)))
            s_incl = csum - group_base
            done = s_incl + _group_cummax(a - (s_incl - over), starts)
            complete = np.empty_like(done)
            complete[order] = done
            finish[it, idx] = complete
            send_end = np.zeros(nranks)
            np.maximum.at(send_end, src, ready[src] + before + step[idx])
            recv_end = np.zeros(nranks)
            np.maximum.at(recv_end, dst, complete)
            end = float(max(complete.max(), send_end.max()))
            if sync == "barrier":
                ready[:] = end
            else:
                ready = np.maximum(ready, np.maximum(recv_end, send_end))
            last = max(last, end)
            stage_end[it, s] = last
    return finish, stage_end
