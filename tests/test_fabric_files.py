"""Fabrics from files: JSON, Slurm topology.conf, ibnetdiscover dumps, route files.

Parsing is checked on hand-worked fixtures (tests/data/fabric) whose link ids,
ports and capacities are derived in the comments; every malformed input must
raise FormatError naming file:line; a fuzz test feeds random bytes and mutated
lines to every reader.  The integration tests run the parsed fabrics through
the graph network kind and compare its shortest routes with networkx.
"""

import itertools
import json
import os
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap.fabric import (Fabric, dumps, expand_hostlist, loads, parse_ibnetdiscover, parse_slurm, read_fabric,
                            read_ibnetdiscover, read_json, read_routes, read_slurm, write_routes)

DATA = os.path.join(os.path.dirname(__file__), "data", "fabric")
EXAMPLE = os.path.join(DATA, "example.json")
SLURM = os.path.join(DATA, "topology.conf")
IBND = os.path.join(DATA, "ibnetdiscover_small.txt")
ROUTES = os.path.join(DATA, "routes_small.txt")


def fault(fn, where, *words):
    """fn() must raise FormatError whose message starts with ``where:`` and contains ``words``."""
    with pytest.raises(tm.FormatError) as info:
        fn()
    msg = str(info.value)
    assert msg.startswith(f"{where}:"), msg
    for w in words:
        assert w in msg, msg
    return msg


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(path)


# --------------------------------------------------------------------------- the model
def test_fabric_numbering_ports_and_routes_by_hand():
    # n0 - s0 - n1 with two parallel cables s0 = s1 and n2 on s1
    fab = Fabric(["n0", "n1", "n2"], ["s0", "s1"],
                 src=[0, 3, 1, 3, 3, 4, 3, 4, 2, 4], dst=[3, 0, 3, 1, 4, 3, 4, 3, 4, 2])
    # implicit ports: per source vertex, 1, 2, ... in link-id order
    assert fab.port.tolist() == [1, 1, 1, 2, 3, 1, 4, 2, 1, 3]
    assert fab.resolve_route(["n0", "s0", "s1", "n2"]) == (0, 4, 9)        # bare: lowest id s0->s1 is link 4
    assert fab.resolve_route(["n0", "s0[4]", "s1", "n2"]) == (0, 6, 9)     # port 4 of s0 is link 6
    assert fab.route_hops([0, 6, 9]) == ["n0", "s0[4]", "s1", "n2"]
    assert fab.route_hops([0, 4, 9]) == ["n0", "s0", "s1", "n2"]
    assert fab.ports().tolist() == [1, 1, 1, 4, 3]
    assert fab.vertex("s1") == 4 and fab.node("n2") == 2


@pytest.mark.parametrize("kwargs, words", [
    (dict(nodes=[], switches=["s"], src=[], dst=[]), ["at least one compute node"]),
    (dict(nodes=["a", "a"], switches=[], src=[0, 1], dst=[1, 0]), ["declared twice"]),
    (dict(nodes=["a b"], switches=[], src=[], dst=[]), ["whitespace"]),
    (dict(nodes=["a", "b"], switches=[], src=[0, 1], dst=[1, 5]), ["outside [0, 2)"]),
    (dict(nodes=["a", "b"], switches=[], src=[0, 1, 1], dst=[1, 0, 1]), ["to itself"]),
    (dict(nodes=["a", "b"], switches=[], src=[0, 1], dst=[1, 0], capacity=[1, -2]), ["finite and > 0"]),
    (dict(nodes=["a", "b"], switches=[], src=[0, 1], dst=[1, 0], capacity=[1, np.nan]), ["finite and > 0"]),
    (dict(nodes=["a", "b"], switches=["s"], src=[0, 1], dst=[1, 0]), ["disconnected", "'s'"]),
    (dict(nodes=["a", "b", "c"], switches=[], src=[0, 1], dst=[1, 0]), ["disconnected", "'c'"]),
    (dict(nodes=["a", "b"], switches=[], src=[0], dst=[1]), ["disconnected", "'b' cannot reach"]),
    (dict(nodes=["a", "b"], switches=[], src=[0, 1, 0], dst=[1, 0, 1], port=[3, 1, -1]), ["numbered ports"]),
    (dict(nodes=["a", "b"], switches=[], src=[0, 1, 0], dst=[1, 0, 1], port=[3, 1, 3]), ["port 3", "two links"]),
    (dict(nodes=["a", "b"], switches=[], src=[0, 1], dst=[1, 0], port=[0, 1]), ["not a positive port"]),
    (dict(nodes=["a", "b"], switches=[], src=[0, 1], dst=[1, 0], aliases={"a": 1}), ["already the name"]),
    (dict(nodes=["a", "b"], switches=[], src=[0.5, 1], dst=[1, 0]), ["integers"]),
    (dict(nodes=["a", "b"], switches=[], src=[0, 1], dst=[1, 0], capacity=["x", 1]), ["must be numbers"]),
    (dict(nodes=["a", "b"], switches=[], src=[0, 1], dst=[1, 0], capacity=[1, 1, 1]), ["one entry per link"]),
    (dict(nodes=["a", "b"], switches=[], src=[0, 1], dst=[1]), ["2 link sources but 1"]),
])
def test_fabric_refuses_bad_values_with_machine_error(kwargs, words):
    with pytest.raises(tm.MachineError) as info:
        Fabric(**kwargs)
    assert not isinstance(info.value, tm.FormatError)
    for w in words:
        assert w in str(info.value)


