"""topomap.networks.analysis: distances, link classes, bisection cuts and degrees of a machine's network.

Hand-worked values for a ring, a mesh and a tree; on random machines every
number is recomputed from the definitions by a slow reference written here
(networkx for shortest paths, plain loops for everything else).
"""

import itertools
import json

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from topomap import MachineError
from topomap.networks.analysis import Cut, analyze, bisection, vertex_levels
from topomap.cli import main

from conftest import machines


# ------------------------------------------------------------------ by hand

def test_ring_of_8_by_hand():
    a = analyze(tm.machine("torus:8"))
    # from any node: 1, 1, 2, 2, 3, 3, 4 links -> 16 / 7
    assert (a["routed_diameter"], a["graph_diameter"]) == (4, 4)
    assert a["routed_aspl"] == a["graph_aspl"] == 16 / 7
    assert (a["nodes"], a["switches"], a["links"], a["links[dim0]"]) == (8, 0, 16, 16)
    assert (a["node_degree_min"], a["node_degree_max"], a["node_degree_mean"]) == (2, 2, 2.0)
    assert "switch_degree_min" not in a
    # nodes 0-3 | 4-7: links 3->4 and 0->7 cross each way
    assert (a["halves_links"], a["halves_capacity"], a["halves_bw_per_node"]) == (2, 2.0, 0.5)
    assert (a["kl_links"], a["kl_bw_per_node"]) == (2, 0.5)


def test_mesh_3x4_by_hand():
    a = analyze(tm.machine("mesh:3x4"))
    # sum of |i - j| over ordered pairs of a path of m is m(m^2 - 1)/3: 8 for 3, 20 for 4;
    # over the 3x4 grid: 4^2 * 8 + 3^2 * 20 = 308, over 12 * 11 ordered pairs
    assert a["routed_aspl"] == a["graph_aspl"] == 308 / 132
    assert a["routed_diameter"] == a["graph_diameter"] == 5
    # dim 0: 2 cables in each of 4 rows; dim 1: 3 cables in each of 3 columns; 2 links per cable
    assert (a["links[dim0]"], a["links[dim1]"]) == (16, 18)
    # 4 corners of degree 2, 6 border nodes of 3, 2 inner nodes of 4
    assert (a["node_degree_min"], a["node_degree_max"], a["node_degree_mean"]) == (2, 4, 34 / 12)
    # ids 0-5 are rows 0-1: the cut between rows 1 and 2 is 3 links, already minimal
    assert (a["halves_links"], a["kl_links"], a["kl_bw_per_node"]) == (3, 3, 0.5)


def test_tree_by_hand():
    m = tm.machine("hierarchy:1:2:2/1:10:100")      # 4 nodes, switches 4 (nodes 0,1), 5 (2,3), root 6
    assert vertex_levels(m).tolist() == [0, 0, 0, 0, 1, 1, 2]
    a = analyze(m)
    # from node 0: node 1 at 2 links, nodes 2 and 3 at 4
    assert a["routed_aspl"] == a["graph_aspl"] == 10 / 3
    assert a["routed_diameter"] == a["graph_diameter"] == 4
    assert (a["links[node-switch1]"], a["links[switch1-switch2]"], a["switches"]) == (8, 4, 3)
    assert (a["switch_degree_min"], a["switch_degree_max"], a["switch_degree_mean"]) == (2, 3, 8 / 3)
    # halves {0,1} | {2,3}: switch 4 joins side 0, switch 5 side 1, the root (tie) side 0
    cut = bisection(m, "halves")
    assert cut.side.tolist() == [0, 0, 1, 1, 0, 1, 0]
    assert (cut.links_fwd, cut.links_back, cut.nodes, cut.bw_per_node) == (1, 1, (2, 2), 0.5)


