"""The Cell EIB machine and the affinity tools (Kumar 2012, ch. 4; notes 001 §4.1): the notes'
validation table as a golden test, the thesis's qualitative rankings, the score against a slow
transcription of its definition, the 8! search and the Blade's 12,870 splits by brute force."""

import itertools

import numpy as np
import pytest

import topomap as tm
from topomap.networks import cell_eib
from topomap.networks.cell_affinity import (AFFINITIES, PATTERNS, auto_affinity, blade_partition, ring_counts,
                                            score)
from topomap.timemodel import TimeModel

# notes 001 §4.1: cw, ccw, half-way (max same-direction overlap cw/ccw); None where the notes give none
TABLE = {
    "Ring": ["3,3,2 (2/2)", "0,8,0 (0/1)", "3,1,4 (3/1)", "3,3,2 (2/2)", "4,4,0 (1/1)"],
    "RD1": ["4,4,0 (2/2)", "4,4,0 (1/1)", "0,0,8", "4,4,0 (2/2)", "4,4,0 (2/2)"],
    "RD2": ["4,4,0 (1/1)", "4,4,0 (2/2)", "4,4,0 (1/1)", "4,4,0 (1/1)", "0,0,8"],
    "RD3": ["4,4,0 (2/2)", "0,0,8", "4,4,0 (2/2)", "4,4,0 (2/2)", "4,4,0 (2/2)"],
    "Bruck2": ["4,4,0 (1/1)", "8,0,0 (2/0)", "6,2,0 (1/1)", "4,4,0 (1/1)", "2,2,4"],
    "Binomial3": ["2,2,0 (2/2)", "0,4,0 (0/1)", "0,0,4", "2,2,0 (2/2)", "2,2,0 (1/1)"],
}
NAMES = ["Identity", "Ring", "Overlap", "EvenOdd", "Leap2"]


@pytest.mark.parametrize("pattern", list(TABLE))
def test_validation_table(pattern):
    for name, want in zip(NAMES, TABLE[pattern]):
        c = ring_counts(pattern, name)
        got = f"{c.cw},{c.ccw},{c.halfway}"
        assert got == want.split(" ")[0], (pattern, name)
        if "(" in want:
            assert f"({c.max_cw}/{c.max_ccw})" == want.split(" ")[1], (pattern, name)


def test_ring_order_and_halfway_pairs():
    order = [cell_eib.RAMPS[p] for p in sorted(cell_eib.SPE_POSITION)]
    assert order == ["SPE1", "SPE3", "SPE5", "SPE7", "SPE6", "SPE4", "SPE2", "SPE0"]
    pairs = {tuple(sorted((a, b))) for a in range(8) for b in range(8) if a != b and cell_eib.is_halfway(a, b)}
    assert pairs == {(0, 7), (1, 6), (3, 4), (2, 5)}
    assert cell_eib.route(1, 5)[0] == 1 and cell_eib.route(4, 5)[0] == -1        # the thesis's cw / ccw


def test_machine_routes_and_capacities():
    m = tm.machine("cell")
    assert (m.nnodes, m.npes, m.nlinks) == (8, 8, 24)
    for a in range(8):
        for b in range(8):
            if a != b:
                d, segs = cell_eib.route(a, b)
                assert m.route(a, b).tolist() == [2 * s + (d < 0) for s in segs]
    assert len(m.route(0, 7)) == 6 and m.route(0, 7).tolist() != tm.machine("cell:eib,halfway=ccw").route(0, 7).tolist()
    assert np.allclose(m.capacities(), 2.0)
    blade = tm.machine("cell:blade")
    assert blade.npes == 16 and np.allclose(blade.capacities()[-2:], [30 / 25.6, 20 / 25.6])
    # SPE0 -> SPE8 (SPE0 of processor 1): 4 segments to the BIF, the BIF link, 4 back to SPE0
    assert len(blade.route(0, 8)) == 9 and blade.route(0, 8)[4] == 48 and blade.route(8, 0)[4] == 49


def test_predicted_ring_time_follows_the_overlaps():
    """64 KB Ring pattern, one ring (25.6 GB/s) per transfer, two rings per direction: Leap2 puts at
    most one transfer on a segment, so each goes at full speed; Overlap (its 4 half-way transfers
    routed clockwise here) puts 4 on one segment, which takes twice as long (the thesis measured
    under half the bandwidth)."""
    model = TimeModel({"PE": (0, 25.6e9), "intra-node": (0, 25.6e9), "network": (0, 25.6e9)},
                      link_bandwidth=25.6e9, hop_latency=0)
    src, dst = zip(*PATTERNS["Ring"])
    ring = tm.Pattern.from_edges(list(src), list(dst), 65536.0, n=8)
    m = tm.machine("cell")
    alone = 65536 / 25.6e9
    for name, worst_segment in (("Leap2", 1), ("Overlap", 4)):
        phys = AFFINITIES[name]
        load = np.bincount(np.concatenate([m.route(phys[a], phys[b]) for a, b in PATTERNS["Ring"]]), minlength=24)
        assert load.max() == worst_segment
        t = tm.timemodel.predict(ring, m, list(phys), model).makespan
        assert t == pytest.approx(alone * max(1, worst_segment / 2))


