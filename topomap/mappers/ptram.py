"""PTRAM: Parallel Topology- and Routing-Aware Mapping, serial.

Mirsadeghi, PhD thesis, Queen's University 2017, Ch. 3 §3.3 (Mirsadeghi &
Afsahi, IPDPSW/HIPS 2016); notes 000 §2.  Three steps
(csrc/core/map_ptram.c; the exact order of operations and tie rules are in
csrc/include/topomap/map_ptram.h):

1. group the processes into nodes (multilevel partitioning with hard node
   capacities) and build the nodal pattern between the groups;
2. the greedy heuristic (Alg. 3.1): the next group is the one with the most
   traffic to placed groups (plus ``alpha`` x its traffic to unplaced ones,
   ``alpha = 1 / (placed + 1)``); it goes to the free node where the hybrid
   metric HB + MC + NZCA + NZCV of the partial mapping, under the machine's
   real routes, is lowest;
3. the refinement (Alg. 3.2): every node leader whose group sends or
   receives over the most congested link tries swaps with the groups of its
   ``k`` nearest nodes; the one swap that lowers the maximum congestion most
   is applied; at most ``rounds`` rounds, stopping after a round without
   one.  ``plateau=True`` (not in the thesis) also accepts a swap that keeps
   the maximum and lowers the hottest link's load, so that several links
   tied at the maximum no longer stop the refinement.

Inside a node the processes take the PEs in rank order.  The seed only
reaches the partitioner of step 1; steps 2 and 3 are deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .. import _core
from ..errors import MappingError
from ..machine import Allocation
from ..metrics import as_pattern
from ..pattern import Pattern
from ..registry import register
from ._options import core_map, is_int
from .grids import grid_option, process_coords

__all__ = ["ptram", "run_ptram", "PtramResult", "DEFAULT_K", "EXHAUSTIVE_NODES", "DEFAULT_CANDIDATES"]

#: Refinement radius used when ``k`` is not given (the thesis gives none;
#: chosen with ``benchmarks/bench_ptram.py --sweep-k``); the C core's
#: TOPOMAP_PTRAM_DEFAULT_K.
DEFAULT_K = 8
#: ``candidates=None`` scores every free node (the thesis) up to this many allocation nodes and
#: ``DEFAULT_CANDIDATES`` nodes per unit above (the C core's TOPOMAP_PTRAM_EXHAUSTIVE_NODES and
#: TOPOMAP_PTRAM_DEFAULT_CANDIDATES): scoring every node makes the greedy step O(nodes^2) tries.
EXHAUSTIVE_NODES = 4096
DEFAULT_CANDIDATES = 24


@dataclass(frozen=True)
class PtramResult:
    """A PTRAM run and what each of its steps did.

    Attributes
    ----------
    pe_of : numpy.ndarray
        int32 PE of every process.
    group : numpy.ndarray
        Unit ("super-process") of every process: its group, or the process
        itself when ``partition`` is off.
    order : numpy.ndarray
        Units in the order the greedy step placed them.
    unit_node : numpy.ndarray
        Allocation node (index into the allocation's nodes in order of first
        appearance) of every unit after the refinement.
    round_mc : numpy.ndarray
        Maximum congestion after the greedy step, then after each round.
    rounds_done : int
        Refinement rounds that applied a swap (or a move to an empty node).
    greedy_hybrid : float
        Hybrid metric of the greedy step's node mapping.
    seconds : dict
        Wall time of ``partition``, ``greedy`` and ``refine``.
    """

    pe_of: np.ndarray
    group: np.ndarray
    order: np.ndarray
    unit_node: np.ndarray
    round_mc: np.ndarray
    rounds_done: int
    greedy_hybrid: float
    seconds: dict


def _check_options(weights: Any, k: Any, rounds: Any, partition: Any, plateau: Any, candidates: Any) -> np.ndarray:
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise MappingError(f"ptram option weights = {weights!r} must be 4 numbers") from None
    if w.shape != (4,):
        raise MappingError(f"ptram option weights = {weights!r} must be 4 numbers (HB, MC, NZCA, NZCV)")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise MappingError(f"ptram option weights = {weights!r} must be finite and >= 0")
    if not is_int(k) or not 1 <= k < 2**31:
        raise MappingError(f"ptram option k = {k!r} must be an integer >= 1")
    if not is_int(rounds) or not 0 <= rounds < 2**31:
        raise MappingError(f"ptram option rounds = {rounds!r} must be an integer >= 0")
    if candidates is not None and (not is_int(candidates) or not 0 <= candidates < 2**31):
        raise MappingError(f"ptram option candidates = {candidates!r} must be None (auto), 0 (every free node) "
                           "or a count >= 1")
    for name, value in (("partition", partition), ("plateau", plateau)):
        if not isinstance(value, (bool, np.bool_, int, np.integer)) or value not in (0, 1):
            raise MappingError(f"ptram option {name} = {value!r} must be True/1 or False/0")
    return w


def run_ptram(pattern: Pattern, allocation: Allocation, *, seed: int = 0, capacity: int = 1,
              progress: Callable[[float], Any] | None = None, weights: Sequence[float] = (1, 1, 1, 1),
              k: int = DEFAULT_K, rounds: int = 10, partition: bool = True, plateau: bool = False,
              candidates: int | None = None, grid: Any = None) -> PtramResult:
    """Run PTRAM and return the mapping with the trace of each step.

    ``tm.map(pattern, allocation, method="ptram", ...)`` returns the same
    ``pe_of``; use this function to see the groups, the greedy order, the
    maximum congestion round by round and the time of each step.

    Parameters
    ----------
    pattern : Pattern or array-like
        The communication pattern.
    allocation : Allocation
        Any machine: the metrics come from its routing oracle.
    seed : int
        Seed of the step-1 partitioner.
    capacity : int
        Most processes per PE.
    progress : callable, optional
        Called with the fraction done; returning True cancels with
        :class:`~topomap.Cancelled` (as for :func:`topomap.map`).
    weights : sequence of 4 float
        Hybrid weights of hop-bytes, max congestion, non-zero congestion
        average and variance, raw values (the thesis: 1, 1, 1, 1).
    k : int
        Nodes around each leader searched by the refinement (>= 1).
    rounds : int
        Most refinement rounds (0: the greedy mapping only).
    partition : bool
        Group processes into nodes first (the thesis).  False: every process
        is placed on its own, a node taking processes while it has slots.
    plateau : bool
        Also accept refinement swaps that keep the maximum congestion and
        lower the hottest link's load (not in the thesis, which stops when
        no swap lowers the maximum).
    candidates : int or None
        Free nodes the greedy step scores for each unit.  0: every free node
        (the thesis; O(nodes^2) tries in all).  c >= 1: the c free nodes a
        breadth-first search of the network reaches first from the nodes of
        the unit's placed neighbours, a vertex's neighbours lowest first (not
        in the thesis).  None:
        every node up to ``EXHAUSTIVE_NODES`` allocation nodes, else
        ``DEFAULT_CANDIDATES``.
    grid : "auto", None or array_like
        The processes' grid for step 1
        (:func:`~topomap.mappers.grids.process_coords`): where boxes of it
        tile the nodes, each node gets a box (the least surface); else the
        partitioner groups them.  Default None, the thesis's partitioning,
        which :func:`topomap.mpi.distributed_ptram` also runs.  With
        ``"auto"`` the 100^3 stencil maps in 4.6 s of CPU instead of 27-29 s
        on ``torus:40x40x40/16`` (hop-bytes 0.97 x, maximum congestion
        0.91 x) and in 7.5 s instead of 27-28.5 s on ``fattree:k=40,levels=3/16``
        (0.94 x, 0.88 x).

    Returns
    -------
    PtramResult

    Raises
    ------
    MappingError
        On an option out of range, or processes that do not fit.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.mappers.ptram import run_ptram
    >>> alloc = tm.machine("fattree:k=4,levels=2/2").allocate(16)
    >>> pat = tm.generators.stencil_2d((4, 4), weights=(3, 1))
    >>> res = run_ptram(pat, alloc, seed=1)
    >>> len(res.order), bool(res.round_mc[-1] <= res.round_mc[0])
    (8, True)
    """
    w = _check_options(weights, k, rounds, partition, plateau, candidates)
    if not isinstance(allocation, Allocation):
        raise MappingError(f"ptram needs an Allocation (machine.allocate(...)), got {type(allocation).__name__}")
    pattern = as_pattern(pattern)
    pe_of, tr = core_map("ptram", _core.map_ptram, pattern, allocation, seed, capacity, progress, weights=w, k=int(k),
                         rounds=int(rounds), partition=int(bool(partition)), plateau=int(bool(plateau)),
                         candidates=-1 if candidates is None else int(candidates), trace=True,
                         grid=process_coords(pattern, grid, "ptram", "grid", ranks=False) if partition else None)
    return PtramResult(pe_of=pe_of, group=tr["group"], order=tr["order"], unit_node=tr["unit_node"],
                       round_mc=tr["round_mc"], rounds_done=tr["rounds_done"], greedy_hybrid=tr["greedy_hybrid"],
                       seconds=dict(zip(("partition", "greedy", "refine"), tr["seconds"])))


@register("ptram", "greedy hybrid-metric node mapping under the real routes, then max-congestion swaps (PTRAM)",
          options={
              "weights": ((1.0, 1.0, 1.0, 1.0), "hybrid metric weights of HB, MC, NZCA, NZCV on raw values"),
              "k": (DEFAULT_K, "refinement radius: nearest nodes each leader tries to swap with"),
              "rounds": (10, "most refinement rounds; 0 = greedy only"),
              "partition": (True, "group processes into nodes first (False: place processes one by one)"),
              "plateau": (False, "also accept refinement swaps that keep the max congestion and lower the "
                                 "hottest link's load (not in the thesis)"),
              "candidates": (None, "free nodes the greedy step scores per unit, nearest its placed neighbours; "
                                   f"0 = all (the thesis); None = all up to {EXHAUSTIVE_NODES} nodes, else "
                                   f"{DEFAULT_CANDIDATES}"),
              "grid": grid_option(None),
          },
          source="Mirsadeghi 2017 §3.3 (Algs. 3.1, 3.2); Mirsadeghi & Afsahi 2016")
def ptram(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
          progress: Callable[[float], Any] | None, weights: Sequence[float], k: int, rounds: int,
          partition: bool, plateau: bool, candidates: int | None, grid: Any) -> np.ndarray:
    """PTRAM placement: ``pe_of`` for ``pattern`` on ``allocation``.

    Parameters
    ----------
    pattern : Pattern
    allocation : Allocation
    seed, capacity, progress
        As for :func:`topomap.map`.
    weights, k, rounds, partition, plateau, candidates, grid
        As for :func:`run_ptram`.

    Returns
    -------
    numpy.ndarray
        int32 PE of every process.

    Examples
    --------
    The thesis's weighted 2-D 5-point stencil on 64 GPC nodes scattered over
    the fabric, against the launcher's block order:

    >>> import topomap as tm
    >>> alloc = tm.machine("gpc/8").allocate(512, policy="random", seed=0)
    >>> pat = tm.generators.stencil_2d((32, 16), weights=(1, 3))
    >>> mp = tm.map(pat, alloc, method="ptram", seed=0)
    >>> ours, block = tm.evaluate(pat, alloc, mp), tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block"))
    >>> ours.max_congestion, block.max_congestion
    (28.0, 99.0)
    """
    return run_ptram(pattern, allocation, seed=seed, capacity=capacity, progress=progress, weights=weights, k=k,
                     rounds=rounds, partition=partition, plateau=plateau, candidates=candidates,
                     grid=grid).pe_of
