"""Phase 1 (Alg. 1 + Alg. 2, note 002 s2) as one rank runs it, knowing only its own
neighbourhood, over point-to-point messages of any object with mpi4py's lowercase
``isend(obj, dest, tag)`` / ``recv(source, tag)``.

Per Alg. 1 iteration t every rank still involved (in the loop, or with active in-neighbours):

1. in the loop: friends = ranks sharing >= theta rows of M (row n = I_a(n), as received);
   none (or the cap reached): leave the loop, send DONE (with the step and origins of the
   message to come) to all of O_a;
2. in the loop: Alg. 2 rounds with the friends (choice, then status, to every friend that
   is neither paired nor terminal);
3. paired: CN = the rows of M that hold the partner, split as in nbr_phase1.c;
4. in the loop: one notification per active destination (ON(f) / OFF / NONE); every rank
   receives one from each active source and updates I_a and its receives;
5. every rank sends I_a to its active sources; ranks in the loop replace their rows by the
   lists of their active destinations (the M update of s2.3).

FIFO order per (source, tag) keeps the iterations aligned, so the result is the synchronous
simulator's (csrc/core/nbr_phase1.c): same preferences, splits and iteration cap.

Cumulative combining (``cumulative=True``) changes step 3 and the notifications: the pair
swaps the origin sets of what each takes on (one more message each way), each drops only
what its friend takes on and notifies it OFF, and the destinations it takes on hear nothing
(NONE) until the rank leaves the loop: then DONE tells each remaining destination the step
and origins of the message it will get (the last step that took it on, or the final stage).
"""

from __future__ import annotations

from typing import Any, Sequence

from .pattern import FINAL, RankPattern

__all__ = ["phase1_rank"]

TAG_INIT, TAG_NOTE, TAG_ROWS, TAG_CHOICE, TAG_STATUS, TAG_ORIGINS = 21, 22, 23, 24, 25, 26
DONE, NONE, ON, OFF = "done", "none", "on", "off"


def _prefer_key(p: int, q: int, weight: dict[int, int], node: Sequence[int] | None) -> tuple:
    same = 0 if node is None else -int(node[p] == node[q])
    return (same, -weight[q], q)


def _alg2(comm: Any, p: int, weight: dict[int, int], node: Sequence[int] | None) -> tuple[int | None, int, int]:
    """Alg. 2 from rank p's side: (partner or None, rounds run, messages sent)."""
    comm_set = set(weight)           # F_comm: friends neither paired nor terminal
    cand = set(weight)               # F_cand
    old: int | None = None
    prev: dict[int, Any] = {}
    k = sent = 0
    while True:
        cand &= comm_set
        if k == 0:
            c = min(cand, key=lambda q: _prefer_key(p, q, weight, node), default=None)
        elif old is not None and old in comm_set and p < old:
            c = old
        else:
            lower = [g for g in comm_set if g < p and prev.get(g) == p]
            if lower:
                c = min(lower, key=lambda q: _prefer_key(p, q, weight, node))
            else:
                cand.discard(old)
                c = min(cand, key=lambda q: _prefer_key(p, q, weight, node), default=None)
        peers = sorted(comm_set)
        reqs = [comm.isend(c, dest=q, tag=TAG_CHOICE) for q in peers]
        prev = {q: comm.recv(source=q, tag=TAG_CHOICE) for q in peers}
        for r in reqs:
            r.wait()
        paired = c is not None and prev.get(c) == p
        finished = paired or c is None
        reqs = [comm.isend(finished, dest=q, tag=TAG_STATUS) for q in peers]
        status = {q: comm.recv(source=q, tag=TAG_STATUS) for q in peers}
        for r in reqs:
            r.wait()
        comm_set -= {q for q, s in status.items() if s}
        k += 1
        sent += 2 * len(peers)
        if finished:
            return (c if paired else None), k, sent
        old = c


def _swap_origins(comm: Any, partner: int, handed: list) -> list:
    """Send the partner (destination, origins) of what it takes on; its list for what p takes on."""
    req = comm.isend(handed, dest=partner, tag=TAG_ORIGINS)
    taken = [(int(n), tuple(origins)) for n, origins in comm.recv(source=partner, tag=TAG_ORIGINS)]
    req.wait()
    return taken


