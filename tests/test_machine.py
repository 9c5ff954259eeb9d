"""topomap.Machine / Allocation and the machine spec strings (topomap.networks.spec)."""

import itertools
import math
import os

import networkx as nx
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import reference as ref
import topomap as tm
from topomap import MachineError, MappingError

from conftest import machine_desc, machines

DATA = os.path.join(os.path.dirname(__file__), "data", "hwloc")


def runs_of(nodes):
    """Number of maximal runs of consecutive node ids in an increasing node list."""
    nodes = np.asarray(nodes)
    return 1 + int(np.count_nonzero(np.diff(nodes) != 1))


# ------------------------------------------------------------------ spec forms

def test_spec_torus_with_pes_per_node():
    m = tm.machine("torus:8x8x8/16")
    assert (m.nnodes, m.pes_per_node, m.npes) == (512, 16, 8192)
    assert m.network == tm.Torus((8, 8, 8), (True, True, True))
    assert m.nlinks == 512 * 3 * 2
    assert m.spec == "torus:8x8x8/16"
    assert m.level_names == ["PE", "Node", "network"]
    # DESIGN: inside a torus node the QAP distance is 0 (network hops only)
    assert m.node.costs.tolist() == [0.0]
    assert float(m.distance(0, 15)) == 0.0 and float(m.distance(0, 16)) == 1.0


def test_spec_mesh():
    m = tm.machine("mesh:16x16/4")
    assert (m.nnodes, m.npes) == (256, 1024)
    assert m.network == tm.Torus((16, 16), (False, False))
    assert m.summary()["diameter"] == 30          # (16 - 1) * 2, no wrap-around


def test_spec_torus_with_synthetic_node():
    m = tm.machine("torus:8x8x8/pack:2 core:8")
    assert (m.nnodes, m.pes_per_node, m.npes) == (512, 16, 8192)
    # two PEs in the same package and in different packages are both 0 apart (costs 0)
    assert m.distance(0, [1, 8, 16]).tolist() == [0.0, 0.0, 1.0]
    # but the levels still tell them apart: same core group (1), across packages (2), network (3)
    assert m.level_of(0, [1, 8, 16]).tolist() == [1, 2, 3]


def test_spec_hierarchy():
    m = tm.machine("hierarchy:4:8:8/1:10:100")
    # one lowest group (4 PEs) is one node; 8 nodes per switch1, 8 switch1 per switch2
    assert (m.nnodes, m.pes_per_node, m.npes) == (64, 4, 256)
    assert m.network == tm.TreeNetwork((8, 8), (10.0, 100.0))
    assert m.level_names == ["PE", "Node", "switch1", "switch2"]
    # PE 0 vs 3 (same node), 4 (next node, same switch1), 32 (other switch1)
    assert m.distance(0, [0, 3, 4, 31, 32, 255]).tolist() == [0, 1, 10, 10, 100, 100]


def test_spec_hierarchy_default_distances():
    m = tm.machine("hierarchy:4:8:8")
    assert m.distance(0, [1, 4, 32]).tolist() == [1.0, 10.0, 100.0]


def test_spec_hierarchy_node_levels():
    m = tm.machine("hierarchy:4:8:8/1:10:100,node_levels=2")
    # a node now holds 8 groups of 4 PEs = 32 PEs; 8 nodes under one switch
    assert (m.nnodes, m.pes_per_node, m.npes) == (8, 32, 256)
    assert m.network == tm.TreeNetwork((8,), (100.0,))
    assert m.level_names == ["PE", "level1", "Node", "switch1"]
    assert m.distance(0, [1, 4, 32]).tolist() == [1.0, 10.0, 100.0]
    assert m.level_of(0, [0, 1, 4, 32]).tolist() == [0, 1, 2, 3]
    whole = tm.machine("hierarchy:2:2:2/1:10:100,node_levels=3")
    assert whole.nnodes == 1 and whole.level_names == ["PE", "level1", "level2", "Node"]
    assert isinstance(whole.network, tm.SingleNode)