@given(st.integers(1, 4), st.integers(0, 3), st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=14))
def test_connectivity_check_matches_brute_force(nn, ns, edges):
    # reference: every vertex reaches node 0 and back, and every node reaches every other node along a
    # path whose inner vertices are switches (any vertex when there are no switches)
    nv = nn + ns
    edges = [(a % nv, b % nv) for a, b in edges if a % nv != b % nv]

    def reach(start, inner_ok, rev=False):
        seen, todo = {start}, [start]
        while todo:
            v = todo.pop()
            if v != start and not inner_ok(v):
                continue
            for a, b in edges:
                x, y = (b, a) if rev else (a, b)
                if x == v and y not in seen:
                    seen.add(y)
                    todo.append(y)
        return seen

    anything = lambda v: True  # noqa: E731
    forwards = anything if not ns else (lambda v: v >= nn)
    valid = (len(reach(0, anything)) == nv and len(reach(0, anything, rev=True)) == nv
             and all(len(reach(a, forwards) & set(range(nn))) == nn for a in range(nn)))
    names = [f"n{i}" for i in range(nn)], [f"s{i}" for i in range(ns)]
    src, dst = [a for a, _ in edges], [b for _, b in edges]
    if valid:
        Fabric(*names, np.array(src, int), np.array(dst, int))
    else:
        with pytest.raises(tm.MachineError, match="disconnected"):
            Fabric(*names, np.array(src, int), np.array(dst, int))


@pytest.mark.parametrize("routes, words", [
    ({(0, 1): [0, 3]}, None),
    ({(0, 1): [0]}, "ends at 's'"),
    ({(0, 1): [2, 3]}, "leaves 'b'"),
    ({(0, 1): [0, 9]}, "link 9 does not exist"),
    ({(0, 0): [0, 1]}, "two distinct nodes"),
    ({(0, 1): []}, "empty"),
    ({(0, 7): [0, 3]}, "vertex 7 is out of range"),
    ({0: [0]}, "(source, destination) node pair"),
])
def test_explicit_routes_are_connected_walks(routes, words):
    fab = Fabric(["a", "b"], ["s"], [0, 2, 1, 2], [2, 0, 2, 1])
    if words is None:
        assert fab.with_routes(routes).routes == {(0, 1): (0, 3)}
        return
    with pytest.raises(tm.MachineError, match=re.escape(words)):
        fab.with_routes(routes)


def test_only_switches_forward_unless_there_are_none():
    # a - b - c in a line with no switch: a direct network, b must forward
    line = Fabric(["a", "b", "c"], [], [0, 1, 1, 2], [1, 0, 2, 1])
    assert line.resolve_route(["a", "b", "c"]) == (0, 2)
    # the same line with a switch joined to all three: now b is an end point only
    fab = Fabric(["a", "b", "c"], ["s"], [0, 1, 1, 2, 0, 3, 1, 3, 2, 3], [1, 0, 2, 1, 3, 0, 3, 1, 3, 2])
    with pytest.raises(tm.MachineError, match="passes through compute node 'b'"):
        fab.resolve_route(["a", "b", "c"])
    with pytest.raises(tm.MachineError, match="compute node 'b'"):
        fab.with_routes({(0, 2): [0, 2]})


# --------------------------------------------------------------------------- JSON
def test_example_json_by_hand():
    fab = read_json(EXAMPLE)
    assert fab.nodes == ("n0", "n1", "n2", "n3") and fab.switches == ("leaf0", "leaf1", "spine")
    # cables in file order, each a -> b then b -> a; count 2 gives two pairs in a row
    assert fab.src.tolist() == [0, 4, 1, 4, 2, 5, 3, 5, 4, 6, 4, 6, 5, 6, 5, 6]
    assert fab.dst.tolist() == [4, 0, 4, 1, 5, 2, 5, 3, 6, 4, 6, 4, 6, 5, 6, 5]
    assert fab.capacity.tolist() == [1.0] * 8 + [2.0] * 8
    # leaf0 leaves through links 1 (to n0), 3 (to n1), 8, 10 (to spine): ports 1..4
    assert fab.port[[1, 3, 8, 10]].tolist() == [1, 2, 3, 4]
    assert fab.aliases == {"login": 0}
    # n0->n1: 0 (n0->leaf0), 3 (leaf0->n1);
    # n0->n2 via leaf0[4] = link 10, spine->leaf1 lowest id = 13, leaf1->n2 = 5;
    # n0->n3 ("login"): leaf0->spine lowest = 8, spine[4] = its 4th out link = 15, leaf1->n3 = 7
    assert fab.routes == {(0, 1): (0, 3), (0, 2): (0, 10, 13, 5), (0, 3): (0, 8, 15, 7)}


def test_example_json_is_the_documented_schema():
    with open(EXAMPLE) as f:
        doc = json.load(f)
    from topomap.fabric import json_fabric
    for key in doc:
        assert f'"{key}"' in json_fabric.__doc__
    for link in doc["links"]:
        for key in link:
            assert f'"{key}"' in json_fabric.__doc__


@pytest.mark.parametrize("path", [EXAMPLE, SLURM, IBND])
def test_json_round_trip_of_every_fixture(path, tmp_path):
    fab = read_fabric(path)
    out = tmp_path / "again.json"
    tm.fabric.write_json(fab, out)
    again = read_json(out)
    assert again == fab
    assert again.port.tolist() == fab.port.tolist()


def test_json_round_trip_keeps_parallel_cables_grouped():
    fab = read_json(EXAMPLE)
    doc = json.loads(dumps(fab))
    assert {"a": "leaf0", "b": "spine", "capacity": 2.0, "count": 2} in doc["links"]


@st.composite
def random_fabrics(draw):
    """Valid random fabrics: switches joined by a random spanning tree, each node cabled to a random
    switch (or, without switches, the nodes joined by a tree), plus extra one-way and parallel links."""
    nn = draw(st.integers(1, 5))
    ns = draw(st.integers(0, 4))
    nv = nn + ns
    src, dst, cap = [], [], []

    def cable(a, b):
        c = draw(st.sampled_from([1.0, 2.0, 0.5]))
        for _ in range(draw(st.integers(1, 2))):
            src.extend([a, b])
            dst.extend([b, a])
            cap.extend([c, c])

    core = list(range(nn, nv)) if ns else list(range(nn))
    order = draw(st.permutations(core))
    for k in range(1, len(order)):
        cable(order[k], order[draw(st.integers(0, k - 1))])
    for v in range(nn if ns else 0):
        cable(v, draw(st.sampled_from(core)))
    for _ in range(draw(st.integers(0, 4))):
        a, b = draw(st.integers(0, nv - 1)), draw(st.integers(0, nv - 1))
        if a != b:
            src.append(a)
            dst.append(b)
            cap.append(draw(st.sampled_from([1.0, 3.0])))
    port = None
    if draw(st.booleans()):
        port = np.zeros(len(src), int)
        for v in range(nv):
            idx = [i for i, s in enumerate(src) if s == v]
            port[idx] = draw(st.permutations(range(1, len(idx) + 1)))
            port[idx] += draw(st.integers(0, 3))
    return Fabric([f"n{i}" for i in range(nn)], [f"s{i}" for i in range(ns)], np.array(src, int),
                  np.array(dst, int), capacity=cap, port=port)


