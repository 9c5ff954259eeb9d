"""Slow reference of Phase 1 (Alg. 1 + Alg. 2, note 002 s2) on Python sets, for cross-checks.

It recounts every common neighbourhood from the active sets instead of keeping C = A A^T,
and runs Alg. 2 as each rank would, from the choices and statuses its friends sent in the
previous round.  The open choices are those documented in csrc/core/nbr_match.c and
csrc/core/nbr_phase1.c; the C simulator must give the same pattern.
"""

from __future__ import annotations

from typing import Sequence

from .graph import NeighborGraph

__all__ = ["phase1_reference", "match_round_robin"]


def _key(p: int, q: int, weight: dict[int, int], node: Sequence[int] | None,
         distance: Sequence[Sequence[int]] | None) -> tuple:
    """Sort key of friend q for rank p, smaller preferred: path cost (the node distance, or
    0 on p's node and 1 elsewhere), then the most common neighbours, then the lowest rank."""
    if node is None:
        cost = 0
    elif distance is None:
        cost = int(node[p] != node[q])
    else:
        cost = int(distance[node[p]][node[q]])
    return (cost, -weight[q], q)


def match_round_robin(friends: dict[int, dict[int, int]], node: Sequence[int] | None = None,
                      distance: Sequence[Sequence[int]] | None = None
                      ) -> tuple[dict[int, int], dict[int, int], int]:
    """Alg. 2 for the ranks in ``friends`` (rank -> {friend: common count}); ``node`` and
    ``distance`` as in :func:`topomap.neighborhood.combine`.

    Returns (partner of each paired rank, finishing round of each rank, Alg. 2 messages).

    Examples
    --------
    >>> match_round_robin({0: {1: 5}, 1: {0: 5, 2: 4}, 2: {1: 4}})
    ({0: 1, 1: 0}, {0: 0, 1: 0, 2: 1}, 8)
    """
    cand = {p: set(f) for p, f in friends.items()}
    fin: dict[int, int] = {}
    partner: dict[int, int] = {}
    old: dict[int, int | None] = {}
    prev_choice: dict[int, int | None] = {}
    k = 0
    while len(fin) < len(friends):
        choice: dict[int, int | None] = {}
        for p in friends:
            if p in fin:
                continue
            cand[p] = {q for q in cand[p] if q not in fin}
            o = old.get(p)
            if k == 0:
                c = min(cand[p], key=lambda q: _key(p, q, friends[p], node, distance), default=None)
            elif o is not None and o not in fin and p < o:
                c = o
            else:
                lower = [g for g in friends[p] if g < p and g not in fin and prev_choice.get(g) == p]
                if lower:
                    c = min(lower, key=lambda q: _key(p, q, friends[p], node, distance))
                else:
                    cand[p].discard(o)
                    c = min(cand[p], key=lambda q: _key(p, q, friends[p], node, distance), default=None)
            choice[p] = c
        done = {}
        for p, c in choice.items():
            if c is None:
                done[p] = k
            elif choice.get(c) == p:
                partner[p] = c
                done[p] = k
        fin.update(done)
        old.update(choice)
        prev_choice = choice
        k += 1
    messages = sum(2 * (min(fin[p], fin[q]) + 1) for p in friends for q in friends[p])
    return partner, fin, messages


def phase1_reference(graph: NeighborGraph, theta: int = 4, *, max_iterations: int = 0,
                     node: Sequence[int] | None = None, distance: Sequence[Sequence[int]] | None = None,
                     cumulative: bool = False) -> dict:
    """Phase 1 for every rank of ``graph`` on sets; the same dict keys as the C core's.
    ``cumulative``: each rank of a pair drops only the half its friend takes on (nbr_phase1.c).

    Examples
    --------
    >>> from topomap.neighborhood import NeighborGraph
    >>> g = NeighborGraph.from_lists([[2, 3, 4, 5], [2, 3, 4, 5], [], [], [], []])
    >>> r = phase1_reference(g, theta=4)
    >>> r["steps"], r["final"][0]
    ([[(0, 1, [2, 3])], [(0, 0, [4, 5])], [], [], [], []], [])
    """
    n = graph.n
    out = [set(graph.destinations(p).tolist()) for p in range(n)]
    taken: list[set[int]] = [set() for _ in range(n)]
    inloop = set(range(n))
    steps: list[list[tuple[int, int, list[int]]]] = [[] for _ in range(n)]
    done_iter = [0] * n
    friends0 = [0] * n
    rounds = [0] * n
    stats = []
    t = 0
    while True:
        friends = {}
        for p in sorted(inloop):
            f = {q: len(out[p] & out[q]) for q in inloop if q != p}
            friends[p] = {q: w for q, w in f.items() if w >= theta}
            if t == 0:
                friends0[p] = len(friends[p])
        capped = max_iterations > 0 and t >= max_iterations
        for p in list(inloop):
            if not friends[p] or capped:
                inloop.discard(p)
                done_iter[p] = t
                del friends[p]
        if not inloop:
            break
        partner, fin, messages = match_round_robin(friends, node, distance)
        for p in friends:
            rounds[p] += fin[p] + 1
        for p, q in sorted(partner.items()):
            if p > q:
                continue
            cn = sorted(out[p] & out[q])
            first = (len(cn) + 1) // 2
            steps[p].append((t, q, cn[:first]))
            steps[q].append((t, p, cn[first:]))
            out[p] -= set(cn[first:] if cumulative else cn)
            out[q] -= set(cn[:first] if cumulative else cn)
            taken[p] |= set(cn[:first])
            taken[q] |= set(cn[first:])
        stats.append((len(friends), len(partner) // 2, max(fin.values()) + 1, messages))
        t += 1
    # the final direct sends: what is left, less (cumulatively) what each rank took on
    return {"steps": steps, "final": [sorted(o - k) for o, k in zip(out, taken)], "done_iter": done_iter,
            "friends0": friends0, "alg2_rounds": rounds, "iterations": stats}
