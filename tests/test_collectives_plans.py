"""Output-order plans (notes 000 §3.7) replayed without MPI: InitComm's exchange and EndShuffle's
permutation both give old-rank order, the ring offset table names the slot of every received block
(checked against the ring schedule's own items), InitComm as a stage, and bad permutations."""

import numpy as np
import pytest

from topomap.collectives import build
from topomap.collectives.plans import EndShuffle, InitComm, as_permutation, ring_offsets
from topomap.errors import MappingError

PERMS = [np.random.default_rng(s).permutation(n) for s, n in enumerate([1, 2, 3, 8, 13, 64])]


@pytest.mark.parametrize("old_of_new", PERMS, ids=[str(len(p)) for p in PERMS])
def test_initcomm_then_the_collective_is_in_old_order(old_of_new):
    n = len(old_of_new)
    inputs = [f"input of old {i}" for i in range(n)]
    held = [inputs[old_of_new[j]] for j in range(n)]          # new rank j is the process of old rank old_of_new[j]
    plan = InitComm.of(old_of_new)
    after = [None] * n
    for j in range(n):
        after[plan.send_to[j]] = held[j]
    assert after == [held[plan.recv_from[j]] for j in range(n)]
    assert after == inputs                                    # the allgather of `after` is in old-rank order
    assert plan.stage(4).nnz == int((plan.send_to != np.arange(n)).sum())


@pytest.mark.parametrize("old_of_new", PERMS, ids=[str(len(p)) for p in PERMS])
def test_end_shuffle_puts_blocks_back(old_of_new):
    n = len(old_of_new)
    new_order_result = [f"input of old {old_of_new[j]}" for j in range(n)]
    assert EndShuffle.of(old_of_new).apply(new_order_result) == [f"input of old {i}" for i in range(n)]


@pytest.mark.parametrize("old_of_new", PERMS[1:], ids=[str(len(p)) for p in PERMS[1:]])
def test_ring_offsets_follow_the_ring_schedule(old_of_new):
    n = len(old_of_new)
    s = build("allgather", "ring", n, items=True)
    m = s.messages
    table = ring_offsets(old_of_new)
    assert table.shape == (n - 1, n)
    for k in range(len(m["src"])):
        origin = int(m["items"][m["item_ptr"][k]])
        assert table[m["stage"][k], m["dst"][k]] == old_of_new[origin]
    # every rank fills every slot but its own exactly once
    for j in range(n):
        assert sorted(table[:, j].tolist() + [int(old_of_new[j])]) == list(range(n))


def test_bad_permutations():
    with pytest.raises(MappingError, match="rank 1 is missing"):
        as_permutation([0, 0, 2])
    with pytest.raises(MappingError, match=r"old_of_new\[1\] = 5"):
        InitComm.of([0, 5])
    with pytest.raises(MappingError, match="non-empty 1-D integer"):
        EndShuffle.of([0.5])
    with pytest.raises(MappingError, match="3 blocks for 2 ranks"):
        EndShuffle.of([1, 0]).apply([1, 2, 3])
