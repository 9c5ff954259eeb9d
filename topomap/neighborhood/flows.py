"""Where every edge's block travels under a combining pattern T: the origin sets of cumulative
combining (beyond the papers; definition in csrc/core/nbr_phase1.c).

Each block origin -> destination d has one holder at a time, at first its origin.  When p
pairs with friend f at iteration t and takes d on, every block for d that f holds moves to
p (f hands them over in the friend exchange).  The holder h left at the end sends all the
blocks for d it holds in one message: after its last step that took d on, or, when it never
took d on (its own block alone), in the final stage.  Without cumulative combining this
gives the paper's messages (origins {p, f} at step t); with it messages carry any number of
origins.  The edges themselves are read off T: every edge p -> d is either a final direct
send of p or in the common neighbourhood of a step of p.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Flows", "flows", "FINAL"]

#: The step index of the final direct sends and their receives.
FINAL = -1


@dataclass(frozen=True, eq=False)
class Flows:
    """Per on-entry j (an entry of the pattern's ``on_idx``): the origins the friend hands
    over, ``take_org[take_ptr[j]:take_ptr[j + 1]]`` (ascending), and ``sends[j]``: whether the
    step's rank sends its message to that destination right after this step.  Per message m
    (sorted by destination, final stage last, step, sender): ``msg_sender``, ``msg_dest``,
    ``msg_step`` (:data:`FINAL` for direct sends) and its origins
    ``msg_org[msg_ptr[m]:msg_ptr[m + 1]]`` (ascending)."""

    take_ptr: np.ndarray
    take_org: np.ndarray
    sends: np.ndarray
    msg_sender: np.ndarray
    msg_dest: np.ndarray
    msg_step: np.ndarray
    msg_ptr: np.ndarray
    msg_org: np.ndarray


def _csr(group: np.ndarray, values: np.ndarray, ngroups: int) -> tuple[np.ndarray, np.ndarray]:
    """values grouped by group (ascending values within a group) as (ptr, values)."""
    order = np.lexsort((values, group))
    ptr = np.zeros(ngroups + 1, dtype=np.int64)
    ptr[1:] = np.cumsum(np.bincount(group, minlength=ngroups))
    return ptr, values[order].astype(np.int32)


def flows(n: int, step_ptr: np.ndarray, step_iter: np.ndarray, step_friend: np.ndarray, on_ptr: np.ndarray,
          on_idx: np.ndarray, final_ptr: np.ndarray, final_idx: np.ndarray) -> Flows:
    """Follow every block through the steps (T's CSR arrays, as in
    :class:`~topomap.neighborhood.CombiningPattern`), one Alg. 1 iteration at a time.

    Examples
    --------
    >>> from topomap.neighborhood import NeighborGraph, combine
    >>> g = NeighborGraph.from_lists([[2, 3, 4, 5], [2, 3, 4, 5], [], [], [], []])
    >>> t = combine(g)
    >>> f = flows(t.n, t.step_ptr, t.step_iter, t.step_friend, t.on_ptr, t.on_idx, t.final_ptr, t.final_idx)
    >>> f.take_org.tolist(), f.msg_sender.tolist(), f.msg_org[f.msg_ptr[0]:f.msg_ptr[1]].tolist()
    ([1, 1, 0, 0], [0, 0, 1, 1], [0, 1])
    """
    n64 = np.int64(n)
    owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(step_ptr))
    ent_step = np.repeat(np.arange(step_iter.size), np.diff(on_ptr))
    ent_p, ent_f = owner[ent_step], step_friend[ent_step].astype(np.int64)
    ent_t, ent_d = step_iter[ent_step], on_idx.astype(np.int64)
    direct_from = np.repeat(np.arange(n, dtype=np.int64), np.diff(final_ptr))
    edges = np.unique(np.concatenate([ent_p * n64 + ent_d, ent_f * n64 + ent_d, direct_from * n64 + final_idx]))
    e_org, e_dst = edges // n64, edges % n64
    holder = e_org.copy()
    moved_j, moved_org = [], []
    by_iter = np.argsort(ent_t, kind="stable")
    cuts = np.searchsorted(ent_t[by_iter], np.arange(int(ent_t.max(initial=-1)) + 2))
    for t in range(cuts.size - 1):
        js = by_iter[cuts[t]:cuts[t + 1]]
        if not js.size:
            continue
        # within one iteration a rank is in at most one pair, so (friend, d) names one entry
        keys = ent_f[js] * n64 + ent_d[js]
        order = np.argsort(keys)
        keys = keys[order]
        at = holder * n64 + e_dst
        pos = np.minimum(np.searchsorted(keys, at), keys.size - 1)
        hit = np.flatnonzero(keys[pos] == at)
        j = js[order[pos[hit]]]
        moved_j.append(j)
        moved_org.append(e_org[hit])
        holder[hit] = ent_p[j]
    mj = np.concatenate(moved_j) if moved_j else np.zeros(0, np.int64)
    mo = np.concatenate(moved_org) if moved_org else np.zeros(0, np.int64)
    take_ptr, take_org = _csr(mj, mo, on_idx.size)
    # the last entry of each (rank, destination) taken on; it sends if the rank still holds d
    ent_key = ent_p * n64 + ent_d
    rev = np.arange(ent_key.size)[::-1]
    keys_u, first_rev = np.unique(ent_key[rev], return_index=True)
    last = rev[first_rev]
    msg_key, msg_of_edge = np.unique(holder * n64 + e_dst, return_inverse=True)
    sends = np.zeros(on_idx.size, dtype=bool)
    sends[last[np.isin(keys_u, msg_key)]] = True
    step = np.full(msg_key.size, FINAL, dtype=np.int32)
    taken = np.isin(msg_key, keys_u)
    step[taken] = ent_t[last[np.searchsorted(keys_u, msg_key[taken])]]
    sender, dest = (msg_key // n64).astype(np.int32), (msg_key % n64).astype(np.int32)
    order = np.lexsort((sender, step, step == FINAL, dest))
    rank_of = np.empty(msg_key.size, dtype=np.int64)
    rank_of[order] = np.arange(msg_key.size)
    msg_ptr, msg_org = _csr(rank_of[msg_of_edge.reshape(-1)], e_org, msg_key.size)
    return Flows(take_ptr, take_org, sends, sender[order], dest[order], step[order], msg_ptr, msg_org)
