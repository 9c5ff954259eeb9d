"""Issue 19 item 6: sizes are estimated from a spec or file before anything is built.

Each case of the issue runs in one child process under RLIMIT_AS (a refusal that
built first would die there or take seconds); every refusal must come in well
under a second and the child's peak memory must stay under 200 MB.  The limits
are then moved to check that the estimate is the builder's own size, exactly.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap

import pytest

import topomap as tm
from test_hardening_readers import PEAK
from topomap.fabric import parse_slurm
from topomap.fabric.json_fabric import loads
from topomap.fabric.model import NodeLimit
from topomap.networks import limits
from topomap.node import levels

CASES = [
    # (what, call, a phrase the refusal must contain)
    ("shortcut:n=100000", "tm.machine('shortcut:n=100000')", "9536 MiB, above the 1024 MiB limit (topomap.networks.limits.MAX_TABLE_BYTES"),
    ("shortcut:n=1000000", "tm.machine('shortcut:n=1000000')", "39000000 directed links, above the limit of 4194304 (topomap.networks.limits.MAX_GRAPH_LINKS)"),
    ("circulant:918636", "tm.machine('circulant:918636')", "34908168 directed links"),
    ("circulant:25664 (2 minutes of table building)", "tm.machine('circulant:25664')", "= 19100585984 search steps, above the limit of 8589934592 (topomap.networks.limits.MAX_ROUTE_WORK"),
    ("circulant:40000:1", "tm.machine('circulant:40000:1')", "40000 vertices x 40000 nodes need 1525 MiB"),
    ("37-byte Slurm file as a machine", "tm.machine('file:' + SLURM)", "more than 32768 compute nodes (max_nodes): the forwarding tables"),
    ("Slurm hostlist over the link cap", "tm.fabric.read_fabric(SLURM2)", "more than 2097152 links (the fabric size cap)"),
    ("JSON cable count", "tm.fabric.read_fabric(JSON)", "more than 2097152 links (the fabric size cap)"),
    ("24-byte synthetic node", "tm.machine('tree:pack:1200 core:2400')", "more than 65536 leaves (the per-node cap topomap.node.levels.MAX_PES)"),
    ("synthetic node under a torus", "tm.machine('torus:64x64x64/pack:64 core:64 pu:64')", "topomap.node.levels.MAX_PES"),
    ("flat node", "tm.machine('torus:4/100000')", "outside 1..65536 (topomap.node.levels.MAX_PES)"),
    ("k-ary tree of 10^8 levels", "tm.machine('fattree:k=1,levels=100000000')", "1 to 32 levels, got 100000000"),
    ("k-port tree of 10^8 levels", "tm.machine('fattree:ports=4,levels=100000000')", "1 to 32 levels, got 100000000"),
    ("hypercube of 10^8 dimensions", "tm.machine('hypercube:100000000')", "exceeds 26"),
    ("endless Slurm stream", "tm.fabric.read_slurm('/dev/zero')", "/dev/zero:1: binary data (a NUL byte)"),
    ("endless JSON stream", "tm.fabric.read_json('/dev/zero')", "/dev/zero:1: binary data (a NUL byte)"),
    ("endless ibnetdiscover stream", "tm.fabric.read_ibnetdiscover('/dev/zero')", "/dev/zero:1: binary data"),
    ("endless route stream", "tm.fabric.read_routes('/dev/zero', tm.fabric.parse_slurm('SwitchName=s Nodes=n[0-1]'))",
     "/dev/zero:1: binary data"),
    ("endless hwloc XML stream", "tm.NodeTree.from_hwloc_xml('/dev/zero')",
     "more than 67108864 bytes, larger than any hwloc XML (topomap.node.hwloc_xml.MAX_XML_BYTES)"),
    ("a 2 MB line", "tm.fabric.read_slurm(LONG)", ":1: a line longer than 1048576 bytes (topomap.fabric.model.MAX_LINE)"),
    ("dragonfly of 10^9 nodes", "tm.machine('dragonfly:g=1000,a=1000,h=1000,p=1000')", "limit 2^31"),
]

CHILD = PEAK + textwrap.dedent("""
    import json, resource, sys, time
    import topomap as tm
    SLURM, SLURM2, JSON, LONG = sys.argv[1:5]
    out = []
    for what, call in json.loads(sys.argv[5]):
        start = time.perf_counter()
        try:
            eval(call)
            message, kind = "", "none"
        except tm.TopomapError as err:
            message, kind = str(err), "TopomapError"
        out.append([what, kind, message, time.perf_counter() - start])
    peak_mb = peak_rss_mb()
    print(json.dumps({"cases": out, "peak_mb": peak_mb}))
