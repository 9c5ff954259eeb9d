"""Method "hierarchy": the QAP objective J on hierarchy machines.

References written from the definitions: J = sum over directed messages of
bytes x D(PE_p, PE_q), with D of a ``hierarchy:a1:a2:.../d1:d2:...`` machine
the distance of the lowest level at which the two PEs' mixed-radix ids share
a group (KaHIP/VieM, notes/anchors.md notation); optima by exhaustive search
over every mapping of <= 8 processes.  Golden values of the 3elt model are
VieM's (/work/shared/data/graphs/README.md).
"""

import itertools
import os
import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap import MappingError, _core

GRAPHS = os.environ.get("TOPOMAP_GRAPHS", "/work/shared/data/graphs")
HAVE_GMAP = bool(shutil.which("scotch_gmap") or shutil.which("gmap"))


# ---------------------------------------------------------------- references

def hier_distance(arities, dists, x, y):
    """D(x, y) of PE ids x, y: the distance of the lowest level where they share a group."""
    if x == y:
        return 0.0
    size = 1
    for a, d in zip(arities, dists):
        size *= a
        if x // size == y // size:
            return float(d)
    raise AssertionError("PEs outside the machine")


def reference_J(pattern, arities, dists, pe_of):
    src = pattern.senders()
    return sum(float(b) * hier_distance(arities, dists, int(pe_of[p]), int(pe_of[q]))
               for p, q, b in zip(src, pattern.indices, pattern.bytes))


def spec_of(arities, dists):
    return f"hierarchy:{':'.join(map(str, arities))}/{':'.join(map(str, dists))}"


def exhaustive_optimum(pattern, arities, dists, pes, capacity):
    """Lowest J over every mapping of the processes onto `pes` with <= capacity each."""
    D = np.array([[hier_distance(arities, dists, x, y) for y in pes] for x in pes])
    src, dst, w = pattern.senders(), pattern.indices, pattern.bytes
    if capacity == 1:
        maps = np.array(list(itertools.permutations(range(len(pes)), pattern.n)))
    else:
        maps = np.array(list(itertools.product(range(len(pes)), repeat=pattern.n)))
        load = np.stack([(maps == k).sum(axis=1) for k in range(len(pes))])
        maps = maps[(load <= capacity).all(axis=0)]
    return float((w[None, :] * D[maps[:, src], maps[:, dst]]).sum(axis=1).min())


def scrambled(pat, seed):
    """The same pattern with process ids permuted (a bad initial order)."""
    perm = np.random.default_rng(seed).permutation(pat.n)
    return tm.Pattern.from_edges(perm[pat.senders()], perm[pat.indices], pat.bytes, n=pat.n)


def loads(pe_of):
    return np.bincount(pe_of)


def reference_graph(name):
    path = os.path.join(GRAPHS, f"{name}.graph")
    if not os.path.exists(path):
        pytest.skip(f"{path} not present")
    return tm.io.read(path)


hierarchies = st.lists(st.tuples(st.integers(1, 3), st.integers(1, 4)), min_size=1, max_size=3).map(
    lambda lv: ([a for a, _ in lv], list(np.cumsum([s for _, s in lv]).tolist())))


# ---------------------------------------------------------------- J

@given(hierarchies, st.integers(0, 2**32 - 1), st.integers(1, 3))
def test_reference_J_equals_metrics_qap(levels, seed, node_levels):
    arities, dists = levels
    spec = spec_of(arities, dists) + f",node_levels={min(node_levels, len(arities))}"
    m = tm.machine(spec)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 12))
    dense = (rng.random((n, n)) < 0.4) * rng.integers(1, 9, (n, n)).astype(float)
    np.fill_diagonal(dense, 0)
    dense[0, 1] = 2.0
    pat = tm.Pattern.from_dense(dense)
    pe_of = rng.integers(0, m.npes, n)
    assert tm.evaluate(pat, m, pe_of).qap == pytest.approx(reference_J(pat, arities, dists, pe_of))


@given(hierarchies, st.integers(0, 2**32 - 1))
def test_tree_of_the_allocation_matches_the_definition(levels, seed):
    arities, dists = levels
    m = tm.machine(spec_of(arities, dists))
    rng = np.random.default_rng(seed)
    pes = rng.permutation(m.npes)[: int(rng.integers(1, m.npes + 1))]
    t = _core.hierarchy_groups(m._core, pes.astype(np.int32))
    assert sorted(t["pes"].tolist()) == sorted(pes.tolist())
    leaf = {int(t["pes"][t["lo"][g]]): g for g in range(len(t["lo"])) if t["nchild"][g] == 0}
    assert len(leaf) == pes.size
    for x, y in itertools.product(leaf, repeat=2):
        a, b = leaf[x], leaf[y]
        while a != b:
            a, b = (t["parent"][a], b) if a > b else (a, t["parent"][b])
        want = hier_distance(arities, dists, x, y)
        assert (t["dist"][a] if x != y else 0.0) == want


