"""topomap.export: Scotch targets and graphs, SimGrid platforms and host files, Graphviz drawings.

Golden texts are worked out by hand from the formats (Scotch user's guide
"Files and data structures"; SimGrid platform DTD 4.1; the DOT language) and
from topomap's link numbering (torus link id = (node*ndims + dim)*2 + dir;
tree link of node e at level 0: up 2e, down 2e+1).  When the real tools are
installed (Debian ``scotch``, ``graphviz``, ``python3-simgrid``) the files are
also fed to them; otherwise those tests skip.
"""

import itertools
import json
import os
import re
import shutil
import subprocess
import textwrap
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from topomap import MachineError, MappingError
from topomap.cli import main
from topomap.export import dot, scotch, simgrid

from conftest import machines

GMAP = shutil.which("scotch_gmap") or shutil.which("gmap")
GMTST = shutil.which("gmtst")
AMK_GRF = shutil.which("amk_grf")
GTST = shutil.which("gtst")
GRAPHVIZ = shutil.which("dot")
needs_scotch = pytest.mark.skipif(not (GMAP and GMTST and AMK_GRF and GTST), reason="Scotch programs not installed")


def _simgrid_python():
    """An interpreter that can import SimGrid's Python module (Debian python3-simgrid), or None."""
    for exe in ("/usr/bin/python3", shutil.which("python3")):
        if exe and os.path.exists(exe):
            ok = subprocess.run([exe, "-c", "import simgrid"], capture_output=True).returncode == 0
            if ok:
                return exe
    return None


SIMGRID_PY = _simgrid_python()


# ------------------------------------------------------------------ Scotch tleaf

def test_tleaf_differenced_kahip_example():
    # notes/anchors.md §1.5: KaHIP 4:16:16 / 1:10:100 is Scotch tleaf 3 16 90 16 9 4 1
    assert scotch.tleaf(tm.machine("hierarchy:4:16:16/1:10:100")) == "tleaf 3 16 90 16 9 4 1\n"
    assert scotch.tleaf(tm.machine("hierarchy:2:2/1:10")) == "tleaf 2 2 9 2 1\n"
    # the same hierarchy with two levels inside the node gives the same target
    assert scotch.tleaf(tm.machine("hierarchy:4:16:16/1:10:100,node_levels=2")) == "tleaf 3 16 90 16 9 4 1\n"


def test_tleaf_of_node_trees_and_merged_levels():
    assert scotch.tleaf(tm.machine("tree:pack:2 core:2")) == "tleaf 2 2 1 2 1\n"   # costs 1, 2 by depth
    # arity-1 levels vanish; equal distances merge (2 x 3 groups at distance 10 = 6 groups)
    assert scotch.tleaf_levels(tm.machine("hierarchy:2:1:3:2/1:5:10:10")) == [(2, 1.0), (6, 10.0)]
    assert scotch.tleaf(tm.machine("hierarchy:2:1:3:2/1:5:10:10")) == "tleaf 2 6 9 2 1\n"
    assert scotch.tleaf(tm.machine("hierarchy:1:4/1:7")) == "tleaf 1 4 7\n"


def scotch_tleaf_distance(text: str, a: int, b: int) -> int:
    """Scotch 7's tleaf distance, from the format: sum of the link costs from the
    lowest common level of the two leaves down to the leaves."""
    f = list(map(int, text.split()[1:]))
    nlev, sizes, links = f[0], f[1::2], f[2::2]
    assert len(sizes) == nlev
    # leaf -> digits, top level most significant
    digits = []
    for x in (a, b):
        d = []
        for s in reversed(sizes):
            d.append(x % s)
            x //= s
        digits.append(d[::-1])
    if a == b:
        return 0
    first = next(k for k in range(nlev) if digits[0][k] != digits[1][k])
    return sum(links[first:])


@given(st.lists(st.tuples(st.integers(1, 3), st.integers(0, 3)), min_size=1, max_size=4),
       st.integers(1, 3), st.integers(1, 3))
