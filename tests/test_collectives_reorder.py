"""Collective-aware reordering (notes 000 §3): the notes' worked orders, the
coverage of every p < 3000 with the non-power-of-two fixes, Alg. 4.1's
"closest free core" replayed against a direct search (also on hypothesis-drawn
layouts), the initial layouts,
the §7.6 trends on simulated machines, the mappers and bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap.collectives import build
from topomap.collectives.reorder import HEURISTICS, initial_layout, placement_order, reorder
from topomap.errors import MappingError


def test_worked_orders_of_the_notes():
    assert placement_order("rdmh", 8)[0].tolist() == [0, 4, 2, 6, 3, 7, 1, 5]
    assert placement_order("rdmh", 16)[0].tolist() == [0, 8, 4, 12, 6, 14, 2, 10, 3, 11, 7, 15, 5, 13, 1, 9]
    assert placement_order("bgmh", 16)[0][:10].tolist() == [0, 8, 4, 12, 2, 10, 6, 14, 1, 9]
    assert placement_order("bbmh", 6)[0].tolist() == list(range(6))       # as written it would place only 4
    order, ref = placement_order("rmh", 5)
    assert order.tolist() == [0, 1, 2, 3, 4] and ref.tolist() == [-1, 0, 1, 2, 3]


def _lowbit(x):
    return x & -x


@pytest.mark.parametrize("heuristic", HEURISTICS)
def test_every_p_below_3000_is_covered(heuristic):
    for p in range(1, 3000):
        order, ref = placement_order(heuristic, p)
        assert order[0] == 0 and ref[0] == -1
        assert np.array_equal(np.sort(order), np.arange(p)), p
        pos = np.empty(p, dtype=np.int64)
        pos[order] = np.arange(p)
        assert (pos[ref[1:]] < np.arange(1, p)).all(), p          # the reference is placed earlier
        diff = order[1:] - ref[1:]
        if heuristic in ("bbmh", "bgmh"):                          # a binomial-tree edge, parent first
            assert (diff > 0).all() and (diff & (diff - 1) == 0).all(), p
            if heuristic == "bbmh":
                assert ((ref[1:] == 0) | (diff < _lowbit(ref[1:]))).all(), p
        if heuristic == "rdmh" and p & (p - 1) == 0:               # a recursive-doubling partner
            x = order[1:] ^ ref[1:]
            assert (x & (x - 1) == 0).all(), p


def test_rdmh_folds_non_powers_of_two():
    order, ref = placement_order("rdmh", 6)       # pairs (0, 1), (2, 3); virtual ranks 1, 3, 4, 5
    assert order.tolist()[:2] == [0, 1]
    for even in (2,):                             # a folded even rank comes right after its partner
        t = order.tolist().index(even)
        assert order[t - 1] == even + 1 and ref[t] == even + 1


def _replay(machine, pes, heuristic, old_of_new, steps):
    """Each sampled placement took a free core at the least distance from its reference's core."""
    order, ref = placement_order(heuristic, len(pes))
    pes = np.asarray(pes)
    used = np.zeros(len(pes), dtype=bool)
    used[old_of_new[order[0]]] = True
    for t in range(1, len(pes)):
        if t in steps:
            free = np.flatnonzero(~used)
            d = machine.distance(np.full(free.size, pes[old_of_new[ref[t]]]), pes[free])
            chosen = machine.distance([pes[old_of_new[ref[t]]]], [pes[old_of_new[order[t]]]])[0]
            assert chosen == d.min(), (heuristic, t)
        used[old_of_new[order[t]]] = True
    assert used.all()


@pytest.mark.parametrize("spec,p,layout", [
    ("torus:4x4/package:2 core:4", 128, "cyclic-scatter"),
    ("fattree:k=4,levels=3/4", 61, "block-bunch"),
    ("torus:70x60", 4200, None),                 # more nodes than the distance table holds: rows on the fly
])
def test_each_rank_takes_a_closest_free_core(spec, p, layout):
    m = tm.machine(spec)
    alloc = m.allocate(p)
    pes = initial_layout(alloc, p, layout) if layout else np.random.default_rng(1).permutation(m.npes)[:p]
    steps = set(range(p)) if p < 1000 else set(np.random.default_rng(2).choice(p, 60, replace=False).tolist())
    for h in HEURISTICS:
        new = reorder(h, m, pes, seed=3)
        assert new[0] == 0 and np.array_equal(np.sort(new), np.arange(p))
        _replay(m, pes, h, new, steps)