def test_hierarchy_distances_same_with_any_node_levels():
    a = tm.machine("hierarchy:2:3:2/1:5:7").distance_matrix()
    for k in (2, 3):
        assert np.array_equal(tm.machine(f"hierarchy:2:3:2/1:5:7,node_levels={k}").distance_matrix(), a)


def test_spec_tree_single_node():
    m = tm.machine("tree:pack:2 numa:2 core:8 pu:2")
    assert (m.nnodes, m.npes, m.nlinks) == (1, 64, 0)
    assert isinstance(m.network, tm.SingleNode)
    assert m.level_names == ["PE", *m.node.levels]
    # level depth costs: same core (1), same numa (2), same package (3), across packages (4)
    assert m.distance(0, [1, 2, 16, 32]).tolist() == [1.0, 2.0, 3.0, 4.0]
    assert m.summary()["diameter"] == 0


def test_spec_xml():
    path = os.path.join(DATA, "synth_2x2x4x2.xml")
    m = tm.machine(f"xml:{path}")
    assert m.nnodes == 1 and m.npes == 32


def test_spec_discover():
    m = tm.machine("discover")
    assert m.nnodes == 1 and m.npes >= 1 and m.spec == "discover"


def test_spec_passthrough_case_and_whitespace():
    m = tm.machine("torus:2x2")
    assert tm.machine(m) is m
    assert tm.machine("  TORUS:2x3/2 ").npes == 12
    assert tm.machine("torus:5").network == tm.Torus((5,), (True,))


# ------------------------------------------------------------------ bad specs

@pytest.mark.parametrize("spec, token", [
    ("foo:4", "'foo'"),
    ("dragonfly:g=4", "'dragonfly'"),
    ("torus", "'torus'"),
    ("torus:", "'torus:'"),
    ("hierarchy:  ", "'hierarchy:'"),
    ("torus:0x4", "got 0"),
    ("torus:4xx4", "dimension '' in machine spec 'torus:4xx4'"),
    ("torus:-4", "'-4'"),
    ("torus:1e3", "'1e3'"),
    ("torus:4x4.5", "'4.5'"),
    ("torus:4x4/abc", "'abc'"),
    ("torus:4x4/0", "got 0"),
    ("mesh:4x4/pack:0", "'pack:0'"),
    ("hierarchy:4:8/1", "2 arities but 1 distances"),
    ("hierarchy:4:8/1:2:3", "2 arities but 3 distances"),
    ("hierarchy:4:8/10:1", "(1 follows 10)"),
    ("hierarchy:2:2:2/1:100:10", "(10 follows 100)"),
    ("hierarchy:4:8/-1:10", "'-1'"),
    ("hierarchy:4:8/nan:10", "'nan'"),
    ("hierarchy:4:8/1:inf", "'inf'"),
    ("hierarchy:4:8/1:x", "'x'"),
    ("hierarchy::8/1:10", "hierarchy arity ''"),
    ("hierarchy:4:0/1:10", "got 0"),
    ("hierarchy:4:8/1:10,node_levels=3", "node_levels=3 exceeds the 2 levels"),
    ("hierarchy:4:8/1:10,node_levels=0", "got 0"),
    ("hierarchy:4:8/1:10,node_levels=x", "'x'"),
    ("hierarchy:4:8/1:10,foo=1", "'foo=1'"),
    ("hierarchy:65536:65536", "more than 2^31 PEs"),
    ("torus:65536x65536", "'torus:65536x65536' has more than 2^31 nodes"),
    ("torus:1000x1000x1000/16", "'torus:1000x1000x1000/16'"),
    ("torus:1000x1000/4096", "'torus:1000x1000/4096'"),
    ("tree:foo", "'foo'"),
])
def test_bad_spec_names_the_token(spec, token):
    with pytest.raises(MachineError) as info:
        tm.machine(spec)
    assert token in str(info.value)


@pytest.mark.parametrize("spec, typename", [(5, "int"), (None, "NoneType"), (b"torus:4", "bytes"),
                                            (["torus:4"], "list")])
