"""Collective schedules built in C: delivered data by simulation (n = 1..64),
agreement with the Python generators, hand-worked sizes, MPICH's
non-power-of-two rules, per-stage costs against a route-by-route reference
and Cui's circulant optimality (003 §2.5), and bad input."""

import math

import numpy as np
import pytest

import topomap as tm
from topomap.collectives import ALGORITHMS, build, expected, simulate, stage_costs
from topomap.collectives import schedules as py
from topomap.errors import PatternError

HIER = [dict(ppn=p, intra=i, leaders=l) for p in (1, 2, 3, 4, 8) for i in ("L", "NL") for l in ("rd", "ring")]


def _cases(n):
    for op, algs in ALGORITHMS.items():
        for alg in algs:
            for kw in (HIER if alg == "hierarchical" else [{}]):
                if kw.get("ppn", 1) > n:
                    continue
                roots = sorted({0, n // 2, n - 1}) if op in ("bcast", "gather") else [None]
                for root in roots:
                    yield op, alg, ({**kw, "root": root} if root is not None else kw)


@pytest.mark.parametrize("n", range(1, 65))
def test_every_schedule_delivers_the_collective(n):
    for op, alg, kw in _cases(n):
        s = build(op, alg, n, items=True, **kw)
        pieces = round(1 / s.messages["item_unit"])
        assert simulate(s) == expected(op, n, kw.get("root", 0), pieces), (op, alg, kw)
        m = s.messages
        # sizes are what the messages carry, and each stage is one concurrent round
        assert np.array_equal(np.diff(m["item_ptr"]), m["count"])
        assert np.allclose(m["bytes"], m["count"] * m["item_unit"])
        for k, st in enumerate(s.stages):
            rows = m["stage"] == k
            assert st.nnz == rows.sum() > 0
            assert len(set(zip(m["src"][rows].tolist(), m["dst"][rows].tolist()))) == st.nnz


def test_simulation_catches_a_wrong_schedule():
    s = build("allgather", "ring", 4, items=True)
    items = s.messages["items"].copy()
    items[4] = (items[4] + 2) % 4           # rank 0 forwards a block it does not have yet at stage 1
    broken = type(s)(s.algorithm, s.stages, s.total, s.op, {**s.messages, "items": items})
    with pytest.raises(PatternError, match="stage 1: 0 -> 1 carries item"):
        simulate(broken)
    s = build("allreduce", "recursive_doubling", 3, items=True)      # 3 stages
    # 0 -> 1 then 2 -> 0: ranks 1 and 0 hold {0, 1} and {0, 2}; 1 -> 0 would sum rank 0's part twice
    msgs = {**s.messages, "src": np.array([0, 2, 1]), "dst": np.array([1, 0, 0]), "stage": np.array([0, 1, 2]),
            "item_ptr": np.arange(4), "items": np.zeros(3, dtype=np.int64)}
    twice = type(s)(s.algorithm, s.stages, s.total, s.op, msgs)
    with pytest.raises(PatternError, match="twice"):
        simulate(twice)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 16, 31, 64])
def test_matches_the_python_generators(n):
    def dense(s):
        return [st.to_dense() for st in s]

    for root in (0, n - 1):
        assert np.array_equal(dense(build("bcast", "binomial", n, 3, root=root)), dense(py.binomial_bcast(n, 3, root)))
        assert np.array_equal(dense(build("gather", "binomial", n, 3, root=root)), dense(py.binomial_gather(n, 3, root)))
    assert np.array_equal(dense(build("allgather", "ring", n, 2)), dense(py.ring_allgather(n, 2)))
    assert np.array_equal(dense(build("allgather", "bruck", n, 2)), dense(py.bruck(n, 2, op="allgather")))
    assert np.array_equal(dense(build("alltoall", "bruck", n, 2)), dense(py.bruck(n, 2, op="alltoall")))
    if n & (n - 1) == 0:
        for op in ("allgather", "allreduce"):
            assert np.array_equal(dense(build(op, "recursive_doubling", n, 2)), dense(py.recursive_doubling(n, 2, op)))


def test_hand_worked_sizes():
    # Rabenseifner, n = 4, vector 8: halving sends 4 then 2 per rank, doubling 2 then 4
    assert [st.total_bytes for st in build("allreduce", "rabenseifner", 4, 8)] == [16, 8, 8, 16]
    # n = 6: pairs (0,1), (2,3) fold into 1 and 3; virtual ranks 0..3 are 1, 3, 4, 5
    s = build("allreduce", "recursive_doubling", 6, 5)
    m = s.messages
    assert list(zip(m["src"][m["stage"] == 0], m["dst"][m["stage"] == 0])) == [(0, 1), (2, 3)]
    assert sorted(zip(m["src"][m["stage"] == 1], m["dst"][m["stage"] == 1])) == [(1, 3), (3, 1), (4, 5), (5, 4)]
    assert list(zip(m["src"][m["stage"] == 3], m["dst"][m["stage"] == 3])) == [(1, 0), (3, 2)]
    assert set(m["bytes"]) == {5.0}
    # allgather with the fold: virtual 0 = {0, 1} (2 blocks) meets virtual 1 = {2, 3}; then 4 blocks vs 2
    s = build("allgather", "recursive_doubling", 6)
    assert [sorted(st.bytes.tolist()) for st in s] == [[1, 1], [1, 1, 2, 2], [2, 2, 4, 4], [6, 6]]
    # pairwise: XOR partners for a power of two, shifts otherwise
    assert build("alltoall", "pairwise", 4).stages[2].to_dense().nonzero()[1].tolist() == [3, 2, 1, 0]
    assert build("alltoall", "pairwise", 3).stages[1].to_dense().nonzero()[1].tolist() == [2, 0, 1]
    # hierarchical, 10 ranks on nodes of 4 (4, 4, 2): linear gather 7 messages, leaders 3 nodes fold, linear bcast 10 blocks
    s = build("allgather", "hierarchical", 10, ppn=4, intra="L", leaders="rd")
    assert [st.nnz for st in s] == [7, 1, 2, 1, 7]
    assert s.stages[0].total_bytes == 7 and s.stages[-1].total_bytes == 70
    assert s.stages[1].to_dense()[0, 4] == 4            # node 0's 4 blocks fold into node 1's leader
    assert [st.total_bytes for st in s.stages[1:4]] == [4, 8 + 2, 10]   # nodes {0, 1} (8 blocks) meet node 2 (2)


