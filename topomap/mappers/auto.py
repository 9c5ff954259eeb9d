"""``auto``: a small portfolio of mappers, the best on the user's objective, never worse than block.

No single mapper wins everywhere: on a 3-D torus ``recursive`` and Scotch
lead on hop-bytes, on fat trees ``hierarchy``, on congestion ``ptram`` or
Kumar's ``max-contention``, and on some instances every topology-aware
method loses to the launcher's order (the jacobi3d trace of
``notebooks/data`` on a 4x4x4 torus of 8-PE nodes: the best of greedy,
recursive, rcm, mahd and ptram has 1.21 x block's maximum congestion).  ``auto`` runs a few candidates chosen by the machine kind and the
job's size, scores each with the evaluator the user names and returns the
best.  ``block`` (the allocation order) is always a candidate, so the result
is never worse than block on the objective: an algorithm portfolio in the
sense of Rice's algorithm selection problem (Adv. Comput. 15, 1976) and
Gomes & Selman (Artif. Intell. 126, 2001), here with every member run.

Objectives (``objective=``), lower is better, all from :func:`topomap.evaluate`
or :func:`topomap.timemodel.predict` on the mapping:

``"hop_bytes"`` (default)
    Σ bytes × network links on the route.
``"max_congestion"``
    bytes / capacity on the busiest link under the machine's routes.
``"qap"``
    The QAP objective J = Σ bytes × machine distance (the hierarchy
    mapper's and KaHIP's; on tori and meshes it equals hop-bytes).
``"time"``
    The makespan :func:`~topomap.timemodel.predict` gives one phase of the
    pattern with the default :class:`~topomap.timemodel.TimeModel` (max-min
    link sharing).  The flow simulation costs up to minutes for tens of
    thousands of messages on a scattered placement, so a pattern with more
    than :data:`TIME_MESSAGES` messages is refused with a
    :class:`~topomap.MappingError` that names the other objectives.

Candidates within :data:`TIE` (1 %) of the best objective count as tied,
and the lower secondary metric decides (max congestion for hop-bytes and J,
hop-bytes for congestion and time), then the lower objective, then the
earlier candidate, block first: a method that only ties the launcher's order
is not taken, and no tie goes above block's objective.

Portfolio (:func:`portfolio`), by machine kind and the number of processes
``n``; ``topdown`` joins wherever it is registered, ``scotch`` runs only where
Scotch's ``gmap`` is installed (else it is skipped like any candidate that
refuses the machine, with the reason in ``options["skipped"]``):

==========================  ================================  =======================  =======================
machine kind                n <= 131,072, every objective     added for congestion     n > 131,072
                                                              and time
==========================  ================================  =======================  =======================
torus, mesh                 block, cyclic, hilbert,           ptram (<= 1,024 nodes),  block, cyclic, hilbert,
                            recursive, greedy, scotch         max-contention (<= 256)  topdown or recursive
hypercube                   block, cyclic, recursive,         as above                 block, cyclic,
                            greedy, scotch                                             topdown or recursive
tree, fat tree, one node    block, cyclic, hierarchy, aphid,  as above                 block, cyclic, topdown
                            recursive, greedy, scotch                                  or hierarchy (fast)
dragonfly, graph, fabric    block, cyclic, aphid, recursive,  as above                 block, cyclic,
                            greedy, scotch                                             topdown or recursive
==========================  ================================  =======================  =======================

The bounds keep the total cost near that of the slowest member (measured by
``benchmarks/bench_auto.py``; PTRAM grows with the square of the nodes, 2 s
at 864 nodes and 140 s at 6,912, max-contention faster still); beyond
131,072 processes only the O(n) orders and one scalable mapper run.  GPU
nodes use their network's portfolio; :func:`topomap.mappers.magc.magc`
accepts ``phase1="auto"``.  ``candidates=`` replaces the portfolio by the
named methods (with their default options), block always added.

Every candidate gets the same ``seed`` and ``capacity``, so the result is
deterministic by seed.  Progress is split evenly across the candidates; a
progress callable that returns true stops the portfolio with
:class:`~topomap.Cancelled` ("auto cancelled ... at 40%"), Ctrl-C with
KeyboardInterrupt.  The returned :class:`~topomap.Mapping` records in
``options``: ``winner`` (its method) and ``winner_options``, ``scores``
(objective value per candidate that ran, in portfolio order), ``skipped``
(candidate -> the reason it refused) and ``candidate_seconds``.

Examples
--------
>>> import topomap as tm
>>> pat = tm.generators.stencil_3d((8, 8, 8), points=7)
>>> alloc = tm.machine("torus:4x4x4/8").allocate(512, policy="fragmented", seed=1)
>>> mp = tm.map(pat, alloc, method="auto", objective="max_congestion")
>>> mp.method, mp.options["winner"] in mp.options["scores"]
('auto', True)
>>> got = tm.evaluate(pat, alloc, mp).max_congestion
>>> got == min(mp.options["scores"].values()) and got <= mp.options["scores"]["block"]
True
>>> [name for name, _ in portfolio(alloc, pat.n, "hop_bytes")][:4]
['block', 'cyclic', 'hilbert', 'recursive']
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from ..errors import Cancelled, MappingError
from ..machine import Allocation
from ..mapping import Mapping
from ..metrics import evaluate
from ..networks import FatTree, Hypercube, SingleNode, Torus, TreeNetwork
from ..pattern import Pattern
from ..registry import map as run_mapper
from ..registry import methods as registered
from ..registry import register
from ..timemodel.predict import predict

__all__ = ["auto", "portfolio", "OBJECTIVES", "SMALL", "PTRAM_NODES", "MAX_CONTENTION_NODES", "TIME_MESSAGES"]

#: What ``objective`` may name, and the metric that breaks its ties.
OBJECTIVES = {"hop_bytes": "max_congestion", "max_congestion": "hop_bytes", "qap": "max_congestion",
              "time": "hop_bytes"}
#: Candidates whose objective is within this fraction of the best are tied; the tie-breaking
#: metric decides (on the 10^5 stencil onto a k=18 fat tree: hop-bytes 0.491 and 0.493 x block,
#: max congestion 0.97 and 0.79: a 0.4 % hop-bytes difference is noise, 20 % of congestion is not).
TIE = 0.01
#: Up to this many processes every member of the kind's portfolio runs; above, only the scalable ones.
SMALL = 131_072
#: PTRAM joins for congestion and time up to this many allocated nodes (its cost grows with their square).
PTRAM_NODES = 1024
#: Kumar's max-contention joins for congestion and time up to this many allocated nodes.
MAX_CONTENTION_NODES = 256
#: ``objective="time"`` simulates every message of every candidate: refused above this many messages.
TIME_MESSAGES = 100_000

_GRID, _TREE, _OTHER = "grid", "tree", "other"


def _check_objective(objective: Any) -> None:
    if not isinstance(objective, str) or objective not in OBJECTIVES:
        raise MappingError(f"auto option objective = {objective!r} must be one of {', '.join(OBJECTIVES)}")


def _kind(allocation: Allocation) -> str:
    net = allocation.machine.network
    if isinstance(net, (Torus, Hypercube)):
        return _GRID
    if isinstance(net, (TreeNetwork, FatTree, SingleNode)):
        return _TREE
    return _OTHER


def portfolio(allocation: Allocation, n: int, objective: str = "hop_bytes") -> list[tuple[str, dict]]:
    """The candidates ``auto`` runs for ``n`` processes on ``allocation``: ``(method, options)``, block first.

    See the module docstring for the table.  Methods that are not
    registered (``topdown`` before it exists) are left out; whether a
    candidate applies to the machine is found by running it.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("fattree:k=4,levels=2/4").allocate(64)
    >>> [m for m, _ in portfolio(alloc, 64, "max_congestion")]       # doctest: +ELLIPSIS
    ['block', 'cyclic', 'hierarchy', 'aphid', 'recursive', 'greedy', 'scotch', ...'ptram', 'max-contention']
    >>> len(portfolio(alloc, 10**6))              # block, cyclic and one scalable mapper
    3
    """
    _check_objective(objective)
    kind = _kind(allocation)
    have = registered()
    hilbert = ["hilbert"] if isinstance(allocation.machine.network, Torus) else []
    names: list[tuple[str, dict]] = [("block", {}), ("cyclic", {})] + [(h, {}) for h in hilbert]
    if n > SMALL:
        if "topdown" in have:
            main: tuple[str, dict] = ("topdown", {})
        else:
            main = ("hierarchy", {"effort": "fast"}) if kind == _TREE else ("recursive", {})
        return names + [main]
    levels = ["hierarchy", "aphid"] if kind == _TREE else ["aphid"] if kind == _OTHER else []
    names += [(m, {}) for m in levels + ["recursive", "greedy", "scotch", "topdown"]]
    if objective in ("max_congestion", "time"):
        nodes = len(allocation.nodes())
        names += [("ptram", {})] if nodes <= PTRAM_NODES else []
        names += [("max-contention", {})] if nodes <= MAX_CONTENTION_NODES else []
    return [(m, o) for m, o in names if m in have]


def _score(objective: str, pattern: Pattern, allocation: Allocation, pe_of: np.ndarray) -> tuple[float, float]:
    """(objective, tie-breaking metric) of a placement."""
    met = evaluate(pattern, allocation, pe_of)
    second = float(getattr(met, OBJECTIVES[objective]))
    if objective == "time":
        return float(predict(pattern, allocation, pe_of).makespan), second
    return float(getattr(met, objective)), second


def _choose(done: list[tuple[tuple[float, float], str, dict, np.ndarray]], block: float) -> tuple:
    """The candidate of lowest tie-breaking metric among those within :data:`TIE` of the best
    objective and not above block's (ties: lower objective, then portfolio order)."""
    least = min(score[0] for score, *_ in done)
    near = [c for c in done if c[0][0] <= min(least + TIE * abs(least), block)]
    return min(near, key=lambda c: (c[0][1], c[0][0]))