@pytest.mark.parametrize("pattern, good, bad", [
    ("Ring", ["Leap2"], ["Identity", "Ring", "Overlap", "EvenOdd"]),
    ("RD1", ["Identity", "Ring", "EvenOdd", "Leap2"], ["Overlap"]),
    ("RD2", ["Identity", "Ring", "Overlap", "EvenOdd"], ["Leap2"]),
    ("RD3", ["Identity", "Overlap", "EvenOdd", "Leap2"], ["Ring"]),
    ("Bruck2", ["EvenOdd", "Identity"], ["Overlap", "Ring", "Leap2"]),
])
def test_thesis_rankings(pattern, good, bad):
    assert max(score(pattern, g) for g in good) < min(score(pattern, b) for b in bad)
    if pattern == "Ring":
        assert score("Ring", "Overlap") == max(score("Ring", a) for a in NAMES)     # worst


def slow_score(phases, phys):
    """The notes' score written out: every half-way direction choice tried."""
    total = np.zeros(4, dtype=int)
    for msgs in phases:
        routes = [(phys[a], phys[b]) for a, b in msgs]
        half = [cell_eib.is_halfway(a, b) for a, b in routes]
        best = None
        for choice in itertools.product(["cw", "ccw"], repeat=sum(half)):
            it = iter(choice)
            load = {1: [0] * 12, -1: [0] * 12}
            dirs = []
            for (a, b), h in zip(routes, half):
                d, segs = cell_eib.route(a, b, next(it) if h else "cw")
                dirs.append(d)
                for s in segs:
                    load[d][s] += 1
            key = (sum(max(0, x - 2) for d in (1, -1) for x in load[d]), abs(dirs.count(1) - dirs.count(-1)))
            best = key if best is None else min(best, key)
        crossing = sum(len(cell_eib.route(a, b)[1]) >= 2 and bool(set(cell_eib.route(a, b)[1]) & set(cell_eib.SIDES))
                       for a, b in routes)
        total += [best[0], best[1], sum(half), crossing]
    return tuple(int(x) for x in total)


def test_score_matches_its_definition():
    rng = np.random.default_rng(0)
    phases = [PATTERNS["Ring"], PATTERNS["RD1"], PATTERNS["Bruck2"], PATTERNS["Binomial3"]]
    for _ in range(40):
        phys = [int(x) for x in rng.permutation(8)]
        assert score(phases, phys) == slow_score(phases, phys)
    for name in NAMES:
        assert score(["RD1", "RD2", "RD3"], name) == slow_score([PATTERNS[p] for p in ("RD1", "RD2", "RD3")],
                                                                AFFINITIES[name])


def test_auto_affinity_is_the_best_of_all_placements():
    phases = ["Ring", "Bruck2", "RD3"]                   # Bruck's three phases
    phys, best = auto_affinity(phases)
    assert best == score(phases, phys) == slow_score([PATTERNS[p] for p in phases], phys)
    assert all(best <= score(phases, a) for a in NAMES)
    rng = np.random.default_rng(1)
    for _ in range(30):
        assert best <= score(phases, [int(x) for x in rng.permutation(8)])


def test_blade_partition_by_brute_force():
    rng = np.random.default_rng(2)
    w = rng.integers(0, 5, size=(16, 16)).astype(float)
    np.fill_diagonal(w, 0)
    p = blade_partition(w)
    best = min(sum(w[i, j] + w[j, i] for i in side for j in range(16) if j not in side)
               for side in itertools.combinations(range(16), 8))
    assert p.evaluated == 12870 and p.cross_bytes == best
    a, b = list(p.processor0), list(p.processor1)
    assert sorted(a + b) == list(range(16)) and len(a) == 8
    assert p.bytes_0_to_1 == w[np.ix_(a, b)].sum() >= p.bytes_1_to_0 == w[np.ix_(b, a)].sum()


def test_blade_heavier_side_goes_to_processor_0():
    w = np.zeros((16, 16))
    w[:8, :8] = w[8:, 8:] = 10
    w[12, 3] = 5                                         # the second group sends more across
    w[1, 9] = 1
    p = blade_partition(w)
    assert p.processor0 == tuple(range(8, 16)) and (p.bytes_0_to_1, p.bytes_1_to_0) == (5, 1)


@pytest.mark.parametrize("call, message", [
    (lambda: ring_counts("Ring", [0, 1, 2, 3, 4, 5, 6, 6]), "one each"),
    (lambda: ring_counts("Ring", "Diagonal"), "unknown Cell affinity"),
    (lambda: score("Gather", "Ring"), "unknown Cell pattern"),
    (lambda: score([(0, 8)], "Ring"), "message 0"),
    (lambda: blade_partition(np.ones((8, 8))), "16 x 16"),
    (lambda: blade_partition(-np.ones((16, 16))), "non-negative"),
    (lambda: tm.machine("cell:blade/4"), "no /NODE"),
    (lambda: tm.machine("cell:eib,halfway=up"), "not halfway=cw or halfway=ccw"),
    (lambda: tm.machine("cell:eib,halfway=cw,halfway=ccw"), "one option"),
    (lambda: tm.machine("cell:ring"), "'eib' or 'blade'"),
])
def test_bad_input(call, message):
    with pytest.raises(tm.errors.MachineError, match=message):
        call()