def test_capacities_weigh_the_cut_and_link_classes():
    m = tm.machine("hierarchy:1:2:2/1:10:100")
    caps = np.ones(m.nlinks)
    g = m.links()
    up = (g["src"] == 5) & (g["dst"] == 6)
    caps[g["link"][up]] = 3.0                      # switch 5 -> root is 3x faster
    m.set_capacities(caps)
    a = analyze(m)
    assert a["capacity[switch1-switch2]"] == 6.0 and a["total_capacity"] == 14.0
    # the root starts on side 0 (tie), but its cable to switch 5 now weighs 1 + 3 against 1 + 1 to
    # switch 4, so it moves to side 1 and the cut is the cable root-4
    cut = bisection(m, "halves")
    assert cut.side.tolist() == [0, 0, 1, 1, 0, 1, 1]
    assert (cut.capacity_fwd, cut.capacity_back, cut.links_fwd) == (1.0, 1.0, 1)
    assert (a["halves_capacity"], a["halves_bw_per_node"]) == (1.0, 0.5)


def test_kl_finds_the_short_cut_of_a_long_mesh():
    m = tm.machine("mesh:4x2")                      # ids 0-3 are the first row: 4 vertical links
    halves, kl = bisection(m, "halves"), bisection(m, "kl")
    assert (halves.links_fwd, kl.links_fwd) == (4, 2)
    assert kl.nodes == (4, 4)
    assert np.flatnonzero(kl.side == kl.side[0]).tolist() == [0, 1, 4, 5]     # columns 0-1 | 2-3
    assert bisection(m, "kl", passes=0).links_fwd == 4


def test_single_node_and_sampling():
    a = analyze(tm.machine("tree:pack:2 core:2"))
    assert (a["nodes"], a["links"], a["routed_diameter"], a["graph_aspl"]) == (1, 0, 0, 0.0)
    assert not any(k.startswith(("halves", "kl")) for k in a)
    # a torus looks the same from every node: a sample gives the exact numbers
    m = tm.machine("torus:4x6")
    exact, sampled = analyze(m), analyze(m, sample=5, seed=3)
    assert exact["distances_exact"] and not sampled["distances_exact"]
    for k in ("routed_aspl", "graph_aspl", "routed_diameter", "graph_diameter"):
        assert sampled[k] == exact[k]
    assert analyze(m, sample=5, seed=3) == sampled
    with pytest.raises(MachineError, match="sample must be a positive number of source nodes, got 0"):
        analyze(m, sample=0)


def test_cut_of_a_given_split():
    m = tm.machine("mesh:3")
    side = [0, 1, 1]
    c = Cut.of(m, side)
    assert (c.links_fwd, c.links_back, c.nodes) == (1, 1, (1, 2))
    with pytest.raises(MachineError, match="one side \\(0 or 1\\) for each of the 3 vertices"):
        Cut.of(m, [0, 2, 1])
    with pytest.raises(MachineError, match="one side"):
        Cut.of(m, [0, 1])


def test_bad_arguments():
    with pytest.raises(MachineError, match="at least 2 compute nodes; 'tree:core:4' has 1"):
        bisection(tm.machine("tree:core:4"))
    with pytest.raises(MachineError, match="unknown bisection method 'best'"):
        bisection(tm.machine("torus:4"), "best")
    with pytest.raises(MachineError, match="passes must be a non-negative integer, got -1"):
        bisection(tm.machine("torus:4"), passes=-1)


# ------------------------------------------------------------------ against references

