"""Predicted latency of a neighbour allgather, naive against combined, with
:func:`topomap.timemodel.predict` (our proposal of note 002 s8, not the paper's).

The naive allgather is one stage: every edge a message of m bytes.  The combined one has two
stages per Alg. 1 iteration t (the friend exchanges of t, m bytes each way, then the combined
messages of t, 2m bytes) and a final stage of direct messages; ``sync="ranks"`` lets a rank
go on as soon as its own receives of a stage are in, like the schedule's WAITs.  The default
``method="loggp"`` sends a rank's messages one after another, which is what combining saves;
the pack/unpack copies are not modelled.  With cumulative combining a friend exchange carries
one block per origin handed over and a combined message one per origin it delivers, sent in
the stage of the holder's last step for that destination.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..pattern import Pattern
from ..timemodel import predict
from .graph import NeighborGraph
from .pattern import CombiningPattern

__all__ = ["allgather_stages", "predict_latency", "SIZES"]

#: 4 B ... 64 KB, the sizes of the papers' sweeps and beyond the crossover.
SIZES = tuple(4 * 4 ** i for i in range(8))


def allgather_stages(graph: NeighborGraph, pattern: CombiningPattern | None, nbytes: float) -> list[Pattern]:
    """The stages of a neighbour allgather of ``nbytes`` per block (naive when ``pattern`` is None).

    Examples
    --------
    >>> from topomap.neighborhood import NeighborGraph, combine
    >>> g = NeighborGraph.from_lists([[2, 3, 4, 5], [2, 3, 4, 5], [], [], [], []])
    >>> [(s.indices.size, float(s.bytes.sum())) for s in allgather_stages(g, combine(g), 8)]
    [(2, 16.0), (4, 64.0), (0, 0.0)]
    """
    n = graph.n
    if pattern is None:
        src = np.repeat(np.arange(n), np.diff(graph.out_ptr))
        return [Pattern.from_edges(src, graph.out_idx, float(nbytes), n=n)]
    owner = np.repeat(np.arange(n), np.diff(pattern.step_ptr))
    stages = []
    handed = _handed_blocks(pattern) if pattern.cumulative else None
    fl = pattern.flows() if pattern.cumulative else None
    for t in range(int(pattern.step_iter.max(initial=-1)) + 1):
        at = np.flatnonzero(pattern.step_iter == t)
        if fl is not None:
            # the friend hands the step's rank one block per origin
            stages.append(Pattern.from_edges(pattern.step_friend[at], owner[at], nbytes * handed[at], n=n))
            m = np.flatnonzero(fl.msg_step == t)
            stages.append(Pattern.from_edges(fl.msg_sender[m], fl.msg_dest[m], nbytes * np.diff(fl.msg_ptr)[m], n=n))
            continue
        stages.append(Pattern.from_edges(owner[at], pattern.step_friend[at], float(nbytes), n=n))
        sizes = np.diff(pattern.on_ptr)[at]
        src = np.repeat(owner[at], sizes)
        dst = np.concatenate([pattern.on_idx[pattern.on_ptr[s]:pattern.on_ptr[s + 1]] for s in at])
        stages.append(Pattern.from_edges(src, dst, 2.0 * nbytes, n=n))
    src = np.repeat(np.arange(n), np.diff(pattern.final_ptr))
    stages.append(Pattern.from_edges(src, pattern.final_idx, float(nbytes), n=n))
    return stages


def _handed_blocks(pattern: CombiningPattern) -> np.ndarray:
    """Per step: the distinct origins whose blocks the friend hands over (an allgather sends
    each origin's block once, whatever destinations it serves)."""
    fl = pattern.flows()
    nsteps = pattern.step_iter.size
    ent_step = np.repeat(np.arange(nsteps, dtype=np.int64), np.diff(pattern.on_ptr))
    step_of = ent_step[np.repeat(np.arange(ent_step.size), np.diff(fl.take_ptr))]
    pairs = np.unique(step_of * pattern.n + fl.take_org)
    return np.bincount(pairs // pattern.n, minlength=nsteps).astype(float)


def predict_latency(graph: NeighborGraph, pattern: CombiningPattern, where: Any, mapping: Any,
                    sizes: Sequence[int] = SIZES, model: Any = None, *, method: str = "loggp") -> dict:
    """Predicted naive and combined allgather time per block size, and the crossover.

    Returns ``{"sizes", "naive", "combined", "reduction", "crossover"}``: seconds per size,
    the relative reduction (naive - combined) / naive, and the smallest size from which
    combining no longer wins (None when it wins at every size).

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.neighborhood import moore_graph, combine
    >>> g = moore_graph((8, 8), 2)
    >>> r = predict_latency(g, combine(g), tm.machine("torus:4x4/4"), list(range(64)), sizes=[4, 65536])
    >>> bool(r["reduction"][0] > 0.2), r["crossover"]
    (True, 65536)
    """
    naive, combined = [], []
    for m in sizes:
        naive.append(predict(allgather_stages(graph, None, m), where, mapping, model, sync="ranks",
                             method=method).makespan)
        combined.append(predict(allgather_stages(graph, pattern, m), where, mapping, model, sync="ranks",
                                method=method).makespan)
    naive_a, comb_a = np.array(naive), np.array(combined)
    reduction = (naive_a - comb_a) / naive_a
    loses = [int(s) for s, r in zip(sizes, reduction) if r <= 0]
    return {"sizes": [int(s) for s in sizes], "naive": naive_a, "combined": comb_a, "reduction": reduction,
            "crossover": loses[0] if loses else None}
