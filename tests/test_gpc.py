"""The SciNet GPC QDR fat tree (Mirsadeghi thesis section 3.4, Fig. 3.8; 000 notes section 6.1).

Counts are worked by hand from the thesis text; routes of a few pairs are
derived link by link; dmodk routing is cross-checked against a slow
pure-Python reference written from its definition (minimum hops, and at each
switch the (d mod count)-th equal-cost link in link-id order).
"""

from collections import Counter, deque

import numpy as np
import pytest

import topomap as tm
from topomap.fabric import gpc
from topomap.fabric import gpc_fabric, gpc_machine

N = 103 * 30                         # 3090 nodes
LEAF0 = N                            # leaf switches: vertices 3090..3192
CORE0 = N + 103                      # core c: 18 line switches, then 9 spines, 27 per core
UP0 = N                              # cable index of the first leaf uplink (after the 3090 node cables)
LS0 = N + 103 * 6                    # cable index of the first line-spine cable (3708)


def line(c, i):
    return CORE0 + 27 * c + i


def spine(c, j):
    return CORE0 + 27 * c + 18 + j


def up(leaf, c, k):
    """Link id leaf -> its line switch in core c over cable k (a cable's a -> b link is 2 * cable)."""
    return 2 * (UP0 + 6 * leaf + 3 * c + k)


def down(leaf, c, k):
    return up(leaf, c, k) + 1


def line_up(c, i, j, k):
    """Link id line i -> spine j of core c over cable k."""
    return 2 * (LS0 + 324 * c + 18 * i + 2 * j + k)


def spine_down(c, i, j, k):
    return line_up(c, i, j, k) + 1


@pytest.fixture(scope="module")
def fab():
    return gpc_fabric()


@pytest.fixture(scope="module")
def mach():
    return gpc_machine()


def test_counts_by_hand(fab):
    assert fab.nnodes == 103 * 30 == 3090
    assert fab.nswitches == 103 + 2 * (18 + 9) == 157
    cables = 3090 + 103 * 2 * 3 + 2 * 18 * 9 * 2          # node cables, leaf uplinks, line-spine cables
    assert cables == 4356 and fab.nlinks == 2 * cables
    assert np.all(fab.capacity == 1.0)
    assert np.all(gpc_fabric(capacity=32.0).capacity == 32.0)


def test_ports_respect_the_36_port_switches(fab):
    ports = fab.ports()
    assert np.all(ports[:N] == 1)                               # one HCA port per node
    assert np.all(ports[LEAF0:LEAF0 + 103] == 30 + 6)
    for c in range(2):
        # 6 leaves x 3 cables down + 9 spines x 2 up; the last line switch serves one leaf
        assert ports[line(c, 0):line(c, 17)].tolist() == [36] * 17
        assert ports[line(c, 17)] == 3 + 18
        assert ports[spine(c, 0):spine(c, 9)].tolist() == [36] * 9   # 18 lines x 2
        # the core switch as a whole: 18 line switches x 18 down ports = its 324 ports, 309 used
        downs = sum(int(np.sum((fab.src == line(c, i)) & (fab.dst < CORE0))) for i in range(18))
        assert downs == 17 * 18 + 3 == 309 <= 324
    assert fab.summary()["max_switch_ports"] == 36


