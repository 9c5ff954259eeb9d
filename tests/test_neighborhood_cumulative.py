"""Cumulative combining (beyond the papers, csrc/core/nbr_phase1.c): the C simulator against
the set-based reference, exact delivery, the origin flows against the paper's messages, the
schedules replayed against MPI's delivery, a golden case worked by hand."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap.neighborhood as nb
from topomap.neighborhood import CombiningPattern, NeighborGraph, combine
from topomap.neighborhood.latency import allgather_stages
from tests.test_neighborhood_phase1 import graphs
from tests.test_neighborhood_schedule import _run

# 0, 1, 2 all send to 3..6; worked by hand in tests/c/test_nbr.c (cumulative)
THREE = NeighborGraph.from_lists([[3, 4, 5, 6], [3, 4, 5, 6], [6, 5, 4, 3], [], [], [], []])


@settings(max_examples=150, deadline=None)
@given(graphs(), st.integers(1, 5), st.sampled_from([None, 1, 2]))
def test_c_simulator_equals_reference_and_delivers_every_edge_once(g, theta, cap):
    a = combine(g, theta=theta, cumulative=True, max_iterations=cap)
    b = combine(g, theta=theta, cumulative=True, max_iterations=cap, backend="python")
    for k in CombiningPattern._ARRAYS:
        assert getattr(a, k).tolist() == getattr(b, k).tolist(), k
    a.check(g)
    # every block reaches its destination in one message: messages = edges less the merges
    received = sum(len(o) for q in range(g.n) for _, _, o in a.receives(q))
    assert received == g.edges


@settings(max_examples=80, deadline=None)
@given(graphs(), st.integers(1, 4))
def test_flows_of_the_papers_pattern_are_its_two_origin_messages(g, theta):
    t = combine(g, theta=theta)
    fl = t.flows()
    ptr, step, sender, other = t._receive_table()
    assert fl.msg_dest.tolist() == np.repeat(np.arange(g.n), np.diff(ptr)).tolist()
    assert fl.msg_step.tolist() == step.tolist() and fl.msg_sender.tolist() == sender.tolist()
    assert fl.sends.all()
    for m, o in enumerate(other):
        want = [sender[m]] if o < 0 else sorted([sender[m], o])
        assert fl.msg_org[fl.msg_ptr[m]:fl.msg_ptr[m + 1]].tolist() == want


@settings(max_examples=120, deadline=None)
@given(graphs(), st.integers(1, 4), st.sampled_from(["allgather", "alltoall", "alltoallv"]),
       st.integers(0, 5), st.integers(0, 1000))
def test_cumulative_schedules_deliver_like_mpi(g, theta, kind, nbytes, seed):
    t = combine(g, theta=theta, cumulative=True)
    scheds = _run(g, t, kind, nbytes, seed)
    assert [s.messages()[0] for s in scheds] == t.stats()["sends"].tolist()
    assert [s.messages()[2] for s in scheds] == t.stats()["recvs"].tolist()


def test_three_ranks_golden():
    paper, cum = combine(THREE, theta=2), combine(THREE, theta=2, cumulative=True)
    assert paper.final(2) == [3, 4, 5, 6] and paper.receives(3) == [(0, 0, (0, 1)), (-1, 2, (2,))]
    assert cum.steps(0) == [(0, 1, [3, 4]), (1, 2, [3])]
    assert cum.steps(1) == [(0, 0, [5, 6]), (2, 2, [5])]
    assert cum.steps(2) == [(1, 0, [4]), (2, 1, [6])]
    # one message of all three origins per destination, after the holder's last step
    assert [cum.receives(q) for q in (3, 4, 5, 6)] == [[(1, 0, (0, 1, 2))], [(1, 2, (0, 1, 2))],
                                                       [(2, 1, (0, 1, 2))], [(2, 2, (0, 1, 2))]]
    assert cum.stats()["sends"].tolist()[:3] == [3, 3, 4] and paper.stats()["sends"].tolist()[:3] == [3, 3, 4]
    assert cum.stats()["recvs"].tolist() == [2, 2, 2, 1, 1, 1, 1]
    assert paper.stats()["recvs"].tolist() == [1, 1, 0, 2, 2, 2, 2]
    v = cum.rank_view(0)
    # 0 hands 4 (its own block and 1's) to 2 at iteration 1, takes 2's block for 3 and sends
    assert v.carried == [([(5, (0,)), (6, (0,))], [(3, (1,)), (4, (1,))], []),
                         ([(4, (0, 1))], [(3, (2,))], [(3, (0, 1, 2))])]
    cum.check(THREE)


def test_three_ranks_allgather_schedule_golden():
    t = combine(THREE, theta=2, cumulative=True)
    lay = nb.layouts(THREE, "allgather", 4)
    d = nb.build_schedule(t.rank_view(0), THREE.destinations(0), THREE.sources(0), lay[0], "allgather",
                          lambda o, q: 4).describe()
    assert d == [
        # iteration 0: my block to 1, 1's block in (kept for 3 and 4)
        "SEND peer=1 tag=1 0[0:4]", "RECV peer=1 tag=1 2[0:4]", "WAIT",
        # iteration 1: blocks of 0 and 1 for 4 packed to 2; 2's block in; [0, 1, 2] to 3
        "COPY 0[0:4] -> 2[4:8]", "COPY 2[0:4] -> 2[8:12]", "SEND peer=2 tag=1 2[4:12]",
        "RECV peer=2 tag=1 2[12:16]", "WAIT", "COPY 0[0:4] -> 2[16:20]", "COPY 2[0:4] -> 2[20:24]",
        "COPY 2[12:16] -> 2[24:28]", "SEND peer=3 tag=0 2[16:28]", "WAIT"]


def test_json_keeps_the_option():
    g = nb.random_graph(16, 0.7, seed=2)
    t = combine(g, cumulative=True)
    back = CombiningPattern.from_json(t.to_json())
    assert back.cumulative and back.receives(5) == t.receives(5)
    d = t.to_dict()
    del d["cumulative"]  # patterns written before the option read as the paper's
    assert not CombiningPattern.from_dict(json.loads(json.dumps(d))).cumulative


def test_stages_carry_the_merged_blocks():
    t = combine(THREE, theta=2, cumulative=True)
    stages = allgather_stages(THREE, t, 4)
    # per iteration: friend exchanges, then combined messages; then the (empty) direct stage
    sizes = [sorted(zip(s.indices.tolist(), s.bytes.tolist())) for s in stages]
    assert len(stages) == 7 and stages[-1].indices.size == 0
    # iteration 1: 0 hands 2 the blocks of 0 and 1 (8 bytes), 2 hands 0 its own (4);
    # 0 sends [0, 1, 2] to 3 and 2 sends [0, 1, 2] to 4 (12 bytes each)
    assert sum(b for _, b in sizes[2]) == 12.0 and sum(b for _, b in sizes[3]) == 24.0


def test_cumulative_cuts_sends_on_dense_graphs():
    # measured (benchmarks/bench_neighborhood.py): random delta = 0.8 at 1K ranks sends 431 ->
    # 49 messages per rank; here 128 ranks, the same shape
    g = nb.random_graph(128, 0.8, seed=1)
    paper, cum = combine(g), combine(g, cumulative=True)
    cum.check(g)
    assert cum.stats()["sends"].mean() < 0.5 * paper.stats()["sends"].mean()
    assert cum.iterations["active"].size > paper.iterations["active"].size


def test_incremental_count_update_equals_reference():
    # larger sparse graphs take C's incremental update (decrements) rather than the recount
    # that the small hypothesis graphs take; both must drop only the friend's half
    for g in (nb.random_graph(300, 0.05, seed=1), nb.moore_graph((20, 20), 2)):
        a = combine(g, cumulative=True)
        b = combine(g, cumulative=True, backend="python")
        assert 0 in a.iterations["recomputed"].tolist()
        for k in CombiningPattern._ARRAYS:
            assert getattr(a, k).tolist() == getattr(b, k).tolist(), k


def test_combiner_refuses_a_pattern_of_the_other_kind():
    MPI = pytest.importorskip("mpi4py.MPI")
    from topomap.mpi import NeighborCombiner
    comm = MPI.COMM_SELF
    pat = combine(NeighborGraph.from_lists([[0]], [[0]]), cumulative=False)
    with pytest.raises(ValueError, match="the given pattern has cumulative=False, the call cumulative=True"):
        NeighborCombiner(comm, sources=[0], destinations=[0], pattern=pat, cumulative=True)