def phase1_rank(comm: Any, rank: int, sources: Sequence[int], destinations: Sequence[int], theta: int = 4, *,
                max_iterations: int = 0, node: Sequence[int] | None = None,
                cumulative: bool = False) -> tuple[RankPattern, dict]:
    """Run Phase 1 on this rank; every rank of the topology must call it (all with the same
    ``cumulative``).

    Returns this rank's :class:`RankPattern` and its statistics (``done_iter``, ``rounds``:
    Alg. 2 rounds summed, ``friends``: friends at the first iteration, ``messages``: Phase 1
    messages this rank sent).  Sources and destinations must agree across ranks (checked by
    :func:`topomap.mpi.distributed_phase1` before calling this).
    """
    p = rank
    out_a = set(int(q) for q in destinations)
    in_a = set(int(o) for o in sources)
    sent = 0

    def exchange_rows() -> dict[int, set[int]]:
        nonlocal sent
        reqs = [comm.isend(sorted(in_a), dest=q, tag=TAG_ROWS) for q in sorted(in_a)]
        sent += len(reqs)
        rows = {n: set(comm.recv(source=n, tag=TAG_ROWS)) - {p} for n in sorted(out_a)} if inloop else {}
        for r in reqs:
            r.wait()
        return rows

    inloop = True
    rows = exchange_rows()
    steps: list[tuple[int, int, list[int], list[int]]] = []
    receives: list[tuple[int, int, tuple[int, ...]]] = []
    held = {q: (p,) for q in out_a}   # cumulative: the origins p holds per active destination
    last_on: dict[int, int] = {}      # cumulative: destination -> p's last step taking it on
    carried: list[tuple[list, list, list]] = []
    done_iter, rounds, friends0 = 0, 0, 0
    final: list[int] = []
    t = 0
    while inloop or in_a:
        partner = None
        reqs = []
        if inloop:
            count: dict[int, int] = {}
            for n in out_a:
                for q in rows.get(n, ()):
                    count[q] = count.get(q, 0) + 1
            weight = {q: c for q, c in count.items() if c >= theta}
            if t == 0:
                friends0 = len(weight)
            if not weight or (max_iterations > 0 and t >= max_iterations):
                inloop = False
                done_iter = t
                final = sorted(n for n in out_a if n not in last_on)
                for n in sorted(last_on.keys() & out_a):
                    carried[last_on[n]][2].append((n, held[n]))
                reqs = [comm.isend((DONE, steps[last_on[n]][0], held[n]) if n in last_on else (DONE, FINAL, (p,)),
                                   dest=n, tag=TAG_NOTE) for n in sorted(out_a)]
            else:
                partner, k, messages = _alg2(comm, p, weight, node)
                rounds += k
                sent += messages
        if inloop:
            notes = {n: NONE for n in out_a}
            if partner is not None:
                cn = sorted(n for n in out_a if partner in rows.get(n, ()))
                first = (len(cn) + 1) // 2
                on, off = (cn[:first], cn[first:]) if p < partner else (cn[first:], cn[:first])
                steps.append((t, partner, on, off))
                notes.update({n: (OFF, partner) for n in off})
                if cumulative:
                    sent += 1
                    taken = _swap_origins(comm, partner, [(n, held[n]) for n in off])
                    carried.append(([(n, held.pop(n)) for n in off], taken, []))
                    for n, origins in taken:
                        held[n] = tuple(sorted(held[n] + origins))
                        last_on[n] = len(steps) - 1
                    out_a -= set(off)
                else:
                    notes.update({n: (ON, partner) for n in on})
                    out_a -= set(cn)
            reqs = [comm.isend(v, dest=n, tag=TAG_NOTE) for n, v in sorted(notes.items())]
        sent += len(reqs)
        for o in sorted(in_a):
            note = comm.recv(source=o, tag=TAG_NOTE)
            if note == NONE:
                continue
            in_a.discard(o)
            if note[0] == DONE:
                receives.append((note[1], o, tuple(note[2])))
            elif note[0] == ON:
                receives.append((t, o, (min(o, note[1]), max(o, note[1]))))
        for r in reqs:
            r.wait()
        rows = exchange_rows()
        t += 1
    receives.sort(key=lambda r: (r[0] == FINAL, r[0], r[1]))
    view = RankPattern(p, steps, final, receives, carried if cumulative else None)
    return view, {"done_iter": done_iter, "rounds": rounds, "friends": friends0, "messages": sent}
