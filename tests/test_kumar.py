"""Kumar's mappers: grasp, mahd, emahd, gge, max-contention, kumar-hybrid.

Reference implementations here are slow pure Python written from the thesis
(hop-bytes from its definition, MAHD and GGE from Algorithm 1 of ch. 6 with
the tie rules map_mahd.c documents)."""

import heapq
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap import MappingError

from conftest import machines

KUMAR = ["grasp", "mahd", "emahd", "gge", "max-contention", "kumar-hybrid"]
FAST = {"grasp": {"iterations": 3}, "kumar-hybrid": {"iterations": 3, "part_size": 3}, "max-contention": {"passes": 5}}


# ---------------------------------------------------------------- references from the definitions

def torus_hops(machine, a, b):
    """Links between torus/mesh nodes a and b under minimal dimension-order routing."""
    h = 0
    for size, wrap in zip(machine.network.dims, machine.network.wrap):
        d = abs(a % size - b % size)
        h += min(d, size - d) if wrap else d
        a //= size
        b //= size
    return h


def hop_bytes(pat, machine, pe_of):
    """Sum over directed messages of bytes x hops between the nodes of their PEs."""
    ppn = machine.pes_per_node
    total = 0.0
    for p in range(pat.n):
        for k in range(pat.indptr[p], pat.indptr[p + 1]):
            q = pat.indices[k]
            total += pat.bytes[k] * torus_hops(machine, pe_of[p] // ppn, pe_of[q] // ppn)
    return total


def ref_mahd(pat, alloc, rule="average"):
    """Algorithm 1 of ch. 6 (one task per node): returns pe_of."""
    m = alloc.machine
    nodes = [int(v) for v in alloc.nodes()]
    hops = [[torus_hops(m, a, b) for b in nodes] for a in nodes]
    dense = pat.to_dense()
    w = dense + dense.T
    n = pat.n
    nbrs = [np.flatnonzero(w[i]).tolist() for i in range(n)]
    deg = [len(x) for x in nbrs]
    central = [sum(row) for row in hops]
    loc, stamp, free, heap, inheap = [-1] * n, {}, set(range(len(nodes))), [], set()

    def place(t, node):
        loc[t] = node
        stamp[t] = len(stamp)
        free.discard(node)
        for u in nbrs[t]:
            if loc[u] < 0 and u not in inheap:
                heapq.heappush(heap, (-deg[u], u))
                inheap.add(u)

    def most_central():
        return min(free, key=lambda node: (central[node], node))

    while min(loc) < 0:
        start = max((j for j in range(n) if loc[j] < 0), key=lambda j: (deg[j], -j))
        place(start, most_central())
        while heap:
            _, t = heapq.heappop(heap)
            inheap.discard(t)
            mapped = [u for u in nbrs[t] if loc[u] >= 0]
            if rule == "gge":
                recent = max(mapped, key=lambda u: stamp[u])
                score = {node: hops[node][loc[recent]] for node in free}
            else:
                wt = {u: (w[t, u] if rule == "weighted" else 1.0) for u in mapped}
                score = {node: sum(wt[u] * hops[node][loc[u]] for u in mapped) for node in free}
            place(t, min(free, key=lambda node: (score[node], node)))
    return [nodes[loc[t]] * m.pes_per_node for t in range(n)]


def random_pattern(rng, n, density, integer=True):
    dense = (rng.random((n, n)) < density) * rng.integers(1, 10, (n, n))
    np.fill_diagonal(dense, 0)
    if not dense.any():
        dense[0, n - 1] = 3
    return tm.Pattern.from_dense(dense.astype(float))


def scrambled_stencil(shape, seed, **kw):
    perm = np.random.default_rng(seed).permutation(int(np.prod(shape)))
    return tm.Pattern.from_dense(tm.generators.stencil_2d(shape, **kw).to_dense()[np.ix_(perm, perm)])


# ---------------------------------------------------------------- exact results on tiny cases

@pytest.mark.parametrize("seed", range(6))
def test_grasp_finds_the_optimum_of_tiny_qaps(seed):
    rng = np.random.default_rng(seed)
    n = 6 + seed % 2
    m = tm.machine("torus:4x3x2")
    alloc = m.allocate(7, policy="random", seed=seed)                # one node to spare when n = 6
    pat = random_pattern(rng, n, 0.4)
    best = min(hop_bytes(pat, m, perm) for perm in itertools.permutations(alloc.pes.tolist(), n))
    mp = tm.map(pat, alloc, method="grasp", seed=seed, iterations=300)
    assert hop_bytes(pat, m, mp.pe_of) == best
    assert tm.evaluate(pat, alloc, mp).hop_bytes == best            # the evaluator agrees with the definition


@pytest.mark.parametrize("rule", ["average", "weighted", "gge"])
@pytest.mark.parametrize("seed", range(5))
def test_mahd_and_gge_match_the_pseudocode(rule, seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(5, 20))
    m = tm.machine("torus:6x5" if seed % 2 else "mesh:4x4x2")
    alloc = m.allocate(n + int(rng.integers(0, 4)), policy="random", seed=seed)
    pat = random_pattern(rng, n, 0.15 if seed < 3 else 0.05)       # sparse ones have several components
    if rule == "gge":
        mp = tm.map(pat, alloc, method="gge")
    else:
        mp = tm.map(pat, alloc, method="mahd", weighted=rule == "weighted")
    assert mp.pe_of.tolist() == ref_mahd(pat, alloc, rule)


# ---------------------------------------------------------------- guarantees

@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1), objective=st.sampled_from(["hop_bytes", "max_congestion"]))
def test_emahd_never_worse_than_mahd(seed, objective):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 25))
    alloc = tm.machine("torus:5x4x3").allocate(n + int(rng.integers(0, 5)), policy="random", seed=seed % 1000)
    pat = random_pattern(rng, n, float(rng.uniform(0.05, 0.4)))
    key = "hop_bytes" if objective == "hop_bytes" else "max_congestion"
    got = {meth: getattr(tm.evaluate(pat, alloc, tm.map(pat, alloc, method=meth, **opts)), key)
           for meth, opts in (("mahd", {}), ("emahd", {"objective": objective}))}
    assert got["emahd"] <= got["mahd"]


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1))
def test_local_opt_never_raises_the_maximum_load(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 30))
    alloc = tm.machine("torus:4x4x4").allocate(n + int(rng.integers(0, 5)), policy="fragmented", seed=seed % 1000)
    pat = random_pattern(rng, n, float(rng.uniform(0.05, 0.3)))
    start = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="emahd", objective="max_congestion"))
    end = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="max-contention"))
    assert end.max_congestion <= start.max_congestion