@given(random_fabrics())
def test_json_round_trip_of_random_fabrics(fab):
    again = loads(dumps(fab))
    assert again == fab


@pytest.mark.parametrize("text, line, words", [
    ('{"nodes": ["a"], "links": [}', 1, ["not valid JSON"]),
    ('{\n "nodes": ["a", "b"],\n "switches": ["s"],\n "links": [\n  {"a": "a", "b": "s"},\n  {"a": "b", "b": "t"}\n ]\n}',
     6, ["link to nowhere", "'t'"]),
    ('{\n "nodes": ["a", "b"],\n "switches": ["a"],\n "links": []\n}', 3, ["'a' is declared twice", "first at"]),
    ('{\n "nodes": ["a"],\n "links": [],\n "cables": []\n}', 1, ["unknown key 'cables'"]),
    ('{\n "nodes": ["a", "b"],\n "links": [\n  {"a": "a", "b": "b", "capcity": 2}\n ]\n}', 4, ["unknown link key 'capcity'"]),
    ('{\n "nodes": ["a", "b"],\n "links": [\n  {"a": "a", "b": "b",\n   "capacity": "fast"}\n ]\n}', 5,
     ["capacity must be a number"]),
    ('{\n "nodes": ["a", "b"],\n "links": [\n  {"a": "a", "b": "b", "capacity": -1}\n ]\n}', 4, ["finite and > 0"]),
    ('{\n "nodes": ["a", "b"],\n "links": [\n  {"a": "a", "b": "b", "capacity": NaN}\n ]\n}', 4, ["finite and > 0"]),
    ('{\n "nodes": ["a", "b"],\n "links": [\n  {"a": "a", "b": "b", "capacity": 1e999}\n ]\n}', 4, ["finite and > 0"]),
    ('{\n "nodes": ["a", "b"],\n "links": [\n  {"a": "a", "b": "b",\n "count": 0}\n ]\n}', 4, ["count must be a positive"]),
    ('{\n "nodes": ["a", "b"],\n "links": [\n  {"a": "a", "b": "b",\n "count": 1.5}\n ]\n}', 5, ["count must be an integer"]),
    ('{\n "nodes": ["a", "b"],\n "links": [\n  {"a": "a", "b": "b", "count": 100000000}\n ]\n}', 4, ["size cap"]),
    ('{\n "nodes": ["a", "b"],\n "links": [\n  {"a": "a", "b": "b", "count": 2, "a": "b"}\n ]\n}', 4, ["appears twice"]),
    ('{\n "nodes": ["a", "b"],\n "links": [\n  {"a": "a[1]", "b": "b", "count": 2}\n ]\n}', 4, ["cannot name ports"]),
    ('{\n "nodes": ["a", "b"],\n "links": [\n  {"a": "a[x]", "b": "b"}\n ]\n}', 4, ["optional [port]"]),
    ('{\n "nodes": ["a", "b"],\n "links": [\n  {"a": "a", "b": "b", "bidirectional": "yes"}\n ]\n}', 4,
     ["bidirectional must be true or false"]),
    ('{\n "nodes": ["a", 7],\n "links": []\n}', 2, ["a name in 'nodes' must be a string"]),
    ('{\n "nodes": ["a", "b", "c"],\n "switches": ["s"],\n "links": [\n  {"a": "a", "b": "s"},\n'
     '  {"a": "b", "b": "s"}\n ]\n}', 2, ["disconnected", "'c'"]),
    ('{\n "nodes": ["a", "b"],\n "switches": ["s", "t"],\n "links": [\n  {"a": "a", "b": "s"},\n'
     '  {"a": "b", "b": "s"}\n ]\n}', 3, ["disconnected", "'t'"]),
    ('{"nodes": ["a", "b"], "switches": ["s"],\n "links": [{"a": "a", "b": "s"}, {"a": "b", "b": "s"}],\n'
     ' "routes": [\n  ["a", "s", "b"],\n  ["a", "b"]\n ]}', 5, ["no link from 'a' to 'b'"]),
    ('{"nodes": ["a", "b"], "switches": ["s"],\n "links": [{"a": "a", "b": "s"}, {"a": "b", "b": "s"}],\n'
     ' "routes": [\n  ["a", "s"]\n ]}', 4, ["ends at switch 's'"]),
    ('{"nodes": ["a", "b"], "switches": ["s"],\n "links": [{"a": "a", "b": "s"}, {"a": "b", "b": "s"}],\n'
     ' "routes": [\n  ["a", "s", "b"],\n  ["a", "s", "b"]\n ]}', 5, ["second route a -> b", ":4)"]),
    ('{"nodes": ["a", "b"], "switches": ["s"],\n "links": [{"a": "a", "b": "s"}, {"a": "b", "b": "s"}],\n'
     ' "routes": [\n  ["a", "s[1]", "b"]\n ]}', 4, ["port 1 of 's' leads to 'a', not 'b'"]),
    ('{"nodes": ["a", "b"], "switches": ["s"],\n "links": [{"a": "a", "b": "s"}, {"a": "b", "b": "s"}],\n'
     ' "routes": [\n  ["a", "s[9]", "b"]\n ]}', 4, ["has no port 9"]),
    ('{"nodes": ["a", "b"], "switches": ["s"],\n "links": [{"a": "a", "b": "s"}, {"a": "b", "b": "s"}],\n'
     ' "routes": [\n  ["a", "q", "b"]\n ]}', 4, ["'q' is not a node or switch"]),
    ('{"nodes": ["a", "b"],\n "links": [{"a": "a", "b": "b"}],\n "format": "other"}', 3, ["format must be"]),
    ('{"nodes": ["a", "b"],\n "links": [{"a": "a", "b": "b"}],\n "version": 2}', 3, ["only version 1"]),
    ('[1, 2]', 1, ["a fabric description must be an object, got a list"]),
    ('{"links": []}', 1, ["no 'nodes' list"]),
    ("[" * 100 + "]" * 100, 1, ["nested deeper"]),
    ('{\n "nodes": ["a", "b"],\n "links": [\n  {"a": "a", "b": "b", "count": 1' + "0" * 5000 + '}\n ]\n}', 4,
     ["digits"]),
])
def test_json_faults_name_file_and_line(tmp_path, text, line, words):
    path = write(tmp_path, "bad.json", text)
    fault(lambda: read_json(path), f"{path}:{line}", *words)


