"""The graph network kind: forwarding tables against an independent slow
reference and networkx, tie-breaks, D-mod-k spreading, explicit routes and
their validation, disconnected fabrics, heterogeneous capacities, and the
routing-aware example of the Mirsadeghi thesis (§3.3.4, Figs. 3.6/3.7)."""

from collections import deque

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from test_routes_generic import check_all_routes


# ------------------------------------------------------------------ reference
def reference_routes(nnodes, nswitches, src, dst, routing):
    """Slow forwarding-table routes written from the definitions: hop distance
    to each destination by BFS over reversed links, through relays only
    (switches; nodes too when there are no switches); at each vertex the
    candidate links (those starting a shortest path) sorted by id, the first
    (shortest) or the (dst mod count)-th (dmodk)."""
    V = nnodes + nswitches
    relay = [v >= nnodes or nswitches == 0 for v in range(V)]
    inward = [[] for _ in range(V)]
    for l, (s, d) in enumerate(zip(src, dst)):
        inward[d].append(s)
    routes = {}
    for b in range(nnodes):
        dist = {b: 0}
        queue = deque([b])
        while queue:
            u = queue.popleft()
            if u != b and not relay[u]:
                continue
            for w in inward[u]:
                if w not in dist:
                    dist[w] = dist[u] + 1
                    queue.append(w)
        for a in range(nnodes):
            if a == b:
                continue
            if a not in dist:
                routes[a, b] = None
                continue
            path, at = [], a
            while at != b:
                cands = [l for l in range(len(src)) if src[l] == at and dst[l] in dist
                         and dist[dst[l]] == dist[at] - 1 and (dst[l] == b or relay[dst[l]])]
                link = cands[0] if routing == "shortest" else cands[b % len(cands)]
                path.append(link)
                at = dst[link]
            routes[a, b] = path
    return routes


@st.composite
def graphs(draw):
    """(nnodes, nswitches, src, dst): a direct graph through a ring with random
    chords, or a random switch graph with every node cabled to 1-2 switches
    (parallel cables allowed)."""
    if draw(st.booleans()):
        n = draw(st.integers(2, 9))
        chords = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
        edges = [(v, (v + 1) % n) for v in range(n)] + [(a, b) for a, b in chords if a != b]
        return n, 0, [a for a, _ in edges], [b for _, b in edges]
    n, s = draw(st.integers(1, 7)), draw(st.integers(1, 5))
    cables = [(n + k, n + draw(st.integers(0, k - 1))) for k in range(1, s)]
    cables += [(n + a, n + b) for a, b in draw(st.lists(st.tuples(st.integers(0, s - 1), st.integers(0, s - 1)),
                                                         max_size=2 * s)) if a != b]
    cables += [(v, n + draw(st.integers(0, s - 1))) for v in range(n) for _ in range(draw(st.integers(1, 2)))]
    src = [x for a, b in cables for x in (a, b)]
    dst = [x for a, b in cables for x in (b, a)]
    return n, s, src, dst


def nx_hops(nnodes, nswitches, src, dst):
    """Hop counts between nodes by networkx; with switches, each node is split
    into a sending and a receiving copy so that no path passes through it."""
    G = nx.DiGraph()
    out = (lambda v: ("out", v)) if nswitches else (lambda v: v)
    inn = (lambda v: ("in", v)) if nswitches else (lambda v: v)
    for s, d in zip(src, dst):
        G.add_edge(out(s) if s < nnodes else s, inn(d) if d < nnodes else d)
    return {(a, b): nx.shortest_path_length(G, out(a), inn(b))
            for a in range(nnodes) for b in range(nnodes) if a != b}


# ------------------------------------------------------------------ forwarding tables
@pytest.mark.parametrize("routing", ["shortest", "dmodk"])
@given(g=graphs())
def test_tables_match_reference_and_networkx(routing, g):
    n, s, src, dst = g
    m = tm.Machine(tm.GraphNetwork(n, s, src, dst, routing=routing), tm.NodeTree.flat(1))
    ref = reference_routes(n, s, src, dst, routing)
    hops = nx_hops(n, s, src, dst)
    for (a, b), path in ref.items():
        assert m.route(a, b).tolist() == path
        assert m.hops(a, b) == hops[a, b] == len(path)
    assert m.max_route == max(hops.values(), default=0)
    check_all_routes(m)