def test_binomial_trees_within_nodes():
    s = build("allgather", "hierarchical", 8, ppn=4, intra="NL", leaders="ring")
    assert [st.nnz for st in s] == [4, 2, 2, 2, 4]
    assert s.stages[1].to_dense()[2, 0] == 2 and s.stages[2].to_dense()[4, 0] == 4
    assert s.stages[3].to_dense()[0, 2] == 8


def _reference_costs(schedule, machine, pe):
    hops, cont = [], []
    for st in schedule:
        src = np.repeat(np.arange(st.n), np.diff(st.indptr))
        load = np.zeros(machine.nlinks, dtype=np.int64)
        h = 0
        for a, b in zip(src, st.indices):
            na, nb = machine.node_of(pe[[a, b]])
            if na != nb:
                r = machine.route(int(na), int(nb))
                h += len(r)
                np.add.at(load, r, 1)
        hops.append(h)
        cont.append(int(np.maximum(load - 1, 0).sum()))
    return hops, cont


@pytest.mark.parametrize("spec,n", [("torus:4x4/2", 32), ("fattree:k=4,levels=3/2", 24), ("torus:3x5", 13)])
def test_stage_costs_match_a_route_by_route_count(spec, n):
    machine = tm.machine(spec)
    pe = np.random.default_rng(n).permutation(machine.npes)[:n]
    for op, alg, kw in _cases(n):
        s = build(op, alg, n, 64, **kw)
        c = stage_costs(s, machine, pe, time=False)
        hops, cont = _reference_costs(s, machine, pe)
        assert c.hops.tolist() == hops and c.total_hops == sum(hops)
        assert c.contention.tolist() == cont
        assert np.allclose(c.max_congestion, [tm.evaluate(st, machine, pe).max_congestion for st in s])


def test_stage_times_are_the_time_model_stage_times():
    machine = tm.machine("torus:4x4")
    s = build("allgather", "bruck", 16, 1e5)
    pe = np.arange(16)[::-1]
    c = stage_costs(s, machine, pe)
    assert np.allclose(c.time, tm.timemodel.predict(s, machine, pe).stage_time[0])
    assert c.time[-1] > c.time[0]         # the last Bruck stage moves 8 blocks, the first 1


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_circulant_one_hop_per_unicast(k):
    n = 1 << k
    circ = tm.machine(f"circulant:{n}")
    ident = np.arange(n)
    assert stage_costs(build("bcast", "binomial", n), circ, ident, time=False).total_hops == n - 1
    assert stage_costs(build("allreduce", "recursive_doubling", n), circ, ident, time=False).total_hops == n * k
    assert stage_costs(build("alltoall", "bruck", n), circ, ident, time=False).total_hops == n * k


def test_bad_input_is_a_clear_error():
    with pytest.raises(PatternError, match="op = 'reduce' must be one of"):
        build("reduce", "binomial", 4)
    with pytest.raises(PatternError, match="algorithm for allreduce = 'ring' must be one of"):
        build("allreduce", "ring", 4)
    with pytest.raises(PatternError, match="n = 0"):
        build("bcast", "binomial", 0)
    with pytest.raises(PatternError, match="root = 4"):
        build("gather", "binomial", 4, root=4)
    with pytest.raises(PatternError, match="ppn"):
        build("allgather", "hierarchical", 4)
    with pytest.raises(PatternError, match="only for the hierarchical"):
        build("allgather", "ring", 4, ppn=2)
    with pytest.raises(PatternError, match="intra = 'X'"):
        build("allgather", "hierarchical", 4, ppn=2, intra="X")
    with pytest.raises(ValueError, match="messages is above the limit"):
        build("allgather", "ring", 20000)
    with pytest.raises(tm.errors.MappingError, match="mapping has 3 entries"):
        stage_costs(build("bcast", "binomial", 4), tm.machine("torus:4"), [0, 1, 2])
    with pytest.raises(PatternError, match="items=True"):
        simulate(build("bcast", "binomial", 4))


def test_log_depth_schedules_for_100000_ranks():
    n = 100_000
    for op, alg in [("bcast", "binomial"), ("allreduce", "rabenseifner"), ("alltoall", "bruck")]:
        s = build(op, alg, n)
        assert s.total.n == n
    assert len(build("allreduce", "rabenseifner", n)) == 2 * 16 + 2
    assert build("alltoall", "bruck", n).messages["count"].sum() == n * sum(
        (n >> (k + 1) << k) + max(0, (n & ((2 << k) - 1)) - (1 << k)) for k in range(math.ceil(math.log2(n))))
