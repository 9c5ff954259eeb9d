"""NodeTree: synthetic strings, arities, hwloc XML, sysfs and discovery."""

from __future__ import annotations

import math
import pyexpat
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topomap.node import discover as disc
from topomap.errors import FormatError, MachineError
from topomap.node.nodetree import MAX_PES, NodeTree, normalize_type

DATA = Path(__file__).parent / "data" / "hwloc"
LSTOPO = shutil.which("lstopo-no-graphics")


def lstopo_xml(spec: str) -> str:
    done = subprocess.run(
        [LSTOPO, "-i", spec, "--of", "xml", "-"],
        capture_output=True, text=True, timeout=60, check=True,
    )
    return done.stdout


def brute_distance(arities: list[int], costs: list[float]) -> np.ndarray:
    """Unmerged mixed-radix tree: costs[k] when PEs first share the k-th group bottom-up."""
    p = math.prod(arities)
    sizes = [math.prod(arities[len(arities) - 1 - k:]) for k in range(len(arities))]
    d = np.zeros((p, p))
    for i in range(p):
        for j in range(p):
            if i != j:
                d[i, j] = costs[next(k for k, s in enumerate(sizes) if i // s == j // s)]
    return d


# --- golden values ---------------------------------------------------------


def test_pack2_numa2_core8_pu2():
    t = NodeTree.from_synthetic("pack:2 numa:2 core:8 pu:2")
    i = np.arange(64)
    assert t.npes == 64 and t.pe_type == "PU"
    assert t.levels == ("Core", "NUMANode", "Package", "Machine")
    assert t.groups.dtype == np.int32 and t.groups.shape == (4, 64)
    for k, size in enumerate([2, 16, 32, 64]):
        assert t.groups[k].tolist() == (i // size).tolist()
    assert t.costs.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert t.os_index.tolist() == list(range(64))
    assert t.source == "synthetic:pack:2 numa:2 core:8 pu:2"
    assert [t.lca_level(0, j) for j in (0, 1, 2, 15, 16, 31, 32, 63)] == [0, 1, 2, 2, 3, 3, 4, 4]


def test_small_tree_distance_matrix_by_hand():
    t = NodeTree.from_synthetic("pack:2 core:2 pu:2", costs=[1, 5, 20])
    a, b, c = 1.0, 5.0, 20.0
    expected = [
        [0, a, b, b, c, c, c, c],
        [a, 0, b, b, c, c, c, c],
        [b, b, 0, a, c, c, c, c],
        [b, b, a, 0, c, c, c, c],
        [c, c, c, c, 0, a, b, b],
        [c, c, c, c, a, 0, b, b],
        [c, c, c, c, b, b, 0, a],
        [c, c, c, c, b, b, a, 0],
    ]
    assert t.distance_matrix().tolist() == expected
    assert t.lca_level(2, 3) == 1 and t.lca_level(0, 3) == 2 and t.lca_level(7, 0) == 3
    assert t.lca_level(np.int64(5), 5) == 0


def test_from_arities_mixed_radix_top_most_significant():
    t = NodeTree.from_arities([2, 2, 8])
    assert t.levels == ("Level2", "Level1", "Node") and t.pe_type == "PE"
    assert t.os_index is None and t.npes == 32
    for pe in range(32):
        top, mid, low = pe // 16, (pe // 8) % 2, pe % 8
        assert (top * 2 + mid) * 8 + low == pe
        assert t.groups[0, pe] == top * 2 + mid and t.groups[1, pe] == top
    named = NodeTree.from_arities([2, 4], names=["Socket", "Core"], costs=[1, 10])
    assert named.levels == ("Socket", "Node") and named.pe_type == "Core"
    assert named.distance_matrix()[0].tolist() == [0, 1, 1, 1, 10, 10, 10, 10]


def test_flat():
    t = NodeTree.flat(3, cost=2.5)
    assert t.levels == ("Node",) and t.costs.tolist() == [2.5]
    assert t.distance_matrix().tolist() == [[0, 2.5, 2.5], [2.5, 0, 2.5], [2.5, 2.5, 0]]
    assert NodeTree.flat(1).distance_matrix().tolist() == [[0.0]]
    assert NodeTree.flat(2, name="Machine").levels == ("Machine",)


def test_normalize_type():
    cases = {
        "pack": "Package", "Socket": "Package", "NODE": "NUMANode", "numanode": "NUMANode",
        "l3": "L3Cache", "L3Cache": "L3Cache", "l1d": "L1Cache", "l1i": "L1iCache",
        "L1iCache": "L1iCache", "l2u": "L2Cache", "die": "Die", "pu": "PU", "l6": None, "x": None,
    }
    for text, want in cases.items():
        assert normalize_type(text) == want


def test_synthetic_syntax_variants():
    base = NodeTree.from_synthetic("pack:2 numa:2 core:2 pu:2")
    same = NodeTree.from_synthetic(
        "  Package:2\tNUMANode:2(memory=16MB)  Core:2 PU:2(indexes=numa:core) "
    )
    assert same == base
    assert NodeTree.from_synthetic("socket:2 node:2 core:2 pu:2") == base
    arity_only = NodeTree.from_synthetic("2 3 4")
    assert arity_only.levels == ("Level2", "Level1", "Machine") and arity_only.pe_type == "PU"
    assert arity_only.groups.tolist() == NodeTree.from_arities([2, 3, 4]).groups.tolist()
    assert arity_only.os_index.tolist() == list(range(24))
    no_pu = NodeTree.from_synthetic("pack:2 core:4")
    assert no_pu.pe_type == "Core" and no_pu.os_index is None
    assert no_pu.levels == ("Package", "Machine")


def test_object_semantics():
    t = NodeTree.from_synthetic("pack:2 core:2 pu:2")
    with pytest.raises(Exception):
        t.levels = ()  # type: ignore[misc]
    with pytest.raises(ValueError):
        t.groups[0, 0] = 5
    with pytest.raises(TypeError):
        hash(t)
    assert t == NodeTree.from_dict(t.to_dict())
    assert t != t.with_costs([1, 2, 9]) and t != "x"
    assert t.with_costs([1, 2, 9]).costs.tolist() == [1, 2, 9]
    assert "npes=8" in repr(t)
    import json

    assert json.loads(json.dumps(t.to_dict())) == t.to_dict()


def test_constructor_renumbers_by_first_appearance():
    groups = [[7, 7, 3, 3, 9], [4, 4, 4, 4, 4]]
    t = NodeTree("PU", ["Core", "Machine"], groups, os_index=[5, 6, 1, 2, 0])
    assert t.groups.tolist() == [[0, 0, 1, 1, 2], [0, 0, 0, 0, 0]]
    assert t.levels == ("Core", "Machine") and t.os_index.dtype == np.int64


# --- merging ---------------------------------------------------------------


def test_merge_redundant_levels_keep_lowest_cost():
    t = NodeTree.from_synthetic("pack:2 numa:1 core:2 pu:2", costs=[1, 4, 6, 10])
    assert t.levels == ("Core", "Package+NUMANode", "Machine")
    assert t.costs.tolist() == [1, 4, 10]
    assert t.distance_matrix().tolist() == brute_distance([2, 1, 2, 2], [1, 4, 6, 10]).tolist()


def test_merge_into_pe_and_root():
    t = NodeTree.from_synthetic("pack:1 core:4 pu:1", costs=[3, 7, 8])
    assert t.levels == ("Machine",) and t.pe_type == "PU" and t.costs.tolist() == [7]
    assert NodeTree.from_synthetic("pack:2 core:2 pu:1").levels == ("Package", "Machine")
    assert NodeTree.from_synthetic("pack:2 core:1 pu:2").levels == ("Core+Package", "Machine")
    assert NodeTree.from_arities([1, 1, 1]).levels == ("Node",)
    assert NodeTree.from_arities([1, 1, 1]).npes == 1


def test_merge_names():
    pes = [[0, 1, 2, 3], [0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 0, 0]]
    name = lambda a, b: NodeTree.from_groups(pes, ["Core", a, b, "Machine"]).levels[0]
    assert name("Group", "NUMANode") == "NUMANode"
    assert name("NUMANode", "Group") == "NUMANode"
    assert name("Group", "Group") == "Group"
    assert name("L2Cache", "Group") == "L2Cache"
    assert name("NUMANode", "Package") == "Package+NUMANode"
    assert name("L3Cache", "Package+NUMANode") == "L3Cache+Package+NUMANode"
    assert name("Core", "L2Cache") == "Core+L2Cache"


def test_numa_attachment_names_level():
    assert NodeTree.from_synthetic("pack:2 [numa] core:2 pu:2").levels == (
        "Core", "Package+NUMANode", "Machine")
    assert NodeTree.from_synthetic("[numa(memory=1GB)] pack:2 core:2 pu:2").levels == (
        "Core", "Package", "Machine")


def test_from_groups_lowest_level_every_pe_alone():
    t = NodeTree.from_groups(
        [[5, 6, 7], [1, 1, 2], [0, 0, 0]], ["Core", "L3Cache", "Machine"], "PU",
        costs=[1, 2, 3], os_index=[4, 5, 6], source="test",
    )
    assert t.levels == ("L3Cache", "Machine") and t.costs.tolist() == [2, 3]
    assert t.source == "test" and t.os_index.tolist() == [4, 5, 6]


# --- truncation ------------------------------------------------------------


def test_pe_core_truncation():
    t = NodeTree.from_synthetic("pack:2 numa:2 core:8 pu:2", pe="core")
    assert t.pe_type == "Core" and t.npes == 32
    assert t.levels == ("NUMANode", "Package", "Machine")
    assert t.os_index.tolist() == list(range(0, 64, 2))
    assert t.groups[0].tolist() == (np.arange(32) // 8).tolist()
    l3 = NodeTree.from_synthetic("pack:2 l3:2 core:4 pu:2", pe="L3Cache", costs=[5, 9])
    assert l3.pe_type == "L3Cache" and l3.npes == 4 and l3.os_index.tolist() == [0, 8, 16, 24]
    assert l3.costs.tolist() == [5, 9]
    assert NodeTree.from_synthetic("pack:2 core:2 pu:2", pe="PU").npes == 8


# --- hypothesis --------------------------------------------------------------

arities_st = st.lists(st.integers(1, 4), min_size=1, max_size=5).filter(
    lambda a: math.prod(a) <= 96
)


@settings(max_examples=60, deadline=None)
@given(arities=arities_st, data=st.data())
def test_merging_never_changes_distances(arities, data):
    steps = data.draw(st.lists(st.integers(0, 5), min_size=len(arities), max_size=len(arities)))
    costs = np.cumsum(steps).astype(float).tolist()
    t = NodeTree.from_arities(arities, costs=costs)
    assert t.distance_matrix().tolist() == brute_distance(arities, costs).tolist()
    p = t.npes
    i, j = data.draw(st.integers(0, p - 1)), data.draw(st.integers(0, p - 1))
    lca = t.lca_level(i, j)
    assert (lca == 0) == (i == j)
    assert t.distance_matrix()[i, j] == (0 if lca == 0 else t.costs[lca - 1])
    counts = t.groups.max(axis=1) + 1
    assert counts[0] < p or p == 1
    assert all(counts[k] > counts[k + 1] for k in range(len(counts) - 1))
    assert NodeTree.from_dict(t.to_dict()) == t


@settings(max_examples=40, deadline=None)
@given(arities=arities_st, seed=st.integers(0, 2**32 - 1))
def test_from_groups_matches_arities_under_relabelling(arities, seed):
    rng = np.random.default_rng(seed)
    n, p = len(arities), math.prod(arities)
    rows = [np.arange(p) // math.prod(arities[n - k:]) for k in range(n)] + [np.zeros(p, int)]
    relabelled = [rng.permutation(int(r.max()) + 1)[r] * 7 + 3 for r in rows]
    names = [f"Level{d}" for d in range(n - 1, 0, -1)] + ["Node"]
    got = NodeTree.from_groups(relabelled[1:], names, "PE")
    assert got == NodeTree.from_arities(arities)


# --- hwloc XML fixtures -------------------------------------------------------


def test_xml_fixture_equals_synthetic():
    path = DATA / "synth_2x2x4x2.xml"
    spec = "pack:2 numa:2 core:4 pu:2"
    assert NodeTree.from_hwloc_xml(path) == NodeTree.from_synthetic(spec)
    assert NodeTree.from_hwloc_xml(str(path), pe="core") == NodeTree.from_synthetic(spec, pe="core")
    assert NodeTree.from_hwloc_xml(path).source == f"xml:{path}"
    assert NodeTree.from_hwloc_xml(path.read_bytes()) == NodeTree.from_synthetic(spec)


def test_xml_real_machine_fixture():
    t = NodeTree.from_hwloc_xml(DATA / "host_2pu.xml")
    assert t == NodeTree("PU", ("Machine",), [[0, 0]], os_index=[0, 1])


def test_xml_irregular_offline():
    t = NodeTree.from_hwloc_xml(DATA / "irregular_offline.xml")
    assert t.levels == ("Core", "L3Cache", "Package+NUMANode", "Machine")
    assert t.os_index.tolist() == [0, 1, 2, 3, 4, 8, 9, 10, 11, 12, 13]
    assert t.groups.tolist() == [
        [0, 0, 1, 1, 2, 3, 3, 4, 4, 5, 5],
        [0, 0, 0, 0, 1, 2, 2, 2, 2, 2, 2],
        [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1],
        [0] * 11,
    ]
    c = NodeTree.from_hwloc_xml(DATA / "irregular_offline.xml", pe="core")
    assert c.levels == ("L3Cache", "Package+NUMANode", "Machine")
    assert c.os_index.tolist() == [0, 2, 4, 8, 10, 12]
    assert c.groups.tolist() == [[0, 0, 1, 2, 2, 2], [0, 0, 0, 1, 1, 1], [0] * 6]


def test_xml_hwloc1():
    t = NodeTree.from_hwloc_xml(DATA / "hwloc1_numa2_l3_l2_core_pu2.xml")
    assert t.levels == ("Core+L1iCache+L1Cache+L2Cache", "L3Cache+Package+NUMANode", "Machine")
    assert t == NodeTree.from_synthetic("numa:2 pack:1 l3:1 l2:2 l1d:1 l1i:1 core:1 pu:2")


def test_xml_version3_and_memcache():
    xml = """<?xml version="1.0"?><topology version="3.0">
      <object type="Machine" os_index="0" cpuset="0x0000000f">
        <object type="Package" os_index="0" cpuset="0x00000003">
          <object type="MemCache" cpuset="0x00000003">
            <object type="NUMANode" os_index="0"/></object>
          <object type="PU" os_index="0" cpuset="0x00000001"/>
          <object type="PU" os_index="1" cpuset="0x00000002"/>
        </object>
        <object type="Package" os_index="1" cpuset="0x0000000c">
          <object type="NUMANode" os_index="1"/><object type="NUMANode" os_index="2"/>
          <object type="PU" os_index="2" cpuset="0x00000004"/>
          <object type="PU" os_index="3" cpuset="0x00000008"/>
        </object>
        <object type="OSDev" name="eth0"/>
      </object></topology>"""
    t = NodeTree.from_hwloc_xml(xml, label="mine")
    assert t.levels == ("Package+NUMANode", "Machine") and t.source == "mine"
    assert t.groups.tolist() == [[0, 0, 1, 1], [0, 0, 0, 0]]


@pytest.mark.skipif(LSTOPO is None, reason="lstopo-no-graphics not installed")
@pytest.mark.parametrize(
    "spec",
    [
        "pack:2 numa:2 core:8 pu:2",
        "pack:2 core:2 pu:1",
        "pack:2 l3:2 numa:2 core:2 pu:1",
        "pack:2 numa:2 l3:1 core:2 pu:1",
        "pack:1 die:2 l2:2 l1d:1 core:1 pu:2",
        "numa:2 pack:1 core:2 pu:2",
        "pack:2 [numa] core:2 pu:2",
        "pack:3 group:2 core:3 pu:2",
        "Socket:2 NUMANode:2(memory=16MB) L3Cache:1 Core:4 PU:2",
        "pack:2 l2:2 l1i:2 core:1 pu:1",
    ],
)
def test_synthetic_matches_lstopo(spec):
    xml = lstopo_xml(spec)
    assert NodeTree.from_hwloc_xml(xml) == NodeTree.from_synthetic(spec)
    if "core" in spec.lower():
        assert NodeTree.from_hwloc_xml(xml, pe="core") == NodeTree.from_synthetic(spec, pe="core")


@pytest.mark.skipif(LSTOPO is None, reason="lstopo-no-graphics not installed")
@pytest.mark.parametrize("spec", ["2 3 4", "2 2 3 4", "3 2 2 2 2 2"])
def test_arity_only_structure_matches_lstopo(spec):
    # hwloc guesses hardware types for arity-only strings; only the structure must agree.
    ours, theirs = NodeTree.from_synthetic(spec), NodeTree.from_hwloc_xml(lstopo_xml(spec))
    assert np.array_equal(ours.groups, theirs.groups)
    assert np.array_equal(ours.os_index, theirs.os_index)


# --- bad input: synthetic, arities, constructor --------------------------------


@pytest.mark.parametrize(
    "spec, token",
    [
        ("foo:2 pu:2", "foo:2"),
        ("pack:0 pu:2", "pack:0"),
        ("pack:-1 pu:2", "pack:-1"),
        ("pack:x pu:2", "pack:x"),
        ("pack: pu:2", "pack:"),
        ("pack:2:3 pu:2", "pack:2:3"),
        ("pack:2 pu:2 core:2", "core:2"),
        ("pack:2 2", "2"),
        ("2 pu:2", "pu:2"),
        ("numa:2 numa:2 pu:1", "numa:2"),
        ("numa:2 [numa] pu:1", "[numa]"),
        ("[l3] pu:2", "[l3]"),
        ("pack:2(memory=1 pu:2", "pack:2(memory=1"),
        ("pack:2 [numa pu:2", "[numa"),
        ("pack:2(x)y pu:2", "pack:2(x)y"),
        ("pack:99999999999999999999999 pu:1", "pack:99999999999999999999999"),
        ("pu:100000000", "pu:100000000"),
        ("pack:4096 core:4096 pu:2", "core:4096"),
        (" ".join(["1"] * 200), "1"),
    ],
)
def test_bad_synthetic_names_token(spec, token):
    with pytest.raises(MachineError) as err:
        NodeTree.from_synthetic(spec)
    assert f"token {token!r}" in str(err.value)


def test_huge_arity_refused_quickly():
    with pytest.raises(MachineError, match=str(MAX_PES)):
        NodeTree.from_synthetic("pack:2 numa:2 core:8 pu:100000000")
    with pytest.raises(MachineError, match="cap"):
        NodeTree.from_arities([2**12, 2**12, 2])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"text": ""}, {"text": "   "}, {"text": 42},
        {"text": "pack:2 core:2", "pe": "pu"}, {"text": "pack:2 pu:2", "pe": "bogus"},
        {"text": "pack:2 pu:2", "pe": 3}, {"text": "pack:2 pu:2", "costs": [1]},
        {"text": "pack:2 pu:2", "costs": [2, 1]},
        {"text": "pack:2 pu:2", "costs": [1, float("nan")]},
        {"text": "pack:2 pu:2", "costs": [-1, 1]}, {"text": "pack:2 pu:2", "costs": ["a", "b"]},
    ],
)
def test_bad_synthetic_parameters(kwargs):
    with pytest.raises(MachineError):
        NodeTree.from_synthetic(**kwargs)


@pytest.mark.parametrize(
    "arities, names, costs",
    [
        ([], None, None), ([0], None, None), ([2, -1], None, None), ([True], None, None),
        ([2.5], None, None), ([2, 2], ["A"], None), ([2, 2], None, [1, 2, 3]),
        ([2, 2], None, [2, 1]), ([2, 2], None, [1, float("inf")]),
    ],
)
def test_bad_arities(arities, names, costs):
    with pytest.raises(MachineError):
        NodeTree.from_arities(arities, names=names, costs=costs)


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        (("PU", ("Core", "Machine"), [[0, 0, 1], [0, 1, 1]]), {}, "not a coarsening"),
        (("PU", ("Core", "Machine"), [[0, 1, 2], [0, 0, 1]]), {}, "root level"),
        (("PU", ("Core", "Machine"), [[0, 1, 2]]), {}, "shape"),
        (("PU", ("Machine",), [[]]), {}, "at least one PE"),
        (("PU", ("Machine",), [[0.0, 0.0]]), {}, "integers"),
        (("PU", ("Core", "Machine"), [[0, 1], [0]]), {}, "rectangular|shape"),
        (("PU", (), np.zeros((0, 2), int)), {}, "levels"),
        (("", ("Machine",), [[0, 0]]), {}, "pe_type"),
        (("PU", ("Machine",), [[0, 0]]), {"os_index": [1, 1]}, "two PEs"),
        (("PU", ("Machine",), [[0, 0]]), {"os_index": [-1, 1]}, "negative"),
        (("PU", ("Machine",), [[0, 0]]), {"os_index": [1]}, "os_index"),
        (("PU", ("Machine",), [[0, 0]]), {"costs": [1, 2]}, "costs"),
        (("PU", tuple(f"L{k}" for k in range(200)), np.zeros((200, 1), int)), {}, "cap"),
    ],
)
def test_bad_constructor(args, kwargs, match):
    with pytest.raises(MachineError, match=match):
        NodeTree(*args, **kwargs)