def test_non_string_spec(spec, typename):
    with pytest.raises(MachineError, match=f"must be a string, got {typename}"):
        tm.machine(spec)


def test_machine_errors_are_value_errors():
    with pytest.raises(ValueError):
        tm.machine("torus:0")
    with pytest.raises(tm.TopomapError):
        tm.machine("torus:0")


# ------------------------------------------------------------------ numbering

def test_torus_node_numbering_first_coordinate_fastest():
    m = tm.machine("torus:3x4x5/2")
    # node id = x0 + 3 * (x1 + 4 * x2): +x0 is node 1, +x1 is node 3, +x2 is node 12, each one hop
    assert m.hops(0, [1, 3, 12]).tolist() == [1, 1, 1]
    # (2, 3, 4) = 2 + 3 * (3 + 4 * 4) = 59; with wrap-around each coordinate is 1 hop away
    assert int(m.hops(0, 59)) == 3
    # (1, 2, 2) = 1 + 3 * (2 + 4 * 2) = 31: 1 + 2 + 2 hops
    assert int(m.hops(0, 31)) == 5


def test_pe_numbering_node_times_p_plus_local():
    m = tm.machine("torus:3x4x5/2")
    assert m.node_of([0, 1, 2, 3, 118, 119]).tolist() == [0, 0, 1, 1, 59, 59]
    # PE 2*59 + 1 = 119 sits on node 59, three hops from PE 0's node
    assert float(m.distance(0, 119)) == 3.0
    assert int(m.level_of(0, 1)) == 1 and int(m.level_of(0, 119)) == 2


def test_hierarchy_pe_numbering_mixed_radix_top_most_significant():
    m = tm.machine("hierarchy:2:3:2/1:5:7")
    # PE = ((top * 3) + mid) * 2 + low: PE 7 = (1*3 + 0)*2 + 1: other top group from PE 0
    assert float(m.distance(0, 7)) == 7.0
    # PE 5 = (0*3 + 2)*2 + 1: same top group, other mid group
    assert float(m.distance(0, 5)) == 5.0
    assert float(m.distance(4, 5)) == 1.0


# ------------------------------------------------------------------ routes

def test_route_3d_torus_by_hand():
    m = tm.machine("torus:4x4x4")
    # link id = (node * 3 + dim) * 2 + (0 for +, 1 for -); the link belongs to the node left.
    # 0 = (0,0,0) -> 54 = (2,1,3):
    #   dim 0: delta 2 = half the ring -> + (tie): links (0*3+0)*2 = 0, (1*3+0)*2 = 6, now (2,0,0) = 2
    #   dim 1: delta 1 -> +: link (2*3+1)*2 = 14, now (2,1,0) = 6
    #   dim 2: delta 3 -> - (1 hop): link (6*3+2)*2+1 = 41, now (2,1,3) = 54
    assert m.route(0, 54).tolist() == [0, 6, 14, 41]
    # 54 -> 0:
    #   dim 0: delta (0-2)%4 = 2 -> + (tie): links (54*3)*2 = 324, (55*3)*2 = 330, now (0,1,3) = 52
    #   dim 1: delta 3 -> -: link (52*3+1)*2+1 = 315, now (0,0,3) = 48
    #   dim 2: delta 1 -> +: link (48*3+2)*2 = 292
    assert m.route(54, 0).tolist() == [324, 330, 315, 292]
    assert m.hops([0, 54, 7], [54, 0, 7]).tolist() == [4, 4, 0]
    assert m.route(7, 7).tolist() == []


def test_route_3d_torus_odd_sizes_by_hand():
    m = tm.machine("torus:3x4x5/2")
    # 0 -> 59 = (2,3,4): each dimension is one hop the - way:
    #   (0*3+0)*2+1 = 1, now (2,0,0) = 2; (2*3+1)*2+1 = 15, now (2,3,0) = 11; (11*3+2)*2+1 = 71
    assert m.route(0, 59).tolist() == [1, 15, 71]