def _plan(pattern: Pattern, allocation: Allocation, objective: str, candidates: Any) -> list[tuple[str, dict]]:
    _check_objective(objective)
    if objective == "time" and pattern.nnz > TIME_MESSAGES:
        raise MappingError(f"auto: objective='time' simulates every message of every candidate; this pattern has "
                           f"{pattern.nnz} messages, more than {TIME_MESSAGES} (use objective='hop_bytes', "
                           f"'max_congestion' or 'qap', or time one mapping with topomap.timemodel.predict)")
    if isinstance(candidates, str) or not isinstance(candidates, (tuple, list)):
        raise MappingError(f"auto option candidates = {candidates!r} must be a tuple of method names")
    if not candidates:
        return portfolio(allocation, pattern.n, objective)
    have = registered()
    for name in candidates:
        if name not in have or name == "auto":
            raise MappingError(f"auto option candidates names {name!r}, not a registered method other than auto; "
                               f"registered: {', '.join(m for m in have if m != 'auto')}")
    return [("block", {})] + [(m, {}) for m in dict.fromkeys(candidates) if m != "block"]


@register("auto", "a portfolio chosen by machine kind and size (always with block), the best by `objective`: "
                  "never worse than the allocation order on it",
          options={
              "objective": ("hop_bytes", "what the best candidate minimises: hop_bytes | max_congestion | qap | time "
                                         "(predicted seconds of one phase)"),
              "candidates": ((), "methods to run instead of the portfolio (block is always added); () = the "
                                 "portfolio for the machine kind and size"),
          },
          source="algorithm portfolio (Rice 1976; Gomes & Selman 2001) over the registered mappers", c_file="")
