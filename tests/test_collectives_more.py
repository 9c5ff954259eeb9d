"""Reordering heuristics past the thesis (topomap's extension of notes 000 §3):
BKMH (Bruck allgather and alltoall), ARMH (allreduce by recursive doubling
and Rabenseifner), PWMH (pairwise alltoall): orders worked by hand, every
placement next to a partner of the collective's pattern, the gains on cyclic
layouts, Alg. 4.1's closest free core replayed on hypothesis-drawn layouts,
determinism, the ``reorder-collective`` mapper and bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap.collectives import build, stage_costs
from topomap.collectives.reorder import initial_layout, reorder
from topomap.collectives.reorder_more import COLLECTIVES, heuristic_for, order_for, reorder_collective
from topomap.errors import MappingError

MORE = [f"{op}/{alg}" for (op, alg), h in COLLECTIVES.items() if h in ("bkmh", "armh", "pwmh")]


def test_orders_worked_by_hand():
    # BKMH, p = 8: around 0 the last stage's partner 4, then 2; around 2: 6 and 3; around 3: 7 and 5; 1 last
    assert order_for("allgather/bruck", 8)[0].tolist() == [0, 4, 2, 6, 3, 7, 5, 1]
    # ARMH, p = 6: virtual ranks 0..3 walked 0, 1, 2, 3 (XOR 1, 2 first); virtual v < 2 is real 2v + 1,
    # with its folded rank 2v right after it; rank 0 comes first
    order, ref = order_for("allreduce/rabenseifner", 6)
    assert order.tolist() == [0, 1, 3, 2, 4, 5] and ref.tolist() == [-1, 0, 1, 3, 1, 4]
    assert order_for("allreduce/recursive_doubling", 8)[0].tolist() == [0, 1, 2, 3, 6, 7, 4, 5]
    # PWMH, p = 6 (not a power of two): partners r + 1, r - 1, r + 2, ... so a ring downwards
    assert order_for("alltoall/pairwise", 6)[0].tolist() == [0, 1, 5, 4, 3, 2]
    assert heuristic_for("alltoall/bruck") == "bkmh" and heuristic_for("allgather/ring") == "rmh"


def _edges(schedule):
    t = schedule.total
    src = np.repeat(np.arange(t.n), np.diff(t.indptr))
    return {(min(u, v), max(u, v)) for u, v in zip(src.tolist(), t.indices.tolist())}


@pytest.mark.parametrize("collective", MORE)
def test_every_rank_is_placed_next_to_a_partner(collective):
    op, alg = collective.split("/")
    for p in list(range(1, 70)) + [96, 100, 127, 128, 129]:
        order, ref = order_for(collective, p)
        assert order[0] == 0 and ref[0] == -1
        assert np.array_equal(np.sort(order), np.arange(p)), p
        pos = np.empty(p, dtype=np.int64)
        pos[order] = np.arange(p)
        assert (pos[ref[1:]] < np.arange(1, p)).all(), p              # the reference is placed earlier
        edges = _edges(build(op, alg, p))
        assert all((min(a, b), max(a, b)) in edges for a, b in zip(order[1:], ref[1:])), p


def test_large_p_is_covered():
    for collective in MORE:
        for p in (4095, 4096, 10_000):
            assert np.array_equal(np.sort(order_for(collective, p)[0]), np.arange(p)), (collective, p)


ALLOC = tm.machine("fattree:k=8,levels=3/package:2 core:4").allocate(512)

# hop-bytes after / before from the cyclic-bunch layout (measured 0.58, 0.91, 0.13, 0.18, 0.91 at seed 0)
GAINS = {("allgather/bruck", 512): 0.6, ("alltoall/bruck", 512): 0.92, ("allreduce/rabenseifner", 512): 0.15,
         ("allreduce/rabenseifner", 500): 0.2, ("allreduce/recursive_doubling", 500): 0.92}


@pytest.mark.parametrize("collective,p", sorted(GAINS))
def test_gains_on_cyclic_layouts(collective, p):
    op, alg = collective.split("/")
    total = build(op, alg, p, 1024).total
    pes = initial_layout(ALLOC, p, layout="cyclic-bunch")
    before = tm.evaluate(total, ALLOC, pes).hop_bytes
    after = tm.evaluate(total, ALLOC, pes[reorder_collective(collective, ALLOC, pes)]).hop_bytes
    assert after <= GAINS[collective, p] * before, (before, after)


def test_bruck_allgather_gains_most_on_block_layouts():
    # the last, heaviest stage pairs r with r + p/2: a block layout puts them on far nodes
    total = build("allgather", "bruck", 512, 1024).total
    pes = initial_layout(ALLOC, layout="block-bunch")
    after = tm.evaluate(total, ALLOC, pes[reorder_collective("allgather/bruck", ALLOC, pes)]).hop_bytes
    assert after <= 0.1 * tm.evaluate(total, ALLOC, pes).hop_bytes


def test_pairwise_alltoall_hop_bytes_are_the_same_everywhere_and_rounds_congest_less():
    alloc = tm.machine("fattree:k=8,levels=2/package:2 core:4").allocate(256)
    s = build("alltoall", "pairwise", 256, 1024)
    pes = np.random.default_rng(0).permutation(np.asarray(alloc.pes))
    new = pes[reorder_collective("alltoall/pairwise", alloc, pes)]
    before, after = stage_costs(s, alloc, pes, time=False), stage_costs(s, alloc, new, time=False)
    assert before.total_hops == after.total_hops                     # every pair sends one block
    assert tm.evaluate(s.total, alloc, pes).hop_bytes == tm.evaluate(s.total, alloc, new).hop_bytes
    # each round a permutation: from a random layout back to one contention-free like the block layout's
    block = stage_costs(s, alloc, initial_layout(alloc, layout="block-bunch"), time=False)
    assert after.max_congestion.sum() <= block.max_congestion.sum() < 0.75 * before.max_congestion.sum()


MACHINES = {spec: tm.machine(spec) for spec in ("torus:3x4/package:2 core:2", "fattree:k=4,levels=2/3")}


@settings(max_examples=40, deadline=None)
@given(spec=st.sampled_from(sorted(MACHINES)), collective=st.sampled_from(MORE), data=st.data())
def test_each_rank_takes_a_closest_free_core(spec, collective, data):
    m = MACHINES[spec]
    p = data.draw(st.integers(1, m.npes), label="p")
    pes = np.asarray(data.draw(st.permutations(range(m.npes)), label="cores"))[:p]
    new = reorder_collective(collective, m, pes, seed=data.draw(st.integers(0, 2**63), label="seed"))
    assert new[0] == 0 and np.array_equal(np.sort(new), np.arange(p))
    order, ref = order_for(collective, p)
    used = np.zeros(p, dtype=bool)
    used[new[0]] = True
    for t in range(1, p):
        at, free = pes[new[ref[t]]], np.flatnonzero(~used)
        assert m.distance([at], [pes[new[order[t]]]])[0] == m.distance(np.full(free.size, at), pes[free]).min(), t
        used[new[order[t]]] = True


def test_determinism_and_the_mapper():
    pes = initial_layout(ALLOC, 300, layout="cyclic-scatter")
    for collective in MORE:
        a = reorder_collective(collective, ALLOC, pes, seed=7)
        assert np.array_equal(a, reorder_collective(collective, ALLOC, pes, seed=7))
        assert a[0] == 0 and np.array_equal(np.sort(a), np.arange(300))
        op, alg = collective.split("/")
        mp = tm.map(build(op, alg, 300).total, ALLOC, method="reorder-collective", collective=collective,
                    layout="cyclic-scatter", seed=7)
        assert np.array_equal(mp.pe_of, pes[a])
    # the thesis's collectives go to the thesis's heuristics
    assert np.array_equal(reorder_collective("allgather/ring", ALLOC, pes, seed=3), reorder("rmh", ALLOC, pes, seed=3))


def test_bad_input():
    with pytest.raises(MappingError, match="collective = 'allgather/hierarchical' must be one of"):
        order_for("allgather/hierarchical", 8)
    with pytest.raises(MappingError, match="collective = 'bruck' must be one of"):
        reorder_collective("bruck", ALLOC, [0, 1])
    with pytest.raises(MappingError, match="p = 0"):
        order_for("alltoall/pairwise", 0)
    with pytest.raises(ValueError, match="core 1 of old rank 2 is given twice"):
        reorder_collective("allreduce/rabenseifner", ALLOC, [0, 1, 1])
    with pytest.raises(MappingError, match="non-empty 1-D"):
        reorder_collective("alltoall/bruck", ALLOC, [[0, 1]])
    with pytest.raises(MappingError, match="seed = 'x'"):
        reorder_collective("alltoall/bruck", ALLOC, [0, 1], seed="x")
    total = build("alltoall", "bruck", 16).total
    with pytest.raises(MappingError, match="collective = 'alltoall' must be one of"):
        tm.map(total, ALLOC, method="reorder-collective", collective="alltoall")
    with pytest.raises(MappingError, match="capacity = 2"):
        tm.map(total, ALLOC, method="reorder-collective", collective="alltoall/bruck", capacity=2)


def test_reorder_for_tries_the_extension_heuristics():
    from topomap.collectives import reorder_for
    from topomap.collectives.reorder import initial_layout
    alloc = tm.machine("torus:4x4/8").allocate(64)
    cyclic = initial_layout(alloc, layout="cyclic-bunch")
    c = reorder_for("allreduce", "rabenseifner", alloc, cyclic, 65536)
    assert c.heuristic == "armh" and set(c.seconds) == {"identity", "armh"}
    assert c.seconds["armh"] < 0.5 * c.seconds["identity"]
    both = reorder_for("allreduce", "recursive_doubling", alloc, cyclic, 65536)
    assert set(both.seconds) == {"identity", "rdmh", "armh"}
    with pytest.raises(tm.MappingError, match="'bkmh', 'pwmh'"):
        reorder_for("allgather", "ring", alloc, cyclic, 8, heuristics=["nope"])
