"""Golden cases for tests/reference.py, every number worked out by hand.

The reference is only a useful oracle for the C evaluator if it is itself
right, so each expected value below is derived on paper in the comments
rather than produced by running the code.
"""

import pytest

import reference as ref


def approx(x):
    return pytest.approx(x, rel=1e-12, abs=1e-12)


def single_pe_levels():
    # One PE per node: a single (root) intra-node level.
    return {"P": 1, "node_groups": [[0]], "node_costs": [1.0]}


# ------------------------------------------------------------ 2x2 torus (wrap)
#
# Nodes: id = x + 2*y  ->  n0=(0,0) n1=(1,0) n2=(0,1) n3=(1,1).
# Links: (node*2 + dim)*2 + dir
#   n0: x+ 0  x- 1  y+ 2  y- 3
#   n1: x+ 4  x- 5  y+ 6  y- 7
#   n2: x+ 8  x- 9  y+ 10 y- 11
#   n3: x+ 12 x- 13 y+ 14 y- 15
# Size 2 with wrap: any nonzero delta is 1 and 2*1 <= 2, so every step is "+".

def torus2x2():
    d = single_pe_levels()
    d.update(nnodes=4,
             network={"kind": "torus", "dims": [2, 2], "wrap": [True, True]},
             capacity=[1.0] * 16)
    return d


RING_SRC = [0, 1, 2, 3]
RING_DST = [1, 2, 3, 0]
RING_W = [1.0, 2.0, 3.0, 4.0]


def test_torus2x2_routes():
    d = torus2x2()
    assert ref.num_links(d) == 16
    assert ref.route(d, 0, 0) == []
    # n0->n1: x 0->1 (+) leaving n0                         -> [0]
    assert ref.route(d, 0, 1) == [0]
    # n1->n2: x 1->0 (+, wraps) leaving n1 -> at n0; y 0->1 leaving n0
    assert ref.route(d, 1, 2) == [4, 2]
    # n2->n3: x leaving n2                                  -> [8]
    assert ref.route(d, 2, 3) == [8]
    # n3->n0: x leaving n3 -> at n2; y 1->0 (+, wraps) leaving n2
    assert ref.route(d, 3, 0) == [12, 10]
    # n1->n3: x equal; y leaving n1                         -> [6]
    assert ref.route(d, 1, 3) == [6]
    # n2->n0: y leaving n2                                  -> [10]
    assert ref.route(d, 2, 0) == [10]
    assert ref.distance(d, 3, 0) == 2.0
    assert ref.level_of(d, 3, 0) == 2  # L + 1 with L = 1


def test_torus2x2_ring_identity_mapping():
    # pe_of = identity. Messages (route, hops, bytes):
    #   0->1 [0]      1 hop  w1
    #   1->2 [4, 2]   2 hops w2
    #   2->3 [8]      1 hop  w3
    #   3->0 [12, 10] 2 hops w4
    # hop_bytes = 1 + 4 + 3 + 8 = 16; dilation = 6, avg 1.5, max 2.
    # Loads: l0=1 l2=2 l4=2 l8=3 l10=4 l12=4 (sum 16 = hop_bytes).
    # Capacity 1: congestion = load; max 4; 6 nonzero links,
    # NZCA = 16/6 = 8/3; E[c^2] = (1+4+4+9+16+16)/6 = 25/3,
    # NZCV = 25/3 - 64/9 = 11/9.
    # hybrid(1,1,1,1) = 16 + 4 + 8/3 + 11/9 = 215/9.
    # On a torus the distance is the hop count, so qap = hop_bytes = 16.
    # All four messages cross nodes: edge_cut = 10, level L+1 = 2 gets 10.
    d = torus2x2()
    m = ref.metrics(d, RING_SRC, RING_DST, RING_W, [0, 1, 2, 3])
    assert m["hop_bytes"] == approx(16)
    assert m["dilation"] == 6
    assert m["avg_dilation"] == approx(1.5)
    assert m["max_dilation"] == 2
    assert m["messages"] == 4
    assert m["total_bytes"] == approx(10)
    expected_load = [0.0] * 16
    for link, load in {0: 1, 2: 2, 4: 2, 8: 3, 10: 4, 12: 4}.items():
        expected_load[link] = float(load)
    assert m["link_load"] == expected_load
    assert m["congestion"] == expected_load
    assert m["max_congestion"] == approx(4)
    assert m["nz_links"] == 6
    assert m["nz_congestion_avg"] == approx(8 / 3)
    assert m["nz_congestion_var"] == approx(11 / 9)
    assert m["hybrid"] == approx(215 / 9)
    assert m["qap"] == approx(16)
    assert m["edge_cut"] == approx(10)
    assert m["edge_cut_messages"] == 4
    assert m["level_bytes"] == [0.0, 0.0, 10.0]


