"""Phase 2 (Alg. 3) schedules: replayed over simulated channels they deliver exactly what MPI's
neighbour allgather / alltoall / alltoallv deliver, on many random graphs (asymmetric, empty
neighbourhoods, isolated ranks, self-loops) and Moore grids; golden schedules by hand."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap.neighborhood as nb
from topomap.neighborhood import NeighborGraph, NeighborhoodError, Schedule
from tests.test_neighborhood_phase1 import graphs


def _run(g, pattern, kind, nbytes, seed):
    rng = np.random.default_rng(seed)
    counts = [rng.integers(0, 6, size=g.destinations(p).size).tolist() for p in range(g.n)]
    lay = nb.layouts(g, kind, nbytes=nbytes, sendcounts=counts)
    send = nb.random_sendbufs(lay, seed)
    scheds = nb.build_all(pattern, g, kind, lay)
    got = nb.replay(scheds, send, [l.recv_bytes for l in lay])
    for q, (a, b) in enumerate(zip(got, nb.expected_recv(g, lay, send))):
        assert np.array_equal(a, b), f"rank {q}"
    return scheds


@settings(max_examples=120, deadline=None)
@given(graphs(), st.integers(1, 4), st.sampled_from(["allgather", "alltoall", "alltoallv"]),
       st.integers(0, 5), st.integers(0, 1000))
def test_combined_schedules_deliver_like_mpi(g, theta, kind, nbytes, seed):
    t = nb.combine(g, theta=theta)
    scheds = _run(g, t, kind, nbytes, seed)
    # one send per friend exchange, combined message and direct message: the pattern's count
    assert [s.messages()[0] for s in scheds] == t.stats()["sends"].tolist()
    assert [s.messages()[2] for s in scheds] == t.stats()["recvs"].tolist()


@pytest.mark.parametrize("dims,r", [((5, 5), 1), ((5, 5), 2), ((3, 3, 3), 1), ((6, 5), 2)])
def test_moore_grids(dims, r):
    g = nb.moore_graph(dims, r)
    for kind in ("allgather", "alltoallv"):
        _run(g, nb.combine(g), kind, 4, 7)


def test_naive_schedule_is_one_message_per_edge():
    g = nb.random_graph(9, 0.5, seed=4)
    scheds = _run(g, None, "alltoall", 3, 1)
    assert sum(s.messages()[0] for s in scheds) == g.edges


def test_golden_allgather_schedule():
    g = NeighborGraph.from_lists([[2, 3, 4, 5], [2, 3, 4, 5], [], [], [], []])
    t = nb.combine(g)
    lay = nb.layouts(g, "allgather", 4)
    def sched(p):
        return nb.build_schedule(t.rank_view(p), g.destinations(p), g.sources(p), lay[p], "allgather", lambda f, q: 4)
    assert sched(1).describe() == [
        "SEND peer=0 tag=1 0[0:4]", "RECV peer=0 tag=1 2[0:4]", "WAIT", "COPY 0[0:4] -> 2[4:8]",
        "SEND peer=4 tag=0 2[0:8]", "SEND peer=5 tag=0 2[0:8]", "WAIT"]
    # rank 4 gets one combined message [block of 0, block of 1] and unpacks it by origin
    assert sched(4).describe() == [
        "RECV peer=1 tag=0 2[0:8]", "WAIT", "COPY 2[0:4] -> 1[0:4]", "COPY 2[4:8] -> 1[4:8]", "WAIT"]


def test_golden_alltoallv_friend_exchange():
    g = NeighborGraph.from_lists([[2, 3, 4, 5], [2, 3, 4, 5], [], [], [], []])
    t = nb.combine(g)
    lay = nb.layouts(g, "alltoallv", sendcounts=[[1, 2, 3, 4], [5, 6, 7, 8], [], [], [], []])
    size = {(1, 2): 5, (1, 3): 6}
    d = nb.build_schedule(t.rank_view(0), g.destinations(0), g.sources(0), lay[0], "alltoallv",
                          lambda f, q: size[(f, q)]).describe()
    # 0 packs its blocks for 4, 5 (3 + 4 bytes at offsets 3 and 6), gets 1's for 2, 3 (5 + 6)
    assert d[:5] == ["COPY 0[3:6] -> 2[0:3]", "COPY 0[6:10] -> 2[3:7]", "SEND peer=1 tag=1 2[0:7]",
                     "RECV peer=1 tag=1 2[7:18]", "WAIT"]
    assert d[5:8] == ["COPY 0[0:1] -> 2[18:19]", "COPY 2[7:12] -> 2[19:24]", "SEND peer=2 tag=0 2[18:24]"]


def test_schedule_json_round_trip():
    g = nb.random_graph(12, 0.8, seed=3)
    t = nb.combine(g)
    lay = nb.layouts(g, "alltoall", 2)
    for s in nb.build_all(t, g, "alltoall", lay):
        back = Schedule.from_dict(json.loads(json.dumps(s.to_dict())))
        assert back.ops.tobytes() == s.ops.tobytes() and back.tmp_bytes == s.tmp_bytes


def test_replay_catches_a_broken_schedule():
    g = nb.random_graph(10, 0.8, seed=2)
    t = nb.combine(g)
    lay = nb.layouts(g, "allgather", 2)
    scheds = nb.build_all(t, g, "allgather", lay)
    victim = next(i for i, s in enumerate(scheds) if (s.ops["op"] == nb.schedule.RECV).any())
    ops = scheds[victim].ops.copy()
    ops = ops[ops["op"] != nb.schedule.RECV]
    scheds[victim] = Schedule(victim, ops, scheds[victim].tmp_bytes)
    with pytest.raises(NeighborhoodError, match="never received"):
        nb.replay(scheds, nb.random_sendbufs(lay), [l.recv_bytes for l in lay])


def test_bad_layout_input():
    g = nb.random_graph(4, 0.9, seed=1)
    with pytest.raises(NeighborhoodError, match="send counts"):
        nb.layouts(g, "alltoallv", sendcounts=[[1]] * 4)
    with pytest.raises(NeighborhoodError, match="kind"):
        nb.layouts(g, "allreduce", 4)
    with pytest.raises(NeighborhoodError, match="nbytes"):
        nb.layouts(g, "allgather")