def test_route_mesh_by_hand():
    m = tm.machine("mesh:3x3")
    # node = x0 + 3 * x1; link = (node * 2 + dim) * 2 + dir
    # 8 = (2,2) -> 0: dim 0 - twice: (8*2)*2+1 = 33, (7*2)*2+1 = 29; dim 1 - twice: (6*2+1)*2+1 = 27,
    #   (3*2+1)*2+1 = 15
    assert m.route(8, 0).tolist() == [33, 29, 27, 15]
    # 0 -> 8: (0*2)*2 = 0, (1*2)*2 = 4, (2*2+1)*2 = 10, (5*2+1)*2 = 22
    assert m.route(0, 8).tolist() == [0, 4, 10, 22]
    # a mesh never wraps: 0 -> 2 goes the long way
    assert m.route(0, 2).tolist() == [0, 4]


def test_route_tree_network_by_hand():
    m = tm.machine("hierarchy:2:2:2/1:10:100")
    # 4 nodes, 2 per switch1; edge ids: nodes 0..3 then switch1 0..1; up = 2*edge, down = 2*edge+1
    # node 0 -> 3: up from node 0 (0), up from switch1 0 (2*(4+0) = 8), down to switch1 1 (2*(4+1)+1 = 11),
    # down to node 3 (2*3+1 = 7)
    assert m.route(0, 3).tolist() == [0, 8, 11, 7]
    assert m.route(0, 1).tolist() == [0, 3]
    assert m.nlinks == 12


def test_hops_distance_level_of_vectorise():
    m = tm.machine("torus:4x4/2")
    a = np.array([[0, 1], [2, 3]])
    assert m.hops(a, 0).shape == (2, 2)
    assert m.hops(a, 0).tolist() == [[0, 1], [2, 1]]
    assert m.distance([0, 2, 10], 0).tolist() == [0.0, 1.0, 2.0]   # PE 10 is node 5 = (1,1)
    assert m.level_of([0, 1, 2], 0).tolist() == [0, 1, 2]


@pytest.mark.parametrize("call", ["route", "hops"])
def test_node_out_of_range(call):
    m = tm.machine("torus:4x4/2")
    with pytest.raises(MachineError, match=r"node 16 is out of range \[0, 16\)"):
        getattr(m, call)(0, 16)
    with pytest.raises(MachineError, match=r"node -1 is out of range"):
        getattr(m, call)(-1, 0)


@pytest.mark.parametrize("call", ["distance", "level_of", "node_of"])
def test_pe_out_of_range(call):
    m = tm.machine("torus:4x4/2")
    args = ([0, 32],) if call == "node_of" else (0, 32)
    with pytest.raises(MachineError, match=r"PE 32 is out of range \[0, 32\)"):
        getattr(m, call)(*args)


def test_level_names():
    assert tm.machine("torus:4x4/2").level_names == ["PE", "Node", "network"]
    assert tm.machine("hierarchy:2:2:2/1:10:100").level_names == ["PE", "Node", "switch1", "switch2"]
    single = tm.machine("tree:pack:2 core:2")
    assert single.level_names[0] == "PE" and single.level_names[1:] == list(single.node.levels)


def test_distance_matrix_hierarchy_by_hand():
    m = tm.machine("hierarchy:2:2:2/1:10:100")
    # PEs 0..7: pairs {0,1},{2,3},{4,5},{6,7} share a node (1); {0..3},{4..7} a switch1 (10); else 100
    want = [
        [0, 1, 10, 10, 100, 100, 100, 100],
        [1, 0, 10, 10, 100, 100, 100, 100],
        [10, 10, 0, 1, 100, 100, 100, 100],
        [10, 10, 1, 0, 100, 100, 100, 100],
        [100, 100, 100, 100, 0, 1, 10, 10],
        [100, 100, 100, 100, 1, 0, 10, 10],
        [100, 100, 100, 100, 10, 10, 0, 1],
        [100, 100, 100, 100, 10, 10, 1, 0],
    ]
    assert m.distance_matrix().tolist() == want
    assert m.distance_matrix([6, 0, 3]).tolist() == [[0, 100, 100], [100, 0, 10], [100, 10, 0]]
    lev = m.level_of(np.arange(8)[:, None], np.arange(8)[None, :])
    assert lev[0].tolist() == [0, 1, 2, 2, 3, 3, 3, 3]
    assert np.array_equal(lev, lev.T)