def test_torus2x2_ring_neighbour_mapping():
    # pe_of = [0, 1, 3, 2] walks the square n0 -> n1 -> n3 -> n2 -> n0:
    #   0->1 n0->n1 [0]   w1
    #   1->2 n1->n3 [6]   w2
    #   2->3 n3->n2 [12]  w3
    #   3->0 n2->n0 [10]  w4
    # hop_bytes = 10, dilation 4, avg 1, max 1.
    # Loads l0=1 l6=2 l12=3 l10=4: max 4, NZCA = 10/4 = 2.5,
    # E[c^2] = 30/4 = 7.5, NZCV = 7.5 - 6.25 = 1.25.
    # hybrid with weights (2, 3, 5, 7) = 20 + 12 + 12.5 + 8.75 = 53.25.
    d = torus2x2()
    m = ref.metrics(d, RING_SRC, RING_DST, RING_W, [0, 1, 3, 2],
                    weights=(2, 3, 5, 7))
    assert m["hop_bytes"] == approx(10)
    assert m["dilation"] == 4
    assert m["avg_dilation"] == approx(1)
    assert m["max_dilation"] == 1
    nz = {i: x for i, x in enumerate(m["link_load"]) if x}
    assert nz == {0: 1, 6: 2, 12: 3, 10: 4}
    assert m["max_congestion"] == approx(4)
    assert m["nz_links"] == 4
    assert m["nz_congestion_avg"] == approx(2.5)
    assert m["nz_congestion_var"] == approx(1.25)
    assert m["hybrid"] == approx(53.25)


def test_torus2x2_brute_force():
    # Every message joins distinct nodes, so hop_bytes >= total bytes = 10,
    # and the neighbour mapping above reaches it: the optimum is exactly 10,
    # and it needs all four messages on single-hop (adjacent) node pairs.
    d = torus2x2()
    value, pe_of = ref.brute_force_best(d, RING_SRC, RING_DST, RING_W,
                                        [0, 1, 2, 3], "hop_bytes")
    assert value == approx(10)
    assert sorted(pe_of) == [0, 1, 2, 3]
    assert ref.metrics(d, RING_SRC, RING_DST, RING_W, pe_of)["dilation"] == 4


# ------------------------------------------------------------ 3-node 1-D mesh
#
# Links: node*2 + dir  ->  n0: + 0, - 1;  n1: + 2, - 3;  n2: + 4, - 5.
# Capacities chosen non-uniform (and binary-exact) to check load/capacity.

def mesh3(wrap=False):
    d = single_pe_levels()
    d.update(nnodes=3,
             network={"kind": "torus", "dims": [3], "wrap": [wrap]},
             capacity=[2.0, 1.0, 5.0, 3.0, 1.0, 0.5])
    return d


def test_mesh3_routes():
    d = mesh3()
    # No wrap: 0->2 must walk through n1 (+ twice), 2->0 back (- twice).
    assert ref.route(d, 0, 2) == [0, 2]
    assert ref.route(d, 2, 0) == [5, 3]
    assert ref.route(d, 1, 0) == [3]
    assert ref.route(d, 0, 1) == [0]
    assert ref.distance(d, 0, 2) == 2.0
    # Same ring with wrap: 2->0 has delta (0-2) mod 3 = 1, 2*1 <= 3,
    # so one "+" step over the wrap link of n2.
    assert ref.route(mesh3(wrap=True), 2, 0) == [4]
    assert ref.distance(mesh3(wrap=True), 2, 0) == 1.0