# ---------------------------------------------------------------- optimality on tiny cases

TINY = [((2, 2, 2), (1, 10, 100), 8, 1), ((2, 2), (1, 10), 8, 2), ((2, 2, 2), (1, 10, 100), 6, 1),
        ((3, 2), (2, 9), 6, 1), ((2, 2, 2), (1, 5, 7), 7, 1)]


def test_optimum_on_structured_tiny_cases():
    ring = tm.generators.stencil_2d((8, 1), periodic=True)
    ladder = tm.generators.stencil_2d((4, 2), weights=(1, 5))
    pairs = tm.Pattern.from_edges([0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 4, 6], [5, 7, 6, 4, 3, 0, 2, 1, 2, 4, 6, 0],
                                  [9, 9, 9, 9, 9, 9, 9, 9, 1, 1, 1, 1])
    for arities, dists, _, capacity in TINY[:2]:
        m = tm.machine(spec_of(arities, dists))
        alloc = m.allocate(m.npes)
        for pat in (ring, ladder, pairs):
            opt = exhaustive_optimum(pat, arities, dists, alloc.pes, capacity)
            got = tm.map(pat, alloc, method="hierarchy", capacity=capacity, seed=1)
            assert reference_J(pat, arities, dists, got.pe_of) == opt


def test_near_optimum_on_random_tiny_cases():
    """Seeded random weighted patterns (directed and symmetric): measured 58
    of 60 at the optimum and the other two within 2% (a local optimum of
    moves and swaps); a mapper that only balanced would miss by 30-40%."""
    rng = np.random.default_rng(0)
    exact = total = 0
    for arities, dists, n, capacity in TINY:
        m = tm.machine(spec_of(arities, dists))
        alloc = m.allocate(m.npes)
        for t in range(6):
            dense = rng.integers(1, 10, (n, n)) * (rng.random((n, n)) < 0.4)
            np.fill_diagonal(dense, 0)
            dense[0, n - 1] = 3
            if t % 2:
                dense = dense + dense.T
            pat = tm.Pattern.from_dense(dense.astype(float))
            opt = exhaustive_optimum(pat, arities, dists, alloc.pes, capacity)
            got = reference_J(pat, arities, dists,
                              tm.map(pat, alloc, method="hierarchy", capacity=capacity, depth=2).pe_of)
            assert opt <= got <= 1.05 * opt
            exact += got == opt
            total += 1
    assert exact >= 0.85 * total


# ---------------------------------------------------------------- quality on structured cases

@pytest.mark.parametrize("spec, pat, capacity", [
    ("hierarchy:4:8:4/1:10:100", tm.generators.stencil_2d((16, 8)), 1),
    ("hierarchy:2:4:8/1:10:100", tm.generators.stencil_3d((4, 4, 8), points=7), 2),
    ("hierarchy:8:2:2:2/1:5:20:80", tm.generators.moore((16, 16), r=1), 4),
    ("fattree:k=4,levels=3/4", tm.generators.stencil_2d((16, 8), periodic=True), 1),
])
def test_beats_block_and_random_on_scrambled_patterns(spec, pat, capacity):
    pat = scrambled(pat, 3)
    m = tm.machine(spec)
    alloc = m.allocate(-(-pat.n // capacity))
    J = {meth: tm.evaluate(pat, alloc, tm.map(pat, alloc, method=meth, capacity=capacity, seed=2)).qap
         for meth in ("block", "random", "hierarchy")}
    assert J["hierarchy"] < 0.5 * min(J["block"], J["random"])


def test_orders_does_not_matter_in_order_stencil():
    """An in-order stencil on its natural allocation is already good for
    block; the mapper must be at least as good."""
    pat = tm.generators.stencil_2d((16, 16))
    alloc = tm.machine("hierarchy:4:4:16/1:10:100").allocate(256)
    block = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block")).qap
    ours = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="hierarchy")).qap
    assert ours <= block


# ---------------------------------------------------------------- the papers' worked examples