def test_tleaf_distances_equal_machine_distances(levels, node_levels, first):
    arities = [a for a, _ in levels]
    dists, d = [], first
    for _, step in levels:          # non-decreasing integer distances, steps of 0 allowed
        d += step
        dists.append(d)
    spec = f"hierarchy:{':'.join(map(str, arities))}/{':'.join(map(str, dists))},node_levels={min(node_levels, len(arities))}"
    m = tm.machine(spec)
    if m.npes < 2:
        with pytest.raises(MachineError, match="single PE"):
            scotch.tleaf(m)
        return
    text = scotch.tleaf(m)
    want = m.distance_matrix()
    for a, b in itertools.product(range(m.npes), repeat=2):
        assert scotch_tleaf_distance(text, a, b) == want[a, b], (spec, text, a, b)
    fields = list(map(int, text.split()[2:]))
    assert min(fields[0::2]) >= 2 and min(fields[1::2]) >= 1   # what Scotch accepts


@pytest.mark.parametrize("machine, what", [
    (lambda: tm.machine("torus:4x4"), "torus network: export it as 'torus' or 'grf'"),
    (lambda: tm.machine("hierarchy:2:2/0:10"), "level 'Node' of 'hierarchy:2:2/0:10' has distance 0"),
    (lambda: tm.machine("hierarchy:2:2/1.5:10"), "has distance 1.5"),
    (lambda: tm.machine("hierarchy:1:1/1:10"), "single PE"),
    (lambda: tm.Machine(tm.TreeNetwork((2,), (5.0,)), tm.NodeTree.flat(2, cost=10.0)),
     "level 'switch1' has distance 5, below 10 of level 'Node'"),
    (lambda: tm.Machine(tm.SingleNode(), tm.NodeTree.from_hwloc_xml(
        os.path.join(os.path.dirname(__file__), "data", "hwloc", "irregular_offline.xml"))),
     "regular tree of consecutive PEs, but the node level 'Core'"),
])
def test_tleaf_refuses_what_scotch_cannot_read(machine, what):
    with pytest.raises(MachineError, match=re.escape(what)):
        scotch.tleaf(machine())


# ------------------------------------------------------------------ Scotch torus, grf, vertex list

def test_torus_and_mesh_targets():
    assert scotch.torus(tm.machine("torus:2x2")) == "torus2D 2 2\n"
    assert scotch.torus(tm.machine("torus:8x8x8/16")) == "torus3D 8 8 8\n"
    assert scotch.torus(tm.machine("mesh:3x4")) == "mesh2D 3 4\n"
    assert scotch.torus(tm.machine("torus:5")) == "torus2D 5 1\n"
    assert scotch.torus(tm.machine("mesh:5/2")) == "mesh2D 5 1\n"
    assert scotch.torus(tm.machine("torus:2x2x2x3")) == "torusXD 4 2 2 2 3\n"
    assert scotch.torus(tm.machine("mesh:2x2x2x3")) == "meshXD 4 2 2 2 3\n"
    with pytest.raises(MachineError, match=r"wraps only some dimensions .*wrap=\[True, False\]"):
        scotch.torus(tm.Machine(tm.Torus((4, 4), (True, False)), tm.NodeTree.flat(1)))
    with pytest.raises(MachineError, match="needs a torus or mesh machine; 'hierarchy:2:2/1:10' has a tree network"):
        scotch.torus(tm.machine("hierarchy:2:2/1:10"))


def test_grf_golden_torus_2x2():
    # node 0 = (0,0): both dim-0 links go to node 1 (a ring of 2), both dim-1 links to node 2
    assert scotch.grf(tm.machine("torus:2x2")) == "0\n4 8\n0 000\n2 1 2\n2 0 3\n2 0 3\n2 1 2\n"
    assert scotch.vertex_list(tm.machine("torus:2x2")) == "4\n0 1 2 3\n"


