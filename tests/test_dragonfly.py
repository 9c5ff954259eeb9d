"""Dragonfly networks: hand-worked routes and arrangement tables, a slow
explicit-graph reference of the wiring and minimal routing (written from the
definitions in topomap/networks/dragonfly.py, not from the C code), shortest
paths, the Cui-thesis baseline, evaluation and spec errors."""

from collections import defaultdict

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from topomap import MachineError

ARRANGEMENTS = ("absolute", "relative", "circulant")


# ------------------------------------------------------------------ reference

class RefDragonfly:
    """The dragonfly as an explicit list of ports and links.

    Every port's destination group comes straight from the arrangement
    definition; the ports from group i to group j and from j to i are joined
    in increasing order (rounds in order, the spare last).  Routing picks, by
    brute force over all parallel links, the documented preference: direct,
    source-owned, destination-landing, any; then the lowest port.
    """

    def __init__(self, g, a, h, p, arrangement):
        self.g, self.a, self.h, self.p = g, a, h, p
        self.N = g * a * p
        P = self.P = a * h
        m = g - 1
        rounds, spare = divmod(P, m)
        ports_to = defaultdict(list)
        for i in range(g):
            for k in range(P):
                if k < rounds * m:
                    t = k % m
                    if arrangement == "absolute":
                        j = t if t < i else t + 1
                    elif arrangement == "relative":
                        j = (i + t + 1) % g
                    elif g % 2 == 0 and t == m - 1:
                        j = (i + g // 2) % g
                    else:
                        j = (i + t // 2 + 1) % g if t % 2 == 0 else (i - t // 2 - 1) % g
                else:
                    q = k - rounds * m
                    if spare % 2 and q == spare - 1:
                        j = (i + g // 2) % g
                    else:
                        j = (i + q // 2 + 1) % g if q % 2 == 0 else (i - q // 2 - 1) % g
                assert j != i
                ports_to[i, j].append(k)
        self.ports_to = ports_to
        self.partner = {}
        for (i, j), out in ports_to.items():
            back = ports_to[j, i]
            assert len(out) == len(back), (i, j)
            for k, k2 in zip(out, back):
                self.partner[i, k] = (j, k2)

    # link ids, as documented
    def up(self, n):
        return 2 * n

    def down(self, n):
        return 2 * n + 1

    def local(self, R, r2):
        r = R % self.a
        return 2 * self.N + R * (self.a - 1) + (r2 if r2 < r else r2 - 1)

    def glob(self, i, k):
        return 2 * self.N + self.g * self.a * (self.a - 1) + i * self.P + k

    def links(self):
        """{link id: (src vertex, dst vertex)} with routers at N + R."""
        N, a, h = self.N, self.a, self.h
        ends = {}
        for n in range(N):
            ends[self.up(n)] = (n, N + n // self.p)
            ends[self.down(n)] = (N + n // self.p, n)
        for R in range(self.g * a):
            base = R - R % a
            for r2 in range(a):
                if r2 != R % a:
                    ends[self.local(R, r2)] = (N + R, N + base + r2)
        for (i, k), (j, k2) in self.partner.items():
            ends[self.glob(i, k)] = (N + i * a + k // h, N + j * a + k2 // h)
        return ends

    def route(self, na, nb):
        if na == nb:
            return []
        a, h = self.a, self.h
        ra, rb = na // self.p, nb // self.p
        out = [self.up(na)]
        if ra != rb:
            ga, la = divmod(ra, a)
            gb, lb = divmod(rb, a)
            if ga == gb:
                out.append(self.local(ra, lb))
            else:
                def preference(k):
                    own, land = k // h, self.partner[ga, k][1] // h
                    cls = 0 if (own, land) == (la, lb) else 1 if own == la else 2 if land == lb else 3
                    return cls, k
                k = min(self.ports_to[ga, gb], key=preference)
                own, land = k // h, self.partner[ga, k][1] // h
                if own != la:
                    out.append(self.local(ra, own))
                out.append(self.glob(ga, k))
                if land != lb:
                    out.append(self.local(gb * a + land, lb))
        out.append(self.down(nb))
        return out


def dragonfly(g, a, h, p=1, arrangement="absolute"):
    return tm.machine(f"dragonfly:g={g},a={a},h={h},p={p},arrangement={arrangement}")


def valid_shape(g, a, h):
    return 2 <= g <= a * h + 1 and not ((a * h) % (g - 1) % 2 and g % 2)


# balanced, parallel links, even/odd spare ports, a = 1, p > 1
SHAPES = [(9, 4, 2, 2), (4, 3, 2, 1), (2, 2, 1, 1), (2, 3, 2, 1), (6, 2, 3, 1), (4, 2, 2, 2),
          (5, 1, 4, 3), (7, 3, 4, 1), (5, 2, 3, 1), (6, 2, 4, 1), (3, 4, 1, 1), (8, 2, 4, 1)]


def compare_with_reference(m, ref):
    g = m.links()
    ends = ref.links()
    assert sorted(ends) == g["link"].tolist()
    assert [ends[l] for l in g["link"].tolist()] == list(zip(g["src"].tolist(), g["dst"].tolist()))
    longest = 0
    for a in range(m.nnodes):
        hops = m.hops(a, np.arange(m.nnodes)).tolist()
        for b in range(m.nnodes):
            expect = ref.route(a, b)
            assert m.route(a, b).tolist() == expect, (a, b)
            assert hops[b] == len(expect)
            longest = max(longest, len(expect))
    assert m.max_route == longest


# ------------------------------------------------------------------ hand-worked cases

def test_tiny_dragonfly_by_hand():
    # g=3, a=2, h=1, p=1, absolute.  Routers R0..R5 (group R // 2) are vertices 6..11.
    # Group i's global port k is on router k; absolute: port t of group i -> group t (t < i) or t+1:
    #   g0: p0 -> g1, p1 -> g2;  g1: p0 -> g0, p1 -> g2;  g2: p0 -> g0, p1 -> g1
    # joined: g0p0-g1p0 (R0-R2), g0p1-g2p0 (R1-R4), g1p1-g2p1 (R3-R5).
    # Ids: up 2n, down 2n+1 (0..11); local R -> other router of the group: 12 + R;
    # global from group i port k: 18 + 2i + k.
    m = tm.machine("dragonfly:g=3,a=2,h=1,p=1")
    assert (m.nnodes, m.nvertices, m.nlinks, m.max_route) == (6, 12, 24, 5)
    assert m.route(0, 1).tolist() == [0, 12, 3]               # same group: up, local, down
    assert m.route(0, 2).tolist() == [0, 18, 5]               # R0 owns the link to R2
    assert m.route(0, 5).tolist() == [0, 12, 19, 16, 11]      # R0 -> R1, global R1 -> R4, R4 -> R5
    assert m.route(1, 3).tolist() == [2, 13, 18, 14, 7]       # R1 -> R0, global R0 -> R2, R2 -> R3
    assert m.route(3, 4).tolist() == [6, 21, 17, 9]           # R3 owns R3 -> R5, then R5 -> R4
    assert m.route(5, 0).tolist() == [10, 17, 22, 13, 1]      # R5 -> R4, global R4 -> R1, R1 -> R0
    g = m.links()
    glob = {int(l): (int(s), int(d)) for l, s, d in zip(g["link"], g["src"], g["dst"]) if l >= 18}
    assert glob == {18: (6, 8), 19: (7, 10), 20: (8, 6), 21: (9, 11), 22: (10, 7), 23: (11, 9)}
    # levels: same router (p=1: none), same group, other group
    assert m.level_names[-3:] == ["router", "group", "global"]
    assert m.level_of(0, [1, 2]).tolist() == [3, 4]


def test_nodes_on_one_router():
    m = tm.machine("dragonfly:g=3,a=2,h=1,p=2")
    assert m.route(0, 1).tolist() == [0, 3]
    assert m.level_of(0, [1, 2, 4]).tolist() == [2, 3, 4]


# Global links of g=5, a=2, h=2 (balanced maximum: one link per group pair) as
# unordered router pairs, R = 2*group + router; group ports 0,1 on router 0, 2,3 on router 1.
# absolute  g0: 1 2 3 4 | g1: 0 2 3 4 | g2: 0 1 3 4 | g3: 0 1 2 4 | g4: 0 1 2 3
#   g0p0-g1p0 g0p1-g2p0 g0p2-g3p0 g0p3-g4p0 g1p1-g2p1 g1p2-g3p1 g1p3-g4p1 g2p2-g3p2 g2p3-g4p2 g3p3-g4p3
# relative  g_i port t -> i+t+1: g0: 1 2 3 4 | g1: 2 3 4 0 | g2: 3 4 0 1 | g3: 4 0 1 2 | g4: 0 1 2 3
#   g0p0-g1p3 g0p1-g2p2 g0p2-g3p1 g0p3-g4p0 g1p0-g2p3 g1p1-g3p2 g1p2-g4p1 g2p0-g3p3 g2p1-g4p2 g3p0-g4p3
# circulant t: +1 -1 +2 -2: g0: 1 4 2 3 | g1: 2 0 3 4 | g2: 3 1 4 0 | g3: 4 2 0 1 | g4: 0 3 1 2
#   g0p0-g1p1 g0p1-g4p0 g0p2-g2p3 g0p3-g3p2 g1p0-g2p1 g1p2-g3p3 g1p3-g4p2 g2p0-g3p1 g2p2-g4p3 g3p0-g4p1
HAND_TABLES = {
    "absolute": {(0, 2), (0, 4), (1, 6), (1, 8), (2, 4), (3, 6), (3, 8), (5, 7), (5, 9), (7, 9)},
    "relative": {(0, 3), (0, 5), (1, 6), (1, 8), (2, 5), (2, 7), (3, 8), (4, 7), (4, 9), (6, 9)},
    "circulant": {(0, 2), (0, 8), (1, 5), (1, 7), (2, 4), (3, 7), (3, 9), (4, 6), (5, 9), (6, 8)},
}


@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
def test_arrangement_tables_by_hand(arrangement):
    m = dragonfly(5, 2, 2, 1, arrangement)
    g = m.links()
    N, first_global = 10, 2 * 10 + 10 * 1
    sel = g["link"] >= first_global
    pairs = [tuple(sorted((s - N, d - N))) for s, d in zip(g["src"][sel].tolist(), g["dst"][sel].tolist())]
    assert len(pairs) == 20 and set(pairs) == HAND_TABLES[arrangement]
    assert all(pairs.count(e) == 2 for e in HAND_TABLES[arrangement])      # one link each way


def test_spare_port_pairs_opposite_groups():
    # g=4, a=2, h=2: 4 ports, 3 other groups -> 1 round + 1 spare port (router 1) joining i and i+2
    m = dragonfly(4, 2, 2)
    g = m.links()
    N = 8
    spare = [(s - N, d - N) for l, s, d in zip(*(g[k].tolist() for k in ("link", "src", "dst")))
             if l >= 2 * N + 8 and (l - 2 * N - 8) % 4 == 3]
    assert spare == [(1, 5), (3, 7), (5, 1), (7, 3)]
    assert tm.Dragonfly(4, 2, 2, 1).summary()["global_links_per_group_pair"] == (1, 2)


# ------------------------------------------------------------------ cross-checks against the reference

@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
@pytest.mark.parametrize("shape", SHAPES)
def test_routes_and_links_match_reference(shape, arrangement):
    compare_with_reference(dragonfly(*shape, arrangement), RefDragonfly(*shape, arrangement))


@st.composite
def shapes(draw):
    a = draw(st.integers(1, 4))
    h = draw(st.integers(1, 3))
    g = draw(st.integers(2, a * h + 1))
    p = draw(st.integers(1, 2))
    return g, a, h, p, draw(st.sampled_from(ARRANGEMENTS))


@given(shapes())
def test_random_shapes_match_reference_or_are_refused(shape):
    g, a, h, p, arrangement = shape
    if not valid_shape(g, a, h):
        with pytest.raises(MachineError, match="spare global ports"):
            dragonfly(*shape)
        return
    compare_with_reference(dragonfly(*shape), RefDragonfly(*shape))


def test_100k_nodes():
    # 196 groups x 32 routers x 16 nodes = 100,352 nodes; 512 ports per group over 195 other
    # groups: 2 rounds and 122 spare ports, so 2 or 3 parallel links per group pair
    shape = (196, 32, 16, 16)
    m = dragonfly(*shape, "relative")
    ref = RefDragonfly(*shape, "relative")
    assert m.nnodes == 100_352 and m.nvertices == 100_352 + 196 * 32
    assert m.nlinks == 2 * 100_352 + 6272 * 31 + 6272 * 16
    assert m.max_route == 5
    rng = np.random.default_rng(0)
    for a, b in rng.integers(0, m.nnodes, (3000, 2)):
        assert m.route(a, b).tolist() == ref.route(int(a), int(b))
    got = m.links()
    sample = rng.choice(got["link"], 20_000, replace=False)
    ends = ref.links()
    assert [ends[int(l)] for l in sample] == list(zip(got["src"][sample].tolist(), got["dst"][sample].tolist()))


# ------------------------------------------------------------------ shortest paths

@pytest.mark.parametrize("shape", [(9, 4, 2, 1), (6, 2, 3, 2), (3, 4, 1, 1), (5, 1, 4, 2)])
@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
def test_routes_against_shortest_paths(shape, arrangement):
    m = dragonfly(*shape, arrangement)
    g = m.links()
    G = nx.DiGraph()
    G.add_edges_from(zip(g["src"].tolist(), g["dst"].tolist()))
    a = shape[1]
    for s in range(m.nnodes):
        dist = nx.single_source_shortest_path_length(G, s)
        for t in range(m.nnodes):
            r = len(m.route(s, t))
            # up to 2 router hops minimal routing is shortest; a 3-hop route may be beaten
            # by 2 global hops through a third group, never by more
            if r <= 4 or a == 1:
                assert r == dist[t], (s, t)
            else:
                assert r - 1 <= dist[t] <= r, (s, t)


def test_link_counts_and_degrees():
    g, a, h, p = 9, 4, 2, 3
    m = dragonfly(g, a, h, p)
    links = m.links()
    N = g * a * p
    assert m.nlinks == links["link"].size == 2 * N + g * a * (a - 1) + g * a * h
    out_deg = np.bincount(links["src"], minlength=m.nvertices)
    in_deg = np.bincount(links["dst"], minlength=m.nvertices)
    assert (out_deg[:N] == 1).all() and (in_deg[:N] == 1).all()
    assert (out_deg[N:] == p + a - 1 + h).all() and (in_deg[N:] == p + a - 1 + h).all()
    assert tm.Dragonfly(g, a, h, p).summary()["router_radix"] == p + a - 1 + h


# ------------------------------------------------------------------ Cui thesis baseline

def collective_hops(dist, P):
    """Total hops of the three unicast collectives of notes 003 §2.1 with rank i on node i."""
    bcast, mask = 0, P // 2
    while mask >= 1:
        bcast += sum(dist[r, r + mask] for r in range(0, P, 2 * mask))
        mask //= 2
    steps = P.bit_length() - 1
    allreduce = sum(dist[r, r ^ (1 << k)] for k in range(steps) for r in range(P))
    alltoall = sum(dist[r, (r + (1 << k)) % P] for k in range(steps) for r in range(P))
    return int(bcast), int(allreduce), int(alltoall)


def test_cui_baseline_golden():
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    m = tm.machine("dragonfly:cui")
    assert m.network == tm.Dragonfly(64, 16, 4, 1, "absolute")
    assert m.nnodes == 1024 and m.nvertices == 2048
    g = m.links()
    N = m.nnodes
    sw = (g["src"] >= N) & (g["dst"] >= N)
    src, dst = g["src"][sw] - N, g["dst"][sw] - N
    # thesis Ch. 5: 1,024 switches of degree 19 (15 local + 4 global links), 64 groups of 16
    assert (np.bincount(src, minlength=N) == 19).all() and m.network.summary()["router_degree"] == 19
    adj = csr_matrix((np.ones(src.size), (src, dst)), shape=(N, N))
    assert adj.nnz == src.size                       # 19 distinct neighbours: no parallel links
    dist = shortest_path(adj, unweighted=True).astype(int)
    off = ~np.eye(N, dtype=bool)
    # thesis Fig 5.1: "the diameter of the Dragonfly network topology is always 3"
    assert dist.max() == 3
    aspl = dist[off].mean()
    # thesis Fig 5.2: random (2.68) < Dragonfly < circulant G(1024, 10) (3.448); notes 003 §1.3
    # give 2.843 for this absolute arrangement
    assert 2.68 < aspl < 3.448
    assert aspl == pytest.approx(2.843, abs=5e-4)
    # minimal routing: 3 router hops at most, plus the two terminal links
    s = m.summary()
    assert s["diameter"] == 5 == m.max_route
    assert s["aspl"] - 2 == pytest.approx(dist[off].mean(), abs=0.01) and s["aspl"] - 2 >= aspl
    # notes 003 §5.8 [D] hops with this arrangement, and the thesis's "9% fewer" Bcast hops
    # on the circulant (1,023 hops) than on the Dragonfly
    bcast, allreduce, alltoall = collective_hops(dist, N)
    assert (bcast, allreduce, alltoall) == (1123, 20198, 22272)
    assert round(100 * (1 - 1023 / bcast)) == 9


# ------------------------------------------------------------------ evaluation

def test_evaluate_matches_reference_routes():
    shape = (5, 2, 2, 2)
    m = tm.machine("dragonfly:g=5,a=2,h=2,p=2,arrangement=circulant/3")
    ref = RefDragonfly(*shape, "circulant")
    pat = tm.generators.stencil_2d((6, 10), points=9)
    alloc = m.allocate(pat.n, policy="random", seed=4)
    mp = tm.map(pat, alloc, method="random", seed=2)
    met = tm.evaluate(pat, alloc, mp, link_load=True)
    load = np.zeros(m.nlinks)
    hop_bytes = dilation = max_dil = edge_cut = 0.0
    levels = {"router": 0.0, "group": 0.0, "global": 0.0}
    src = np.repeat(np.arange(pat.n), np.diff(pat.indptr))
    for p, q, w in zip(src, pat.indices, pat.bytes):
        na, nb = mp.pe_of[p] // 3, mp.pe_of[q] // 3
        r = ref.route(na, nb)
        load[r] += w
        hop_bytes += w * len(r)
        dilation += len(r)
        max_dil = max(max_dil, len(r))
        if na != nb:
            edge_cut += w
            ra, rb = na // 2, nb // 2
            levels["router" if ra == rb else "group" if ra // 2 == rb // 2 else "global"] += w
    nz = load[load > 0]
    assert met.hop_bytes == pytest.approx(hop_bytes) and met.qap == pytest.approx(hop_bytes)
    assert met.dilation == pytest.approx(dilation) and met.max_dilation == max_dil
    assert met.edge_cut == pytest.approx(edge_cut)
    np.testing.assert_allclose(met.link_load, load)
    assert met.max_congestion == pytest.approx(load.max())
    assert met.nz_congestion_avg == pytest.approx(nz.mean()) and met.nz_congestion_var == pytest.approx(nz.var())
    assert {k: met.level_bytes[k] for k in levels} == pytest.approx(levels)


# ------------------------------------------------------------------ spec strings and errors

def test_spec_forms():
    m = tm.machine("dragonfly:g=9,a=4,h=2,p=2,arrangement=circulant/pack:2 core:4")
    assert m.network == tm.Dragonfly(9, 4, 2, 2, "circulant")
    assert (m.nnodes, m.pes_per_node) == (72, 8)
    assert tm.machine(m.network.spec_head()).network == m.network
    assert tm.machine("dragonfly:cui,arrangement=relative/4").network == tm.Dragonfly.preset("cui", "relative")
    assert tm.machine("dragonfly: g=3, a=2, h=1, p=1").nnodes == 6


@pytest.mark.parametrize("spec, fault", [
    ("dragonfly:g=3,a=2,h=1", "p="),
    ("dragonfly:g=3,a=2,h=1,p=1,q=2", "'q=2'"),
    ("dragonfly:g=3,a=2,h=x,p=1", "'x'"),
    ("dragonfly:g=3,a=0,h=1,p=1", "a must be >= 1"),
    ("dragonfly:g=3,a=2,h=1,p=1,g=4", "'g' is given twice"),
    ("dragonfly:g=3,a=2,h=1,p=1,arrangement=palmtree", "'palmtree'"),
    ("dragonfly:g=3,a=2,h=1,p=1/", "ends in '/'"),
    ("dragonfly:g=3,a=2,h=1,p=1/0", "PEs per node"),
    ("dragonfly:g=4,a=2,h=1,p=1", "g=4 exceeds a*h+1 = 3"),
    ("dragonfly:g=5,a=1,h=5,p=1", "1 spare global ports"),
    ("dragonfly:g=1,a=2,h=1,p=1", "g >= 2"),
    ("dragonfly:g=4096,a=1024,h=4,p=1024", "limit 2^31"),
    ("dragonfly:kim", "unknown dragonfly preset 'kim'"),
    ("dragonfly:cui,p=2", "'p=2'"),
])
def test_spec_errors(spec, fault):
    with pytest.raises(MachineError, match="dragonfly") as exc:
        tm.machine(spec)
    assert fault in str(exc.value)


def test_dataclass_errors():
    with pytest.raises(MachineError, match="arrangement 'ring'"):
        tm.Dragonfly(3, 2, 1, 1, "ring")
    with pytest.raises(MachineError, match="h must be an integer from 1 to 2\\^31 - 1, got 0"):
        tm.Dragonfly(3, 2, 0, 1)
    # past int32, the core's array conversion used to raise OverflowError
    with pytest.raises(MachineError, match="g must be an integer from 1 to 2\\^31 - 1, got 111111111111"):
        tm.Dragonfly(111111111111, 4, 2, 2)
    with pytest.raises(MachineError, match="preset 'x'"):
        tm.Dragonfly.preset("x")