@pytest.mark.parametrize("hier, golden", [("16:4:2", 29360), ("4:8:4", 65108)])
def test_3elt_model_golden_values_and_viem(hier, golden):
    """VieM's evaluator gives J = 29360 (16:4:2) and 65108 (4:8:4) for the
    identity permutation of the 128-block model, and VieM's own mapping of
    16:4:2 also has 29360: the hierarchy mapper must match or beat it."""
    pat = reference_graph("3elt_k128_model")
    alloc = tm.machine(f"hierarchy:{hier}/1:10:100").allocate(128)
    assert tm.evaluate(pat, alloc, np.arange(128)).qap == golden
    ours = tm.map(pat, alloc, method="hierarchy", seed=0)
    assert sorted(ours.pe_of.tolist()) == list(range(128))
    assert tm.evaluate(pat, alloc, ours).qap <= golden


def test_strong_at_most_kahip_strong_on_delaunay():
    """KaHIP's global_multisection --preconfiguration=strong --imbalance=3 maps delaunay_n15 onto 16:4:2
    (1:10:100) with J = 94,848 (median of seeds 0-2, kahip wheel; benchmarks/bench_mapping_quality.py).  Strong
    refines its bisections by max flows, as KaHIP strong does, and must not be above it (the preset before flows:
    95,715)."""
    pat = reference_graph("delaunay_n15")
    alloc = tm.machine("hierarchy:16:4:2/1:10:100").allocate(128)
    capacity = int(np.ceil(1.03 * pat.n / 128))
    mp = tm.map(pat, alloc, method="hierarchy", seed=0, capacity=capacity, effort="strong", imbalance=0.03)
    assert loads(mp.pe_of).max() <= capacity
    assert tm.evaluate(pat, alloc, mp).qap <= 94848


def test_3elt_partition_golden_value():
    pat = reference_graph("3elt")
    part = np.loadtxt(os.path.join(GRAPHS, "3elt_k128_model.part"), dtype=np.int32)
    alloc = tm.machine("hierarchy:16:4:2/1:10:100").allocate(128)
    assert tm.evaluate(pat, alloc, part).qap == 29360


@pytest.mark.skipif(not HAVE_GMAP, reason="Scotch (Debian package scotch) is not installed")
@pytest.mark.parametrize("spec, name, capacity", [
    ("hierarchy:16:4:2/1:10:100", "3elt_k128_model", 1),
    ("hierarchy:4:8:4/1:10:100", "stencil", 2),
    ("hierarchy:2:4:4/1:10:100", "moore", 3),
])
def test_at_most_scotch(spec, name, capacity):
    pat = {"stencil": lambda: scrambled(tm.generators.stencil_2d((16, 16)), 1),
           "moore": lambda: scrambled(tm.generators.moore((12, 8), r=2), 2)}.get(name, lambda: reference_graph(name))()
    alloc = tm.machine(spec).allocate(-(-pat.n // capacity))
    ours = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="hierarchy", capacity=capacity)).qap
    scotch = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="scotch", capacity=capacity)).qap
    assert ours <= scotch


# ---------------------------------------------------------------- contract

@settings(max_examples=40, deadline=None)
@given(hierarchies, st.integers(0, 2**32 - 1), st.integers(1, 3),
       st.sampled_from(["contiguous", "random", "fragmented"]), st.sampled_from(["fast", "eco", "strong"]))
def test_valid_under_capacities(levels, seed, capacity, policy, effort):
    arities, dists = levels
    m = tm.machine(spec_of(arities, dists))
    rng = np.random.default_rng(seed)
    alloc = m.allocate(int(rng.integers(1, m.npes + 1)), policy=policy, seed=seed)
    n = int(rng.integers(1, len(alloc) * capacity + 1))
    dense = (rng.random((n, n)) < 0.3) * rng.integers(1, 5, (n, n)).astype(float)
    np.fill_diagonal(dense, 0)
    pat = tm.Pattern.from_dense(dense) if dense.any() else tm.Pattern.from_edges([], [], [], n=n)
    imbalance = float(rng.choice([0.0, 0.03, 0.5]))
    mp = tm.map(pat, alloc, method="hierarchy", capacity=capacity, seed=seed, effort=effort, imbalance=imbalance,
                depth=int(rng.integers(0, 3)))   # tm.map checks the allocation and the capacity
    bound = min(capacity, int(np.ceil((1 + imbalance) * n / len(alloc) - 1e-9)))
    assert loads(mp.pe_of).max() <= max(bound, 1)