def test_json_without_nodes_names_the_file(tmp_path):
    path = write(tmp_path, "empty.json", '{"nodes": [], "links": []}')
    fault(lambda: read_json(path), path, "no compute nodes")


def test_json_truncated_and_binary(tmp_path):
    text = open(EXAMPLE).read()
    cut = text[: text.index('"routes"') + 20]
    path = write(tmp_path, "cut.json", cut)
    fault(lambda: read_json(path), f"{path}:{cut.count(chr(10)) + 1}", "not valid JSON")
    raw = text.encode()[:200] + b"\xff\xfe\x00garbage"
    path = write(tmp_path, "bin.json", raw)
    line = raw[:200].count(b"\n") + 1
    fault(lambda: read_json(path), f"{path}:{line}", "not UTF-8")


def test_missing_file_is_a_format_error(tmp_path):
    path = str(tmp_path / "nope.json")
    fault(lambda: read_fabric(path), path, "cannot read")
    fault(lambda: read_slurm(path), path, "cannot read")


# --------------------------------------------------------------------------- Slurm
@pytest.mark.parametrize("expr, names", [
    ("tux[0-3,12,18-20]", ["tux0", "tux1", "tux2", "tux3", "tux12", "tux18", "tux19", "tux20"]),
    ("s[0-2,4-8,12]", ["s0", "s1", "s2", "s4", "s5", "s6", "s7", "s8", "s12"]),
    ("n[08-10]", ["n08", "n09", "n10"]),
    ("n[8-10]", ["n8", "n9", "n10"]),
    ("rack[1-2]n[01-02]", ["rack1n01", "rack1n02", "rack2n01", "rack2n02"]),
    ("a,b[1-2]-ib,c", ["a", "b1-ib", "b2-ib", "c"]),
    ("plain", ["plain"]),
])
def test_hostlists(expr, names):
    assert expand_hostlist(expr) == names