""")


def _address_space_3gb() -> None:
    # room for the OpenMP and NumPy address space, not for a built bomb
    resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))


@pytest.fixture(scope="module")
def refusals(tmp_path_factory):
    d = tmp_path_factory.mktemp("bombs")
    slurm = d / "topology.conf"
    slurm.write_text("SwitchName=s1 Nodes=rack[0-1048575]\n")
    assert slurm.stat().st_size <= 37
    slurm2 = d / "two.conf"
    slurm2.write_text("SwitchName=s1 Nodes=a[0-1048576]\n")  # one name more than 2^21 links allow
    fabric = d / "count.json"
    fabric.write_text('{"nodes": ["a", "b"], "links": [{"a": "a", "b": "b", "count": 8388608}]}')
    long_line = d / "long.conf"
    long_line.write_text("SwitchName=s0 Nodes=" + "n" * 2**21 + "\n")
    calls = json.dumps([[what, call] for what, call, _ in CASES])
    res = subprocess.run([sys.executable, "-c", CHILD, str(slurm), str(slurm2), str(fabric), str(long_line), calls],
                         capture_output=True, text=True, timeout=120, preexec_fn=_address_space_3gb)
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    return {what: (kind, message, seconds) for what, kind, message, seconds in report["cases"]}, report["peak_mb"]


@pytest.mark.parametrize("what, call, phrase", CASES, ids=[c[0] for c in CASES])
def test_each_case_is_refused_fast_with_the_limit_named(refusals, what, call, phrase):
    cases, _ = refusals
    kind, message, seconds = cases[what]
    assert kind == "TopomapError", f"{call} was not refused"
    assert phrase in message
    assert seconds < 0.5, f"{call} took {seconds:.2f} s to be refused"


def test_all_refusals_together_stay_under_200_mb(refusals):
    _, peak_mb = refusals
    assert peak_mb < 200


# ------------------------------------------------------------------ the estimates are the builders' sizes
def test_table_estimate_is_the_core_size_exactly(monkeypatch):
    # circulant:64 = C(64; 1, 2, 4, ..., 32): 64 vertices x 64 nodes, 11 ports each -> one byte per entry
    monkeypatch.setattr(limits, "MAX_TABLE_BYTES", 64 * 64)
    assert tm.machine("circulant:64").nlinks == 64 * 11
    monkeypatch.setattr(limits, "MAX_TABLE_BYTES", 64 * 64 - 1)
    with pytest.raises(tm.MachineError, match="64 vertices x 64 nodes need 0 MiB"):
        tm.machine("circulant:64")


def test_route_work_estimate_counts_nodes_vertices_and_links(monkeypatch):
    # circulant:64: 64 nodes x (64 vertices + 704 links) = 49152 search steps
    monkeypatch.setattr(limits, "MAX_ROUTE_WORK", 49152)
    assert tm.machine("circulant:64").nnodes == 64
    monkeypatch.setattr(limits, "MAX_ROUTE_WORK", 49151)
    with pytest.raises(tm.MachineError, match=r"64 nodes x \(64 vertices \+ 704 links\) = 49152 search steps"):
        tm.machine("circulant:64")
    # any shortest-routed graph, checked before the core builds its tables: 2 x (3 + 4) = 14
    net = tm.GraphNetwork(2, 1, src=[0, 2, 1, 2], dst=[2, 0, 2, 1])
    monkeypatch.setattr(limits, "MAX_ROUTE_WORK", 13)
    with pytest.raises(tm.MachineError, match="= 14 search steps"):
        tm.Machine(net, tm.NodeTree.flat(1))
    table = tm.GraphNetwork(2, 1, src=[0, 2, 1, 2], dst=[2, 0, 2, 1], routing="table", routes={(0, 1): [0, 3]})
    assert tm.Machine(table, tm.NodeTree.flat(1)).route(0, 1).tolist() == [0, 3]


def test_link_estimate_is_the_built_link_count(monkeypatch):
    m = tm.machine("shortcut:n=64,d=11,seed=0")
    assert m.nlinks == 64 * 11
    monkeypatch.setattr(limits, "MAX_GRAPH_LINKS", 64 * 11 - 1)
    with pytest.raises(tm.MachineError, match="704 directed links, above the limit of 703"):
        tm.machine("shortcut:n=64,d=11,seed=0")
    with pytest.raises(tm.MachineError, match="704 directed links"):
        tm.networks.Circulant(64, (1, 2, 3, 4, 5, 32)).graph  # 5 jumps x 2 + the jump n/2 once = 11


def test_pe_cap_is_read_at_each_check(monkeypatch):
    monkeypatch.setattr(levels, "MAX_PES", 8)
    assert tm.machine("tree:pack:2 core:4").npes == 8
    with pytest.raises(tm.MachineError, match="more than 8 leaves"):
        tm.machine("tree:pack:3 core:3")
    with pytest.raises(tm.MachineError, match="outside 1..8"):
        tm.machine("torus:4/9")
    monkeypatch.setattr(levels, "MAX_PES", 2**17)
    assert tm.machine("tree:pack:2 core:65536").npes == 2**17


def test_max_nodes_counts_distinct_nodes_in_every_reader():
    text = "SwitchName=s0 Nodes=n[0-3]\nSwitchName=s1 Nodes=n[2-5]\nSwitchName=top Switches=s[0-1]\n"
    assert parse_slurm(text, max_nodes=6).nnodes == 6  # n2, n3 are listed twice, declared once
    with pytest.raises(NodeLimit, match=r"<string>:2: more than 5 compute nodes \(max_nodes\)"):
        parse_slurm(text, max_nodes=5)
    with pytest.raises(NodeLimit, match=r"<string>:1: more than 3 compute nodes"):
        parse_slurm(text, max_nodes=3)  # refused from the hostlist's size, before it is expanded
    doc = json.dumps({"nodes": ["a", "b", "c"], "switches": ["s"],
                      "links": [{"a": x, "b": "s"} for x in "abc"]})
    assert loads(doc, max_nodes=3).nnodes == 3
    with pytest.raises(NodeLimit, match="more than 2 compute nodes"):
        loads(doc, max_nodes=2)


def test_file_spec_limits_only_table_routed_machines(tmp_path, monkeypatch):
    conf = tmp_path / "topology.conf"
    conf.write_text("SwitchName=s0 Nodes=n[0-7]\n")
    monkeypatch.setattr(limits, "MAX_TABLE_BYTES", 7 * 7)  # isqrt: at most 7 nodes
    with pytest.raises(tm.MachineError, match="more than 7 compute nodes"):
        tm.machine(f"file:{conf}")
    with pytest.raises(tm.MachineError, match="more than 7 compute nodes"):
        tm.machine(f"file:{conf},routing=dmodk")
    monkeypatch.setattr(limits, "MAX_TABLE_BYTES", 9 * 9)  # 8 nodes + 1 switch: 9 x 8 bytes
    assert tm.machine(f"file:{conf}").nnodes == 8
