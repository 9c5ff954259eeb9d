"""Mapper registry, baseline mappers, the Mapping value and compare()."""

import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from topomap import MappingError, registry
from topomap.compare import DEFAULT_METHODS, NORMALIZED, MethodsSkipped
from topomap.mapping import check_mapping

from conftest import machines

BASELINES = ["block", "cyclic", "random"]


def pattern(n):
    """n processes, one message (mappers here do not look at the traffic)."""
    return tm.Pattern.from_edges([0], [min(1, n - 1)], [1.0], n=n)


def block_ref(alloc, n, cap):
    return [int(alloc.pes[p // cap]) for p in range(n)]


def cyclic_ref(alloc, n, cap):
    """Round robin over the allocation's nodes (first-appearance order); the k-th visit to a
    node takes its (k mod size)-th PE in allocation order; a node takes cap x size visits."""
    per_node = {}
    for pe in alloc.pes.tolist():
        per_node.setdefault(pe // alloc.machine.pes_per_node, []).append(pe)
    slots = [[pes[i % len(pes)] for i in range(cap * len(pes))] for pes in per_node.values()]
    out, rnd = [], 0
    while len(out) < n:
        for s in slots:
            if rnd < len(s) and len(out) < n:
                out.append(s[rnd])
        rnd += 1
    return out


@pytest.fixture
def isolated_registry(monkeypatch):
    """A copy of the registry that test mappers can be added to."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    return registry


# ------------------------------------------------------------------ baselines by hand

def test_block_and_cyclic_on_2x2_torus_by_hand():
    alloc = tm.machine("torus:2x2/2").allocate(8)
    # block: rank i on PE i
    assert tm.map(pattern(8), alloc, method="block").pe_of.tolist() == [0, 1, 2, 3, 4, 5, 6, 7]
    # cyclic: nodes 0..3 hold PEs {0,1},{2,3},{4,5},{6,7}; first lap takes each node's first PE
    assert tm.map(pattern(8), alloc, method="cyclic").pe_of.tolist() == [0, 2, 4, 6, 1, 3, 5, 7]


def test_capacity_two_by_hand():
    alloc = tm.machine("torus:2x2/2").allocate(4)          # PEs 0,1 (node 0) and 2,3 (node 1)
    # block fills each PE up to capacity before the next
    assert tm.map(pattern(8), alloc, method="block", capacity=2).pe_of.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    # cyclic: node 0, node 1, node 0, node 1, ...; a node's visits go 1st PE, 2nd PE, 1st PE, ...
    assert tm.map(pattern(8), alloc, method="cyclic", capacity=2).pe_of.tolist() == [0, 2, 1, 3, 0, 2, 1, 3]
    # fewer processes than slots
    assert tm.map(pattern(3), alloc, method="block", capacity=2).pe_of.tolist() == [0, 0, 1]
    assert tm.map(pattern(3), alloc, method="cyclic", capacity=2).pe_of.tolist() == [0, 2, 1]


def test_partially_used_nodes_by_hand():
    m = tm.machine("torus:2x2/2")
    # 7 PEs: node 3 holds only PE 6; laps: 0,2,4,6 then 1,3,5 (node 3 is full)
    assert tm.map(pattern(7), m.allocate(7), method="cyclic").pe_of.tolist() == [0, 2, 4, 6, 1, 3, 5]
    # 5 PEs, capacity 2: node slots {0,1,0,1}, {2,3,2,3}, {4,4}
    # lap 1: 0, 2, 4; lap 2: 1, 3, 4; lap 3: 0, 2 (node 2 is full)
    assert tm.map(pattern(8), m.allocate(5), method="cyclic", capacity=2).pe_of.tolist() == \
        [0, 2, 4, 1, 3, 4, 0, 2]
    assert tm.map(pattern(9), m.allocate(5), method="block", capacity=2).pe_of.tolist() == \
        [0, 0, 1, 1, 2, 2, 3, 3, 4]


def test_cyclic_follows_allocation_order_not_node_ids():
    m = tm.machine("torus:2x2/2")
    # a random-looking allocation: nodes in order 2, 0, 3, 1
    alloc = m.allocation([4, 5, 0, 1, 6, 7, 2, 3])
    assert tm.map(pattern(8), alloc, method="cyclic").pe_of.tolist() == [4, 0, 6, 2, 5, 1, 7, 3]
    assert tm.map(pattern(8), alloc, method="block").pe_of.tolist() == [4, 5, 0, 1, 6, 7, 2, 3]
    # PEs of one node out of local order, node 0 first seen second
    alloc = m.allocation([6, 1, 0, 7, 4])
    # nodes 3: [6, 7], 0: [1, 0], 2: [4]; capacity 2 slots [6,7,6,7], [1,0,1,0], [4,4]
    assert tm.map(pattern(7), alloc, method="cyclic", capacity=2).pe_of.tolist() == [6, 1, 4, 7, 0, 4, 6]


@pytest.mark.parametrize("policy", ["random", "fragmented"])
def test_cyclic_on_random_and_fragmented_allocations(policy):
    alloc = tm.machine("torus:4x4/4").allocate(30, policy=policy, seed=7)
    mp = tm.map(pattern(30), alloc, method="cyclic")
    nodes = alloc.nodes()
    # the first lap visits every node once, in allocation order, taking its first PE
    assert (mp.pe_of[:8] // 4).tolist() == nodes.tolist()
    assert mp.pe_of[:8].tolist() == [int(alloc.pes[4 * i]) for i in range(8)]
    assert mp.pe_of.tolist() == cyclic_ref(alloc, 30, 1)


def test_random_is_seeded():
    alloc = tm.machine("torus:4x4/2").allocate(32)
    a = tm.map(pattern(32), alloc, method="random", seed=0).pe_of
    assert sorted(a.tolist()) == list(range(32))           # a permutation of the allocation
    assert tm.map(pattern(32), alloc, method="random", seed=0).pe_of.tolist() == a.tolist()
    b = tm.map(pattern(32), alloc, method="random", seed=1).pe_of
    assert b.tolist() != a.tolist()
    assert a.tolist() != list(range(32))
    # a seed beyond 2**63 is used as is
    c = tm.map(pattern(32), alloc, method="random", seed=2**64 - 1).pe_of
    assert sorted(c.tolist()) == list(range(32))


def test_random_capacity_uses_slots():
    alloc = tm.machine("torus:2x2/2").allocate(3)
    pe = tm.map(pattern(6), alloc, method="random", seed=4, capacity=2).pe_of
    assert sorted(pe.tolist()) == [0, 0, 1, 1, 2, 2]


def test_block_and_cyclic_ignore_the_seed():
    alloc = tm.machine("torus:2x2/2").allocate(8, policy="random", seed=2)
    for method in ("block", "cyclic"):
        assert tm.map(pattern(8), alloc, method=method, seed=0).pe_of.tolist() == \
            tm.map(pattern(8), alloc, method=method, seed=9).pe_of.tolist()


def test_mapping_fields_from_map():
    alloc = tm.machine("torus:2x2/2").allocate(8)
    mp = tm.map(pattern(8), alloc, method="random", seed=5, capacity=2)
    assert (mp.method, mp.seed, mp.capacity, mp.n, mp.options) == ("random", 5, 2, 8, {})
    assert mp.seconds >= 0.0
    assert mp.pe_of.dtype == np.int32


def test_map_accepts_dense_arrays():
    alloc = tm.machine("torus:2x2").allocate(4)
    assert tm.map(np.ones((4, 4)), alloc, method="cyclic").pe_of.tolist() == [0, 1, 2, 3]


@given(machines(), st.sampled_from(["contiguous", "random", "fragmented"]), st.integers(1, 3),
       st.sampled_from(BASELINES), st.integers(0, 2**64 - 1), st.data())
def test_mappings_are_valid(m, policy, capacity, method, seed, data):
    k = data.draw(st.integers(1, m.npes))
    alloc = m.allocate(k, policy=policy, seed=seed % 1000, runs=data.draw(st.integers(1, 4)))
    n = data.draw(st.integers(1, k * capacity))
    mp = tm.map(pattern(n), alloc, method=method, seed=seed, capacity=capacity)
    assert mp.n == n
    assert np.isin(mp.pe_of, alloc.pes).all()
    assert np.bincount(mp.pe_of, minlength=m.npes).max() <= capacity
    if method == "block":
        assert mp.pe_of.tolist() == block_ref(alloc, n, capacity)
    elif method == "cyclic":
        assert mp.pe_of.tolist() == cyclic_ref(alloc, n, capacity)
    else:
        assert tm.map(pattern(n), alloc, method=method, seed=seed, capacity=capacity).pe_of.tolist() == \
            mp.pe_of.tolist()


# ------------------------------------------------------------------ map errors

def test_map_errors():
    alloc = tm.machine("torus:2x2/2").allocate(4)
    with pytest.raises(MappingError, match="unknown mapping method 'foo'; registered: .*block, cyclic, .*random"):
        tm.map(pattern(4), alloc, method="foo")
    with pytest.raises(MappingError, match="method 'block' has no option 'alpha'; its options: none"):
        tm.map(pattern(4), alloc, method="block", alpha=1)
    with pytest.raises(MappingError, match="8 processes do not fit on 4 PEs with capacity 1"):
        tm.map(pattern(8), alloc)
    with pytest.raises(MappingError, match="9 processes do not fit on 4 PEs with capacity 2"):
        tm.map(pattern(9), alloc, capacity=2)
    for seed in (-1, "1", True, 1.0, 2**64):
        with pytest.raises(MappingError, match=r"seed must be an integer in \[0, 2\*\*64\), got"):
            tm.map(pattern(4), alloc, seed=seed)
    for cap in (0, -2, 1.0, "2", True):
        with pytest.raises(MappingError, match="capacity must be a positive integer or 'auto', got"):
            tm.map(pattern(4), alloc, capacity=cap)
    for where, name in ((alloc.machine, "Machine"), (alloc.pes, "ndarray"), ("torus:2x2", "str")):
        with pytest.raises(MappingError, match=f"map needs an Allocation .*got {name}"):
            tm.map(pattern(4), where)
    with pytest.raises(tm.PatternError, match="cannot use a str as a communication pattern"):
        tm.map("stencil", alloc)


def test_registered_mapper_with_options(isolated_registry):
    @registry.register("test-shift", "rotate the block mapping", {"shift": (1, "how far to rotate")},
                       source="a test")
    def shift(pattern, allocation, *, seed, capacity, progress, shift):
        if progress is not None:
            progress(0.5)
        return np.roll(allocation.pes[:pattern.n], shift)

    alloc = tm.machine("torus:2x2").allocate(4)
    mp = tm.map(pattern(4), alloc, method="test-shift")
    assert mp.pe_of.tolist() == [3, 0, 1, 2] and mp.options == {"shift": 1}
    assert tm.map(pattern(4), alloc, method="test-shift", shift=2).pe_of.tolist() == [2, 3, 0, 1]
    seen = []
    tm.map(pattern(4), alloc, method="test-shift", progress=seen.append)
    assert seen == [0.5]
    with pytest.raises(MappingError, match="progress must be callable or None, got int"):
        tm.map(pattern(4), alloc, method="test-shift", progress=3)
    with pytest.raises(MappingError, match="method 'test-shift' has no option 'shfit'; its options: shift"):
        tm.map(pattern(4), alloc, method="test-shift", shfit=2)
    assert registry.describe(tm.methods()["test-shift"]) == (
        "test-shift: rotate the block mapping\n"
        "  source: a test\n"
        "  shift (default 1): how far to rotate")
    assert tm.methods()["test-shift"].to_dict() == {
        "name": "test-shift", "summary": "rotate the block mapping", "source": "a test",
        "options": {"shift": {"default": 1, "doc": "how far to rotate"}}}
    with pytest.raises(ValueError, match="mapper 'test-shift' is registered twice"):
        registry.register("test-shift", "again")(shift)


@pytest.mark.parametrize("result, msg", [
    ([0, 1, 2], "the mapping has 3 entries but the pattern has 4 processes"),
    ([0, 1, 2, 3, 4], "the mapping has 5 entries but the pattern has 4 processes"),
    ([0, 1, 2, 7], "process 3 is mapped to PE 7, which is not in the allocation"),
    ([0, 1, 1, 2], "PE 1 holds 2 processes, more than capacity 1"),
    ([0.0, 1.0, 2.0, 3.0], "PE ids must be integers, got dtype float64"),
    ([0, 1, 2, -1], "process 3 is mapped to invalid PE -1"),
    ([0, 1, 2, 8], "process 3 is mapped to PE 8, outside the machine"),
])
def test_map_checks_what_a_mapper_returns(isolated_registry, result, msg):
    registry.register("test-bad", "returns a fixed answer")(lambda pattern, allocation, **kw: result)
    alloc = tm.machine("torus:2x2/2").allocate(4)
    with pytest.raises(MappingError, match=msg):
        tm.map(pattern(4), alloc, method="test-bad")


def test_check_mapping_directly():
    alloc = tm.machine("torus:2x2/2").allocation([1, 5, 6])
    check_mapping(np.array([5, 1, 5], dtype=np.int32), 3, alloc, 2)
    with pytest.raises(MappingError, match="PE 5 holds 3 processes, more than capacity 2"):
        check_mapping(np.array([5, 5, 5]), 3, alloc, 2)
    with pytest.raises(MappingError, match="process 1 is mapped to PE 0, which is not in the allocation"):
        check_mapping(np.array([5, 0, 1]), 3, alloc, 2)
    with pytest.raises(MappingError, match="process 2 is mapped to invalid PE -1"):
        check_mapping(np.array([5, 1, -1]), 3, alloc, 2)


# ------------------------------------------------------------------ Mapping value

def test_mapping_value():
    mp = tm.Mapping([3, 1, 2], method="file", seed=4, options={"file": "x"}, capacity=2)
    assert mp.pe_of.dtype == np.int32 and mp.n == 3
    assert mp.to_dict() == {"pe_of": [3, 1, 2], "method": "file", "seed": 4, "seconds": 0.0,
                            "options": {"file": "x"}, "capacity": 2}
    assert repr(mp) == "Mapping(n=3, method='file', seed=4, seconds=0)"
    with pytest.raises(ValueError, match="read-only"):
        mp.pe_of[0] = 0
    with pytest.raises(AttributeError):
        mp.method = "other"
    # the caller's array is copied, not frozen, and later changes do not reach the mapping
    src = np.array([0, 1], dtype=np.int32)
    m2 = tm.Mapping(src)
    src[0] = 5
    assert m2.pe_of.tolist() == [0, 1] and not m2.pe_of.flags.writeable


@pytest.mark.parametrize("pe_of, msg", [
    ([], "non-empty 1-D array of PE ids"),
    ([[0, 1]], "non-empty 1-D array of PE ids"),
    (5, "non-empty 1-D array of PE ids"),
    ([0.0, 1.0], "PE ids must be integers, got dtype float64"),
    (["0"], "PE ids must be integers, got dtype <U1"),
    ([True, False], "PE ids must be integers, got dtype bool"),
    ([0, -1], "process 1 is mapped to invalid PE -1"),
    ([2**31, 0], "process 0 is mapped to invalid PE 2147483648"),
])
def test_mapping_validation(pe_of, msg):
    with pytest.raises(MappingError, match=msg):
        tm.Mapping(pe_of)


# ------------------------------------------------------------------ methods() and describe

def test_methods_and_describe():
    reg = tm.methods()
    assert list(reg) == sorted(reg) and set(BASELINES) <= set(reg)
    info = reg["block"]
    assert info.name == "block" and info.options == {} and callable(info.func)
    assert registry.describe(info) == (
        "block: in allocation order, filling each PE up to capacity (the launcher default)\n"
        "  source: Mirsadeghi 2017 §3.5 (default block in-order mapping)\n"
        "  no options")
    assert registry.describe(reg["random"]) == (
        "random: seeded uniformly random placement onto the allocation's PE slots\n  no options")
    assert reg["cyclic"].to_dict()["options"] == {}
    # methods() hands out a copy
    reg.pop("block")
    assert "block" in tm.methods()


# ------------------------------------------------------------------ compare

@pytest.fixture
def job():
    pat = tm.generators.stencil_2d((4, 4))
    return pat, tm.machine("torus:4x4").allocate(16)


def test_compare_dataframe(job):
    pd = pytest.importorskip("pandas")
    pat, alloc = job
    df = tm.compare(pat, alloc, ["random", "cyclic"])
    assert isinstance(df, pd.DataFrame)
    # block is added first because it is the normaliser
    assert df["method"].tolist() == ["block", "random", "cyclic"]
    norm = [c for c in df.columns if c.endswith("_norm")]
    assert sorted(norm) == sorted(f"{k}_norm" for k in NORMALIZED)
    assert (df.loc["block", norm] == 1.0).all()
    # 4x4 5-point stencil (not periodic): 2 axes x 4 lines x 3 pairs x 2 directions = 48 messages
    # of 1 byte; in block order on a 4x4 torus process (x0, x1) sits on node (x0, x1): 1 hop each
    assert df.loc["block", "hop_bytes"] == 48.0 and df.loc["block", "max_dilation"] == 1
    for name in ("random", "cyclic"):
        mp = tm.map(pat, alloc, method=name)
        met = tm.evaluate(pat, alloc, mp)
        assert df.loc[name, "hop_bytes"] == met.hop_bytes
        assert df.loc[name, "hop_bytes_norm"] == pytest.approx(met.hop_bytes / 48.0)
        assert df.loc[name, "max_congestion_norm"] == pytest.approx(met.max_congestion / 1.0)


def test_compare_zero_baseline(job):
    pytest.importorskip("pandas")
    pat, alloc = job
    df = tm.compare(pat, alloc, ["random"])
    # block has no congestion variance (every link carries 1): 0/0 -> 1, x/0 -> inf
    assert df.loc["block", "nz_congestion_var"] == 0.0
    assert df.loc["block", "nz_congestion_var_norm"] == 1.0
    assert df.loc["random", "nz_congestion_var"] > 0
    assert df.loc["random", "nz_congestion_var_norm"] == float("inf")


def test_compare_without_pandas(job, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    pat, alloc = job
    rows = tm.compare(pat, alloc, ["cyclic", "block"], normalize="cyclic")
    assert isinstance(rows, list) and all(isinstance(r, dict) for r in rows)
    assert [r["method"] for r in rows] == ["cyclic", "block"]
    assert all(rows[0][k] == 1.0 for k in rows[0] if k.endswith("_norm"))
    assert rows[1]["hop_bytes"] == 48.0


def test_compare_options(job, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    pat, alloc = job
    with pytest.warns(MethodsSkipped, match="hierarchy .*; aphid .*levels"):
        rows = tm.compare(pat, alloc, None, normalize=None)
    # a torus: every default method but the two that follow a machine's levels
    assert [r["method"] for r in rows] == [m for m in DEFAULT_METHODS if m not in ("hierarchy", "aphid")]
    assert not any(k.endswith("_norm") for k in rows[0])
    assert [r["method"] for r in tm.compare(pat, alloc, "random")] == ["block", "random"]
    seeded = tm.compare(pat, alloc, ["random"], normalize=None, seed=3)[0]
    assert seeded["hop_bytes"] == tm.evaluate(pat, alloc, tm.map(pat, alloc, method="random", seed=3)).hop_bytes
    # hybrid weights reach the evaluator: weight only max congestion
    hyb = tm.compare(pat, alloc, ["block"], normalize=None, weights=(0, 1, 0, 0))[0]
    assert hyb["hybrid"] == hyb["max_congestion"] == 1.0
    # capacity 2, block: processes (0,1), (2,3) of every grid row share a PE, so 4 rows x 2 pairs
    # x 2 directions = 16 of the 48 bytes stay inside a node
    half = tm.machine("torus:4x4").allocate(8)
    assert tm.compare(pat, half, ["block"], normalize=None, capacity=2)[0]["edge_cut"] == 32.0


def test_compare_errors(job):
    pat, alloc = job
    with pytest.raises(MappingError, match="compare needs at least one method"):
        tm.compare(pat, alloc, [], normalize=None)
    with pytest.raises(MappingError, match="unknown mapping method 'nope'"):
        tm.compare(pat, alloc, ["nope"])
    with pytest.raises(MappingError, match="unknown mapping method 'nope'"):
        tm.compare(pat, alloc, ["block"], normalize="nope")