def test_wiring(fab):
    pairs = Counter(zip(fab.src.tolist(), fab.dst.tolist()))
    for leaf in range(103):
        for c in range(2):
            assert pairs[(LEAF0 + leaf, line(c, leaf // 6))] == 3        # 3 uplinks to each core
        assert sum(pairs[(LEAF0 + leaf, line(c, i))] for c in range(2) for i in range(18)) == 6
    for c in range(2):
        for i in range(18):
            assert all(pairs[(line(c, i), spine(c, j))] == 2 for j in range(9))
            served = sorted(v - LEAF0 for (u, v) in pairs if u == line(c, i) and LEAF0 <= v < CORE0)
            assert served == list(range(6 * i, min(6 * i + 6, 103)))
    assert fab.names[line(1, 17)] == "core1-line17" and fab.names[spine(0, 8)] == "core0-spine8"
    assert fab.nodes[31] == "leaf001-n01"


def test_five_to_one_blocking_at_the_leaves(fab):
    for leaf in range(103):
        v = LEAF0 + leaf
        to_nodes = fab.capacity[(fab.src == v) & (fab.dst < N)].sum()
        to_core = fab.capacity[(fab.src == v) & (fab.dst >= CORE0)].sum()
        assert to_nodes / to_core == 5.0


def test_machine_shape(mach):
    assert (mach.nnodes, mach.pes_per_node, mach.npes) == (3090, 8, 24720)
    assert mach.node.levels[0] == "Package"                 # pack:2 core:4: 2 sockets of 4 PEs
    assert mach.level_of(0, 3) < mach.level_of(0, 4) < mach.level_of(0, 8)
    assert mach.max_route == 6


def test_diameter_and_exact_aspl(mach):
    s = mach.summary(exact_limit=4000)
    assert s["diameter"] == 6 and s["aspl_exact"]
    # from a node in line groups 0..16: 29 nodes at 2 hops (same leaf), 5 x 30 at 4 (same line switch),
    # the other 2910 at 6; from one of the 30 nodes of leaf 102 (alone on line 17): 29 at 2, 3060 at 6
    total = 3060 * (29 * 2 + 150 * 4 + 2910 * 6) + 30 * (29 * 2 + 3060 * 6)
    assert s["aspl"] == pytest.approx(total / (3090 * 3089), rel=1e-12)


def test_hop_classes(mach):
    a = np.array([0, 0, 0, 0, 3089, 3060, 175, 180])  # leaves 0 0 0 0 102 102 5 6
    b = np.array([29, 30, 179, 180, 3060, 0, 120, 3089])  # leaves 0 1 5 6 102 0 4 102
    assert mach.hops(a, b).tolist() == [2, 4, 4, 6, 2, 6, 4, 6]


@pytest.mark.parametrize("a, b, links", [
    # same leaf: up to leaf 0, down to node 1 (node cable k: node->leaf 2k, leaf->node 2k+1)
    (0, 1, [0, 3]),
    # leaf 0 -> leaf 1 (same line switch): uplink 30 mod 6 = 0 (core 0, cable 0), down cable 30 mod 3 = 0
    (0, 30, [0, up(0, 0, 0), down(1, 0, 0), 61]),
    # leaf 0 -> leaf 6 (line 1): uplink 180 mod 6 = 0; line 0 up 180 mod 18 = 0 (spine 0, cable 0);
    # spine 0 down cable 180 mod 2 = 0 to line 1; line 1 down cable 180 mod 3 = 0 to leaf 6
    (0, 180, [0, up(0, 0, 0), line_up(0, 0, 0, 0), spine_down(0, 1, 0, 0), down(6, 0, 0), 361]),
    # node 5 -> node 3089 (leaf 102, line 17): uplink 3089 mod 6 = 5 (core 1, cable 2);
    # line up 3089 mod 18 = 11 (spine 5, cable 1); spine down cable 1; line 17 down cable 3089 mod 3 = 2
    (5, 3089, [10, up(0, 1, 2), line_up(1, 0, 5, 1), spine_down(1, 17, 5, 1), down(102, 1, 2), 6179]),
    # and back to node 5: uplink 5 mod 6 = 5; line up 5 mod 18 = 5 (spine 2, cable 1); down cable 5 mod 3 = 2
    (3089, 5, [6178, up(102, 1, 2), line_up(1, 17, 2, 1), spine_down(1, 0, 2, 1), down(0, 1, 2), 11]),
])
def test_routes_by_hand(mach, fab, a, b, links):
    assert mach.route(a, b).tolist() == links
    # and read as names
    hops = fab.route_hops(links)
    assert hops[0] == fab.nodes[a] and hops[-1] == fab.nodes[b]


def test_uplink_choice_spreads_destinations(mach):
    # every destination off leaf 0 uses leaf 0's uplink d mod 6: 3060 destinations, 510 per uplink
    used = Counter(int(mach.route(0, d)[1]) for d in range(30, N))
    assert used == {up(0, c, k): 510 for c in range(2) for k in range(3)}


def test_leaf_to_leaf_shift_shows_the_blocking(mach):
    # the 30 nodes of leaf 0 each send 1 byte to their counterpart on leaf 1: the 6 uplinks carry
    # 5 flows each (5:1 blocking), every other link at most 1; each flow takes 4 links
    pat = tm.Pattern.from_edges(np.arange(30), np.arange(30, 60), np.ones(30), n=60)
    alloc = mach.allocation(np.arange(60) * 8)
    met = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block"))
    assert met.max_congestion == 5.0
    assert met.hop_bytes == 30 * 4


def reference_next_links(fab, d):
    """dmodk from its definition, for destination d: minimum hops where only switches forward; each
    vertex's candidates are its equal-cost next links in link-id order, of which it takes the
    (d mod count)-th."""
    into = [[] for _ in range(fab.nvertices)]
    for u, v in zip(fab.src.tolist(), fab.dst.tolist()):
        into[v].append(u)
    dist = [-1] * fab.nvertices
    dist[d] = 0
    todo = deque([d])
    while todo:
        v = todo.popleft()
        if v != d and v < fab.nnodes:
            continue                      # a compute node is never passed through
        for u in into[v]:
            if dist[u] < 0:
                dist[u] = dist[v] + 1
                todo.append(u)
    cands = {}
    for l, (u, v) in enumerate(zip(fab.src.tolist(), fab.dst.tolist())):
        if dist[v] >= 0 and dist[v] == dist[u] - 1 and (v == d or v >= fab.nnodes):
            cands.setdefault(u, []).append(l)
    return {u: links[d % len(links)] for u, links in cands.items()}


def reference_route(fab, nxt, a, d):
    route, at = [], a
    while at != d:
        route.append(nxt[at])
        at = int(fab.dst[route[-1]])
    return route


def test_dmodk_matches_the_reference(mach, fab):
    rng = np.random.default_rng(7)
    dests = [0, 5, 30, 180, 181, 3089] + rng.integers(0, N, 6).tolist()
    tables = {d: reference_next_links(fab, d) for d in dests}
    for d in dests:
        sources = [0, 1, 29, 30, 3060, 3089] + rng.integers(0, N, 40).tolist()
        for a in sources:
            if a != d:
                assert mach.route(a, d).tolist() == reference_route(fab, tables[d], a, d), (a, d)
    # the reference's choices depend on the destination: the test can tell routings apart
    assert reference_route(fab, tables[180], 0, 180)[1:3] != reference_route(fab, tables[181], 0, 181)[1:3]


def test_routes_are_connected_walks(mach):
    g = mach.links()
    ends = dict(zip(g["link"].tolist(), zip(g["src"].tolist(), g["dst"].tolist())))
    rng = np.random.default_rng(3)
    for a, b in rng.integers(0, N, (300, 2)).tolist():
        at = a
        for link in mach.route(a, b).tolist():
            assert ends[link][0] == at
            at = ends[link][1]
        assert at == b


@pytest.mark.parametrize("spec, pes, levels", [
    ("gpc:/8", 8, ["Package", "Machine"]),
    ("gpc:8", 8, ["Package", "Machine"]),
    ("gpc:pack:2 core:4", 8, ["Package", "Machine"]),
    ("gpc:/1", 1, ["Node"]),
    ("gpc:routing=shortest/2", 2, ["Node"]),
])
def test_gpc_specs(spec, pes, levels):
    m = tm.machine(spec)
    assert (m.nnodes, m.pes_per_node, list(m.node.levels)) == (3090, pes, levels)
    assert m.spec == spec


def test_gpc_spec_options():
    assert tm.machine("gpc:routing=dmodk/8").route(5, 3089).tolist() == gpc_machine().route(5, 3089).tolist()
    # lowest-link-id routing puts every leaf's traffic on its first uplink
    assert tm.machine("gpc:routing=shortest/1").route(5, 3089)[1] == up(0, 0, 0)
    assert np.all(tm.machine("gpc:capacity=32/8").capacities() == 32.0)
    with pytest.raises(tm.MachineError, match="unknown gpc option"):
        tm.machine("gpc:colour=red/8")
    with pytest.raises(tm.MachineError, match="unknown routing 'fast'"):
        tm.machine("gpc:routing=fast/8")
    with pytest.raises(tm.MachineError, match="not a number"):
        tm.machine("gpc:capacity=lots/8")
    with pytest.raises(tm.MachineError, match="finite and > 0"):
        tm.machine("gpc:capacity=-1/8")


def test_gpc_parser_takes_the_bare_forms():
    # "gpc" and "gpc/8" reach the registered parser with the body "" and "/8" once topomap.networks.spec accepts
    # kinds without a colon; both mean the GPC node (pack:2 core:4)
    parse = tm.networks.spec._KINDS["gpc"]
    for body in ("", "/8"):
        net, node = parse("gpc", body, "gpc" + body)
        assert (net.nnodes * node.npes, list(node.levels)) == (24720, ["Package", "Machine"])


def test_module_constants_describe_the_fabric():
    assert gpc.LEAVES * gpc.NODES_PER_LEAF == N
    assert gpc.UPLINKS_PER_CORE * gpc.CORES == 6 and gpc.NODES_PER_LEAF / 6 == 5
    assert -(-gpc.LEAVES // gpc.LEAVES_PER_LINE) == gpc.LINES


def test_bare_preset_specs():
    """DESIGN.md's spelling: ``gpc/8`` and plain ``gpc`` are the preset with 2 x 4-core nodes."""
    for spec in ("gpc/8", "gpc"):
        m = tm.machine(spec)
        assert (m.nnodes, m.pes_per_node) == (3090, 8)
    assert tm.machine("gpc/1").pes_per_node == 1
    with pytest.raises(tm.MachineError, match="needs the form KIND:PARAMETERS"):
        tm.machine("gpcx/8")