@pytest.mark.parametrize("expr, words", [
    ("n[3-1]", "backwards"), ("n[1-2", "unclosed"), ("n[[1]]", "nested"), ("n[a]", "not a number"),
    ("a,,b", "empty name"), ("n]1[", "unbalanced"), ("n[0-99999999]", "more than"),
    ("a[0-999]b[0-9999]", "more than"), ("n[]", "not a number"),
])
def test_bad_hostlists(expr, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        expand_hostlist(expr)


@given(st.text("abcxyz-", min_size=1, max_size=4),
       st.lists(st.tuples(st.integers(0, 120), st.integers(0, 5)), min_size=1, max_size=4),
       st.integers(1, 3))
def test_hostlist_matches_its_definition(prefix, ranges, width):
    # the expression is built from explicit names; expanding it must give them back in order
    names, parts = [], []
    for lo, extent in ranges:
        parts.append(f"{lo:0{width}d}-{lo + extent:0{width}d}" if extent else f"{lo:0{width}d}")
        names += [prefix + f"{k:0{width}d}" for k in range(lo, lo + extent + 1)]
    assert expand_hostlist(f"{prefix}[{','.join(parts)}]") == names


def test_topology_conf_by_hand():
    fab = read_slurm(SLURM)
    nodes = [f"tux{i}" for i in range(8)] + ["rack1n01", "rack1n02", "rack2n01", "rack2n02"]
    assert fab.nodes == tuple(nodes)
    assert fab.switches == ("s0", "s1", "s2", "top")
    # node ids 0..11, switches 12..15; cables line by line: s0-tux0..3, s1-tux4..7, s2-rack*, top-s0..s2
    a = [12] * 4 + [13] * 4 + [14] * 4 + [15] * 3
    b = list(range(12)) + [12, 13, 14]
    assert fab.src.tolist() == [x for pair in zip(a, b) for x in pair]
    assert fab.dst.tolist() == [x for pair in zip(b, a) for x in pair]
    # LinkSpeed of the listing switch; s2 has none (1)
    assert fab.capacity.tolist() == [40.0] * 16 + [1.0] * 8 + [80.0] * 6
    assert fab.origin.vertex[fab.vertex("s2")] == f"{SLURM}:5"     # the continued line starts on line 5


@pytest.mark.parametrize("text, line, words", [
    ("SwitchName=s0 Nodes=a,b\nSwitchName=s1 Switches=s0,s9\n", 2, ["unknown switch 's9'"]),
    ("SwitchName=s0 Nodes=a,b\nSwitchName=s0 Nodes=c\n", 2, ["'s0' is declared twice", "first at"]),
    ("SwitchName=s0 Nodes=a,b Speed=3\n", 1, ["unknown parameter 'Speed'"]),
    ("BlockName=b1 Nodes=a[1-4]\n", 1, ["topology/block"]),
    ("Nodes=a,b\n", 1, ["must name its switch"]),
    ("SwitchName=s0 Nodes=a,b LinkSpeed=fast\n", 1, ["LinkSpeed 'fast' is not a number"]),
    ("SwitchName=s0 Nodes=a,b LinkSpeed=-4\n", 1, ["LinkSpeed must be finite"]),
    ("SwitchName=s0 Nodes=a,b LinkSpeed=inf\n", 1, ["LinkSpeed must be finite"]),
    ("# ok\nSwitchName=s0 Nodes=a[1-2],a2\n", 2, ["'a2' is listed twice"]),
    ("SwitchName=s0 Nodes=a,b\nSwitchName=s1 Nodes=s0\n", 2, ["listed as a node but is a switch"]),
    ("SwitchName=s0 Nodes=a Switches=s1\nSwitchName=s1 Nodes=b Switches=s2\nSwitchName=s2 Switches=s0\n", 3,
     ["loops", "s0 -> s1 -> s2 -> s0"]),
    ("SwitchName=s0 Nodes=a Switches=s0\n", 1, ["loops", "s0 -> s0"]),
    ("SwitchName=s0 Nodes=a,b\nSwitchName=s1 Nodes=c,d\n", 2, ["disconnected", "'c' cannot be reached"]),
    ("SwitchName=s0 Nodes=a,b\nSwitchName=s1\n", 2, ["disconnected", "'s1'"]),
    ("SwitchName=s0 Nodes=a,b \\\n", 1, ["ends inside a line continued"]),
    ("SwitchName=s0 Nodes=a[0-3\n", 1, ["unclosed"]),
    ("SwitchName=s[0-1] Nodes=a\n", 1, ["one switch name"]),
    ("SwitchName=s0 Nodes=a Nodes=b\n", 1, ["given twice"]),
    ("SwitchName=s0 Nodes=\n", 1, ["Key=Value"]),
    ("SwitchName=s0 Nodes=n[0-99999999]\n", 1, ["more than"]),
    ("# switches only\nSwitchName=s0\nSwitchName=s1 Switches=s0\n", 2, ["no compute nodes"]),
])
def test_slurm_faults_name_file_and_line(tmp_path, text, line, words):
    path = write(tmp_path, "topology.conf", text)
    fault(lambda: read_slurm(path), f"{path}:{line}", *words)


def test_slurm_empty_and_binary(tmp_path):
    path = write(tmp_path, "empty.conf", "# nothing\n\n")
    fault(lambda: read_slurm(path), path, "no SwitchName")
    path = write(tmp_path, "bin.conf", b"SwitchName=s0 Nodes=a\n\x00\x01\x02")
    fault(lambda: read_slurm(path), f"{path}:2", "NUL")


def test_slurm_multi_parent_and_multi_homed():
    # two top switches over the same leaves (a fat tree written as Slurm lines), node c on both leaves
    fab = parse_slurm("SwitchName=l0 Nodes=a,c\nSwitchName=l1 Nodes=b,c\n"
                      "SwitchName=t0 Switches=l[0-1]\nSwitchName=t1 Switches=l[0-1]\n")
    assert fab.nodes == ("a", "c", "b")
    # a, c, b, then l0 (a, c, t0, t1), l1 (b, c, t0, t1), t0 and t1 (l0, l1)
    assert fab.ports().tolist() == [1, 2, 1, 4, 4, 2, 2]


# --------------------------------------------------------------------------- ibnetdiscover
def test_ibnetdiscover_fixture_by_hand():
    fab = read_ibnetdiscover(IBND)
    # adapters in block order; the two "oss01" adapters share a host name, so keep their ids
    assert fab.nodes == ("node001", "node002", "node003", "node004", "node005", "node006",
                         "H-0002c90300a0c010", "H-0002c90300a0c020")
    # switches in block order: spine01, spine02, leaf01, leaf02
    assert fab.switches == ("S-0002c903004a1c00", "S-0002c903004a1d00", "S-0002c903004a1a00", "S-0002c903004a1b00")
    assert fab.vertex("H-0002c90300a0b010") == fab.vertex("node001") == 0
    # 8 adapter cables + 8 uplinks = 16 cables = 32 links; cables in order of first listing:
    # spine01[1..4], spine02[1..4], leaf01[1..5], leaf02[1..3]
    assert fab.nlinks == 32
    assert fab.port[0::2].tolist() == [1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 5, 1, 2, 3]
    assert fab.port[1::2].tolist() == [31, 32, 31, 32, 33, 34, 33, 34, 1, 1, 1, 1, 1, 1, 1, 1]
    # 4xQDR = 4 lanes x 8 Gb/s; the spine02[4] -- leaf02[34] cable trained at 1x: 8
    assert fab.capacity.tolist() == [32.0] * 14 + [8.0] * 2 + [32.0] * 16
    # the dump lists every cable from both ends: its [port] lines are twice the cables
    with open(IBND) as f:
        assert sum(1 for line in f if line.startswith("[")) == fab.nlinks


def test_ibnetdiscover_without_speeds_has_unit_capacity():
    text = re.sub(r" \d+x[A-Z]+\d*$", "", open(IBND).read(), flags=re.M)
    fab = parse_ibnetdiscover(text)
    assert fab.capacity.tolist() == [1.0] * 32


def _edit(text, old, new, count=1):
    assert old in text, old
    return text.replace(old, new, count)


IBND_TEXT = open(IBND).read()


@pytest.mark.parametrize("edit, marker, words", [
    # the spine02 side says 4x, the leaf02 side 1x
    (lambda t: _edit(t, '"S-0002c903004a1b00"[34]\t\t# "MF0;leaf02:IS5030/U1" lid 2 1xQDR',
                     '"S-0002c903004a1b00"[34]\t\t# "MF0;leaf02:IS5030/U1" lid 2 4xQDR'),
     '[4]\t"S-0002c903004a1b00"[34]', ["different width/speed"]),
    # node001's block removed: leaf01's port 1 goes nowhere
    (lambda t: re.sub(r'vendid=0x2c9\ndevid=0x673c\nsysimgguid=0x2c90300a0b013\n.*?\n\n', "", t, flags=re.S),
     '[1]\t"H-0002c90300a0b010"', ["link to nowhere", "H-0002c90300a0b010"]),
    # node001 lists its cable on the wrong switch port
    (lambda t: _edit(t, '"S-0002c903004a1a00"[1]\t\t# lid 10', '"S-0002c903004a1a00"[2]\t\t# lid 10'),
     '[1]\t"H-0002c90300a0b010"', ["but that port leads to S-0002c903004a1a00[2]"]),
    (lambda t: t + '\nCa\t2 "H-0002c90300a0b010"\t\t# "again"\n', '"again"', ["listed twice"]),
    (lambda t: _edit(t, '[1](2c90300a0b011) \t"S', '[3](2c90300a0b011) \t"S'), '[3](2c90300a0b011)',
     ["port 3 of H-0002c90300a0b010, which has 2 ports"]),
    (lambda t: _edit(t, 'Ca\t2 "H-0002c90300a0b010"', 'Switch\t2 "H-0002c90300a0b010"'),
     'Switch\t2 "H-0002c90300a0b010"', ["cannot have the id"]),
    (lambda t: _edit(t, "4xQDR", "3xQDR"), '[1]\t"S-0002c903004a1a00"[31]', ["not an InfiniBand width"]),
    (lambda t: _edit(t, '# "node001 HCA-1" lid 10 4xQDR', '# "node001 HCA-1" lid 10'),
     '[1]\t"H-0002c90300a0b010"', ["no width/speed"]),
    (lambda t: _edit(t, '[5]\t"H-0002c90300a0c020"[1]', '[5]\t"H-0002c90300a0c020[1]'),
     '[5]\t"H-0002c90300a0c020', ["not an ibnetdiscover line"]),
    (lambda t: _edit(t, '[2]\t"H-0002c90300a0b020"', '[1]\t"H-0002c90300a0b020"'),
     '[1]\t"H-0002c90300a0b020"', ["port 1 of S-0002c903004a1a00 is listed twice"]),
])
def test_ibnetdiscover_faults_name_file_and_line(tmp_path, edit, marker, words):
    text = edit(IBND_TEXT)
    path = write(tmp_path, "dump.txt", text)
    line = 1 + text[:text.index(marker)].count("\n")
    fault(lambda: read_ibnetdiscover(path), f"{path}:{line}", *words)


def test_ibnetdiscover_truncated_and_garbage(tmp_path):
    cut = IBND_TEXT[: IBND_TEXT.index('Ca\t2 "H-0002c90300a0b050"')]
    path = write(tmp_path, "cut.txt", cut)
    # the dump stops just after node005's header lines: they have no Ca line
    fault(lambda: read_ibnetdiscover(path), f"{path}:{cut.count(chr(10)) - 3}", "truncated")
    cut = IBND_TEXT[: IBND_TEXT.index('vendid=0x2c9\ndevid=0x673c\nsysimgguid=0x2c90300a0c013')]
    path = write(tmp_path, "cut2.txt", cut)
    # the oss01 blocks are missing: leaf01's port 5 (processed before leaf02's port 3) goes nowhere
    line = 1 + IBND_TEXT[:IBND_TEXT.index('[5]\t"H-0002c90300a0c020"')].count("\n")
    fault(lambda: read_ibnetdiscover(path), f"{path}:{line}", "link to nowhere")
    path = write(tmp_path, "junk.txt", "[1] hello\n")
    fault(lambda: read_ibnetdiscover(path), f"{path}:1", "not an ibnetdiscover line")
    path = write(tmp_path, "orphan.txt", '[1]\t"S-01"[1]\n')
    fault(lambda: read_ibnetdiscover(path), f"{path}:1", "outside a Switch/Ca block")
    path = write(tmp_path, "none.txt", "# only comments\n")
    fault(lambda: read_ibnetdiscover(path), path, "no Switch or Ca blocks")


# --------------------------------------------------------------------------- route files
def test_route_file_by_hand():
    fab = read_ibnetdiscover(IBND)
    routes = read_routes(ROUTES, fab)
    # link ids (see test_ibnetdiscover_fixture_by_hand): spine01->leaf01 cables are links 0,2 (back 1,3),
    # spine01->leaf02 4,6 (5,7), spine02->leaf01 8,10 (9,11), spine02->leaf02 12,14 (13,15);
    # leaf01->node001 16 (back 17), ->node002 18 (19); leaf02->node005 26 (27)
    assert routes == {
        (0, 1): (17, 18),
        (0, 4): (17, 3, 6, 26),        # leaf01[32] is link 3, spine01[4] is link 6
        (1, 0): (19, 16),
        (1, 4): (19, 9, 12, 26),       # leaf01[33] -> spine02, spine02[3] -> leaf02
        (4, 0): (27, 15, 8, 16),       # leaf02[34] is the 1x cable (link 15), spine02[1] -> leaf01
        (4, 1): (27, 5, 2, 18),        # the line starts with node005's GUID id
    }
    assert read_routes(ROUTES, fab, among=["node001", "node002"]) == {(0, 1): (17, 18), (1, 0): (19, 16)}
    assert set(read_routes(ROUTES, fab, touching=[4])) == {(0, 4), (1, 4), (4, 0), (4, 1)}
    assert read_routes(ROUTES, fab, among=[0, 1, 4], complete=True) == routes
    fault(lambda: read_routes(ROUTES, fab, among=[0, 1, 2], complete=True), ROUTES,
          "no route from 'node001' to 'node003'")


@pytest.mark.parametrize("line, words", [
    ("S-0002c903004a1a00 node001 node002", ["must start and end at compute nodes", "is a switch"]),
    ("node001 S-0002c903004a1a00 node099", ["'node099' is not a node of the fabric"]),
    ("node001 S-0002c903004a1a00 node001", ["to itself"]),
    ("node001 S-0002c903004a1a00[31] S-0002c903004a1b00 node005", ["leads to 'S-0002c903004a1c00'"]),
    ("node001 S-0002c903004a1a00[36] S-0002c903004a1c00 S-0002c903004a1b00 node005", ["has no port 36"]),
    ("node001 S-0002c903004a1a00 node003 S-0002c903004a1a00 node002", ["passes through compute node"]),
    ("node001 S-0002c903004a1a00 S-0002c903004a1b00 node005", ["no link from"]),
    ("node001[x] S-0002c903004a1a00 node002", ["optional [port]"]),
    ("node001 S-0002c903004a1a00 node002[1]", ["cannot name an output port"]),
])
def test_route_file_faults_name_file_and_line(tmp_path, line, words):
    fab = read_ibnetdiscover(IBND)
    path = write(tmp_path, "routes.txt", "# header\n\n" + line + "\n")
    fault(lambda: read_routes(path, fab), f"{path}:3", *words)


def test_route_file_duplicates_and_truncation(tmp_path):
    fab = read_ibnetdiscover(IBND)
    text = open(ROUTES).read()
    path = write(tmp_path, "dup.txt", text + "node001 S-0002c903004a1a00 node002\n")
    fault(lambda: read_routes(path, fab), f"{path}:{text.count(chr(10)) + 1}", "second route", "line 4")
    # cut in the middle of the last line's last name: the end is no node
    cut = text.rstrip("\n")[:-3]
    path = write(tmp_path, "cut.txt", cut)
    fault(lambda: read_routes(path, fab), f"{path}:{cut.count(chr(10)) + 1}", "'node' is not a node")
    # cut just after a switch name: the route ends at a switch
    cut = text[: text.index("S-0002c903004a1b00 node005") + len("S-0002c903004a1b00")]
    path = write(tmp_path, "cut2.txt", cut)
    fault(lambda: read_routes(path, fab), f"{path}:{cut.count(chr(10)) + 1}", "is a switch")
    path = write(tmp_path, "bin.txt", b"node001 S-0002c903004a1a00 node002\n\xc3\x28\n")
    fault(lambda: read_routes(path, fab), f"{path}:2", "not UTF-8")


def test_route_file_is_read_lazily(tmp_path):
    # a route that is not asked for is not resolved: its broken middle hop goes unnoticed ...
    fab = read_ibnetdiscover(IBND)
    text = open(ROUTES).read() + "node003 S-0002c903004a1a00[99] node004\n"
    path = write(tmp_path, "routes.txt", text)
    assert len(read_routes(path, fab, among=[0, 1, 4])) == 6
    # ... but it is when its pair is wanted
    fault(lambda: read_routes(path, fab, touching=["node004"]), f"{path}:{text.count(chr(10))}", "no port 99")


# --------------------------------------------------------------------------- format sniffing
def test_read_fabric_sniffs_formats(tmp_path):
    for src, name in [(EXAMPLE, "fab"), (SLURM, "topo"), (IBND, "dump")]:
        path = write(tmp_path, name, open(src).read())
        assert read_fabric(path) == read_fabric(src)
    path = write(tmp_path, "what", "hello world\n")
    fault(lambda: read_fabric(path), f"{path}:1", "cannot tell the fabric format")
    path = write(tmp_path, "empty", "\n# x\n")
    fault(lambda: read_fabric(path), path, "empty")
    fault(lambda: read_fabric(EXAMPLE, format="yaml"), EXAMPLE, "unknown fabric format 'yaml'")


# --------------------------------------------------------------------------- fuzzing
READERS = {"json": read_json, "slurm": read_slurm, "ibnetdiscover": read_ibnetdiscover}
FIXTURES = {"json": EXAMPLE, "slurm": SLURM, "ibnetdiscover": IBND}


def survive(reader, path):
    """A reader either returns a valid Fabric or raises FormatError; nothing else."""
    try:
        fab = reader(path)
    except tm.FormatError as err:
        assert str(err).startswith(str(path)), err
        return None
    assert isinstance(fab, Fabric) and fab.nnodes >= 1
    return fab


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(READERS)), st.binary(max_size=400))
def test_fuzz_random_bytes(tmp_path_factory, fmt, data):
    path = tmp_path_factory.mktemp("fuzz") / "f"
    path.write_bytes(data)
    survive(READERS[fmt], path)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(sorted(READERS)), st.data())