def reference(m: tm.Machine) -> dict:
    """Every analysis number from the definitions, slowly."""
    g = m.links()
    src, dst, cap = g["src"].tolist(), g["dst"].tolist(), g["capacity"].tolist()
    n, nv = m.nnodes, m.nvertices
    dg = nx.DiGraph()
    dg.add_nodes_from(range(nv))
    dg.add_edges_from(zip(src, dst))
    routed, graph = [], []
    for a in range(n):
        dist = nx.single_source_shortest_path_length(dg, a)
        for b in range(n):
            if a != b:
                routed.append(len(m.route(a, b)))
                graph.append(dist.get(b))
    out = {"links": len(src), "switches": nv - n}
    if routed:
        out["routed_diameter"], out["routed_aspl"] = max(routed), sum(routed) / len(routed)
        ok = None not in graph
        out["graph_diameter"] = max(graph) if ok else None
        out["graph_aspl"] = sum(graph) / len(graph) if ok else None
    # switch levels: shortest distance from any node
    level = {v: 0 for v in range(n)}
    if nv > n:
        multi = nx.multi_source_dijkstra_path_length(dg, set(range(n)))
        level.update({v: multi.get(v, -1) for v in range(n, nv)})
    names = {v: "switch?" if level[v] < 0 else "node" if level[v] == 0 else f"switch{level[v]}" for v in range(nv)}
    rank = {v: (10**9 if level[v] < 0 else level[v]) for v in range(nv)}
    for s, d, c in zip(src, dst, cap):
        if m.network.kind == "torus":
            cs = np.unravel_index(s, m.network.dims, order="F")
            cd = np.unravel_index(d, m.network.dims, order="F")
            key = f"dim{[i for i in range(len(cs)) if cs[i] != cd[i]][0]}"
        else:
            lo, hi = sorted((s, d), key=lambda v: rank[v])
            key = f"{names[lo]}-{names[hi]}"
        out[f"links[{key}]"] = out.get(f"links[{key}]", 0) + 1
        out[f"capacity[{key}]"] = out.get(f"capacity[{key}]", 0.0) + c
    deg = [src.count(v) for v in range(nv)]
    out.update(node_degree_min=min(deg[:n]), node_degree_max=max(deg[:n]), node_degree_mean=sum(deg[:n]) / n)
    if nv > n:
        out.update(switch_degree_min=min(deg[n:]), switch_degree_max=max(deg[n:]),
                   switch_degree_mean=sum(deg[n:]) / (nv - n))
    return out


def cut_weight(m: tm.Machine, side) -> float:
    g = m.links()
    return sum(c for s, d, c in zip(g["src"], g["dst"], g["capacity"]) if side[s] != side[d])


@given(machines())
def test_analysis_equals_the_reference_on_random_machines(m):
    if m.nnodes > 60:
        return
    got = analyze(m)
    want = reference(m)
    for k, v in want.items():
        assert got[k] == pytest.approx(v) if isinstance(v, float) else got[k] == v, k
    # and nothing else is reported per class
    assert {k for k in got if k.startswith(("links[", "capacity["))} == {k for k in want if "[" in k}
    assert json.loads(json.dumps(got)) == got


@given(machines())
def test_cuts_are_balanced_consistent_and_kl_never_worse(m):
    if m.nnodes < 2 or m.nnodes > 60:
        return
    halves, kl = bisection(m, "halves"), bisection(m, "kl")
    n = m.nnodes
    for cut in (halves, kl):
        assert cut.nodes == (n // 2, n - n // 2)
        g = m.links()
        fwd = [(s, d, c) for s, d, c in zip(g["src"], g["dst"], g["capacity"]) if cut.side[s] == 0 and cut.side[d] == 1]
        assert cut.links_fwd == len(fwd) and cut.capacity_fwd == pytest.approx(sum(c for *_, c in fwd))
        # no single switch could move to lower the cut
        base = cut_weight(m, cut.side)
        for v in range(n, m.nvertices):
            moved = cut.side.copy()
            moved[v] ^= 1
            assert cut_weight(m, moved) >= base - 1e-9
    assert halves.side[:n].tolist() == [0] * (n // 2) + [1] * (n - n // 2)
    assert cut_weight(m, kl.side) <= cut_weight(m, halves.side) + 1e-9


@given(st.integers(2, 4), st.integers(1, 3), st.booleans())
def test_kl_against_exhaustive_search_on_small_grids(a, b, wrap):
    m = tm.Machine(tm.Torus((a, b), (wrap, wrap)), tm.NodeTree.flat(1))
    n = m.nnodes
    best = min(cut_weight(m, [1 if v in s else 0 for v in range(n)])
               for s in itertools.combinations(range(n), n // 2))
    got = cut_weight(m, bisection(m, "kl").side)
    assert best <= got <= cut_weight(m, bisection(m, "halves").side)
    if n <= 4:
        assert got == best


# ------------------------------------------------------------------ command line

def test_machine_command_prints_the_analysis_on_request(capsys):
    assert main(["machine", "torus:8", "--analysis", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["diameter"], out["graph_diameter"], out["kl_links"], out["links[dim0]"]) == (4, 4, 2, 16)
    assert main(["machine", "torus:8", "--json"]) == 0
    assert "kl_links" not in json.loads(capsys.readouterr().out)