def test_grf_golden_tree_with_switches():
    # hierarchy 1:2:2: nodes 0..3, level-1 switches 4 (nodes 0,1) and 5 (nodes 2,3), root 6
    assert scotch.grf(tm.machine("hierarchy:1:2:2/1:10:100")) == textwrap.dedent("""\
        0
        7 12
        0 000
        1 4
        1 4
        1 5
        1 5
        3 0 1 6
        3 2 3 6
        2 4 5
        """)


@given(machines())
def test_grf_is_the_symmetric_graph_of_the_links(m):
    lines = scotch.grf(m).splitlines()
    assert lines[0] == "0" and lines[2] == "0 000"
    nvert, arcs = map(int, lines[1].split())
    assert nvert == m.nvertices and len(lines) == 3 + nvert
    adj = [list(map(int, line.split())) for line in lines[3:]]
    assert all(row[0] == len(row) - 1 for row in adj) and sum(row[0] for row in adj) == arcs
    got = {(u, v) for u, row in enumerate(adj) for v in row[1:]}
    g = m.links()
    want = {(int(s), int(d)) for s, d in zip(g["src"], g["dst"])}
    want |= {(d, s) for s, d in want}
    assert got == want and len(got) == arcs


# ------------------------------------------------------------------ Scotch itself

def pattern_grf(pat: tm.Pattern) -> str:
    """A symmetric integer-weighted pattern as a Scotch source graph with edge loads."""
    dense = pat.to_dense()
    assert np.array_equal(dense, dense.T) and np.array_equal(dense, np.round(dense))
    lines = ["0", f"{pat.n} {int(np.count_nonzero(dense))}", "0 010"]
    for p in range(pat.n):
        nbrs = np.flatnonzero(dense[p])
        lines.append(" ".join([str(nbrs.size)] + [f"{int(dense[p, q])} {q}" for q in nbrs]))
    return "\n".join(lines) + "\n"


def scotch_run(*argv):
    return subprocess.run([str(a) for a in argv], check=True, capture_output=True, text=True).stdout


def atst_distances(tgt):
    """(max, avg) of the distances between distinct terminals, as Scotch's atst reports them."""
    m = re.search(r"Distance\s+min=\S+\s+max=(\S+)\s+avg=(\S+)", scotch_run(shutil.which("atst"), tgt))
    return float(m.group(1)), float(m.group(2))


def gmtst_expansion(tmp_path, pat, tgt, part):
    """Scotch's sum of load x distance over the pattern's undirected edges for the mapping ``part``.

    gmtst is exact only when every terminal holds a process (with idle
    terminals Scotch 7.0.3 reports other distances), so ``part`` must be onto.
    """
    src, out = tmp_path / "pattern.grf", tmp_path / "given.map"
    src.write_text(pattern_grf(pat))
    out.write_text(f"{part.size}\n" + "".join(f"{p} {t}\n" for p, t in enumerate(part.tolist())))
    log = scotch_run(GMTST, src, tgt, out)
    return int(re.search(r"CommExpan=\S+\s+\((\d+)\)", log).group(1))


def gmap_terminals(tmp_path, pat, tgt):
    """Run Scotch's mapper; return the terminal label of each process."""
    src, out = tmp_path / "pattern.grf", tmp_path / "gmap.map"
    src.write_text(pattern_grf(pat))
    scotch_run(GMAP, src, tgt, out)
    fields = np.array(out.read_text().split(), dtype=np.int64)
    pairs = fields[1:].reshape(fields[0], 2)
    part = np.full(pat.n, -1)
    part[pairs[:, 0]] = pairs[:, 1]
    return part


def weighted_stencil(shape):
    dense = tm.generators.stencil_2d(shape, periodic=True).to_dense() > 0
    w = np.random.default_rng(7).integers(1, 6, dense.shape)
    return tm.Pattern.from_dense(dense * (np.triu(w) + np.triu(w, 1).T))