def test_mesh3_nonuniform_capacity():
    # Messages: 0->2 w5 [0,2], 2->0 w1 [5,3], 1->0 w2 [3].
    # Loads: l0=5 l2=5 l3=1+2=3 l5=1; hop_bytes = 10 + 2 + 2 = 14.
    # Congestion = load/cap: l0 5/2=2.5, l2 5/5=1, l3 3/3=1, l5 1/0.5=2.
    # max 2.5; NZCA = 6.5/4 = 1.625;
    # deviations .875 -.625 -.625 .375 -> squares sum 1.6875, NZCV = 0.421875.
    d = mesh3()
    m = ref.metrics(d, [0, 2, 1], [2, 0, 0], [5.0, 1.0, 2.0], [0, 1, 2])
    assert m["hop_bytes"] == approx(14)
    assert m["link_load"] == [5.0, 0.0, 5.0, 3.0, 0.0, 1.0]
    assert m["congestion"] == [2.5, 0.0, 1.0, 1.0, 0.0, 2.0]
    assert m["max_congestion"] == approx(2.5)
    assert m["nz_links"] == 4
    assert m["nz_congestion_avg"] == approx(1.625)
    assert m["nz_congestion_var"] == approx(0.421875)
    assert m["dilation"] == 5
    assert m["max_dilation"] == 2


# ------------------------------------------------------------ 4x1 torus, ties
#
# dims [4, 1]: node id = x. Links (node*2 + dim)*2 + dir: x+ = 4n, x- = 4n+1.

def torus4x1():
    d = single_pe_levels()
    d.update(nnodes=4,
             network={"kind": "torus", "dims": [4, 1], "wrap": [True, True]},
             capacity=[1.0] * 16)
    return d


def test_torus4x1_tie_goes_plus():
    d = torus4x1()
    # 0->2: delta 2, 2*2 <= 4 -> "+" twice: leaving n0 then n1.
    assert ref.route(d, 0, 2) == [0, 4]
    # 2->0: delta (0-2) mod 4 = 2, still a tie -> "+" via n3, not "-" via n1.
    assert ref.route(d, 2, 0) == [8, 12]
    assert ref.route(d, 1, 3) == [4, 8]
    # 0->3: delta 3, 6 > 4 -> one "-" step leaving n0.
    assert ref.route(d, 0, 3) == [1]
    # 3->0: delta 1 -> one "+" step over the wrap link of n3.
    assert ref.route(d, 3, 0) == [12]
    assert ref.distance(d, 2, 0) == 2.0


# ------------------------------------------------------------ tree [2, 2]
#
# Entities: level 0 nodes n0..n3, level 1 switches s0 (n0,n1), s1 (n2,n3),
# level 2 root. Edges: n0..n3 -> 0..3, s0 -> 4, s1 -> 5 (offset[1] = 4).
# Links: up = 2e, down = 2e+1:
#   n0 0/1  n1 2/3  n2 4/5  n3 6/7  s0 8/9  s1 10/11   (12 links)
# costs: h=1 -> 3, h=2 -> 7.

def tree22():
    d = single_pe_levels()
    d.update(nnodes=4,
             network={"kind": "tree", "arities": [2, 2], "costs": [3.0, 7.0]},
             capacity=[1.0] * 12)
    return d


def test_tree22_routes_and_costs():
    d = tree22()
    assert ref.num_links(d) == 12
    # n0->n1 meet at s0 (h=1): up n0, down n1.
    assert ref.route(d, 0, 1) == [0, 3]
    # n0->n3 meet at root (h=2): up n0, up s0, down s1, down n3.
    assert ref.route(d, 0, 3) == [0, 8, 11, 7]
    assert ref.route(d, 3, 2) == [6, 5]
    assert ref.route(d, 2, 1) == [4, 10, 9, 3]
    assert ref.distance(d, 0, 1) == 3.0
    assert ref.distance(d, 0, 3) == 7.0
    # level_of: L + h with L = 1.
    assert ref.level_of(d, 0, 1) == 2
    assert ref.level_of(d, 0, 3) == 3