def test_distance_matrix_too_large():
    m = tm.machine("torus:4x4/2")
    with pytest.raises(MachineError, match="16385x16385 distance matrix is too large"):
        m.distance_matrix(np.arange(2**14 + 1) % 32)


# ------------------------------------------------------------------ summary

@pytest.mark.parametrize("n", range(2, 13))
def test_summary_ring_closed_form(n):
    s = tm.machine(f"torus:{n}").summary()
    assert s["diameter"] == n // 2
    # sum of ring distances from one node: sum_k min(k, n - k) = floor(n^2 / 4)
    assert s["aspl"] == pytest.approx((n * n // 4) / (n - 1))
    assert s["aspl_exact"] is True
    assert s["nodes"] == n and s["links"] == 2 * n


@pytest.mark.parametrize("n", range(2, 9))
def test_summary_line_closed_form(n):
    s = tm.machine(f"mesh:{n}").summary()
    # path of n nodes: diameter n-1; sum over ordered pairs of |i-j| = (n-1) n (n+1) / 3
    assert s["diameter"] == n - 1
    assert s["aspl"] == pytest.approx((n - 1) * n * (n + 1) / 3 / (n * (n - 1)))
    assert s["links"] == 2 * (n - 1)


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_summary_torus_k_by_k_against_networkx(k):
    s = tm.machine(f"torus:{k}x{k}").summary()
    g = nx.grid_2d_graph(k, k, periodic=True)
    assert s["diameter"] == nx.diameter(g) == 2 * (k // 2)
    assert s["aspl"] == pytest.approx(nx.average_shortest_path_length(g))
    assert s["links"] == 2 * g.number_of_edges()


@pytest.mark.parametrize("dims", [(2, 3), (3, 3), (4, 5), (1, 6)])
def test_summary_mesh_against_networkx(dims):
    s = tm.machine("mesh:" + "x".join(map(str, dims))).summary()
    g = nx.grid_2d_graph(*dims)
    assert s["diameter"] == nx.diameter(g) == sum(d - 1 for d in dims)
    assert s["aspl"] == pytest.approx(nx.average_shortest_path_length(g))
    assert s["links"] == 2 * g.number_of_edges()


def test_summary_fields_and_hierarchy():
    s = tm.machine("hierarchy:2:2:2/1:10:100").summary()
    # 4 nodes, 2 per switch1: from any node 1 node at 2 hops, 2 nodes at 4 hops -> (2 + 8) / 3
    assert s == {"spec": "hierarchy:2:2:2/1:10:100", "network": "tree", "nodes": 4, "pes_per_node": 2,
                 "pes": 8, "links": 12, "node_levels": ["Node"], "diameter": 4, "aspl": pytest.approx(10 / 3),
                 "aspl_exact": True}
    one = tm.machine("tree:core:4").summary()
    assert (one["nodes"], one["diameter"], one["aspl"], one["links"]) == (1, 0, 0.0, 0)


def test_summary_sampled_for_big_machines():
    s = tm.machine("torus:64x64").summary()          # 4096 nodes > exact_limit 2048
    assert s["aspl_exact"] is False
    assert s["diameter"] == 64
    # exact: 2 * (64^2 / 4) / 4095 = 32.0078...; 200000 seeded samples land within 0.1
    assert s["aspl"] == pytest.approx(2 * 1024 / 4095 * 64, abs=0.1)
    assert tm.machine("torus:64x64").summary() == s     # seeded: the same every time


def test_summary_sampled_diameter_of_tree_with_arity_one_top():
    # hierarchy:2:3:1: the single top switch joins nothing new, routes climb at most 1 level
    m = tm.machine("hierarchy:2:3:1")
    assert m.summary()["diameter"] == 2
    assert m.summary(exact_limit=2, samples=1000)["diameter"] == 2


def test_summary_sampled_path_matches_exact_on_small_machine():
    m = tm.machine("torus:8x8")
    exact = m.summary()
    sampled = m.summary(exact_limit=10, samples=50_000)
    assert exact["aspl_exact"] and not sampled["aspl_exact"]
    assert exact["aspl"] == pytest.approx(2 * 16 * 8 / 63)     # ring of 8 sums to 16 per node
    assert sampled["aspl"] == pytest.approx(exact["aspl"], abs=0.05)
    assert sampled["diameter"] == exact["diameter"] == 8


# ------------------------------------------------------------------ capacities and links

def test_capacities_default_scalar_and_per_link():
    m = tm.machine("torus:2x2")
    assert m.capacities().tolist() == [1.0] * 16
    m.set_capacities(2.5)
    assert m.capacities().tolist() == [2.5] * 16
    m.set_capacities(np.arange(1, 17))
    assert m.capacities().tolist() == list(map(float, range(1, 17)))
    m2 = tm.Machine(tm.Torus((2, 2), (True, True)), tm.NodeTree.flat(2), capacity=3)
    assert m2.capacities().tolist() == [3.0] * 16


@pytest.mark.parametrize("cap, msg", [
    (0, "link 0 has capacity 0"),
    (-1, "link 0 has capacity -1"),
    (np.nan, "link 0 has capacity nan"),
    (np.inf, "link 0 has capacity inf"),
    ([1.0] * 15 + [0.0], "link 15 has capacity 0"),
    ([1.0, 2.0], "capacities has length 2, expected 16"),
    ("fast", "capacities must be numbers, got 'fast'"),
])
def test_bad_capacities(cap, msg):
    m = tm.machine("torus:2x2")
    with pytest.raises(MachineError, match=msg):
        m.set_capacities(cap)
    assert m.capacities().tolist() == [1.0] * 16     # unchanged after a refused update


def test_links_exist_on_mesh():
    m = tm.machine("mesh:3x3")
    got = m.links_exist()
    assert got.dtype == bool and got.size == m.nlinks == 36
    want = np.zeros(36, dtype=bool)
    for node in range(9):
        x = (node % 3, node // 3)
        for dim in range(2):
            want[(node * 2 + dim) * 2 + 0] = x[dim] < 2    # + exists unless on the far border
            want[(node * 2 + dim) * 2 + 1] = x[dim] > 0    # - exists unless on the near border
    assert got.tolist() == want.tolist()
    assert int(got.sum()) == 24 == m.summary()["links"]
    assert tm.machine("torus:3x3").links_exist().all()


def test_links_exist_equals_links_some_route_uses():
    for spec in ("mesh:4x3", "torus:3x4", "torus:1x3", "mesh:5x1x2", "hierarchy:2:3:2"):
        m = tm.machine(spec)
        used = np.zeros(m.nlinks, dtype=bool)
        for a, b in itertools.product(range(m.nnodes), repeat=2):
            used[m.route(a, b)] = True
        assert m.links_exist().tolist() == used.tolist(), spec


# ------------------------------------------------------------------ allocations

def test_contiguous_allocation_and_partial_last_node():
    m = tm.machine("torus:4x4/2")
    a = m.allocate(6)
    assert a.pes.tolist() == [0, 1, 2, 3, 4, 5] and a.policy == "contiguous" and len(a) == 6
    b = m.allocate(5)
    assert b.pes.tolist() == [0, 1, 2, 3, 4]             # node 2 is used in part
    assert b.nodes().tolist() == [0, 1, 2]
    assert m.allocate(32).pes.tolist() == list(range(32))
    assert a.pes.dtype == np.int32
    with pytest.raises(ValueError, match="read-only"):
        a.pes[0] = 7
    assert repr(b) == "Allocation(5 PEs on 3 nodes of 'torus:4x4/2', policy='contiguous')"


def test_random_allocation():
    m = tm.machine("torus:8x8/2")
    a = m.allocate(21, policy="random", seed=0)
    nodes = a.nodes()
    assert len(nodes) == 11 and len(set(nodes.tolist())) == 11
    # whole nodes, their PEs in local order; the last node only in part
    want = (nodes[:, None] * 2 + np.arange(2)).ravel()[:21]
    assert a.pes.tolist() == want.tolist()
    assert m.allocate(21, policy="random", seed=0).pes.tolist() == a.pes.tolist()
    assert m.allocate(21, policy="random", seed=1).pes.tolist() != a.pes.tolist()
    assert nodes.tolist() != sorted(nodes.tolist())      # random order, not sorted


def test_fragmented_allocation_runs():
    m = tm.machine("torus:8x8/2")
    for runs in (1, 2, 3, 4, 8, 11):
        a = m.allocate(22, policy="fragmented", seed=3, runs=runs)
        nodes = a.nodes()
        assert len(nodes) == 11
        assert np.all(np.diff(nodes) > 0)                # distinct and increasing
        assert runs_of(nodes) == runs
        assert a.pes.tolist() == (nodes[:, None] * 2 + np.arange(2)).ravel().tolist()
    # more runs than nodes: every node is its own run
    assert runs_of(m.allocate(22, policy="fragmented", seed=3, runs=20).nodes()) == 11


def test_fragmented_deterministic_and_seeded():
    m = tm.machine("torus:8x8/2")
    a = m.allocate(30, policy="fragmented", seed=5).pes.tolist()
    assert m.allocate(30, policy="fragmented", seed=5).pes.tolist() == a
    assert m.allocate(30, policy="fragmented", seed=6).pes.tolist() != a


def test_fragmented_with_little_room_uses_fewer_runs():
    m = tm.machine("torus:8x8/2")
    # every node: one run; 63 of 64 nodes: at most 2 runs fit (one free node between them)
    assert m.allocate(128, policy="fragmented", seed=3).nodes().tolist() == list(range(64))
    assert runs_of(m.allocate(126, policy="fragmented", seed=3).nodes()) == 2
    # 60 nodes leave 4 free: 4 runs fit
    assert runs_of(m.allocate(120, policy="fragmented", seed=3).nodes()) == 4


@given(st.integers(1, 40), st.integers(1, 4), st.integers(1, 6), st.integers(0, 2**64 - 1), st.data())
def test_fragmented_property(nn, ppn, runs, seed, data):
    m = tm.machine(f"mesh:{nn}/{ppn}")
    n = data.draw(st.integers(1, m.npes))
    a = m.allocate(n, policy="fragmented", seed=seed, runs=runs)
    nodes = a.nodes()
    k = -(-n // ppn)
    assert len(a) == n and len(nodes) == k
    assert np.all(np.diff(nodes) > 0)
    assert runs_of(nodes) == min(runs, k, nn - k + 1)
    assert a.pes.tolist() == (nodes[:, None] * ppn + np.arange(ppn)).ravel()[:n].tolist()


@pytest.mark.parametrize("kwargs, msg", [
    ({"n": 33}, "cannot allocate 33 PEs on a machine with 32"),
    ({"n": 0}, "positive number of PEs, got 0"),
    ({"n": 4.0}, "positive number of PEs, got 4.0"),
    ({"n": True}, "positive number of PEs, got True"),
    ({"n": 4, "policy": "foo"}, "unknown allocation policy 'foo'; choose one of"),
    ({"n": 4, "seed": -1}, r"seed must be an integer in \[0, 2\*\*64\), got -1"),
    ({"n": 4, "seed": 1.5}, "got 1.5"),
    ({"n": 4, "seed": True}, "got True"),
    ({"n": 4, "seed": 2**64}, "got 18446744073709551616"),
    ({"n": 4, "runs": 0}, "runs must be a positive integer, got 0"),
    ({"n": 4, "runs": True}, "runs must be a positive integer, got True"),
    ({"n": 4, "runs": 2.0}, "runs must be a positive integer, got 2.0"),
])
def test_allocate_rejects(kwargs, msg):
    with pytest.raises(MachineError, match=msg):
        tm.machine("torus:4x4/2").allocate(**kwargs)


def test_explicit_allocation():
    m = tm.machine("torus:4x4/2")
    a = m.allocation([5, 2, 3, 31])
    assert a.pes.tolist() == [5, 2, 3, 31] and a.policy == "explicit"
    assert a.nodes().tolist() == [2, 1, 15]              # first-appearance order
    src = np.array([4, 9], dtype=np.int32)
    b = m.allocation(src)
    src[0] = 0                                              # the caller's array is copied, not frozen
    assert b.pes.tolist() == [4, 9] and not b.pes.flags.writeable
    with pytest.raises(MappingError, match="PE 3 appears twice"):
        m.allocation([3, 1, 3])
    with pytest.raises(MachineError, match=r"PE 32 is out of range \[0, 32\)"):
        m.allocation([0, 32])
    with pytest.raises(MachineError, match=r"PE -1 is out of range"):
        m.allocation([-1, 0])
    with pytest.raises(MachineError, match="PE 4294967297 is out of range"):
        m.allocation(np.array([0, 2**32 + 1]))
    with pytest.raises(MappingError, match="non-empty 1-D"):
        m.allocation([])
    with pytest.raises(MappingError, match="non-empty 1-D"):
        m.allocation([[0, 1]])
    with pytest.raises(MappingError, match="must be integers, got dtype float64"):
        m.allocation([0.0, 1.0])


# ------------------------------------------------------------------ against the reference

@given(machines())
def test_whole_machine_against_reference(m):
    """Everything test_eval.py does not already check: full distance/level matrices,
    links_exist and the summary's diameter and ASPL."""
    assume(m.nnodes <= 64 and m.npes <= 200)
    desc = machine_desc(m)
    ref.validate(desc)
    pes = np.arange(m.npes)
    if m.npes > 24:
        pes = np.random.default_rng(m.npes).choice(m.npes, 24, replace=False)
    dm = m.distance_matrix(pes)
    lv = m.level_of(pes[:, None], pes[None, :])
    for i, a in enumerate(pes):
        for j, b in enumerate(pes):
            assert dm[i, j] == pytest.approx(ref.distance(desc, int(a), int(b)))
            assert lv[i, j] == ref.level_of(desc, int(a), int(b))
    used = np.zeros(ref.num_links(desc), dtype=bool)
    lengths = []
    for a, b in itertools.product(range(m.nnodes), repeat=2):
        r = ref.route(desc, a, b)
        used[r] = True
        if a != b:
            lengths.append(len(r))
    assert m.nlinks == ref.num_links(desc)
    exist = m.links_exist()
    assert not (used & ~exist).any()                       # every link a route takes exists
    if isinstance(m.network, tm.Torus) and 2 not in m.network.dims:
        # torus/mesh: a link id exists exactly when some route takes it (a ring of 2 keeps
        # its - links, which the + tie-break never takes; tree links always exist)
        assert exist.tolist() == used.tolist()
    s = m.summary()
    assert s["links"] == int(exist.sum())
    assert s["diameter"] == (max(lengths) if lengths else 0)
    assert s["aspl"] == pytest.approx(sum(lengths) / len(lengths) if lengths else 0.0)
    if isinstance(m.network, tm.Torus):
        assert m.max_route == s["diameter"]
    else:
        assert m.max_route >= s["diameter"]
    if m.nnodes > 1:   # the sampled path reports the same diameter
        assert m.summary(exact_limit=1, samples=100)["diameter"] == s["diameter"]


def test_torus_spec_with_empty_node_part_is_refused():
    with pytest.raises(tm.MachineError, match="without a node description"):
        tm.machine("torus:4x4/")


def test_tree_network_diameter_ignores_arity_one_levels():
    # 2 PEs per node, 2 nodes per switch, 3 switches under one switch, which is the only
    # child of the root: the longest route climbs two levels and descends two.
    m = tm.machine("hierarchy:2:2:3:1/1:10:100:1000")
    assert m.max_route == 4 and m.summary()["diameter"] == 4