def test_local_opt_lowers_the_maximum_load_of_a_scrambled_stencil():
    pat = scrambled_stencil((8, 8), 1, weights=(3, 1))
    alloc = tm.machine("torus:6x6x6").allocate(64, policy="fragmented", seed=4, runs=4)
    mc = {meth: tm.evaluate(pat, alloc, tm.map(pat, alloc, method=meth, **opts)).max_congestion
          for meth, opts in (("block", {}), ("emahd", {"objective": "max_congestion"}), ("max-contention", {}))}
    assert mc["max-contention"] < mc["emahd"] <= mc["block"]


@pytest.mark.parametrize("method", ["grasp", "mahd", "emahd", "max-contention", "kumar-hybrid"])
def test_beats_block_on_a_scrambled_rank_order(method):
    pat = scrambled_stencil((8, 8), 0)
    alloc = tm.machine("torus:8x8x8").allocate(64, policy="fragmented", seed=1)
    opts = {"kumar-hybrid": {"part_size": 16, "iterations": 8}, "grasp": {"iterations": 8}}.get(method, {})
    metric = "max_congestion" if method == "max-contention" else "hop_bytes"
    got = getattr(tm.evaluate(pat, alloc, tm.map(pat, alloc, method=method, seed=3, **opts)), metric)
    block = getattr(tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block")), metric)
    assert got < 0.8 * block


def test_hybrid_with_one_part_is_grasp():
    pat = scrambled_stencil((5, 5), 2)
    alloc = tm.machine("torus:6x6").allocate(25, policy="fragmented", seed=2)
    a = tm.map(pat, alloc, method="kumar-hybrid", seed=5, iterations=4).pe_of     # 25 nodes <= 125
    b = tm.map(pat, alloc, method="grasp", seed=5, iterations=4).pe_of
    assert a.tolist() == b.tolist()


def test_hybrid_keeps_parts_on_part_sized_groups_of_nodes():
    # 4 parts of 16 nodes: a part's processes talk mostly among themselves, so most
    # traffic stays between nodes of one part (the hop table of a part is local)
    pat = tm.generators.stencil_2d((8, 8))
    alloc = tm.machine("torus:8x8x4").allocate(64, policy="fragmented", seed=3)
    hyb = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="kumar-hybrid", part_size=16, iterations=8))
    rnd = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="random", seed=1))
    assert hyb.hop_bytes < 0.6 * rnd.hop_bytes


# ---------------------------------------------------------------- contract: valid, n-to-1, any machine, seeded