def test_tree22_metrics():
    # Messages (identity mapping):
    #   0->1 w1 [0,3]         h=1 cost 3
    #   0->3 w2 [0,8,11,7]    h=2 cost 7
    #   3->2 w4 [6,5]         h=1 cost 3
    #   2->1 w8 [4,10,9,3]    h=2 cost 7
    # hop_bytes = 2 + 8 + 8 + 32 = 50; dilation 12, avg 3, max 4.
    # qap = 3 + 14 + 12 + 56 = 85.
    # Loads: l0=1+2=3 l3=1+8=9 l8=l11=l7=2 l6=l5=4 l4=l10=l9=8 (sum 50).
    # 10 nonzero links, NZCA = 5; deviations -2 4 -3 -3 -3 -1 -1 3 3 3,
    # squares sum 76, NZCV = 7.6; max congestion 9.
    # level_bytes (length L+1+m = 4): h=1 -> slot 2 gets 5, h=2 -> slot 3 gets 10.
    d = tree22()
    m = ref.metrics(d, [0, 0, 3, 2], [1, 3, 2, 1], [1.0, 2.0, 4.0, 8.0],
                    [0, 1, 2, 3])
    assert m["hop_bytes"] == approx(50)
    assert m["dilation"] == 12
    assert m["avg_dilation"] == approx(3)
    assert m["max_dilation"] == 4
    assert m["qap"] == approx(85)
    assert m["link_load"] == [3.0, 0.0, 0.0, 9.0, 8.0, 4.0,
                              4.0, 2.0, 2.0, 8.0, 8.0, 2.0]
    assert m["max_congestion"] == approx(9)
    assert m["nz_links"] == 10
    assert m["nz_congestion_avg"] == approx(5)
    assert m["nz_congestion_var"] == approx(7.6)
    assert m["edge_cut"] == approx(15)
    assert m["edge_cut_messages"] == 4
    assert m["level_bytes"] == [0.0, 0.0, 5.0, 10.0]


# ------------------------------------------------------------ multi-PE nodes
#
# P = 4, groups [[0,0,1,1],[0,0,0,0]], node costs [1, 10]; two nodes under a
# one-level tree (arities [2], cost 100). PEs 0..3 on n0, 4..7 on n1.
# Intra-node: locals {0,1} or {2,3} share level 0 -> lca 1, cost 1;
# otherwise lca 2, cost 10. Across nodes: h = 1 -> level L+1 = 3, cost 100.
# Links: n0 up 0 / down 1, n1 up 2 / down 3.

def multipe():
    return {"P": 4, "nnodes": 2,
            "node_groups": [[0, 0, 1, 1], [0, 0, 0, 0]],
            "node_costs": [1.0, 10.0],
            "network": {"kind": "tree", "arities": [2], "costs": [100.0]},
            "capacity": [1.0, 1.0, 1.0, 1.0]}


def test_multipe_distance_and_levels():
    d = multipe()
    assert ref.distance(d, 2, 2) == 0.0 and ref.level_of(d, 2, 2) == 0
    assert ref.distance(d, 0, 1) == 1.0 and ref.level_of(d, 0, 1) == 1
    assert ref.distance(d, 5, 7) == 10.0 and ref.level_of(d, 5, 7) == 2
    assert ref.distance(d, 3, 4) == 100.0 and ref.level_of(d, 3, 4) == 3
    assert ref.route(d, 0, 1) == [0, 3]
    assert ref.route(d, 1, 0) == [2, 1]


