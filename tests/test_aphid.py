"""APHiD (topomap/mappers/aphid.py, csrc/core/map_aphid.c): valid and seeded
mappings on every machine with levels, the allocation tree against the
routing oracle, exhaustive optima of the top-level cut, the 5 % pruning rule
at its threshold, and the paper's qualitative results (notes 004 §7.1, §7.2)
on small instances."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from topomap import generators as gen
from topomap import generators_nas as nas
from topomap import patterns_util as pu
from topomap.mappers.aphid import allocation_tree


def binary_top_levels(pe_of, pattern):
    """Bytes per level of a binary fat tree, from the paper's formula (notes
    004 §4): a message u -> v climbs to floor(log2(pi(u) XOR pi(v))) + 1
    (0 when both share the endpoint).  One PE per node, endpoint = PE."""
    out = {}
    for u in range(pattern.n):
        for k in range(pattern.indptr[u], pattern.indptr[u + 1]):
            x = int(pe_of[u]) ^ int(pe_of[pattern.indices[k]])
            lv = x.bit_length()  # floor(log2 x) + 1, 0 for x = 0
            out[lv] = out.get(lv, 0.0) + float(pattern.bytes[k])
    return out


def top_bytes(pattern, alloc, **options):
    mp = tm.map(pattern, alloc, method="aphid", **options)
    return tm.evaluate(pattern, alloc, mp).level_bytes[alloc.machine.level_names[-1]]


def shuffled(pattern, seed=0):
    """The same traffic under a random rank order (a badly numbered application)."""
    perm = np.random.default_rng(seed).permutation(pattern.n)
    s = np.repeat(np.arange(pattern.n), np.diff(pattern.indptr))
    return tm.Pattern.from_edges(perm[s], perm[pattern.indices], pattern.bytes, n=pattern.n)


# ---------------------------------------------------------------- machines with levels
@st.composite
def hierarchical(draw):
    node = draw(st.sampled_from(["1", "2", "pack:2 core:2", "core:3"]))
    kind = draw(st.sampled_from(["xgft", "hierarchy", "dragonfly", "single"]))
    if kind == "xgft":
        h = draw(st.integers(1, 3))
        m = "x".join(str(draw(st.integers(1, 3))) for _ in range(h))
        w = "x".join(["1"] + [str(draw(st.integers(1, 2))) for _ in range(h - 1)])
        return tm.machine(f"xgft:m={m},w={w}/{node}")
    if kind == "hierarchy":
        ar = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 4)))]
        return tm.machine(f"hierarchy:{':'.join(map(str, ar))}/{':'.join(str(10 ** i) for i in range(len(ar)))}")
    if kind == "dragonfly":
        return tm.machine(f"dragonfly:g=3,a=2,h=1,p={draw(st.integers(1, 2))}/{node}")
    return tm.machine(f"tree:{'core:' + node if node in ('1', '2') else node}")


@st.composite
def jobs(draw):
    m = draw(hierarchical())
    npes = draw(st.integers(1, m.npes))
    alloc = m.allocate(npes, policy=draw(st.sampled_from(["contiguous", "random", "fragmented"])),
                       seed=draw(st.integers(0, 9)))
    capacity = draw(st.integers(1, 3))
    n = draw(st.integers(1, npes * capacity))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dense = (rng.random((n, n)) < draw(st.floats(0.0, 0.8))) * rng.choice([1.0, 3.0, 40.0], size=(n, n))
    np.fill_diagonal(dense, 0)
    return alloc, tm.Pattern.from_dense(dense), capacity


@given(jobs(), st.sampled_from(["proportional", "capacity"]), st.sampled_from(["recursive", "kway"]),
       st.sampled_from([0.0, 0.05, 0.5]), st.integers(0, 2**64 - 1))
def test_valid_and_seeded_on_every_hierarchy(job, fill, partitioner, prune, seed):
    alloc, pat, capacity = job
    kw = dict(seed=seed, capacity=capacity, fill=fill, partitioner=partitioner, prune=prune)
    mp = tm.map(pat, alloc, method="aphid", **kw)  # check_mapping: allocated PEs, capacities
    assert np.array_equal(mp.pe_of, tm.map(pat, alloc, method="aphid", **kw).pe_of)


@given(hierarchical(), st.integers(0, 2**32 - 1))
def test_allocation_tree_follows_level_of(m, seed):
    rng = np.random.default_rng(seed)
    pes = rng.permutation(m.npes)[: rng.integers(1, m.npes + 1)]
    t = allocation_tree(m.allocation(pes))
    assert sorted(t["pes"].tolist()) == sorted(pes.tolist())
    for g in range(len(t["start"])):
        mine = t["pes"][t["start"][g]:t["start"][g] + t["size"][g]]
        lv = m.level_of(mine[:, None], mine[None, :]).max()
        assert lv == t["level"][g]
        if t["nchildren"][g]:
            kids = range(t["first_child"][g], t["first_child"][g] + t["nchildren"][g])
            firsts = [t["pes"][t["start"][c]] for c in kids]
            assert firsts == sorted(firsts) and len(firsts) >= 2
            # children meet one another exactly at the group's level
            between = m.level_of(np.array(firsts)[:, None], np.array(firsts)[None, :])
            assert set(between[~np.eye(len(firsts), dtype=bool)].tolist()) == {t["level"][g]}
        else:
            assert t["size"][g] == 1 and t["level"][g] == 0


# ---------------------------------------------------------------- optimum and the bytes-per-level definition
@given(st.integers(0, 2**32 - 1))
def test_top_level_cut_is_the_exhaustive_optimum_on_planted_clusters(seed):
    """8 processes in two clusters (heavy inside, light between, random
    labels) on a binary fat tree of 8 nodes: APHiD's root split equals the
    best of all 35 splits 4 | 4.  (On arbitrary dense 8-vertex graphs the
    multilevel heuristic misses the optimum in about 8 % of cases.)"""
    rng = np.random.default_rng(seed)
    lab = rng.permutation(8) % 2
    same = lab[:, None] == lab[None, :]
    dense = np.where(same, (rng.random((8, 8)) < 0.7) * rng.uniform(4, 10, (8, 8)),
                     (rng.random((8, 8)) < 0.4) * rng.uniform(0.5, 2, (8, 8)))
    np.fill_diagonal(dense, 0)
    pat = tm.Pattern.from_dense(dense)
    alloc = tm.machine("fattree:k=2,levels=3").allocate(8)
    mp = tm.map(pat, alloc, method="aphid", seed=seed % 1000, prune=0)
    levels = binary_top_levels(mp.pe_of, pat)
    w = dense + dense.T
    best = min(w[np.ix_(c, [j for j in range(8) if j not in c])].sum()
               for c in map(list, itertools.combinations(range(8), 4)) if 0 in c)
    assert levels.get(3, 0.0) == pytest.approx(best)
    met = tm.evaluate(pat, alloc, mp)  # the evaluator agrees with the paper's formula
    assert [met.level_bytes[k] for k in ("Node", "leaf", "agg", "spine")] == \
        pytest.approx([levels.get(lv, 0.0) for lv in range(4)])


# ---------------------------------------------------------------- §7.1: bytes per level on a binary fat tree
STRUCTURED = {
    "stencil2d": lambda: gen.stencil_2d((16, 16)),
    "stencil3d": lambda: gen.stencil_3d((8, 8, 4)),
    "moore": lambda: gen.moore((16, 16), r=2),
    "nas_cg": lambda: nas.nas_cg(256),
    "nas_mg": lambda: nas.nas_mg(256),
    "nas_lu": lambda: nas.nas_lu(256),
    "nas_bt": lambda: nas.nas_bt(256),
}


@pytest.fixture(scope="module")
def binary256():
    return tm.machine("fattree:k=2,levels=8").allocate(256)


@pytest.mark.parametrize("name", sorted(STRUCTURED))
def test_top_level_bytes_at_most_linear_and_random(name, binary256):
    """§7.1: APHiD's top-level bytes never exceed the linear (block)
    placement's, and linear beats the median of random placements (§2.5)
    on patterns shaped for rank order."""
    pat = STRUCTURED[name]()
    alloc = binary256
    top = alloc.machine.level_names[-1]
    aphid = top_bytes(pat, alloc)
    linear = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block")).level_bytes[top]
    rand = np.median([tm.evaluate(pat, alloc, tm.map(pat, alloc, method="random", seed=s)).level_bytes[top]
                      for s in range(11)])
    assert aphid <= linear < rand


def test_random_rank_order_recovers_the_structure(binary256):
    """A 3-D stencil numbered at random: block inherits the disorder, APHiD
    (which sees only the traffic) cuts the top level as well as on the
    well-numbered stencil, and pushes traffic down at every network level
    (bytes crossing level >= l, for each switch level l)."""
    pat = gen.stencil_3d((8, 8, 4))
    bad = shuffled(pat)
    alloc = binary256
    names = alloc.machine.level_names
    blk = tm.evaluate(bad, alloc, tm.map(bad, alloc, method="block")).level_bytes
    aph = tm.evaluate(bad, alloc, tm.map(bad, alloc, method="aphid")).level_bytes
    assert aph[names[-1]] <= top_bytes(pat, alloc)
    assert aph[names[-1]] * 4 < blk[names[-1]]
    for lv in range(names.index("leaf"), len(names)):
        assert sum(aph[k] for k in names[lv:]) <= sum(blk[k] for k in names[lv:])


# ---------------------------------------------------------------- §7.2: pruning
def test_pruning_drops_exactly_the_pairs_below_the_threshold():
    """Two cliques of 16 light pairs and one heavy pair (u, v) across them.
    At a light weight just below 5 % of the heavy one (C + C^T) the cliques
    vanish and u, v share a half; at exactly 5 % they stay, the cheapest
    root cut is the heavy pair alone, and u, v are split."""
    alloc = tm.machine("fattree:k=2,levels=5").allocate(32)
    lab = np.zeros(32, dtype=int)
    lab[np.random.default_rng(0).permutation(32)[:16]] = 1
    u, v = int(np.flatnonzero(lab == 0)[0]), int(np.flatnonzero(lab == 1)[0])
    src, dst = np.nonzero((lab[:, None] == lab[None, :]) & ~np.eye(32, dtype=bool))

    def case(light):
        return tm.Pattern.from_edges([*src, u, v], [*dst, v, u], [light] * len(src) + [50.0, 50.0], n=32)
    for light, together in ((4.99 / 2, True), (5.0 / 2, False)):
        pat = case(light)
        for seed in range(3):
            pe = tm.map(pat, alloc, method="aphid", seed=seed).pe_of
            assert bool(pe[u] // 16 == pe[v] // 16) is together
        assert (top_bytes(pat, alloc) == 100.0) is not together


def test_pruning_is_patterns_util_prune_of_the_symmetrised_pattern():
    pat = pu.add(gen.stencil_2d((8, 8), weights=(10, 10)), gen.random_sparse(64, 0.2, seed=3, bytes=0.3))
    alloc = tm.machine("fattree:k=2,levels=6").allocate(64)
    for f in (0.05, 0.2):
        direct = tm.map(pat, alloc, method="aphid", prune=f, seed=4).pe_of
        by_hand = tm.map(pu.prune(pu.symmetrize(pat), f), alloc, method="aphid", prune=0, seed=4).pe_of
        assert np.array_equal(direct, by_hand)
    uniform = gen.stencil_2d((8, 8))  # no pair below 5 %: pruning changes nothing
    assert np.array_equal(tm.map(uniform, alloc, method="aphid").pe_of,
                          tm.map(uniform, alloc, method="aphid", prune=0).pe_of)


def test_pruning_light_all_to_all_lowers_top_level_bytes():
    """§7.2 (GTC, MiniDFT: up to 83 % / 76 % less top-level traffic): a 3-D
    stencil with a light sub-communicator all-to-all (1 % of a stencil
    message) partitions better once the light pairs are pruned."""
    pat = pu.add(gen.stencil_3d((16, 8, 4)), gen.subcomm_alltoall((16, 8, 4), axes=0, bytes=0.01))
    alloc = tm.machine("fattree:k=2,levels=9").allocate(512)
    for seed in range(2):
        assert top_bytes(pat, alloc, prune=0.05, seed=seed) < 0.9 * top_bytes(pat, alloc, prune=0, seed=seed)


def test_pruning_beyond_five_percent_drops_useful_edges():
    """§7.2 (Nekbone): a few heavy pairs and many edges at 10 % of them;
    pruning at 50 % throws the 10 % edges away and the top level pays."""
    perm = np.random.default_rng(3).permutation(256)
    pairs = tm.Pattern.from_edges(perm, perm[np.arange(256) ^ 1], np.full(256, 100.0), n=256)
    pat = pu.add(gen.stencil_2d((16, 16), weights=(10, 10)), pairs)
    alloc = tm.machine("fattree:k=2,levels=8").allocate(256)
    assert 2 * top_bytes(pat, alloc, prune=0.05) < top_bytes(pat, alloc, prune=0.5)


# ---------------------------------------------------------------- other machines, allocations, capacities
def test_dragonfly_two_levels_keep_traffic_in_groups():
    """A dragonfly is APHiD's two-level case (§II-C): groups, then routers."""
    m = tm.machine("dragonfly:g=9,a=4,h=2,p=2/4")
    alloc = m.allocate(m.npes)
    pat = shuffled(gen.stencil_3d((12, 12, 2)), seed=1)
    blk = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block")).level_bytes
    aph = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="aphid")).level_bytes
    assert aph["global"] * 2 < blk["global"]