def test_bad_pe_ids_and_dense_cap():
    t = NodeTree.flat(4)
    for i in (-1, 4, 1.0, True, "0"):
        with pytest.raises(MachineError):
            t.lca_level(i, 0)
    with pytest.raises(MachineError, match="lca_level"):
        NodeTree.flat(2**14 + 1).distance_matrix()
    with pytest.raises(MachineError):
        NodeTree.flat(0)
    with pytest.raises(MachineError, match="lacks"):
        NodeTree.from_dict({"pe_type": "PU"})


# --- bad input: XML --------------------------------------------------------------

PU0 = '<object type="PU" os_index="0" cpuset="0x00000001"/>'


def wrap(inner: str) -> str:
    machine = f'<object type="Machine" os_index="0">{inner}</object>'
    return f'<topology version="2.0">{machine}</topology>'


@pytest.mark.parametrize(
    "xml, match",
    [
        ("<topology", "line 1"),
        ("<foo/>", "<topology>"),
        ("<topology/>", "one root"),
        (wrap('<object type="Core"/>'), "no PU"),
        (wrap('<object type="PU"/>'), "os_index"),
        (wrap('<object type="PU" os_index="abc"/>'), "os_index"),
        (wrap('<object type="PU" os_index="1" cpuset="0x00000001"/>'), "cpuset"),
        (wrap('<object type="PU" os_index="0" cpuset="0xzz"/>'), "invalid cpuset"),
        (wrap('<object type="PU" os_index="0" cpuset="1"/>'), "invalid cpuset"),
        (wrap(PU0 + PU0), "appears twice"),
        (wrap('<object os_index="0"/>'), "without a type"),
        (wrap('<object type="Gizmo"/>' + PU0), "unknown object type 'Gizmo'"),
        (wrap(f'<object type="PU" os_index="0">{PU0}</object>'), "cannot contain"),
        (wrap('<object type="Cache" depth="9" cache_type="0">' + PU0 + "</object>"), "Cache"),
        (
            wrap(f'<object type="Core" os_index="0">{PU0}</object>'
                 '<object type="PU" os_index="1"/>'),
            "same object types",
        ),
        (
            wrap(f'<object type="Core" os_index="0">{PU0}</object>'
                 '<object type="Group"><object type="PU" os_index="1"/></object>'),
            "PU os_index 1 sits under Machine > Group",
        ),
        (
            '<topology><object type="Machine"/><object type="Machine"/></topology>',
            "one root",
        ),
    ],
)
def test_bad_xml(xml, match):
    with pytest.raises(FormatError, match=match):
        NodeTree.from_hwloc_xml(xml)