def test_multipe_qap_and_level_bytes():
    # pe_of = [0, 1, 3, 5]. Messages:
    #   0->1 w2  PE0->PE1 lca 1, cost 1,   0 hops
    #   1->2 w3  PE1->PE3 lca 2, cost 10,  0 hops
    #   2->3 w5  PE3->PE5 nodes 0->1, cost 100, route [0,3]
    #   3->0 w7  PE5->PE0 nodes 1->0, cost 100, route [2,1]
    #   1->0 w11 PE1->PE0 lca 1, cost 1,   0 hops
    # qap = 2 + 30 + 500 + 700 + 11 = 1243.
    # level_bytes = [0, 2+11, 3, 5+7] = [0, 13, 3, 12].
    # hop_bytes = 5*2 + 7*2 = 24; dilation 4 over 5 messages -> avg 0.8.
    # Loads l0=5 l1=7 l2=7 l3=5; edge_cut = 12 over 2 messages.
    d = multipe()
    m = ref.metrics(d, [0, 1, 2, 3, 1], [1, 2, 3, 0, 0],
                    [2.0, 3.0, 5.0, 7.0, 11.0], [0, 1, 3, 5])
    assert m["qap"] == approx(1243)
    assert m["level_bytes"] == [0.0, 13.0, 3.0, 12.0]
    assert m["hop_bytes"] == approx(24)
    assert m["dilation"] == 4
    assert m["avg_dilation"] == approx(0.8)
    assert m["max_dilation"] == 2
    assert m["messages"] == 5
    assert m["total_bytes"] == approx(28)
    assert m["link_load"] == [5.0, 7.0, 7.0, 5.0]
    assert m["edge_cut"] == approx(12)
    assert m["edge_cut_messages"] == 2


def test_multipe_brute_force_qap():
    # Heavy pair {0,1} (100 bytes each way), light pair {2,3} (1 each way),
    # PEs {0, 2, 4, 5}: only PEs 4,5 share a level-0 group (cost 1); 0 and 2
    # are cost 10 apart; anything across nodes costs 100.
    # Best: heavy on {4,5} -> 200, light on {0,2} -> 20, total 220.
    d = multipe()
    src, dst = [0, 1, 2, 3], [1, 0, 3, 2]
    w = [100.0, 100.0, 1.0, 1.0]
    value, pe_of = ref.brute_force_best(d, src, dst, w, [0, 2, 4, 5], "qap")
    assert value == approx(220)
    assert sorted(pe_of[:2]) == [4, 5]
    assert sorted(pe_of[2:]) == [0, 2]


# ------------------------------------------------------------ single node

def test_single_node_network_none():
    # No network: nothing is routed, and the network slot (L+1 = 3) stays 0.
    d = {"P": 4, "nnodes": 1,
         "node_groups": [[0, 0, 1, 1], [0, 0, 0, 0]],
         "node_costs": [1.0, 10.0],
         "network": {"kind": "none"}, "capacity": []}
    m = ref.metrics(d, [0, 1], [1, 2], [4.0, 6.0], [0, 2, 3])
    # 0->1 PE0->PE2 cost 10 (slot 2); 1->2 PE2->PE3 cost 1 (slot 1).
    assert m["qap"] == approx(46)
    assert m["level_bytes"] == [0.0, 6.0, 4.0, 0.0]
    assert m["hop_bytes"] == 0.0
    assert m["link_load"] == []
    assert m["max_congestion"] == 0.0
    assert m["nz_links"] == 0
    assert m["nz_congestion_avg"] == 0.0
    assert m["nz_congestion_var"] == 0.0
    assert m["edge_cut"] == 0.0


def test_empty_pattern():
    m = ref.metrics(torus2x2(), [], [], [], [0, 1, 2, 3])
    assert m["messages"] == 0
    assert m["avg_dilation"] == 0.0
    assert m["max_dilation"] == 0
    assert m["hybrid"] == 0.0


def test_rejects_malformed_input():
    with pytest.raises(ValueError):
        ref.metrics(torus2x2(), [0, 0], [1, 1], [1.0, 2.0], [0, 1])
    with pytest.raises(ValueError):
        ref.metrics(torus2x2(), [0], [0], [1.0], [0])
    bad = torus2x2()
    bad["capacity"] = [1.0] * 15
    with pytest.raises(ValueError):
        ref.metrics(bad, [0], [1], [1.0], [0, 1])