@given(g=graphs(), data=st.data())
def test_evaluation_matches_reference_routes(g, data):
    n, s, src, dst = g
    routing = data.draw(st.sampled_from(["shortest", "dmodk"]))
    cap = np.array(data.draw(st.lists(st.sampled_from([0.5, 1.0, 3.0]), min_size=len(src), max_size=len(src))))
    m = tm.Machine(tm.GraphNetwork(n, s, src, dst, capacity=cap, routing=routing), tm.NodeTree.flat(2))
    procs = data.draw(st.integers(2, 10))
    msgs = data.draw(st.lists(st.tuples(st.integers(0, procs - 1), st.integers(0, procs - 1),
                                        st.sampled_from([1.0, 2.0, 5.0])), min_size=1, max_size=30))
    msgs = [(p, q, w) for p, q, w in msgs if p != q] or [(0, 1, 1.0)]
    pat = tm.Pattern.from_edges(*map(list, zip(*msgs)), n=procs)
    pe_of = np.array(data.draw(st.lists(st.integers(0, m.npes - 1), min_size=procs, max_size=procs)))
    ref = reference_routes(n, s, src, dst, routing)
    load, hop_bytes = np.zeros(len(src)), 0.0
    for p, q, w in zip(pat.senders(), pat.indices, pat.bytes):
        a, b = pe_of[p] // 2, pe_of[q] // 2
        if a != b:
            load[ref[a, b]] += w
            hop_bytes += w * len(ref[a, b])
    met = tm.evaluate(pat, m, pe_of, link_load=True)
    assert np.allclose(met.link_load, load) and met.hop_bytes == pytest.approx(hop_bytes)
    assert met.max_congestion == pytest.approx((load / cap).max())


def test_shortest_takes_the_lowest_link_id_and_follows_renumbering():
    # nodes 0, 1; switches 2, 3, 4: two equal paths 0-2-3-1 and 0-2-4-1
    cables = [(0, 2), (2, 3), (2, 4), (3, 1), (4, 1)]
    src = [x for a, b in cables for x in (a, b)]
    dst = [x for a, b in cables for x in (b, a)]
    m = tm.Machine(tm.GraphNetwork(2, 3, src, dst), tm.NodeTree.flat(1))
    assert m.route(0, 1).tolist() == [0, 2, 6]  # via switch 3: link 2 < link 4
    # swap the ids of links 2 and 4 (2->3 and 2->4): the route now goes via switch 4
    perm = list(range(len(src)))
    perm[2], perm[4] = 4, 2
    src2, dst2 = [src[p] for p in perm], [dst[p] for p in perm]
    m2 = tm.Machine(tm.GraphNetwork(2, 3, src2, dst2), tm.NodeTree.flat(1))
    assert m2.route(0, 1).tolist() == [0, 2, 8]
    again = tm.Machine(tm.GraphNetwork(2, 3, src2, dst2), tm.NodeTree.flat(1))
    assert all(again.route(a, b).tolist() == m2.route(a, b).tolist() for a in range(2) for b in range(2))


