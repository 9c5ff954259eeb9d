"""Phase 1 of message combining: the C simulator against the set-based reference, golden
patterns worked by hand, exact delivery over random graphs, and bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap.neighborhood as nb
from topomap.neighborhood import CombiningPattern, NeighborGraph, NeighborhoodError, combine


def graphs(draw_n=(1, 14)):
    """Random digraphs: asymmetric, with isolated ranks, empty lists and self-loops."""
    @st.composite
    def build(draw):
        n = draw(st.integers(*draw_n))
        delta = draw(st.sampled_from([0.0, 0.3, 0.6, 0.9, 1.0]))
        seed = draw(st.integers(0, 2**31))
        rng = np.random.default_rng(seed)
        loops = draw(st.booleans())
        lists = []
        for p in range(n):
            hit = rng.random(n) < delta
            if not loops:
                hit[p] = False
            lists.append(rng.permutation(np.flatnonzero(hit)))
        return NeighborGraph.from_lists(lists)
    return build()


@settings(max_examples=150, deadline=None)
@given(graphs(), st.integers(1, 5))
def test_c_simulator_equals_reference_and_delivers_every_edge_once(g, theta):
    a = combine(g, theta=theta)
    b = combine(g, theta=theta, backend="python")
    for k in CombiningPattern._ARRAYS:
        assert getattr(a, k).tolist() == getattr(b, k).tolist(), k
    for k in ("active", "pairs", "rounds", "messages"):
        assert a.iterations[k].tolist() == b.iterations[k].tolist(), k
    a.check(g)


@settings(max_examples=40, deadline=None)
@given(graphs((2, 12)), st.integers(1, 3))
def test_node_preference_matches_reference(g, theta):
    node = np.arange(g.n) % 3
    a = combine(g, theta=theta, node=node)
    b = combine(g, theta=theta, node=node, backend="python")
    assert a.step_friend.tolist() == b.step_friend.tolist()
    assert a.on_idx.tolist() == b.on_idx.tolist()
    a.check(g)


def test_two_friends_golden():
    # 0 and 1 share 2..5 (= theta): 0 onloads {2, 3}, 1 onloads {4, 5}; 2..5 get one
    # combined message each instead of two
    g = NeighborGraph.from_lists([[5, 4, 3, 2], [2, 3, 4, 5], [], [], [], []])
    t = combine(g, theta=4)
    assert t.steps(0) == [(0, 1, [2, 3])] and t.steps(1) == [(0, 0, [4, 5])]
    assert t.offload(0, 0) == [4, 5]
    assert [t.receives(q) for q in (2, 5)] == [[(0, 0, (0, 1))], [(0, 1, (0, 1))]]
    assert t.final(0) == [] and t.final(1) == []
    s = t.stats()
    assert s["sends"].tolist() == [3, 3, 0, 0, 0, 0]
    assert t.iterations["rounds"].tolist() == [1] and t.iterations["messages"].tolist() == [4]
    assert combine(g, theta=5).stats()["sends"].tolist() == [4, 4, 0, 0, 0, 0]


def test_chain_golden():
    # friends 0-1 (5 common) and 1-2 (4 common): 0 and 1 pair at once; 2 loses its only
    # candidate and turns terminal in round 1 (Alg. 2 line 14, read as "no candidate left")
    g = NeighborGraph.from_lists([[3, 4, 5, 6, 7], [3, 4, 5, 6, 7, 8], [5, 6, 7, 8]] + [[]] * 6)
    t = combine(g)
    assert t.steps(0) == [(0, 1, [3, 4, 5])] and t.steps(1) == [(0, 0, [6, 7])]
    assert t.final(1) == [8] and t.final(2) == [5, 6, 7, 8]
    assert t.alg2_rounds.tolist()[:3] == [1, 1, 2]
    assert t.done_iter.tolist()[:4] == [1, 1, 1, 0]
    assert t.receives(5) == [(0, 0, (0, 1)), (-1, 2, (2,))]


def test_moore_d2r1_has_four_common_neighbours_at_most():
    g = nb.moore_graph((6, 6), 1)
    t = combine(g, theta=4)
    t.check(g)
    # horizontal/vertical neighbours share exactly 4, so they pair; the split is 2 + 2
    for p in range(g.n):
        for _, _, on in t.steps(p):
            assert len(on) == 2
    assert t.stats()["sends"].max() <= 8


def test_iteration_cap_sends_the_rest_directly():
    g = nb.random_graph(120, 0.8, seed=5)
    full, capped = combine(g, theta=2), combine(g, theta=2, max_iterations=1)
    assert full.iterations["active"].size > 1
    capped.check(g)
    assert set(capped.step_iter.tolist()) == {0}
    assert capped.stats()["sends"].sum() > full.stats()["sends"].sum()


def test_json_round_trip_and_tampering_is_caught():
    g = nb.random_graph(16, 0.7, seed=2)
    t = combine(g)
    back = CombiningPattern.from_json(t.to_json())
    back.check(g)
    assert back.on_idx.tolist() == t.on_idx.tolist()
    d = t.to_dict()
    d["final_idx"] = d["final_idx"][1:] + [d["final_idx"][0]]  # shifts an edge to another rank
    d["final_ptr"] = d["final_ptr"]
    with pytest.raises(NeighborhoodError, match="exactly once|not an edge"):
        CombiningPattern.from_dict(d).check(g)


def test_bad_input_is_named():
    with pytest.raises(NeighborhoodError, match="rank 0 lists destination 1 twice"):
        NeighborGraph.from_lists([[1, 1], []])
    with pytest.raises(NeighborhoodError, match="destination 3 of rank 1"):
        NeighborGraph.from_lists([[], [3]])
    with pytest.raises(NeighborhoodError, match="edge 0 -> 1 appears in the destinations only"):
        NeighborGraph.from_lists([[1], []], sources=[[], []])
    g = nb.random_graph(4, 0.5)
    with pytest.raises(NeighborhoodError, match="theta"):
        combine(g, theta=0)
    with pytest.raises(NeighborhoodError, match="max_iterations"):
        combine(g, max_iterations=0)
    with pytest.raises(NeighborhoodError, match="2R\\+1|2 radius"):
        nb.moore_graph((4, 8), 2)


def test_progress_can_cancel():
    from topomap.errors import Cancelled
    g = nb.random_graph(64, 0.9, seed=1)
    with pytest.raises(Cancelled):
        combine(g, progress=lambda f: True)


def test_node_preference_pairs_friends_on_the_same_node():
    # beyond the papers: with 8 ranks per node, random graphs pair on-node friends half the time
    # (every pair ends on-node where it can) against ~1 % by common-neighbour weight alone
    g = nb.random_graph(256, 0.3, seed=1)
    node = np.arange(g.n) // 8
    share = []
    for t in (combine(g), combine(g, node=node)):
        t.check(g)
        owner = np.repeat(np.arange(g.n), np.diff(t.step_ptr))
        share.append(float((node[owner] == node[t.step_friend]).mean()))
    assert share[0] < 0.1 < 0.3 < share[1]


@st.composite
def node_distances(draw, n):
    """A node of every rank and a symmetric integer distance between k nodes."""
    k = draw(st.integers(1, 4))
    node = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    upper = np.triu(np.array(draw(st.lists(st.integers(0, 6), min_size=k * k, max_size=k * k))).reshape(k, k))
    return node, upper + np.triu(upper, 1).T


@settings(max_examples=60, deadline=None)
@given(st.data(), graphs((2, 12)), st.integers(1, 3))
def test_path_cost_preference_matches_reference(data, g, theta):
    node, dist = data.draw(node_distances(g.n))
    a = combine(g, theta=theta, node=node, distance=dist)
    b = combine(g, theta=theta, node=node, distance=dist, backend="python")
    for k in CombiningPattern._ARRAYS:
        assert getattr(a, k).tolist() == getattr(b, k).tolist(), k
    a.check(g)


def test_path_cost_prefers_the_nearer_friend_over_the_heavier_one():
    # 0 shares 5 destinations with 1 (3 hops away) and 4 with 2 (1 hop away): the paper pairs
    # 0-1; the path cost pairs 0-2 and leaves 1 to send directly
    g = NeighborGraph.from_lists([[3, 4, 5, 6, 7], [3, 4, 5, 6, 7], [3, 4, 5, 6]] + [[]] * 5)
    assert combine(g).steps(0)[0][1] == 1
    node = [0, 1, 2] + [0] * 5
    dist = np.array([[0, 3, 1], [3, 0, 2], [1, 2, 0]])
    t = combine(g, node=node, distance=dist)
    assert t.steps(0) == [(0, 2, [3, 4])] and t.steps(2) == [(0, 0, [5, 6])]
    assert t.final(0) == [7] and t.final(1) == [3, 4, 5, 6, 7]
    t.check(g)


def test_path_costs_from_a_machine_shorten_friend_detours():
    import topomap as tm
    from topomap.neighborhood.pathcost import path_costs
    g = nb.random_graph(256, 0.3, seed=2)
    m = tm.machine("torus:8x8/4")
    node, dist = path_costs(m, np.random.default_rng(0).permutation(256))
    hops = []
    for t in (combine(g), combine(g, node=node, distance=dist)):
        t.check(g)
        owner = np.repeat(np.arange(g.n), np.diff(t.step_ptr))
        hops.append(float(dist[node[owner], node[t.step_friend]].mean()))
    assert hops[1] < 0.5 * hops[0]


@pytest.mark.parametrize("kw, msg", [
    (dict(distance=[[0, 1], [1, 0]]), "needs node="),
    (dict(node=[0, 1, 2, 0], distance=[[0, 1], [1, 0]]), "0..1"),
    (dict(node=[0, 1, 0, 1], distance=[[0, 1], [2, 0]]), "symmetric"),
    (dict(node=[0, 1, 0, 1], distance=[[0, 1, 2], [1, 0, 1]]), "square"),
    (dict(node=[0, 1, 0, 1], distance=[[0.0, 1.5], [1.5, 0.0]]), "integers"),
])
def test_bad_distance_is_a_clear_error(kw, msg):
    g = NeighborGraph.from_lists([[1, 2], [2, 3], [3, 0], [0, 1]])
    with pytest.raises(NeighborhoodError, match=msg):
        combine(g, **kw)