def distinct_pair_stats(d):
    off = ~np.eye(d.shape[0], dtype=bool)
    return float(d[off].max()), float(d[off].mean())


@needs_scotch
@pytest.mark.parametrize("spec", ["hierarchy:4:16:16/1:10:100", "hierarchy:2:2:4/1:10:100",
                                  "hierarchy:3:1:2:2/2:5:5:7", "tree:pack:2 numa:2 core:4"])
def test_scotch_reads_our_tleaf_with_our_distances(tmp_path, spec):
    m = tm.machine(spec)
    tgt = tmp_path / "t.tgt"
    tgt.write_text(scotch.tleaf(m))
    d_max, d_avg = atst_distances(tgt)
    want_max, want_avg = distinct_pair_stats(m.distance_matrix())
    assert d_max == want_max and d_avg == pytest.approx(want_avg, rel=1e-5)
    pat = weighted_stencil((m.npes // 4, 4))
    part = np.random.default_rng(3).permutation(m.npes)
    # J counts both directions of each undirected edge
    assert 2 * gmtst_expansion(tmp_path, pat, tgt, part) == tm.evaluate(pat, m, part).qap
    mapped = gmap_terminals(tmp_path, pat, tgt)
    assert mapped.min() >= 0 and mapped.max() < m.npes


@needs_scotch
@pytest.mark.parametrize("spec", ["torus:4x4", "torus:3x3", "torus:4x2x2", "mesh:3x4", "torus:3x2x2x2", "mesh:5",
                                  "torus:7", "mesh:3x2x3"])
def test_scotch_reads_our_torus_with_our_hops(tmp_path, spec):
    m = tm.machine(spec)
    tgt = tmp_path / "t.tgt"
    tgt.write_text(scotch.torus(m))
    nodes = np.arange(m.nnodes)
    hops = m.hops(nodes[:, None], nodes[None, :])
    d_max, d_avg = atst_distances(tgt)
    want_max, want_avg = distinct_pair_stats(hops)
    assert d_max == want_max and d_avg == pytest.approx(want_avg, rel=1e-5)
    pat = weighted_stencil((m.nnodes, 1)) if m.nnodes % 4 else weighted_stencil((m.nnodes // 4, 4))
    part = np.random.default_rng(5).permutation(m.nnodes)
    assert 2 * gmtst_expansion(tmp_path, pat, tgt, part) == tm.evaluate(pat, m, part).hop_bytes
    mapped = gmap_terminals(tmp_path, pat, tgt)
    assert mapped.min() >= 0 and mapped.max() < m.nnodes


@needs_scotch
@pytest.mark.parametrize("spec", ["hierarchy:1:2:4/1:10:100", "hierarchy:1:3:2:2/1:10:100:1000", "torus:3x3",
                                  "mesh:2x5"])
@pytest.mark.parametrize("every", [1, 2])
def test_amk_grf_builds_a_target_of_our_nodes(tmp_path, spec, every):
    m = tm.machine(spec)
    grf, lst, tgt = tmp_path / "net.grf", tmp_path / "net.vl", tmp_path / "net.tgt"
    grf.write_text(scotch.grf(m))
    scotch_run(GTST, grf)                       # Scotch's own consistency check of the graph
    if every == 1:
        lst.write_text(scotch.vertex_list(m))
        nodes = np.arange(m.nnodes)
    else:                                       # a subset, in Scotch's vertex-list format
        nodes = np.arange(1, m.nnodes, every)
        lst.write_text(f"{nodes.size}\n{' '.join(map(str, nodes))}\n")
    scotch_run(AMK_GRF, f"-l{lst}", grf, tgt)
    # unit edges: Scotch's distances are hop counts, which these kinds' (minimal) routes take
    d_max, d_avg = atst_distances(tgt)
    want_max, want_avg = distinct_pair_stats(m.hops(nodes[:, None], nodes[None, :]))
    assert d_max == want_max and d_avg == pytest.approx(want_avg, rel=1e-5)
    # terminals are labelled by vertex id, i.e. by node id (not by position in the list)
    pat = weighted_stencil((nodes.size, 1))
    assert set(gmap_terminals(tmp_path, pat, tgt).tolist()) <= set(nodes.tolist())


# ------------------------------------------------------------------ SimGrid

GOLDEN_PLATFORM = """\
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="topomap" routing="Full">
    <prop id="topomap_spec" value="hierarchy:2:2/1:10"/>
    <host id="node0" speed="1000000000.0f" core="2"/>
    <host id="node1" speed="1000000000.0f" core="2"/>
    <router id="switch2"/>
    <link id="l0" bandwidth="12500000000.0Bps" latency="1e-07s" sharing_policy="SHARED"/>
    <link id="l1" bandwidth="12500000000.0Bps" latency="1e-07s" sharing_policy="SHARED"/>
    <link id="l2" bandwidth="12500000000.0Bps" latency="1e-07s" sharing_policy="SHARED"/>
    <link id="l3" bandwidth="12500000000.0Bps" latency="1e-07s" sharing_policy="SHARED"/>
    <route src="node0" dst="node1" symmetrical="NO"><link_ctn id="l0"/><link_ctn id="l3"/></route>
    <route src="node1" dst="node0" symmetrical="NO"><link_ctn id="l2"/><link_ctn id="l1"/></route>
  </zone>
</platform>
"""


def test_simgrid_golden_two_nodes_under_one_switch():
    assert simgrid.platform(tm.machine("hierarchy:2:2/1:10")) == GOLDEN_PLATFORM


def test_simgrid_golden_torus_routes():
    xml = simgrid.platform(tm.machine("torus:2x2"), bandwidth=2.0, latency=0.5, speed=3.0)
    # DOR: dimension 0 first, ties (delta = size/2) go +
    assert '<route src="node0" dst="node3" symmetrical="NO"><link_ctn id="l0"/><link_ctn id="l6"/></route>' in xml
    assert '<route src="node3" dst="node0" symmetrical="NO"><link_ctn id="l12"/><link_ctn id="l10"/></route>' in xml
    assert '<link id="l5" bandwidth="2.0Bps" latency="0.5s" sharing_policy="SHARED"/>' in xml
    assert '<host id="node2" speed="3.0f" core="1"/>' in xml


_UNIT = {"bandwidth": "Bps", "latency": "s", "speed": "f"}


def check_platform(m: tm.Machine, xml: str, bandwidth: float) -> None:
    """The DTD 4.1 structure we write, and routes equal to Machine.route."""
    root = ET.fromstring(xml.split("\n", 2)[2])        # drop the XML declaration and DOCTYPE
    assert root.tag == "platform" and root.attrib == {"version": "4.1"}
    (zone,) = list(root)
    assert zone.tag == "zone" and zone.attrib == {"id": "topomap", "routing": "Full"}
    tags = [e.tag for e in zone]
    # zone content model of a leaf zone: prop*, then (host|router|link)*, then route*
    order = {"prop": 0, "host": 1, "router": 1, "link": 1, "route": 2}
    assert [order[t] for t in tags] == sorted(order[t] for t in tags)
    hosts = [e for e in zone if e.tag == "host"]
    assert [h.get("id") for h in hosts] == [f"node{v}" for v in range(m.nnodes)]
    assert all(h.get("core") == str(m.pes_per_node) and h.get("speed").endswith("f") for h in hosts)
    routers = [e.get("id") for e in zone if e.tag == "router"]
    assert routers == [f"switch{v}" for v in range(m.nnodes, m.nvertices)]
    g = m.links()
    links = {e.get("id"): e for e in zone if e.tag == "link"}
    assert list(links) == [f"l{k}" for k in g["link"]]
    for k, cap in zip(g["link"], g["capacity"]):
        e = links[f"l{k}"]
        assert e.get("bandwidth").endswith("Bps") and float(e.get("bandwidth")[:-3]) == cap * bandwidth
        assert e.get("latency").endswith("s") and e.get("sharing_policy") == "SHARED"
    routes = {(r.get("src"), r.get("dst")): r for r in zone if r.tag == "route"}
    assert len(routes) == m.nnodes * (m.nnodes - 1)
    for a, b in itertools.permutations(range(m.nnodes), 2):
        r = routes[(f"node{a}", f"node{b}")]
        assert r.get("symmetrical") == "NO"
        assert all(c.tag == "link_ctn" for c in r)
        assert [c.get("id") for c in r] == [f"l{k}" for k in m.route(a, b)]


@given(machines())
def test_simgrid_structure_and_routes_on_random_machines(m):
    if m.nnodes <= 40:
        check_platform(m, simgrid.platform(m, bandwidth=3.0), 3.0)


SIMGRID_CHECK = """
import json, sys
import simgrid
e = simgrid.Engine(["check", "--log=root.thres:critical"])
e.load_platform(sys.argv[1])
hosts = {h.name: h for h in e.all_hosts}
routes = {a + " " + b: [l.name for l in hosts[a].route_to(hosts[b])[0]] for a in hosts for b in hosts if a != b}
links = {l.name: [l.bandwidth, l.latency] for l in e.all_links}
print(json.dumps({"routes": routes, "links": links, "cores": {h: hosts[h].core_count for h in hosts}}))
"""


@pytest.mark.skipif(SIMGRID_PY is None, reason="SimGrid's Python module (python3-simgrid) is not installed")
@pytest.mark.parametrize("spec", ["torus:3x2/2", "mesh:2x3", "hierarchy:2:2:3/1:10:100", "hierarchy:1:2:2:2/1:5:10:20"])
def test_simgrid_loads_our_platform_and_follows_our_routes(tmp_path, spec):
    m = tm.machine(spec)
    caps = np.arange(1, m.nlinks + 1, dtype=float)
    m.set_capacities(caps)
    path = tmp_path / "p.xml"
    path.write_text(simgrid.platform(m, bandwidth=1e9, latency=2e-6))
    script = tmp_path / "check.py"
    script.write_text(SIMGRID_CHECK)
    res = subprocess.run([SIMGRID_PY, str(script), str(path)], capture_output=True, text=True, check=True)
    got = json.loads(res.stdout)
    for a, b in itertools.permutations(range(m.nnodes), 2):
        assert got["routes"][f"node{a} node{b}"] == [f"l{k}" for k in m.route(a, b)]
    for k in m.links()["link"]:
        assert got["links"][f"l{k}"] == [caps[k] * 1e9, 2e-6]
    assert set(got["cores"].values()) == {m.pes_per_node}


def test_simgrid_refuses_bad_parameters_and_huge_machines():
    m = tm.machine("torus:4")
    for kw in ({"bandwidth": 0}, {"latency": -1.0}, {"speed": float("nan")}, {"bandwidth": "fast"}):
        with pytest.raises(MachineError, match=f"{next(iter(kw))} must be a positive finite number"):
            simgrid.platform(m, **kw)
    with pytest.raises(MachineError, match=r"'torus:8x8' has 64 nodes: .* 4032 routes; pass max_nodes=64"):
        simgrid.platform(tm.machine("torus:8x8"), max_nodes=63)


def test_hostfile_follows_allocation_then_mapping():
    m = tm.machine("torus:2x2/2")
    alloc = m.allocation([7, 6, 0, 3])
    assert simgrid.hostfile(alloc) == "node3\nnode3\nnode0\nnode1\n"
    assert simgrid.hostfile(alloc, [0, 3, 6, 7]) == "node0\nnode1\nnode3\nnode3\n"
    mp = tm.map(tm.generators.stencil_2d((2, 2)), alloc, method="block")
    assert simgrid.hostfile(alloc, mp) == simgrid.hostfile(alloc)
    assert simgrid.hostfile(m) == "".join(f"node{pe // 2}\n" for pe in range(8))
    with pytest.raises(MappingError, match="rank 1 is mapped to PE 5, which is not in the allocation"):
        simgrid.hostfile(alloc, [0, 5])
    with pytest.raises(MachineError, match="PE 8 is out of range"):
        simgrid.hostfile(m, [1, 8])
    with pytest.raises(MappingError, match="needs an Allocation or a Machine, got str"):
        simgrid.hostfile("torus:2x2")


# ------------------------------------------------------------------ Graphviz

GOLDEN_DOT = """\
digraph topomap {
  graph [label="hierarchy:2:2/1:10", labelloc=t, fontname="Helvetica"];
  node [fontname="Helvetica"];
  edge [fontname="Helvetica", fontsize=9];
  n0 [shape=box, label="node 0"];
  n1 [shape=box, label="node 1"];
  s2 [shape=ellipse, label="switch 2\\nlevel 1"];
  n0 -> s2 [penwidth=8, color="0.000 1.000 0.900", label="4", tooltip="link 0: 4 bytes / capacity 1"];
  s2 -> n0 [penwidth=4.5, color="0.167 1.000 0.900", label="2", tooltip="link 1: 2 bytes / capacity 1"];
  n1 -> s2 [penwidth=4.5, color="0.167 1.000 0.900", label="2", tooltip="link 2: 2 bytes / capacity 1"];
  s2 -> n1 [penwidth=8, color="0.000 1.000 0.900", label="4", tooltip="link 3: 4 bytes / capacity 1"];
}
"""


def test_dot_golden_with_loads_from_evaluate():
    m = tm.machine("hierarchy:2:2/1:10")
    pat = tm.Pattern.from_edges([0, 1], [1, 0], [4.0, 2.0])
    met = tm.evaluate(pat, m, [0, 2], link_load=True)     # PEs 0 and 2 are on nodes 0 and 1
    assert dot.dot(m, met) == GOLDEN_DOT
    assert dot.dot(m, met.link_load) == GOLDEN_DOT


def test_dot_congestion_uses_capacity_and_idle_links_are_grey():
    m = tm.machine("torus:3")
    m.set_capacities([2.0, 1, 1, 1, 1, 1])
    text = dot.dot(m, [4.0, 0, 4.0, 0, 0, 0])             # link 0 carries 4 bytes at capacity 2: half as congested
    assert 'n0 -> n1 [penwidth=4.5, color="0.167 1.000 0.900", label="4", tooltip="link 0: 4 bytes / capacity 2"]' in text
    assert 'n1 -> n2 [penwidth=8, color="0.000 1.000 0.900", label="4"' in text
    assert 'n0 -> n2 [penwidth=1, color=gray60, style=dashed, tooltip="link 1: idle / capacity 1"]' in text
    plain = dot.dot(m)
    assert "  n0 -> n1;\n" in plain and "penwidth" not in plain


def test_dot_refuses_bad_loads():
    m = tm.machine("torus:3")
    with pytest.raises(MachineError, match="evaluate with link_load=True"):
        dot.dot(m, tm.evaluate(tm.Pattern.from_edges([0], [1], [1.0]), m, [0, 1]))
    with pytest.raises(MachineError, match=r"one value per link id \(6\), got shape \(5,\)"):
        dot.dot(m, np.zeros(5))
    with pytest.raises(MachineError, match="the load of link 2 is -1.0"):
        dot.dot(m, [0, 0, -1.0, 0, 0, 0])


@pytest.mark.skipif(GRAPHVIZ is None, reason="Graphviz is not installed")
@pytest.mark.parametrize("spec", ["torus:3x3/2", "hierarchy:2:2:2/1:10:100", "tree:pack:2 core:2"])
def test_graphviz_reads_our_dot(tmp_path, spec):
    m = tm.machine(spec)
    alloc = m.allocate(m.npes)
    pat = tm.generators.stencil_2d((m.npes, 1), periodic=True) if m.npes > 2 else tm.Pattern.from_edges([0], [1], [1.0])
    met = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="cyclic"), link_load=True)
    res = subprocess.run([GRAPHVIZ, "-Tjson"], input=dot.dot(m, met), capture_output=True, text=True, check=True)
    drawn = json.loads(res.stdout)
    assert len(drawn.get("objects", [])) == m.nvertices
    assert len(drawn.get("edges", [])) == m.links()["link"].size


# ------------------------------------------------------------------ command line

def test_cli_export_every_format(tmp_path, capsys):
    out = tmp_path / "h.tgt"
    assert main(["export", "hierarchy:4:16:16/1:10:100", "--format", "tleaf", "-o", str(out)]) == 0
    assert out.read_text() == "tleaf 3 16 90 16 9 4 1\n"
    assert main(["export", "torus:8x8x8/16", "--format", "torus", "-o", "-"]) == 0
    assert capsys.readouterr().out == "torus3D 8 8 8\n"
    assert main(["export", "torus:2x2", "--format", "grf", "-o", str(tmp_path / "t.grf")]) == 0
    assert (tmp_path / "t.grf").read_text() == scotch.grf(tm.machine("torus:2x2"))
    assert (tmp_path / "t.vl").read_text() == "4\n0 1 2 3\n"
    assert main(["export", "hierarchy:2:2/1:10", "--format", "simgrid", "-o", str(tmp_path / "p.xml")]) == 0
    assert (tmp_path / "p.xml").read_text() == GOLDEN_PLATFORM
    assert (tmp_path / "p.hosts").read_text() == "node0\nnode0\nnode1\nnode1\n"
    assert main(["export", "torus:2x2/2", "--format", "simgrid", "-o", str(tmp_path / "q.xml"),
                 "--hostfile", str(tmp_path / "ranks"), "--pattern", "stencil2d:4x2", "--method", "cyclic"]) == 0
    alloc = tm.machine("torus:2x2/2").allocate(8)
    mp = tm.map(tm.generators.from_spec("stencil2d:4x2"), alloc, method="cyclic")
    assert (tmp_path / "ranks").read_text() == simgrid.hostfile(alloc, mp)
    assert main(["export", "hierarchy:2:2/1:10", "--format", "dot", "-o", str(tmp_path / "n.dot"),
                 "--pattern", "stencil2d:4x1", "--method", "block"]) == 0
    text = (tmp_path / "n.dot").read_text()
    assert text.startswith("digraph topomap {") and "penwidth=8" in text


@pytest.mark.parametrize("argv, message", [
    (["export", "torus:4x4", "--format", "tleaf", "-o", "-"], "'torus:4x4' has a torus network"),
    (["export", "hierarchy:2:2/1:10", "--format", "tleaf", "-o", "-", "--pattern", "stencil2d:2x2"],
     "--pattern places a job for the simgrid host file and the dot loads, not for tleaf"),
    (["export", "torus:9x9", "--format", "simgrid", "-o", "-", "--max-nodes", "80"], "pass max_nodes=81"),
    (["export", "ring:4", "--format", "grf", "-o", "-"], "unknown machine kind 'ring'"),
    (["export", "torus:2x2", "--format", "dot", "-o", "-", "--pattern", "stencil2d:4x4"],
     "cannot allocate 16 PEs on a machine with 4"),
    (["export", "torus:2x2", "--format", "torus", "-o", "/nonexistent-dir/t.tgt"],
     "cannot write /nonexistent-dir/t.tgt: No such file or directory"),
    (["export", "torus:2x2", "--format", "simgrid", "-o", "-", "--latency", "0"], "latency must be a positive"),
    (["export", "torus:2x2", "--format", "grf", "-o", "/tmp/x.grf", "--list", "/tmp/x.grf"],
     "the .vl companion file would overwrite /tmp/x.grf"),
])
def test_cli_export_errors_exit_2_with_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("topomap export: error: ") and message in err