def test_xml_cpuset_words():
    pu = '<object type="PU" os_index="{}" cpuset="{}"/>'
    t = NodeTree.from_hwloc_xml(wrap(pu.format(64, "0x00000001,,0x0") + pu.format(33, "0x2,0x0")))
    assert t.os_index.tolist() == [64, 33]
    for bad in ("0x1_0", ",", "0x-1", "0x123456789", "0x1,,x"):
        with pytest.raises(FormatError, match="invalid cpuset"):
            NodeTree.from_hwloc_xml(wrap(pu.format(0, bad)))


def test_bad_xml_pe_choice():
    with pytest.raises(FormatError, match="no Core"):
        NodeTree.from_hwloc_xml(wrap(PU0), pe="core")
    with pytest.raises(MachineError, match="not an hwloc object type"):
        NodeTree.from_hwloc_xml(wrap(PU0), pe="widget")


def test_bad_xml_files(tmp_path):
    missing = tmp_path / "nope.xml"
    with pytest.raises(FormatError, match="nope.xml"):
        NodeTree.from_hwloc_xml(missing)
    truncated = tmp_path / "truncated.xml"
    text = (DATA / "synth_2x2x4x2.xml").read_text()
    truncated.write_text(text[: len(text) // 2])
    with pytest.raises(FormatError, match=r"truncated\.xml: line \d+: not well-formed"):
        NodeTree.from_hwloc_xml(truncated)
    garbage = tmp_path / "garbage.xml"
    garbage.write_bytes(b"\x00\x01 not xml at all")
    with pytest.raises(FormatError, match="garbage.xml: line 1"):
        NodeTree.from_hwloc_xml(garbage)
    with pytest.raises(FormatError, match="expected a path"):
        NodeTree.from_hwloc_xml(12)  # type: ignore[arg-type]


def test_deep_nesting_refused():
    depth = 5000
    xml = wrap('<object type="Group">' * depth + PU0 + "</object>" * depth)
    with pytest.raises(FormatError, match="deeper than 128"):
        NodeTree.from_hwloc_xml(xml)


@pytest.mark.skipif(pyexpat.version_info < (2, 4, 0), reason="expat without amplification limits")
def test_entity_expansion_refused():
    ents = '<!ENTITY a0 "aaaaaaaaaa">' + "".join(
        f'<!ENTITY a{k} "{("&a%d;" % (k - 1)) * 10}">' for k in range(1, 10)
    )
    body = '<topology><object type="&a9;"/></topology>'
    xml = f'<?xml version="1.0"?><!DOCTYPE topology [{ents}]>{body}'
    with pytest.raises(FormatError, match="line 1"):
        NodeTree.from_hwloc_xml(xml)


# --- sysfs ---------------------------------------------------------------------


def fake_sysfs(
    root: Path, *, online: str | None = "0-6", numa: dict[int, str] | None = None
) -> None:
    """2 packages x 2 cores x 2 threads, Intel-style numbering (cpu i and i+4 are siblings)."""
    cpu = root / "sys/devices/system/cpu"
    for c in range(8):
        pkg, core = (c % 4) // 2, c % 2
        siblings = f"{c % 4},{c % 4 + 4}"
        topo = cpu / f"cpu{c}" / "topology"
        topo.mkdir(parents=True)
        (topo / "physical_package_id").write_text(f"{pkg}\n")
        (topo / "core_id").write_text(f"{core}\n")
        (topo / "die_id").write_text("0\n")
        for idx, (level, kind, shared) in enumerate(
            [(1, "Data", siblings), (1, "Instruction", siblings), (2, "Unified", siblings),
             (3, "Unified", f"{2 * pkg}-{2 * pkg + 1},{2 * pkg + 4}-{2 * pkg + 5}")]
        ):
            d = cpu / f"cpu{c}" / "cache" / f"index{idx}"
            d.mkdir(parents=True)
            (d / "level").write_text(f"{level}\n")
            (d / "type").write_text(f"{kind}\n")
            (d / "shared_cpu_list").write_text(f"{shared}\n")
    if online is not None:
        (cpu / "online").write_text(online + "\n")
    else:
        (cpu / "cpu7" / "online").write_text("0\n")
        (cpu / "cpu3" / "online").write_text("1\n")
    for n, cpus in (numa or {0: "0-1,4-5", 1: "2-3,6-7"}).items():
        node = root / "sys/devices/system/node" / f"node{n}"
        node.mkdir(parents=True)
        (node / "cpulist").write_text(cpus + "\n")


@pytest.mark.parametrize("online", ["0-6", None])
def test_sysfs_fake_tree(tmp_path, online):
    fake_sysfs(tmp_path, online=online)
    t = NodeTree.from_sysfs(tmp_path)
    assert t.source == "sysfs" and t.pe_type == "PU"
    assert t.levels == ("Core+L2Cache", "L3Cache+Package+NUMANode", "Machine")
    assert t.os_index.tolist() == [0, 4, 1, 5, 2, 6, 3]
    assert t.groups.tolist() == [[0, 0, 1, 1, 2, 2, 3], [0, 0, 0, 0, 1, 1, 1], [0] * 7]
    c = NodeTree.from_sysfs(str(tmp_path), pe="core")
    assert c.pe_type == "Core" and c.os_index.tolist() == [0, 1, 2, 3]
    assert c.groups.tolist() == [[0, 0, 1, 1], [0, 0, 0, 0]]


def test_sysfs_cross_cutting_numa_dropped(tmp_path):
    fake_sysfs(tmp_path, numa={0: "0-3", 1: "4-7"})
    t = NodeTree.from_sysfs(tmp_path)
    assert all("NUMANode" not in name for name in t.levels)
    assert t.levels == ("Core+L2Cache", "L3Cache+Package", "Machine")


def test_sysfs_bad(tmp_path):
    with pytest.raises(MachineError):
        NodeTree.from_sysfs(tmp_path, pe="numa")
    fake_sysfs(tmp_path, online="0-x")
    with pytest.raises(FormatError, match="online"):
        NodeTree.from_sysfs(tmp_path)
    (tmp_path / "sys/devices/system/cpu/online").write_text("\n")
    with pytest.raises(FormatError, match="no online CPU"):
        NodeTree.from_sysfs(tmp_path)
    (tmp_path / "sys/devices/system/cpu/online").write_text("0-3\n")
    (tmp_path / "sys/devices/system/cpu/cpu1/topology/core_id").write_text("one\n")
    with pytest.raises(FormatError, match="core_id"):
        NodeTree.from_sysfs(tmp_path)


def test_sysfs_without_core_ids(tmp_path):
    fake_sysfs(tmp_path)
    for c in range(8):
        (tmp_path / f"sys/devices/system/cpu/cpu{c}/topology/core_id").unlink()
    t = NodeTree.from_sysfs(tmp_path)
    assert t.levels[0] == "L2Cache"
    with pytest.raises(FormatError, match="core ids"):
        NodeTree.from_sysfs(tmp_path, pe="core")


@pytest.mark.skipif(not Path("/sys/devices/system/cpu/online").exists() or LSTOPO is None,
                    reason="needs Linux sysfs and lstopo")
def test_sysfs_agrees_with_lstopo_on_this_machine():
    ours = NodeTree.from_sysfs()
    theirs = NodeTree.from_hwloc_xml(subprocess.run(
        [LSTOPO, "--no-io", "--of", "xml", "-"], capture_output=True, text=True, check=True).stdout)
    # lstopo may hide CPUs outside this process's cgroup; sysfs lists every online CPU.
    assert set(theirs.os_index.tolist()) <= set(ours.os_index.tolist())


# --- discovery order ------------------------------------------------------------


def test_discover_prefers_core_library(monkeypatch):
    xml = (DATA / "synth_2x2x4x2.xml").read_text()
    monkeypatch.setattr(disc, "_xml_from_core", lambda: xml)
    t = NodeTree.discover()
    assert t.source == "hwloc-library" and t.npes == 32
    assert NodeTree.discover(pe="core").npes == 16


def test_discover_falls_back_in_order(monkeypatch, tmp_path):
    def broken():
        raise RuntimeError("no hwloc today")

    monkeypatch.setattr(disc, "_xml_from_core", broken)
    monkeypatch.setattr(disc, "_xml_from_lstopo", lambda: (DATA / "host_2pu.xml").read_text())
    with pytest.warns(RuntimeWarning, match="hwloc-library failed: no hwloc today"):
        assert NodeTree.discover().source == "lstopo"

    monkeypatch.setattr(disc, "_xml_from_core", lambda: None)
    monkeypatch.setattr(disc, "_xml_from_lstopo", lambda: None)
    fake_sysfs(tmp_path)
    real_reader = disc.read_sysfs
    monkeypatch.setattr(disc, "read_sysfs", lambda root, pe: real_reader(tmp_path, pe))
    if Path("/sys/devices/system/cpu").is_dir():
        assert NodeTree.discover().source == "sysfs"
        assert NodeTree.discover(pe="core").npes == 4

    def no_sysfs(root, pe):
        raise FormatError("sysfs unreadable")

    monkeypatch.setattr(disc, "read_sysfs", no_sysfs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        flat = NodeTree.discover()
    assert flat.source == "cpu_count" and flat.levels == ("Machine",) and flat.os_index is None


def test_core_import_error_is_graceful(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "topomap._core", None)
    monkeypatch.delattr("topomap._core", raising=False)
    assert disc._xml_from_core() is None


def test_core_without_hwloc_feature(monkeypatch):
    import sys
    import types

    fake = types.SimpleNamespace(
        features=lambda: {"hwloc": False}, hwloc_topology_xml=lambda: "<x/>"
    )
    monkeypatch.setitem(sys.modules, "topomap._core", fake)
    monkeypatch.setattr("topomap._core", fake, raising=False)
    assert disc._xml_from_core() is None


@pytest.mark.skipif(LSTOPO is None, reason="lstopo-no-graphics not installed")
def test_lstopo_method_on_this_machine():
    assert NodeTree.from_hwloc_xml(disc._xml_from_lstopo()).npes >= 1


def test_current_binding():
    cpus = disc.current_binding()
    assert cpus == sorted(cpus) and len(cpus) >= 1 and all(c >= 0 for c in cpus)
