"""Fat trees (csrc/core/machine_fattree.c, topomap/networks/fattree.py) and the
APHiD cost model (topomap/cabling/aphid.py).

The C routes are checked against ``RefXGFT``, a slow reference that builds the
explicit switch graph from the XGFT definition (Öhring et al. 1995: labels,
and edges between labels that differ in one digit) and routes on it by the
D-mod-k rule as Zahavi states it, and against hand-worked small cases.
"""

from __future__ import annotations

import itertools
import math
from collections import deque

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from topomap import MachineError
from topomap.cabling.aphid import TABLE_II, TABLE_III, cabling, fat_tree_cabling, table_iii
from topomap.networks.fattree import aphid_fat_tree, blocking, k_ary_n_tree, k_port_n_tree, tapered, xgft


# ------------------------------------------------------------------ reference
class RefXGFT:
    """XGFT(h; m; w) with p parallel cables, from the definition.

    A level-i vertex is a label of h digits: digit j (1-based) is x_j < m_j
    for j > i and y_j < w_j for j <= i.  A level-(i-1) vertex and a level-i
    vertex are joined iff their labels agree except in digit i, by p_i
    cables.  Vertex and cable ids follow the documented layout but are
    assigned by enumeration, not by the closed form.
    """

    def __init__(self, m, w, p, routing="dmodk"):
        self.m, self.w, self.p, self.routing, self.h = m, w, p, routing, len(m)
        h = self.h
        self.N = math.prod(m)
        self.ids: dict[tuple[int, tuple[int, ...]], int] = {}
        self.levels: list[list[tuple[int, ...]]] = []
        for i in range(h + 1):
            # radices of digits 1..h at level i; sort key = (x digits from the top, then y digits from the top)
            radix = [w[j] if j < i else m[j] for j in range(h)]
            labels = list(itertools.product(*[range(r) for r in radix]))
            labels.sort(key=lambda lab, i=i: (lab[i:][::-1], lab[:i][::-1]))
            self.levels.append(labels)
            for lab in labels:
                self.ids[(i, lab)] = len(self.ids)
        self.cable_of: dict[tuple[int, int, int], int] = {}   # (child vertex, parent vertex, k-th cable) -> cable id
        self.ends: list[tuple[int, int]] = []
        self.adj: dict[int, set[int]] = {v: set() for v in range(len(self.ids))}
        for i in range(1, h + 1):
            parents = {}
            for lab in self.levels[i]:
                parents.setdefault(lab[:i - 1] + lab[i:], []).append(lab)
            for child in self.levels[i - 1]:
                cv = self.ids[(i - 1, child)]
                # parents agree with the child except in digit i; their digit i is the y_i that picks them
                ps = sorted(parents[child[:i - 1] + child[i:]], key=lambda lab: lab[i - 1])
                assert len(ps) == w[i - 1]
                for q in range(w[i - 1] * p[i - 1]):
                    par = ps[q % w[i - 1]]
                    pv = self.ids[(i, par)]
                    self.cable_of[(cv, pv, q // w[i - 1])] = len(self.ends)
                    self.ends.append((cv, pv))
                    self.adj[cv].add(pv)
                    self.adj[pv].add(cv)

    def node_label(self, a):
        digits = []
        for mj in self.m:
            a, d = divmod(a, mj)
            digits.append(d)
        return tuple(digits)

    def port(self, b, i):
        """Up port of a level-(i-1) vertex towards node b (Zahavi's D-mod-K)."""
        if self.routing == "shortest":
            return 0
        return (b // math.prod(self.w[:i - 1])) % (self.w[i - 1] * self.p[i - 1])

    def route(self, a, b):
        if a == b:
            return []
        target = self.node_label(b)
        level, lab, links = 0, self.node_label(a), []
        while lab[level:] != target[level:]:          # not yet an ancestor of b
            i = level + 1
            q = self.port(b, i)
            par = lab[:i - 1] + (q % self.w[i - 1],) + lab[i:]
            cab = self.cable_of[(self.ids[(level, lab)], self.ids[(i, par)], q // self.w[i - 1])]
            links.append(2 * cab)
            level, lab = i, par
        while level > 0:
            i = level
            child = lab[:i - 1] + (target[i - 1],) + lab[i:]
            q = self.port(b, i)
            cab = self.cable_of[(self.ids[(i - 1, child)], self.ids[(i, lab)], q // self.w[i - 1])]
            links.append(2 * cab + 1)
            level, lab = i - 1, child
        return links

    def bfs_hops(self, a):
        dist = {a: 0}
        todo = deque([a])
        while todo:
            v = todo.popleft()
            for u in self.adj[v]:
                if u not in dist:
                    dist[u] = dist[v] + 1
                    todo.append(u)
        return dist


def cross_check(m, w, p, routing):
    ref = RefXGFT(m, w, p, routing)
    mach = tm.Machine(xgft(m, w, p, routing=routing), tm.NodeTree.flat(1))
    assert mach.nnodes == ref.N and mach.nvertices == len(ref.ids) and mach.nlinks == 2 * len(ref.ends)
    g = mach.links()
    want = np.array([e for cv_pv in ref.ends for e in (cv_pv, cv_pv[::-1])])
    np.testing.assert_array_equal(np.stack([g["src"], g["dst"]], axis=1), want)
    for a in range(ref.N):
        hops = ref.bfs_hops(a)
        for b in range(ref.N):
            r = mach.route(a, b).tolist()
            assert r == ref.route(a, b), (a, b)
            assert len(r) == (hops[b] if a != b else 0)


SHAPES = [
    ((2, 4), (1, 2), (1, 1)),
    ((3, 2), (2, 3), (1, 2)),          # dual-homed nodes
    ((2, 2, 3), (1, 2, 2), (2, 1, 3)),
    ((4, 4), (1, 4), (1, 1)),
    ((2, 3, 2), (1, 3, 1), (1, 2, 2)),
]


@pytest.mark.parametrize("routing", ["dmodk", "shortest"])
@pytest.mark.parametrize("shape", SHAPES)
def test_routes_equal_reference_graph(shape, routing):
    cross_check(*shape, routing)


@given(st.integers(1, 3).flatmap(lambda h: st.tuples(
    st.lists(st.integers(1, 3), min_size=h, max_size=h), st.lists(st.integers(1, 3), min_size=h, max_size=h),
    st.lists(st.integers(1, 2), min_size=h, max_size=h), st.sampled_from(["dmodk", "shortest"]))))
def test_random_shapes_equal_reference_graph(shape):
    m, w, p, routing = shape                       # at most 27 nodes: every pair is checked
    cross_check(tuple(m), tuple(w), tuple(p), routing)


# ------------------------------------------------------------------ hand-worked
def test_hand_worked_two_level_routes():
    # xgft:m=2x4,w=1x2 = 4 leaves of 2 nodes, 2 spines.  Vertices: nodes 0-7,
    # leaves 8-11, spines 12-13.  Cables 0-7: node u -> leaf u//2; cables
    # 8-15: leaf l, port q -> spine q is cable 8 + 2l + q.  Link 2c up, 2c+1 down.
    dk = tm.machine("xgft:m=2x4,w=1x2")
    sp = tm.machine("xgft:m=2x4,w=1x2,routing=shortest")
    # 0 -> 5: D-mod-k port 5 mod 2 = 1: node 0 up (0), leaf 0 -> spine 1
    # (cable 9 -> link 18), spine 1 -> leaf 2 (cable 13 -> link 27), -> node 5 (cable 5 -> link 11)
    assert dk.route(0, 5).tolist() == [0, 18, 27, 11]
    # shortest: lowest port, spine 0: cables 8 and 12
    assert sp.route(0, 5).tolist() == [0, 16, 25, 11]
    # 0 -> 4: port 4 mod 2 = 0 under both rules
    assert dk.route(0, 4).tolist() == sp.route(0, 4).tolist() == [0, 16, 25, 9]
    # same leaf: up cable 0, down cable 1
    assert dk.route(0, 1).tolist() == [0, 3]
    # from every source, traffic to node 7 climbs to spine 7 mod 2 = 1 (vertex 13)
    g = dk.links()
    ends = dict(zip(g["link"].tolist(), zip(g["src"].tolist(), g["dst"].tolist())))
    assert {ends[dk.route(a, 7)[1]][1] for a in range(6)} == {13}
    assert dk.level_names == ["PE", "Node", "leaf", "spine"]
    assert dk.level_of(0, [1, 5]).tolist() == [2, 3]
    assert dk.distance(0, [1, 5]).tolist() == [2.0, 4.0]


def test_parallel_cables_hand_worked():
    # xgft:m=2x2,w=1x2,p=1x2: leaf port q = spine + 2*cable.  0 -> 3: q = 3 (spine 1,
    # cable 1): level-2 cable 4 + 3 = 7 up (link 14), 4 + 4 + 3 = 11 down (link 23), node 3 (link 7)
    m = tm.machine("xgft:m=2x2,w=1x2,p=1x2")
    assert m.route(0, 3).tolist() == [0, 14, 23, 7]
    assert m.route(0, 2).tolist() == [0, 12, 21, 5]


def all_to_all(n):
    dense = np.ones((n, n)) - np.eye(n)
    return tm.Pattern.from_dense(dense)


def leaf_spine_loads(m, routing_loads):
    g = m.links()
    inter = (g["src"] >= m.nnodes) & (g["dst"] >= m.nnodes)
    return routing_loads[g["link"][inter]]


@pytest.mark.parametrize("k", [2, 3, 4])
def test_dmodk_spreads_all_to_all_evenly(k):
    # k-ary 2-tree, all-to-all of 1 byte.  Up link leaf L -> spine s: the k
    # sources under L times the k-1 destinations d outside L with d mod k = s.
    # Down link spine s -> leaf L': the k(k-1) sources outside L' times the one
    # destination of L' with d mod k = s.  Every leaf-spine link: k(k-1).
    # Lowest port: all k*k(k-1) bytes leaving a leaf go through spine 0.
    n = k * k
    pat = all_to_all(n)
    dk = tm.machine(f"fattree:k={k},levels=2")
    sp = tm.machine(f"fattree:k={k},levels=2,routing=shortest")
    ld = leaf_spine_loads(dk, tm.evaluate(pat, dk, np.arange(n), link_load=True).link_load)
    ls = leaf_spine_loads(sp, tm.evaluate(pat, sp, np.arange(n), link_load=True).link_load)
    assert ld.size == 2 * k * k and (ld == k * (k - 1)).all()
    assert ls.max() == k * k * (k - 1) and np.count_nonzero(ls) == 2 * k
    assert ld.sum() == ls.sum()                      # same hops, different links


def test_dmodk_with_parallel_cables_keeps_down_links_even():
    # xgft:m=4x4,w=1x2,p=2x2: nodes dual-cabled to their leaf, 2 cables per
    # leaf-spine pair, 4 up ports per leaf for 4 nodes (balanced).  Leaf port
    # of destination d: d mod 4, so the 4 destinations of a leaf use 4
    # different down links, each carrying the 16 - 4 = 12 outside sources.
    # (Dividing by w*p instead, (d // 2) mod 4, would put 2 destinations on
    # half of them: loads 24 and 0.)
    m = tm.machine("xgft:m=4x4,w=1x2,p=2x2")
    load = leaf_spine_loads(m, tm.evaluate(all_to_all(16), m, np.arange(16), link_load=True).link_load)
    assert load.size == 32 and (load == 12).all()


def test_tapered_tree_concentrates_load_by_the_taper():
    # xgft:m=4x4,w=1x2 (k-ary 2-tree k=4 tapered 2x): leaf L -> spine s carries
    # 4 sources x 6 outside destinations with d mod 2 = s = 24, twice k(k-1) = 12
    pat = all_to_all(16)
    full = tm.machine("fattree:k=4,levels=2")
    half = tm.machine("fattree:k=4,levels=2,taper=2")
    assert half.network.w == (1, 2)
    lf = leaf_spine_loads(full, tm.evaluate(pat, full, np.arange(16), link_load=True).link_load)
    lh = leaf_spine_loads(half, tm.evaluate(pat, half, np.arange(16), link_load=True).link_load)
    assert lf.max() == 12 and (lh == 24).all()


# ------------------------------------------------------------------ counts
def test_k_ary_and_k_port_counts():
    ft = k_ary_n_tree(4, 3)
    assert ft.nnodes == 64 and ft.switches_per_level() == (16, 16, 16)
    assert ft.cables_per_level() == (64, 64, 64) and ft.blocking_ratios() == (1.0, 1.0)
    kp = k_port_n_tree(74, 3)
    assert kp.nnodes == 2 * 37**3 == 101306
    assert kp.switches_per_level() == (2738, 2738, 1369) and kp.radix == 74
    assert all(used == 74 for used in kp.ports_per_switch())


def test_taper_and_blocking_counts():
    ft = tm.machine("fattree:k=4,levels=3,taper=2").network
    assert ft.w == (1, 4, 2)
    assert ft.switches_per_level() == (16, 16, 8) and ft.cables_per_level() == (64, 64, 32)
    assert ft.blocking_ratios() == (1.0, 2.0)
    gpc_like = tm.machine("fattree:k=6,levels=2,block=5").network
    assert gpc_like.m == (30, 6) and gpc_like.switches_per_level() == (6, 6)
    assert gpc_like.cables_per_level() == (180, 36) and gpc_like.blocking_ratios() == (5.0,)
    # parallel cables go before parents
    t = tapered(xgft((2, 2), (1, 4), (1, 2)), 4)
    assert (t.w, t.p) == ((1, 2), (1, 1))
    assert tapered(k_ary_n_tree(4, 3), 2, level=2).w == (1, 2, 4)
    with pytest.raises(MachineError, match="cannot taper level 2 by 2: its 3 parents x 1 cables"):
        tapered(k_ary_n_tree(3, 2), 2)
    with pytest.raises(MachineError, match="taper level must be 1..2, got 3"):
        tapered(k_ary_n_tree(3, 2), 3, level=3)
    assert blocking(k_ary_n_tree(2, 2), 3).m == (6, 2)


def test_aphid_tables_i_and_ii():
    # Table I: subtrees, leaves, aggregation and core switches; Table II: links per port
    want = {  # config: (switches L1, L2, packed cores, node-leaf, leaf-agg, agg-core, nodes)
        "untapered": (256, 256, 128, 8192, 8192, 8192, 4096),
        1: (352, 160, 50, 14784, 7040, 3200, 4224),
        2: (352, 160, 25, 14784, 7040, 1600, 4224),
        4: (352, 160, 13, 14784, 7040, 800, 4224),
    }
    for config, (leaf, agg, core, nl, la, ac, nodes) in want.items():
        ft = aphid_fat_tree(untapered=True) if config == "untapered" else aphid_fat_tree(config)
        assert ft.nnodes == nodes
        assert ft.switches_per_level()[:2] == (leaf, agg) and ft.packed_top_switches() == core
        assert ft.ports_per_level() == (nl, la, ac)
        assert max(ft.ports_per_switch()) <= 64
    # subtrees: 8 and 16; nodes per leaf: 16 and 12; 3.5 ports per node of the tapered tree
    assert aphid_fat_tree(untapered=True).m == (16, 32, 8) and aphid_fat_tree().m == (12, 22, 16)
    m = tm.machine("aphid:taper=2")
    caps = m.capacities()
    assert set(caps[: 2 * 4224].tolist()) == {3.5} and set(caps[2 * 4224:].tolist()) == {1.0}
    assert tm.machine("aphid:untapered").nnodes == 4096


# ------------------------------------------------------------------ cost model
def test_table_iii_golden():
    rows = table_iii()
    for name, (cost, power) in TABLE_III.items():
        assert round(rows[name].cost_usd / 1e6, 2) == cost / 1e6, name
        assert round(rows[name].power_w / 1e3) == power / 1e3, name
    # the exact values behind the rounded ones
    assert rows["untapered"].cost_usd == 100 * 8192 + 600 * 8192 == 5_734_400
    assert rows["taper4"].cost_usd == 100 * 7744 + 600 * 800 == 1_254_400
    assert rows["untapered"].power_w == 5 * 8192 + 10 * 8192 == 122_880
    assert rows["taper4"].power_w == 5 * 7744 + 10 * 800 == 46_720
    assert rows["baseline"].to_dict()["optical_links"] == 3200


def test_cost_of_constructed_trees():
    # the constructed trees match Table II except Leaf-Agg = 7040 (erratum: the paper prints 7744)
    unt = fat_tree_cabling(aphid_fat_tree(untapered=True))
    assert (unt.cost_usd, unt.power_w) == (5_734_400, 122_880)
    for taper, (la, ac) in ((1, TABLE_II["baseline"]), (2, TABLE_II["taper2"]), (4, TABLE_II["taper4"])):
        c = fat_tree_cabling(aphid_fat_tree(taper))
        assert (c.electrical_links, c.optical_links) == (7040, ac) and la == 7744
        assert c.cost_usd == 100 * 7040 + 600 * ac and c.power_w == 5 * 7040 + 10 * ac
    # other prices, other optical levels
    assert fat_tree_cabling(k_ary_n_tree(2, 3), optical_levels=(2, 3)).optical_links == 16
    assert cabling(1, 1, optical_usd=0, electrical_pj_per_bit=0).cost_usd == 100
    with pytest.raises(MachineError, match="inter-switch levels 2..3, got \\[1\\]"):
        fat_tree_cabling(k_ary_n_tree(2, 3), optical_levels=(1,))
    with pytest.raises(MachineError, match="optical_links must be >= 0"):
        cabling(1, -1)


# ------------------------------------------------------------------ evaluation
def test_evaluate_matches_lca_hops_and_reference_loads():
    # 3-D 7-point stencil, 64 processes, 2 PEs per node on xgft:m=2x2x4,w=1x2x2,p=1x1x2 (16 nodes)
    pat = tm.generators.stencil_3d((4, 4, 4), points=7)
    m = tm.machine("xgft:m=2x2x4,w=1x2x2,p=1x1x2/4")
    alloc = m.allocate(64)
    rng = np.random.default_rng(3)
    pe_of = rng.permutation(alloc.pes).astype(np.int32)
    met = tm.evaluate(pat, alloc, pe_of, link_load=True)
    ref = RefXGFT((2, 2, 4), (1, 2, 2), (1, 1, 2))
    load = np.zeros(m.nlinks)
    hop_bytes = 0.0
    src = pat.senders()
    for s, d, b in zip(src, pat.indices, pat.bytes):
        na, nb = pe_of[s] // 4, pe_of[d] // 4
        r = ref.route(int(na), int(nb))
        load[r] += b
        hop_bytes += b * len(r)
    assert met.hop_bytes == hop_bytes and met.max_congestion == load.max()
    np.testing.assert_array_equal(met.link_load, load)
    assert set(met.level_bytes) == {"PE", "Node", "leaf", "agg", "spine"}
    assert sum(met.level_bytes.values()) == pat.bytes.sum()


def test_congestion_uses_level_capacities():
    # one message between two nodes of one leaf over 3.5-port node links
    m = tm.machine("xgft:m=2x2,w=1x2,c=3.5x1")
    met = tm.evaluate(tm.Pattern.from_edges([0], [1], [7.0]), m, [0, 1])
    assert met.max_congestion == 2.0 and met.hop_bytes == 14.0


def test_incremental_swaps_equal_full_evaluation_on_fat_tree():
    pat = tm.generators.stencil_3d((4, 4, 2), points=27)
    m = tm.machine("xgft:m=2x2x2,w=1x2x2,p=1x2x1/4")
    alloc = m.allocate(32)
    ev = tm.Evaluator(pat, alloc, alloc.pes)
    rng = np.random.default_rng(0)
    for _ in range(40):
        a, b = rng.integers(0, 32, 2)
        tried = ev.try_swap(int(a), int(b))
        ev.swap(int(a), int(b))
        full = tm.evaluate(pat, alloc, ev.mapping())
        assert tried.hop_bytes == full.hop_bytes
        assert tried.max_congestion == pytest.approx(full.max_congestion)
        assert tried.nz_congestion_var == pytest.approx(full.nz_congestion_var, abs=1e-9)


def test_hundred_thousand_nodes():
    m = tm.machine("fattree:k=46,levels=3")
    assert m.nnodes == 97336 and m.max_route == 6 and m.nlinks == 2 * 3 * 97336
    n = m.nnodes
    ends = m.links()
    src = dict(zip(ends["link"].tolist(), ends["src"].tolist()))
    dst = dict(zip(ends["link"].tolist(), ends["dst"].tolist()))
    for a, b in ((0, n - 1), (12345, 67890), (n - 1, 46)):
        r = m.route(a, b).tolist()
        walk = [a] + [dst[link] for link in r]
        assert [src[link] for link in r] == walk[:-1] and walk[-1] == b
        assert walk[3] == n + 2 * 2116 + b % 2116          # b's top switch: b mod (46*46)
    assert m.summary()["diameter"] == 6


# ------------------------------------------------------------------ specs and errors
def test_spec_forms_round_trip():
    for spec in ("xgft:m=2x4,w=1x2", "xgft:m=2x2,w=1x2,p=1x2,c=3.5x1,routing=shortest,radix=12"):
        m = tm.machine(spec)
        assert m.network.spec_head() == spec
        assert tm.machine(m.network.spec_head()).network == m.network
    m = tm.machine("fattree:ports=4,levels=3/pack:2 core:2")
    assert (m.nnodes, m.pes_per_node) == (16, 4)
    assert m.network.spec_head() == "xgft:m=2x2x4,w=1x2x2,radix=4"
    assert tm.machine("aphid:routing=shortest,taper=4").network.routing == "shortest"
    assert tm.FatTree([2, 2], [1, 2], p=[1, 1]) == tm.FatTree((2, 2), (1, 2))


@pytest.mark.parametrize("spec, fragment", [
    ("xgft:m=4x4", "needs w="),
    ("xgft:w=1x4", "needs m="),
    ("xgft:m=4x4,w=1x4,q=2", "unknown xgft option 'q=2'"),
    ("xgft:m=4x4,w=1x4,m=2", "'m' is given twice"),
    ("xgft:m=4xx4,w=1x4", "xgft m '' in machine spec"),
    ("xgft:m=4x4,w=1x4x2", "xgft w=1x4x2 has 3 levels but m=4x4 has 2"),
    ("xgft:m=4x4,w=1x0", "got 0"),
    ("xgft:m=4x4,w=1x4,p=1", "xgft p=1 has 1 levels"),
    ("xgft:m=4x4,w=1x4,c=1x0", "level 2 has capacity 0.0"),
    ("xgft:m=4x4,w=1x4,c=1xabc", "xgft c 'abc'"),
    ("xgft:m=4x4,w=1x4,routing=smod", "routing 'smod'"),
    ("xgft:m=4x4,w=1x4,radix=6", "level-1 switches of fat tree xgft:m=4x4,w=1x4,radix=6 use 8 ports"),
    ("xgft:m=4x4,w=1x4/", "without a node description"),
    ("xgft:m=65536x65536,w=1x1", "more than 2^31 - 1"),
    ("xgft:m=1x1073741824,w=1x1", "2^31 links"),
    # found by the fuzzer: a width past int32 reached the core's array conversion
    ("xgft:m=4x4,w=111111111111x4", "from 1 to 2^31 - 1, got 111111111111"),
    ("xgft:m=4x4,w=1x4,p=1x4294967297", "from 1 to 2^31 - 1, got 4294967297"),
    ("fattree:levels=3", "exactly one of k= or ports="),
    ("fattree:k=4,ports=4,levels=2", "exactly one of k= or ports="),
    ("fattree:k=4", "needs levels="),
    ("fattree:ports=5,levels=2", "even number of ports, got 5"),
    ("fattree:k=3,levels=2,taper=2", "cannot taper level 2 by 2"),
    ("fattree:k=4,levels=2,block=x", "fattree block 'x'"),
    ("fattree:ports=4,levels=2,block=2", "use 6 ports, more than radix 4"),
    ("aphid:taper=3", "must be 1 (baseline), 2 or 4, got 3"),
    ("aphid:untapered,taper=2", "exactly one of taper=1|2|4 or untapered"),
    ("aphid:routing=dmodk", "exactly one of taper=1|2|4 or untapered"),
    ("aphid:tapered", "unknown aphid option 'tapered'"),
])
def test_spec_errors_name_the_bad_token(spec, fragment):
    with pytest.raises(MachineError) as exc:
        tm.machine(spec)
    assert fragment in str(exc.value)


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(m=(2, 2), w=(1,)), "but w has 1"),
    (dict(m=(), w=()), "1 to 32 levels"),
    (dict(m=(2, 2.5), w=(1, 2)), "integers from 1 to 2^31 - 1, got 2.5"),
    (dict(m=(2, True), w=(1, 2)), "got True"),
    (dict(m=(2, 2), w=(1, 2), routing="adaptive"), "unknown fat tree routing 'adaptive'"),
    (dict(m=(2, 2), w=(1, 2), capacity=(1, float("nan"))), "level 2 has capacity nan"),
    (dict(m=(2, 2), w=(1, 2), radix=0), "radix must be a positive integer"),
])
def test_fat_tree_rejects_bad_shapes(kwargs, fragment):
    with pytest.raises(MachineError, match=None) as exc:
        tm.FatTree(**kwargs)
    assert fragment in str(exc.value)


def test_packed_top_switches_needs_radix():
    with pytest.raises(MachineError, match="needs the switch radix"):
        k_ary_n_tree(2, 2).packed_top_switches()