def test_tapered_aphid_tree_partial_allocation():
    """The 0.25-core APHiD tree (16 subtrees x 22 leaves x 12 nodes), a job of
    a quarter of it: fewer spine bytes than the launcher's order, even when
    the allocation is fragmented."""
    m = tm.machine("aphid:taper=4")
    pat = shuffled(gen.stencil_3d((16, 11, 6)), seed=2)
    for policy in ("contiguous", "fragmented"):
        alloc = m.allocate(pat.n, policy=policy, seed=1)
        blk = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block")).level_bytes["spine"]
        assert top_bytes(pat, alloc) < 0.5 * blk


def test_partial_fill_proportional_or_capacity():
    """17 processes on 64 nodes of 4 PEs in 4 subtrees: proportional shares
    spread them 5 + 4 + 4 + 4 over the subtrees (the paper's fixed sizes);
    as bounds only, the slots let them gather in one subtree."""
    m = tm.machine("fattree:k=4,levels=3/4")
    alloc = m.allocate(256)
    pat = gen.random_sparse(17, 0.5, seed=1)
    spread = tm.map(pat, alloc, method="aphid", fill="proportional").pe_of
    assert sorted(np.bincount(spread // 64, minlength=4).tolist()) == [4, 4, 4, 5]
    gathered = tm.map(pat, alloc, method="aphid", fill="capacity").pe_of
    assert len(set((gathered // 64).tolist())) == 1
    assert top_bytes(pat, alloc, fill="capacity") == 0.0 < top_bytes(pat, alloc)
    # as many processes as subtrees, each subtree with room for all: a clique still gathers
    clique = tm.Pattern.from_dense(np.ones((4, 4)) - np.eye(4))
    assert len(set((tm.map(clique, alloc, method="aphid", fill="capacity").pe_of // 64).tolist())) == 1
    assert len(set((tm.map(clique, alloc, method="aphid").pe_of // 64).tolist())) == 4


def test_multicore_nodes_and_capacity():
    """Node tree levels are levels too: two 8-core packages per node."""
    m = tm.machine("fattree:k=4,levels=2/pack:2 core:8")
    alloc = m.allocate(128)
    pat = shuffled(gen.stencil_3d((8, 8, 8)), seed=3)
    mp = tm.map(pat, alloc, method="aphid", capacity=4)
    assert np.bincount(mp.pe_of, minlength=m.npes).max() <= 4
    aph = tm.evaluate(pat, alloc, mp)
    blk = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block", capacity=4))
    assert aph.edge_cut < 0.5 * blk.edge_cut


@pytest.mark.parametrize("spec", ["torus:4x4/2", "mesh:4x4", "hypercube:4", "shortcut:n=32,d=4,seed=0"])
def test_networks_without_levels_are_refused(spec):
    alloc = tm.machine(spec).allocate(16)
    with pytest.raises(tm.MappingError, match="needs a network with levels"):
        tm.map(gen.stencil_2d((4, 4)), alloc, method="aphid")


def test_one_node_of_a_torus_is_fine():
    alloc = tm.machine("torus:4x4/pack:2 core:4").allocate(8)
    pat = gen.stencil_2d((2, 4))
    mp = tm.map(pat, alloc, method="aphid")
    assert set(mp.pe_of.tolist()) == set(range(8))


@pytest.mark.parametrize("option, value", [
    ("prune", -0.1), ("prune", 1.0), ("prune", "5%"), ("prune", True),
    ("partitioner", "metis"), ("fill", "compact"), ("ntries", 0), ("ntries", 2.5), ("ntries", True),
])
def test_bad_options_name_the_option(option, value):
    alloc = tm.machine("fattree:k=2,levels=2").allocate(4)
    with pytest.raises(tm.MappingError, match=f"option {option} "):
        tm.map(gen.stencil_2d((2, 2)), alloc, method="aphid", **{option: value})


def test_too_many_processes():
    alloc = tm.machine("fattree:k=2,levels=2").allocate(4)
    with pytest.raises(tm.MappingError, match="do not fit"):
        tm.map(gen.stencil_2d((3, 3)), alloc, method="aphid", capacity=2)


# ---------------------------------------------------------------- progress and cancellation
def test_progress_reports_and_cancel_leaves_no_state():
    pat = gen.stencil_2d((128, 128), periodic=True)
    alloc = tm.machine("fattree:k=4,levels=4/64").allocate(pat.n)
    seen = []
    reference = tm.map(pat, alloc, method="aphid", seed=7, progress=seen.append).pe_of
    assert len(seen) >= 3 and seen == sorted(seen) and seen[-1] == 1.0 and seen[0] >= 0
    calls = []

    def stop_at_second(fraction):
        calls.append(fraction)
        return len(calls) == 2
    with pytest.raises(tm.Cancelled, match="aphid cancelled by the progress callback at") as info:
        tm.map(pat, alloc, method="aphid", seed=7, progress=stop_at_second)
    assert len(calls) == 2 and info.value.fraction == calls[1]
    assert np.array_equal(tm.map(pat, alloc, method="aphid", seed=7).pe_of, reference)


def test_progress_exception_propagates():
    pat = gen.stencil_2d((128, 128))
    alloc = tm.machine("fattree:k=4,levels=4/64").allocate(pat.n)

    def boom(fraction):
        raise RuntimeError("from the callback")
    with pytest.raises(RuntimeError, match="from the callback"):
        tm.map(pat, alloc, method="aphid", progress=boom)


def test_registered_with_its_options():
    info = tm.methods()["aphid"]
    assert set(info.options) == {"prune", "partitioner", "fill", "ntries"}
    assert info.options["prune"][0] == 0.05 and info.options["partitioner"][0] == "recursive"
    assert "APHiD" in info.source