def test_seeded_tie_breaks():
    m = tm.machine("torus:8x8/4")
    pes = initial_layout(m.allocate(256), layout="cyclic-bunch")
    a, b, c = (reorder("rdmh", m, pes, seed=s) for s in (5, 5, 6))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_layouts():
    alloc = tm.machine("torus:3/package:2 core:2").allocate(12)
    assert initial_layout(alloc, layout="block-bunch").tolist() == list(range(12))
    assert initial_layout(alloc, layout="block-scatter").tolist() == [0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11]
    assert initial_layout(alloc, 7, layout="cyclic-bunch").tolist() == [0, 4, 8, 1, 5, 9, 2]
    assert initial_layout(alloc, layout="cyclic-scatter")[:6].tolist() == [0, 4, 8, 2, 6, 10]


def _hop_bytes(schedule, alloc, pe_of):
    return tm.evaluate(schedule.total, alloc, pe_of).hop_bytes


# hop-bytes after / before: RMH leaves block layouts alone (no harm) and fixes cyclic ones; RDMH gains
# everywhere, least on cyclic layouts, which already suit recursive doubling (000 §7.6)
TRENDS = {("ring", "block-bunch"): 1.0, ("ring", "cyclic-bunch"): 0.5, ("ring", "cyclic-scatter"): 0.5,
          ("recursive_doubling", "block-bunch"): 0.5, ("recursive_doubling", "cyclic-scatter"): 0.75}


def test_trends_of_section_7_6():
    alloc = tm.machine("fattree:k=8,levels=3/package:2 core:4").allocate(512)
    for (alg, layout), most in TRENDS.items():
        s = build("allgather", alg, 512, 1024)
        pes = initial_layout(alloc, layout=layout)
        before = _hop_bytes(s, alloc, pes)
        after = _hop_bytes(s, alloc, pes[reorder("rmh" if alg == "ring" else "rdmh", alloc, pes, seed=0)])
        assert after <= most * before, (alg, layout, before, after)


def test_mappers():
    alloc = tm.machine("torus:4x4/8").allocate(128)
    s = build("allgather", "ring", 128)
    cyc = tm.map(s.total, alloc, method="cyclic")
    for h in HEURISTICS:
        mp = tm.map(s.total, alloc, method=h, layout="cyclic-bunch", seed=2)
        assert np.array_equal(np.sort(mp.pe_of), np.sort(alloc.pes))
    assert tm.evaluate(s.total, alloc, tm.map(s.total, alloc, method="rmh", layout="cyclic-bunch")).hop_bytes < \
        tm.evaluate(s.total, alloc, cyc).hop_bytes / 4
    with pytest.raises(MappingError, match="capacity = 2"):
        tm.map(build("bcast", "binomial", 200).total, alloc, method="bbmh", capacity=2)


def test_bad_input():
    m = tm.machine("torus:4/2")
    with pytest.raises(MappingError, match="heuristic = 'xdmh'"):
        reorder("xdmh", m, [0, 1])
    with pytest.raises(MappingError, match="p = 0"):
        placement_order("rmh", 0)
    with pytest.raises(ValueError, match="core 1 of old rank 2 is given twice"):
        reorder("rmh", m, [0, 1, 1])
    with pytest.raises(ValueError, match="core 9 of old rank 1 is not a PE"):
        reorder("rmh", m, [0, 9])
    with pytest.raises(MappingError, match="layout = 'spread'"):
        initial_layout(m.allocate(4), layout="spread")
    with pytest.raises(MappingError, match="do not fit"):
        initial_layout(m.allocate(4), 5)

MACHINES = {spec: tm.machine(spec) for spec in ("torus:3x4/package:2 core:2", "fattree:k=4,levels=2/3", "torus:5")}


@settings(max_examples=60, deadline=None)
@given(spec=st.sampled_from(sorted(MACHINES)), heuristic=st.sampled_from(HEURISTICS), data=st.data())
def test_closest_free_core_on_random_layouts(spec, heuristic, data):
    m = MACHINES[spec]
    p = data.draw(st.integers(1, m.npes), label="p")
    pes = np.asarray(data.draw(st.permutations(range(m.npes)), label="cores"))[:p]
    seed = data.draw(st.integers(0, 2**63), label="seed")
    new = reorder(heuristic, m, pes, seed=seed)
    assert new[0] == 0 and np.array_equal(np.sort(new), np.arange(p))
    _replay(m, pes, heuristic, new, set(range(p)))