@pytest.mark.parametrize("spec, capacity", [("hierarchy:4:4:16/0:10:100", 1), ("hierarchy:4:4:8/0:10:100", 2)])
def test_pes_at_distance_zero_are_filled_in_process_order(spec, capacity):
    """J cannot tell a node's PEs apart when they are at distance 0, so the node is not partitioned."""
    pat = scrambled(tm.generators.stencil_3d((8, 8, 4), points=7), 2)
    alloc = tm.machine(spec).allocate(pat.n // capacity)
    for seed in range(3):
        pe_of = tm.map(pat, alloc, method="hierarchy", seed=seed, capacity=capacity).pe_of
        assert loads(pe_of).max() == capacity
        for node in np.unique(pe_of // 4):
            assert np.all(np.diff(pe_of[pe_of // 4 == node]) >= 0)


def test_deterministic_and_tries_never_worse():
    pat = scrambled(tm.generators.stencil_3d((8, 8, 4), points=7), 5)
    alloc = tm.machine("hierarchy:4:4:8/1:10:100").allocate(128)
    a = tm.map(pat, alloc, method="hierarchy", seed=11, capacity=2)
    b = tm.map(pat, alloc, method="hierarchy", seed=11, capacity=2)
    assert np.array_equal(a.pe_of, b.pe_of)
    three = tm.map(pat, alloc, method="hierarchy", seed=11, capacity=2, tries=3)
    assert tm.evaluate(pat, alloc, three).qap <= tm.evaluate(pat, alloc, a).qap


def test_progress_and_cancellation_leave_no_state():
    pat = scrambled(tm.generators.stencil_2d((64, 64)), 1)
    alloc = tm.machine("hierarchy:4:8:8/1:10:100").allocate(256)
    seen = []
    reference = tm.map(pat, alloc, method="hierarchy", capacity=16, seed=3, progress=seen.append).pe_of
    assert len(seen) >= 3 and seen == sorted(seen) and seen[-1] == 1.0 and seen[0] >= 0
    calls = []

    def stop_at_third(fraction):
        calls.append(fraction)
        return len(calls) == 3
    with pytest.raises(tm.Cancelled, match="hierarchy cancelled by the progress callback at") as info:
        tm.map(pat, alloc, method="hierarchy", capacity=16, seed=3, progress=stop_at_third)
    assert len(calls) == 3 and info.value.fraction == calls[2]
    assert np.array_equal(tm.map(pat, alloc, method="hierarchy", capacity=16, seed=3).pe_of, reference)

    def boom(fraction):
        raise RuntimeError("from the callback")
    with pytest.raises(RuntimeError, match="from the callback"):
        tm.map(pat, alloc, method="hierarchy", capacity=16, progress=boom)


def test_small_and_degenerate_inputs():
    alloc = tm.machine("hierarchy:2:2/1:10").allocate(4)
    one = tm.Pattern.from_edges([], [], [], n=1)
    assert tm.map(one, alloc, method="hierarchy").pe_of.tolist() == [0]
    silent = tm.Pattern.from_edges([], [], [], n=4)
    assert sorted(tm.map(silent, alloc, method="hierarchy").pe_of.tolist()) == [0, 1, 2, 3]
    single = tm.machine("hierarchy:4/3").allocation([2])
    pair = tm.Pattern.from_edges([0], [1], [5.0])
    assert tm.map(pair, single, method="hierarchy", capacity=2).pe_of.tolist() == [2, 2]


@pytest.mark.parametrize("option, value", [
    ("imbalance", -0.1), ("imbalance", float("nan")), ("imbalance", True), ("depth", -1), ("depth", 1.5),
    ("effort", "ultra"), ("tries", 0), ("tries", "2"),
])
def test_options_out_of_range(option, value):
    alloc = tm.machine("hierarchy:2:2/1:10").allocate(4)
    with pytest.raises(MappingError, match=f"option {option}"):
        tm.map(tm.generators.stencil_2d((2, 2)), alloc, method="hierarchy", **{option: value})


@pytest.mark.parametrize("spec, kind", [("torus:4x4/2", "torus"), ("dragonfly:g=5,a=2,h=2,p=2/2", "dragonfly"),
                                        ("hypercube:4/1", "hypercube")])
def test_refuses_machines_that_are_not_hierarchies(spec, kind):
    m = tm.machine(spec)
    alloc = m.allocate(m.npes)
    with pytest.raises(MappingError, match=f"has a {kind} network: .*not a hierarchy"):
        tm.map(tm.generators.stencil_2d((m.npes // 4, 4)), alloc, method="hierarchy")


def test_a_hierarchical_part_of_another_machine_is_accepted():
    """Two torus nodes next to each other are a hierarchy (distance 1)."""
    m = tm.machine("torus:4x4/2")
    alloc = m.allocation([0, 1, 2, 3])
    pe_of = tm.map(tm.generators.stencil_2d((2, 2)), alloc, method="hierarchy").pe_of
    assert sorted(pe_of.tolist()) == [0, 1, 2, 3]