def two_level(leaves=4, spines=3, per_leaf=4, capacity=None):
    """Leaf switches with `per_leaf` nodes each, every leaf cabled to every spine."""
    n = leaves * per_leaf
    cables = [(v, n + v // per_leaf) for v in range(n)]
    cables += [(n + leaf, n + leaves + sp) for leaf in range(leaves) for sp in range(spines)]
    src = [x for a, b in cables for x in (a, b)]
    dst = [x for a, b in cables for x in (b, a)]
    return n, leaves + spines, src, dst


def test_dmodk_spreads_destinations_over_the_spines():
    n, s, src, dst = two_level()
    m = tm.Machine(tm.GraphNetwork(n, s, src, dst, routing="dmodk"), tm.NodeTree.flat(1))
    shortest = tm.Machine(tm.GraphNetwork(n, s, src, dst), tm.NodeTree.flat(1))
    spine_of = lambda machine, a, b: int(dst[machine.route(a, b)[1]]) - n - 4  # noqa: E731
    for b in range(4, n):  # from node 0 (leaf 0) to every other leaf
        assert spine_of(m, 0, b) == b % 3
        assert spine_of(shortest, 0, b) == 0
    # all-to-all between leaves: D-mod-k balances the up links, lowest-id piles onto spine 0
    a, b = np.divmod(np.arange(n * n), n)
    keep = a // 4 != b // 4
    pat = tm.Pattern.from_edges(a[keep], b[keep], np.ones(keep.sum()))
    mc_dmodk = tm.evaluate(pat, m, np.arange(n)).max_congestion
    mc_lowest = tm.evaluate(pat, shortest, np.arange(n)).max_congestion
    assert mc_dmodk < mc_lowest
    assert mc_lowest == 12 * 4  # every message from a leaf's 4 nodes to the 12 others takes spine 0


def test_capacities_divide_link_loads():
    n, s, src, dst = two_level(leaves=2, spines=2, per_leaf=2)
    cap = np.where(np.array(src) >= n, 1.0, 4.0)  # node links 4x faster
    cap[8] = 0.5  # link 8 = leaf 0 -> spine 0, made slow
    m = tm.Machine(tm.GraphNetwork(n, s, src, dst, capacity=cap, routing="dmodk"), tm.NodeTree.flat(1))
    assert np.array_equal(m.capacities(), cap)
    pat = tm.Pattern.from_edges([0, 1, 2], [2, 3, 0], [6.0, 6.0, 2.0])
    met = tm.evaluate(pat, m, [0, 1, 2, 3], link_load=True)
    load = np.zeros(len(src))
    for p, q, w in [(0, 2, 6.0), (1, 3, 6.0), (2, 0, 2.0)]:
        load[m.route(p, q)] += w
    assert np.array_equal(met.link_load, load)
    cong = load / cap
    assert met.max_congestion == cong.max()
    assert met.nz_congestion_avg == pytest.approx(cong[load > 0].mean())
    assert met.nz_congestion_var == pytest.approx(cong[load > 0].var())
    # 0 -> 2 goes up link 8 (leaf 0 -> spine 0, capacity 0.5): the hot spot
    assert 8 in m.route(0, 2).tolist() and met.max_congestion == 6.0 / 0.5
    uniform = tm.Machine(tm.GraphNetwork(n, s, src, dst, routing="dmodk"), tm.NodeTree.flat(1))
    assert tm.evaluate(pat, uniform, [0, 1, 2, 3]).max_congestion == 6.0


def test_disconnected_fabrics_name_a_pair():
    # two islands: nodes 0-1 on switch 4, nodes 2-3 on switch 5
    cables = [(0, 4), (1, 4), (2, 5), (3, 5)]
    src = [x for a, b in cables for x in (a, b)]
    dst = [x for a, b in cables for x in (b, a)]
    for routing in ("shortest", "dmodk"):
        with pytest.raises(tm.MachineError, match="node 2 cannot reach node 0"):
            tm.Machine(tm.GraphNetwork(4, 2, src, dst, routing=routing), tm.NodeTree.flat(1))
    # one-way ring 0 -> 1 -> 2 minus the closing link: 2 cannot reach 0
    with pytest.raises(tm.MachineError, match="node 1 cannot reach node 0"):
        tm.Machine(tm.GraphNetwork(3, 0, [0, 1], [1, 2]), tm.NodeTree.flat(1))


def test_nodes_relay_only_without_switches():
    # 0 - 1 - 2 in a line: direct, node 1 relays
    line = tm.Machine(tm.GraphNetwork(3, 0, [0, 1, 1, 2], [1, 0, 2, 1]), tm.NodeTree.flat(1))
    assert line.route(0, 2).tolist() == [0, 2]
    # the same line plus a switch on node 2: node 1 must not carry 0 -> 2
    with pytest.raises(tm.MachineError, match="node 2 cannot reach node 0.*do not relay"):
        tm.Machine(tm.GraphNetwork(3, 1, [0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]), tm.NodeTree.flat(1))


# ------------------------------------------------------------------ explicit routes
FAB_SRC = [0, 4, 1, 4, 2, 5, 3, 5, 4, 6, 4, 7, 5, 6, 5, 7]
FAB_DST = [4, 0, 4, 1, 5, 2, 5, 3, 6, 4, 7, 4, 6, 5, 7, 5]
# Mirsadeghi Fig. 3.6(a) shape: n1, n2 (nodes 0, 1) on leaf 4; n3, n4 (nodes 2, 3) on
# leaf 5; spines 6 and 7.  The four top (leaf-to-spine) links carry, bottom-up, the
# traffic for one destination each: 4->6 n3, 4->7 n4, 5->6 n1, 5->7 n2.
UP = {(0, 2): 8, (0, 3): 10, (1, 2): 8, (1, 3): 10, (2, 0): 12, (2, 1): 14, (3, 0): 12, (3, 1): 14}
DOWN_SPINE = {8: 13, 10: 15, 12: 9, 14: 11}  # spine -> the destination's leaf
NODE_UP, NODE_DOWN = {0: 0, 1: 2, 2: 4, 3: 6}, {0: 1, 1: 3, 2: 5, 3: 7}


def labelled_routes():
    """Every node pair's route on the Fig. 3.6 fabric, written out by hand."""
    routes = {}
    for a in range(4):
        for b in range(4):
            if a == b:
                continue
            if a // 2 == b // 2:
                routes[a, b] = [NODE_UP[a], NODE_DOWN[b]]
            else:
                up = UP[a, b]
                routes[a, b] = [NODE_UP[a], up, DOWN_SPINE[up], NODE_DOWN[b]]
    return routes


def fig36_machine(routing="table", routes=None):
    # node links twice as fast as the switch links: the leaves are 2:1 oversubscribed,
    # "practical installations of InfiniBand systems that do not provide full bisection
    # bandwidth" (§3.3.4), and congestion is decided on the labelled top links
    cap = [2.0] * 8 + [1.0] * 8
    net = tm.GraphNetwork(4, 4, FAB_SRC, FAB_DST, capacity=cap, routing=routing,
                          routes=labelled_routes() if routing == "table" and routes is None else routes,
                          names=["n1", "n2", "n3", "n4", "leaf1", "leaf2", "spine1", "spine2"])
    return tm.Machine(net, tm.NodeTree.flat(2))


def test_table_routes_are_the_labelled_ones_and_equal_dmodk():
    table, dmodk = fig36_machine(), fig36_machine("dmodk")
    for (a, b), path in labelled_routes().items():
        assert table.route(a, b).tolist() == path == dmodk.route(a, b).tolist()
    assert table.summary()["explicit_routes"] == 12 and table.max_route == 4
    check_all_routes(table)


def test_routing_aware_example_of_mirsadeghi_fig_3_7():
    # 8 processes, equal weights (one unit each way per edge): 0-1 and 2-3 inside
    # nodes, 4 talks to 2, 5 to 0 and 2, 6 to 7.  Ranks 0-4 are placed as in
    # Fig. 3.7(a): 0, 1 on n1; 2, 3 on n2; 4 on n3.  Rank 5 may go to n3 or n4.
    edges = [(0, 1), (2, 3), (2, 4), (0, 5), (2, 5), (6, 7)]
    src = [a for a, b in edges] + [b for a, b in edges]
    dst = [b for a, b in edges] + [a for a, b in edges]
    pat = tm.Pattern.from_edges(src, dst, np.ones(len(src)))
    m = fig36_machine()
    # A routing-ignorant cost cannot tell n3 from n4 for rank 5: same hop-bytes
    # for the first six ranks (rank 5's partners are 4 hops from both nodes) ...
    first6 = tm.Pattern.from_edges(*zip(*[(p, q) for p, q in zip(src, dst) if p < 6 and q < 6]),
                                   np.ones(sum(p < 6 and q < 6 for p, q in zip(src, dst))))
    on_n3, on_n4 = [0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 6]  # PE = node * 2 + core
    part3, part4 = tm.evaluate(first6, m, on_n3), tm.evaluate(first6, m, on_n4)
    assert part3.hop_bytes == part4.hop_bytes and part3.qap == part4.qap
    # ... but the routes put the traffic for n3 on the link leaf1 -> spine1, which
    # already carries 2 -> 4: a routing-aware cost sees it
    assert (part3.max_congestion, part4.max_congestion) == (3.0, 2.0)
    # final mappings: (b) ignorant, rank 5 on n3 (n3 full, 6 and 7 on n4);
    # (c) aware, rank 5 on n4, then 6 on n3 and 7 on n4
    ignorant = [0, 1, 2, 3, 4, 5, 6, 7]
    aware = [0, 1, 2, 3, 4, 6, 5, 7]
    assert tm.evaluate(pat, m, ignorant).max_congestion == 3.0
    assert tm.evaluate(pat, m, aware).max_congestion == 2.0
    # every completion after the ignorant choice keeps the hot link at 3
    for c6, c7 in [(6, 7), (7, 6)]:
        assert tm.evaluate(pat, m, [0, 1, 2, 3, 4, 5, c6, c7]).max_congestion == 3.0
    # with lowest-id routing every leaf uses spine1 only: both choices congest it
    lowest = fig36_machine("shortest")
    assert tm.evaluate(pat, lowest, aware).max_congestion == 3.0
    # the incremental evaluator agrees: moving rank 5 from n4 to n3 raises MC to 3
    ev = tm.Evaluator(pat, m, aware)
    assert ev.try_swap(5, 6).max_congestion == 3.0


@pytest.mark.parametrize("routes, message", [
    ({(0, 3): [0, 8, 12, 7]}, "route 0 -> 3 is broken at hop 3: link 12 leaves vertex 5"),
    ({(0, 3): [2, 8, 13, 7]}, "route 0 -> 3 starts with link 2, which leaves vertex 1, not node 0"),
    ({(0, 3): [0, 8, 13, 5]}, "route 0 -> 3 ends at vertex 2, not node 3"),
    ({(0, 3): [0, 8, 99]}, "route 0 -> 3: link 99 \\(hop 3\\) does not exist"),
    ({(0, 5): [0]}, "route 0 -> 5 \\(entry 0\\) leaves the compute nodes, which are 0..3"),
    ({(1, 0): []}, "route 1 -> 0 is empty"),
    ({(2, 2): [4, 5]}, "route 2 -> 2 must be empty"),
    ([((0, 1), [0, 3]), ((0, 3), [0, 8, 13, 7]), ((0, 1), [0, 3])], "route 0 -> 1 is given twice"),
    ({(0, 1): [0, -3]}, "link id must be an integer >= 0"),
    ({(0, 1.5): [0, 3]}, "destination node must be an integer"),
    ({0: [0, 3]}, "is not \\(\\(src_node, dst_node\\), \\[link ids\\]\\)"),
])
def test_explicit_route_validation(routes, message):
    with pytest.raises(tm.MachineError, match=message):
        fig36_machine("table", routes=routes)


def test_routes_go_with_table_routing_only():
    with pytest.raises(tm.MachineError, match="routing='table' and only with it"):
        tm.GraphNetwork(4, 4, FAB_SRC, FAB_DST, routing="table")
    with pytest.raises(tm.MachineError, match="routing='table' and only with it"):
        tm.GraphNetwork(4, 4, FAB_SRC, FAB_DST, routes={(0, 1): [0, 3]})


def test_a_pair_without_a_route_fails_when_used():
    m = fig36_machine("table", routes={(0, 1): [0, 3], (1, 0): [2, 1], (0, 2): [0, 8, 13, 5]})
    pat = tm.Pattern.from_edges([0, 1], [1, 0], [1.0, 1.0])
    assert tm.evaluate(pat, m, [0, 2]).hop_bytes == 4.0  # nodes 0 and 1: both routes given
    with pytest.raises(tm.TopomapError, match="no route from node 2 to node 0 \\(process 1 on PE 4"):
        tm.evaluate(pat, m, [0, 4])  # 0 -> 2 is given, 2 -> 0 is not
    ev = tm.Evaluator(pat, m, [0, 2])
    before = ev.metrics()
    with pytest.raises(tm.TopomapError, match="no route from node 3 to node 0 \\(PE 6 -> PE 0\\)"):
        ev.move(1, 6)
    after = ev.metrics()
    assert (after.hop_bytes, after.max_congestion, after.nz_links) == (before.hop_bytes, before.max_congestion,
                                                                       before.nz_links)
    assert ev.mapping().tolist() == [0, 2]


# ------------------------------------------------------------------ construction errors
@pytest.mark.parametrize("kwargs, message", [
    (dict(nnodes=0, nswitches=0, src=[], dst=[]), "nnodes must be an integer >= 1"),
    (dict(nnodes=2, nswitches=-1, src=[], dst=[]), "nswitches must be an integer >= 0"),
    (dict(nnodes=2, nswitches=0, src=[0, 1], dst=[1]), "one dst per src"),
    (dict(nnodes=2, nswitches=0, src=[0.5], dst=[1]), "src must hold integers"),
    (dict(nnodes=2, nswitches=0, src=[[0]], dst=[[1]]), "1-D"),
    (dict(nnodes=2, nswitches=0, src=[0], dst=[1], capacity=[1, 2]), "capacity must be a number or one number per link"),
    (dict(nnodes=2, nswitches=0, src=[0], dst=[1], routing="ecmp"), "unknown routing 'ecmp'"),
    (dict(nnodes=2, nswitches=0, src=[0], dst=[1], names=["a"]), "names has 1 entries for 2 vertices"),
    (dict(nnodes=2, nswitches=0, src=[0], dst=[1], names=["a", "a"]), "vertex name 'a' is used twice"),
])
def test_bad_descriptions(kwargs, message):
    with pytest.raises(tm.MachineError, match=message):
        tm.GraphNetwork(**kwargs)


@pytest.mark.parametrize("src, dst, capacity, message", [
    ([0, 1], [1, 1], None, "link 1 is a loop at vertex 1"),
    ([0, 1], [1, 5], None, "link 1 joins vertex 1 to vertex 5, outside \\[0, 3\\)"),
    ([0, 1], [1, 0], [1.0, 0.0], "link 1 has capacity 0"),
    ([0, 1], [1, 0], [1.0, np.inf], "link 1 has capacity inf"),
])
def test_bad_links_fail_at_machine_construction(src, dst, capacity, message):
    with pytest.raises(tm.MachineError, match=message):
        tm.Machine(tm.GraphNetwork(2, 1, src, dst, capacity=capacity), tm.NodeTree.flat(1))


def test_forwarding_tables_above_the_limit_are_refused():
    with pytest.raises(tm.MachineError, match="40000 vertices x 40000 nodes need 1525 MiB, above the 1024 MiB limit"):
        tm.Machine(tm.GraphNetwork(40000, 0, [], []), tm.NodeTree.flat(1))


# ------------------------------------------------------------------ the Machine API on a graph
def test_machine_api_on_a_graph():
    n, s, src, dst = two_level(leaves=2, spines=2, per_leaf=2)
    names = [f"h{i}" for i in range(n)] + ["L0", "L1", "S0", "S1"]
    m = tm.Machine(tm.GraphNetwork(n, s, src, dst, names=names), tm.NodeTree.flat(4))
    assert m.nvertices == 8 and m.nlinks == len(src) and m.network.vertex_name(5) == "L1"
    g = m.links()
    assert g["src"].tolist() == src and g["dst"].tolist() == dst
    assert m.distance(0, 4).item() == 2.0 and m.distance(0, 8).item() == 4.0  # hops between nodes
    assert m.level_names[-1] == "network" and m.level_of(0, 8).item() == 2
    summ = m.summary()
    assert (summ["diameter"], summ["switches"], summ["routing"]) == (4, 4, "shortest")
    pat = tm.generators.stencil_2d((4, 4))
    alloc = m.allocate(16, policy="random", seed=3)
    met = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block"))
    assert met.max_dilation == 4 and met.hop_bytes > 0
    assert tm.GraphNetwork(2, 0, [0, 1], [1, 0]).vertex_name(1) == "node1"


def test_from_networkx():
    G = nx.Graph()
    G.add_edge("sw", "a", capacity=2.0)
    G.add_edge("sw", "b")
    net = tm.GraphNetwork.from_networkx(G, nodes=["a", "b"])
    assert (net.nnodes, net.nswitches, net.names) == (2, 1, ("a", "b", "sw"))
    assert net.src.tolist() == [2, 0, 2, 1] and net.dst.tolist() == [0, 2, 1, 2]
    assert net.capacity.tolist() == [2.0, 2.0, 1.0, 1.0]
    m = tm.Machine(net, tm.NodeTree.flat(1))
    assert m.route(0, 1).tolist() == [1, 2]
    D = nx.MultiDiGraph([(0, 1), (0, 1), (1, 0)])
    direct = tm.GraphNetwork.from_networkx(D, routing="dmodk")
    assert direct.nlinks == 3 and direct.nswitches == 0
    with pytest.raises(tm.MachineError, match="node 'zz' is not a vertex"):
        tm.GraphNetwork.from_networkx(G, nodes=["zz"])