def auto(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
         progress: Callable[[float], Any] | None, objective: str, candidates: tuple) -> Mapping:
    """Run the portfolio and return the best placement on ``objective``, with what each candidate scored.

    Parameters
    ----------
    pattern : Pattern
    allocation : Allocation
    seed, capacity, progress
        As for :func:`topomap.map`; passed to every candidate.
    objective : {"hop_bytes", "max_congestion", "qap", "time"}
        The metric minimised (module docstring).
    candidates : tuple of str
        Methods to run instead of :func:`portfolio`'s (block is added).

    Returns
    -------
    Mapping
        The winner's ``pe_of``; ``options`` holds ``winner``,
        ``winner_options``, ``scores``, ``skipped`` and
        ``candidate_seconds`` (:func:`topomap.map` records them).

    Raises
    ------
    MappingError
        On an unknown objective or candidate, or ``objective="time"`` on a
        pattern of more than :data:`TIME_MESSAGES` messages.
    Cancelled
        When ``progress`` asked to stop.

    Examples
    --------
    >>> import topomap as tm
    >>> pat = tm.generators.stencil_2d((8, 8))
    >>> alloc = tm.machine("torus:4x4/4").allocate(64)
    >>> mp = tm.map(pat, alloc, method="auto", candidates=("random",), seed=1)
    >>> sorted(mp.options["scores"]), mp.options["winner"]
    (['block', 'random'], 'block')
    """
    plan = _plan(pattern, allocation, objective, candidates)
    k = len(plan)
    reached = [0.0]

    def overall(i: int) -> Callable[[float], Any] | None:
        if progress is None:
            return None

        def sub(f: float) -> Any:
            reached[0] = (i + min(max(float(f), 0.0), 1.0)) / k
            return progress(reached[0])
        return sub

    done: list[tuple[tuple[float, float], str, dict, np.ndarray]] = []
    scores: dict[str, float] = {}
    skipped: dict[str, str] = {}
    seconds: dict[str, float] = {}
    for i, (name, opts) in enumerate(plan):
        if progress is not None:
            reached[0] = i / k
            if progress(reached[0]):
                raise Cancelled.by_progress("auto", reached[0])
        t0 = time.perf_counter()
        try:
            mp = run_mapper(pattern, allocation, method=name, seed=seed, capacity=capacity, progress=overall(i),
                            **opts)
        except Cancelled:
            raise Cancelled.by_progress("auto", reached[0]) from None
        except MappingError as exc:          # the candidate refuses this machine or job: the others go on
            skipped[name] = str(exc)
            continue
        score = _score(objective, pattern, allocation, mp.pe_of)
        seconds[name] = time.perf_counter() - t0
        scores[name] = score[0]
        done.append((score, name, opts, mp.pe_of))
    best = _choose(done, scores["block"])
    return Mapping(best[3], method="auto", seed=seed, options={
        "winner": best[1], "winner_options": dict(best[2]), "scores": scores, "skipped": skipped,
        "candidate_seconds": seconds})