def test_fuzz_mutated_lines(tmp_path_factory, fmt, data):
    lines = open(FIXTURES[fmt]).read().splitlines()
    for _ in range(data.draw(st.integers(1, 3))):
        k = data.draw(st.integers(0, len(lines) - 1))
        op = data.draw(st.sampled_from(["drop", "dup", "cut", "swap", "junk", "digit"]))
        if op == "drop":
            del lines[k]
        elif op == "dup":
            lines.insert(k, lines[k])
        elif op == "cut":
            lines[k] = lines[k][: data.draw(st.integers(0, max(0, len(lines[k]))))]
        elif op == "swap":
            j = data.draw(st.integers(0, len(lines) - 1))
            lines[k], lines[j] = lines[j], lines[k]
        elif op == "junk":
            lines[k] = data.draw(st.text(max_size=30))
        else:
            lines[k] = re.sub(r"\d", lambda m: data.draw(st.sampled_from("0159")), lines[k])
        if not lines:
            lines = [""]
    path = tmp_path_factory.mktemp("fuzz") / "f"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    survive(READERS[fmt], path)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_fuzz_route_files(tmp_path_factory, data):
    fab = read_ibnetdiscover(IBND)
    lines = open(ROUTES).read().splitlines()
    words = sorted(set(" ".join(lines).split()) | {"#", "[3]", "node001[1]", "S-0002c903004a1a00[99]"})
    for _ in range(data.draw(st.integers(1, 3))):
        k = data.draw(st.integers(0, len(lines) - 1))
        lines[k] = " ".join(data.draw(st.lists(st.sampled_from(words), max_size=6)))
    if data.draw(st.booleans()):
        lines.append(data.draw(st.binary(max_size=20)).decode("latin-1"))
    path = tmp_path_factory.mktemp("fuzz") / "routes"
    path.write_bytes("\n".join(lines).encode("utf-8"))
    try:
        routes = read_routes(path, fab)
    except tm.FormatError as err:
        assert str(err).startswith(str(path)), err
        return
    fab.with_routes(routes)  # whatever was accepted is a valid set of walks