@settings(max_examples=30)
@given(m=machines(), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_valid_on_any_machine_with_capacities(m, seed, data):
    rng = np.random.default_rng(seed)
    cap = data.draw(st.integers(1, 3))
    npes = data.draw(st.integers(1, min(m.npes, 12)))
    n = data.draw(st.integers(1, npes * cap))
    alloc = m.allocation(rng.permutation(m.npes)[:npes])
    pat = random_pattern(rng, n, 0.3) if n > 1 else tm.Pattern.from_edges([], [], [], n=1)
    for method in KUMAR:
        a = tm.map(pat, alloc, method=method, seed=seed, capacity=cap, **FAST.get(method, {}))   # checks validity
        b = tm.map(pat, alloc, method=method, seed=seed, capacity=cap, **FAST.get(method, {}))
        assert a.pe_of.tolist() == b.pe_of.tolist()


@pytest.mark.parametrize("spec", ["fattree:k=4,levels=2/2", "hierarchy:2:4:4/1:10:100", "hypercube:5/2",
                                  "dragonfly:g=3,a=2,h=1,p=2/2", "circulant:16:1,4/2"])
def test_every_machine_kind_through_the_oracle(spec):
    alloc = tm.machine(spec).allocate(24, policy="random", seed=1)
    pat = scrambled_stencil((6, 8), 3)
    for method in KUMAR:
        mp = tm.map(pat, alloc, method=method, capacity=2, **FAST.get(method, {}))
        assert len(mp.pe_of) == 48


def test_n_to_1_fills_nodes_in_rank_order_and_keeps_partial_nodes_legal():
    m = tm.machine("torus:4x4x2/4")
    alloc = m.allocate(22, policy="fragmented", seed=1)          # 5 nodes of 4 PEs, the last with 2
    pat = tm.generators.stencil_2d((6, 6))                        # 36 processes, capacity 2: 44 slots
    for method in KUMAR:
        mp = tm.map(pat, alloc, method=method, capacity=2, seed=1, **FAST.get(method, {}))
        node = mp.pe_of // 4
        for v in np.unique(node):
            procs = np.flatnonzero(node == v)
            # inside a node, processes take its PEs in rank order, `capacity` each
            assert mp.pe_of[procs].tolist() == sorted(mp.pe_of[procs].tolist())


def test_grasp_seeds_give_different_searches_but_each_is_reproducible():
    pat = scrambled_stencil((6, 6), 5)
    alloc = tm.machine("torus:6x6x6").allocate(36, policy="fragmented", seed=5)
    runs = {s: tm.map(pat, alloc, method="grasp", seed=s, iterations=2).pe_of.tolist() for s in range(4)}
    assert len({tuple(r) for r in runs.values()}) > 1
    assert tm.map(pat, alloc, method="grasp", seed=2, iterations=2).pe_of.tolist() == runs[2]


# ---------------------------------------------------------------- progress, cancel, errors

@pytest.mark.parametrize("method", KUMAR)
def test_progress_and_cancel_leave_no_state(method):
    pat = scrambled_stencil((10, 10), 4)
    alloc = tm.machine("torus:10x10x2").allocate(100, policy="fragmented", seed=4)
    opts = {"kumar-hybrid": {"part_size": 30, "iterations": 2}, "grasp": {"iterations": 2}}.get(method, {})
    seen = []
    reference = tm.map(pat, alloc, method=method, seed=7, progress=seen.append, **opts).pe_of
    assert seen and seen == sorted(seen) and 0 <= seen[0] and seen[-1] == 1.0
    calls = []

    def stop(fraction):
        calls.append(fraction)
        return True
    with pytest.raises(tm.Cancelled, match=f"^{method} cancelled by the progress callback at") as info:
        tm.map(pat, alloc, method=method, seed=7, progress=stop, **opts)
    assert len(calls) == 1 and info.value.fraction == calls[0]
    assert tm.map(pat, alloc, method=method, seed=7, **opts).pe_of.tolist() == reference.tolist()


def test_progress_exception_propagates():
    pat = scrambled_stencil((4, 4), 0)
    alloc = tm.machine("torus:4x4").allocate(16)

    def boom(fraction):
        raise RuntimeError("from the callback")
    with pytest.raises(RuntimeError, match="from the callback"):
        tm.map(pat, alloc, method="grasp", progress=boom)


@pytest.mark.parametrize("method,options,name", [
    ("grasp", {"iterations": 0}, "iterations"),
    ("grasp", {"iterations": 2.5}, "iterations"),
    ("grasp", {"alpha": 0}, "alpha"),
    ("grasp", {"alpha": 1.5}, "alpha"),
    ("grasp", {"beta": -0.1}, "beta"),
    ("kumar-hybrid", {"part_size": 0}, "part_size"),
    ("kumar-hybrid", {"beta": True}, "beta"),
    ("mahd", {"weighted": "yes"}, "weighted"),
    ("emahd", {"objective": "hops"}, "objective"),
    ("max-contention", {"passes": -1}, "passes"),
])
def test_options_out_of_range_name_the_option(method, options, name):
    alloc = tm.machine("torus:4x4").allocate(16)
    with pytest.raises(MappingError, match=name):
        tm.map(tm.generators.stencil_2d((4, 4)), alloc, method=method, **options)


def test_registered_with_their_sources():
    info = tm.methods()
    for method in KUMAR + ["hilbert"]:
        assert "Kumar 2012" in info[method].source
    assert set(info["grasp"].options) == {"iterations", "alpha", "beta"}
    assert info["kumar-hybrid"].options["part_size"][0] == 125
    assert "greedy" in info["gge"].summary                       # told apart from LibTopoMap's 'greedy'