# --------------------------------------------------------------------------- integration with the graph kind
def _nx_hops(fab):
    """Minimum hops between nodes by networkx, where only switches forward (nodes too if there are none)."""
    import networkx as nx  # a test extra
    hops = {}
    for a in range(fab.nnodes):
        g = nx.DiGraph()
        g.add_nodes_from(range(fab.nvertices))
        g.add_edges_from((u, v) for u, v in zip(fab.src.tolist(), fab.dst.tolist())
                         if u == a or u >= fab.nnodes or not fab.nswitches)
        hops[a] = nx.single_source_shortest_path_length(g, a)
    return hops


@pytest.mark.parametrize("path", [EXAMPLE, SLURM, IBND])
@pytest.mark.parametrize("routing", ["shortest", "dmodk"])
def test_file_fabrics_route_minimum_hops(path, routing):
    fab = read_fabric(path)
    m = fab.machine(2, routing=routing)
    assert m.nnodes == fab.nnodes and m.npes == 2 * fab.nnodes
    ref = _nx_hops(fab)
    g = m.links()
    assert np.array_equal(g["src"], fab.src) and np.array_equal(g["dst"], fab.dst)
    assert np.array_equal(g["capacity"], fab.capacity)
    for a, b in itertools.permutations(range(fab.nnodes), 2):
        assert int(m.hops(a, b)) == ref[a][b], (a, b)


@given(random_fabrics(), st.sampled_from(["shortest", "dmodk"]))
def test_random_fabrics_route_minimum_hops_and_survive_a_route_file(tmp_path_factory, fab, routing):
    m = fab.machine(1, routing=routing)
    ref = _nx_hops(fab)
    pairs = list(itertools.permutations(range(fab.nnodes), 2))
    for a, b in pairs:
        assert int(m.hops(a, b)) == ref[a][b], (a, b)
    if pairs:
        path = tmp_path_factory.mktemp("routes") / "r.txt"
        write_routes(path, fab, m)
        table = fab.with_routes(read_routes(path, fab, complete=True)).machine(1)
        assert all(table.route(a, b).tolist() == m.route(a, b).tolist() for a, b in pairs)


def test_table_routing_from_json_and_route_files(tmp_path):
    fab = read_json(EXAMPLE)
    m = fab.machine(1)                       # routes present: table routing
    assert m.route(0, 2).tolist() == [0, 10, 13, 5]
    assert m.route(0, 3).tolist() == [0, 8, 15, 7]
    # a pair the file gives no route for is an error naming it when a metric needs it
    pat = tm.Pattern.from_edges([2], [0], [1.0], n=4)
    alloc = m.allocate(4)
    with pytest.raises(tm.TopomapError, match="no route from node 2 to node 0"):
        tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block"))
    # write the dmodk routes of the ibnetdiscover fabric as a route file, read them back as a table
    ib = read_ibnetdiscover(IBND)
    dmodk = ib.machine(1, routing="dmodk")
    path = tmp_path / "routes.txt"
    assert write_routes(path, ib, dmodk) == 8 * 7
    table = ib.with_routes(read_routes(path, ib, complete=True)).machine(1)
    for a, b in itertools.permutations(range(8), 2):
        assert table.route(a, b).tolist() == dmodk.route(a, b).tolist()


def test_route_file_congestion_golden(tmp_path):
    # node001 -> node005 and node002 -> node005 forced through spine02's 1x cable into leaf02
    # (capacity 8 instead of 32): the max congestion is 2 x 8 bytes / 8 = 2
    ib = read_ibnetdiscover(IBND)
    path = write(tmp_path, "r.txt", "node001 S-0002c903004a1a00[33] S-0002c903004a1d00[4] S-0002c903004a1b00 node005\n"
                                    "node002 S-0002c903004a1a00[34] S-0002c903004a1d00[4] S-0002c903004a1b00 node005\n")
    m = ib.with_routes(read_routes(path, ib)).machine(1)
    pat = tm.Pattern.from_edges([0, 1], [2, 2], [8.0, 8.0], n=3)
    alloc = m.allocation([0, 1, 4])
    met = tm.evaluate(pat, alloc, tm.Mapping(np.array([0, 1, 4], np.int32), method="explicit"))
    assert met.max_congestion == pytest.approx(2.0)
    assert met.hop_bytes == pytest.approx(2 * 8.0 * 4)


@pytest.mark.parametrize("spec, nodes, pes", [
    (f"file:{EXAMPLE}/4", 4, 16),
    (f"file:{EXAMPLE},routing=shortest/pack:2 core:2", 4, 16),
    (f"file:{SLURM}", 12, 12),
    (f"file:{IBND},routing=dmodk/8", 8, 64),
    (f"file:{IBND},routes={ROUTES}/2", 8, 16),
])
def test_file_specs(spec, nodes, pes):
    m = tm.machine(spec)
    assert (m.nnodes, m.npes) == (nodes, pes)
    assert m.spec == spec


def test_file_spec_errors(tmp_path):
    with pytest.raises(tm.MachineError, match="bad file option"):
        tm.machine(f"file:{EXAMPLE},colour=red/4")
    with pytest.raises(tm.MachineError, match="unknown routing 'fast'"):
        tm.machine(f"file:{EXAMPLE},routing=fast/4")
    with pytest.raises(tm.MachineError, match="needs explicit routes"):
        tm.machine(f"file:{SLURM},routing=table")
    with pytest.raises(tm.FormatError, match="cannot read"):
        tm.machine(f"file:{tmp_path}/missing.json/4")
    odd = write(tmp_path, "a:b.json", open(EXAMPLE).read())       # a colon in the name is still a path
    assert tm.machine(f"file:{odd},routing=shortest").nnodes == 4
    assert tm.machine(f"file:{odd},routing=shortest/pack:2 core:2").npes == 16
    bad = write(tmp_path, "bad.json", '{"nodes": ["a"],\n "links": [{"a": "a", "b": "z"}]}')
    with pytest.raises(tm.FormatError, match=re.escape(f"{bad}:2: link to nowhere")):
        tm.machine(f"file:{bad}/2")
