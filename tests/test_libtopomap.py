"""LibTopoMap's heuristics (Hoefler & Snir, ICS 2011): greedy, recursive, rcm.

Checked against slow pure-Python re-implementations of the same rules
(greedy, the RCM orders), SciPy's reverse Cuthill-McKee, exhaustive optima
on tiny cases, and by validity, determinism, cancellation and errors.
"""

from __future__ import annotations

import heapq
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap import _core
from topomap.mappers.libtopomap import rcm_order

from conftest import machines

METHODS = ("greedy", "recursive", "rcm")


# ---------------------------------------------------------------- helpers written from the definitions

def hop_bytes(pat: tm.Pattern, m: tm.Machine, pe_of) -> float:
    """Sum over directed messages of bytes x links on the route between the two nodes."""
    P = m.pes_per_node
    total = 0.0
    for p in range(pat.n):
        for k in range(pat.indptr[p], pat.indptr[p + 1]):
            q = int(pat.indices[k])
            total += pat.bytes[k] * len(m.route(int(pe_of[p]) // P, int(pe_of[q]) // P))
    return total


def exhaustive_optimum(pat: tm.Pattern, alloc: tm.Allocation) -> float:
    """Least hop-bytes over every one-to-one mapping of the processes onto the allocated PEs."""
    m = alloc.machine
    P = m.pes_per_node
    pes = [int(x) for x in alloc.pes]
    hops = {(a, b): len(m.route(a // P, b // P)) for a in pes for b in pes}
    msgs = [(p, int(pat.indices[k]), float(pat.bytes[k]))
            for p in range(pat.n) for k in range(pat.indptr[p], pat.indptr[p + 1])]
    best = float("inf")
    for perm in itertools.permutations(pes, pat.n):
        cost = 0.0
        for p, q, b in msgs:
            cost += b * hops[perm[p], perm[q]]
        best = min(best, cost)
    return best


def random_pattern(rng: np.random.Generator, n: int, density: float = 0.3) -> tm.Pattern:
    dense = (rng.random((n, n)) < density) * rng.integers(1, 9, (n, n)).astype(float)
    np.fill_diagonal(dense, 0)
    if not dense.any():
        dense[0, n - 1] = 1.0
    return tm.Pattern.from_dense(dense)


def greedy_reference(pat: tm.Pattern, alloc: tm.Allocation, seed: int, capacity: int,
                     congestion: bool, candidates: int = 0) -> np.ndarray:
    """The greedy rule of csrc/core/map_greedy.c, step by step, for allocations of whole equal nodes.

    With candidates > 0 only the first that many free nodes at the fewest hops are priced, in the
    order of the C search: a breadth-first search that offers vertices as it discovers them (links
    in id order), or, once it has looked at over 2 * free + 64 vertices and links without a
    candidate, the free-node list (a node taken is replaced by the list's last).
    """
    m = alloc.machine
    P = m.pes_per_node
    nodes, node_pes = [], {}
    for pe in alloc.pes:
        nd = int(pe) // P
        if nd not in node_pes:
            nodes.append(nd)
            node_pes[nd] = []
        node_pes[nd].append(int(pe))
    slots = {nd: len(v) * capacity for nd, v in node_pes.items()}
    assert len(set(slots.values())) == 1, "the reference handles equal nodes only"
    if max(slots.values()) == 1:
        group, k = np.arange(pat.n), pat.n
    else:
        group, gslots = _core.group_by_node(m._core, pat.indptr, pat.indices, pat.bytes, alloc.pes, capacity, seed,
                                            None)
        k = len(gslots)
    Q = np.zeros((k, k))
    for p in range(pat.n):
        for e in range(pat.indptr[p], pat.indptr[p + 1]):
            a, b = group[p], group[pat.indices[e]]
            if a != b:
                Q[a, b] += pat.bytes[e]
    W = Q + Q.T
    cap = m.capacities()
    node_of = [-1] * k

    def loads():
        load = np.zeros(m.nlinks)
        for a in range(k):
            for b in range(k):
                if Q[a, b] and node_of[a] >= 0 and node_of[b] >= 0:
                    for link in m.route(nodes[node_of[a]], nodes[node_of[b]]):
                        load[link] += Q[a, b]
        return load

    def route_load(load, a, b):
        c = 0.0
        for link in m.route(a, b):
            c += load[link] / cap[link]
        return c

    links = m.links()
    out: list[list[int]] = [[] for _ in range(m.nvertices)]
    for a, b in zip(links["src"].tolist(), links["dst"].tolist()):
        out[a].append(b)
    index = {v: j for j, v in enumerate(nodes)}
    free_list = list(range(len(nodes)))

    def nearest(src):
        load = loads() if congestion else None
        best = None  # ((hops, load, vertex), j, priced)

        def offer(j, h):
            nonlocal best
            if best is not None and h > best[0][0]:
                return
            v = nodes[j]
            priced = best[2] + 1 if best is not None and h == best[0][0] else 1
            c = route_load(load, src, v) + route_load(load, v, src) if congestion else 0.0
            key = (h, c, v)
            best = (key, j, priced) if best is None or key < best[0] else (best[0], best[1], priced)

        def enough(level):
            return candidates and best is not None and best[0][0] <= level and best[2] >= candidates

        if not candidates:
            for j in free_list:
                offer(j, len(m.route(src, nodes[j])))
            return best[1]
        seen, frontier, level, looked = {src}, [src], 0, 1
        if src in index and index[src] in free_list:
            offer(index[src], 0)
        while frontier and (best is None or level < best[0][0]) and not enough(level):
            if best is None and looked > 2 * len(free_list) + 64:
                break
            level += 1
            nxt = []
            for v in frontier:
                for w in out[v]:
                    if enough(level) or w in seen:
                        continue
                    seen.add(w)
                    nxt.append(w)
                    if w in index and index[w] in free_list:
                        offer(index[w], len(m.route(src, w)))
                looked += len(out[v]) + 1
                if enough(level):
                    break
            frontier = nxt
        if best is None:
            hops = [len(m.route(src, nodes[j])) for j in free_list]
            fewest = min(hops)
            for j, h in zip(free_list, hops):
                if h == fewest and not enough(h):
                    offer(j, h)
        return best[1]

    seeds = sorted(range(k), key=lambda g: (-W[g].sum(), g))
    conn = np.zeros(k)
    queue: list[tuple[float, int]] = []
    last = 0
    for _ in range(k):
        g = None
        while queue:
            key, h = heapq.heappop(queue)
            if node_of[h] < 0 and -key == conn[h]:
                g = h
                break
        src = last
        if g is None:
            g = next(s for s in seeds if node_of[s] < 0)
        else:
            mapped = [h for h in range(k) if node_of[h] >= 0 and W[g, h] > 0]
            src = node_of[max(mapped, key=lambda h: (W[g, h], -h))]
        j = nearest(nodes[src])
        node_of[g] = j
        i = free_list.index(j)
        free_list[i] = free_list[-1]
        free_list.pop()
        for h in range(k):
            if W[g, h] > 0 and node_of[h] < 0:
                conn[h] += W[g, h]
                heapq.heappush(queue, (-conn[h], h))
        last = j
    used = {j: 0 for j in range(len(nodes))}
    pe_of = np.empty(pat.n, dtype=np.int32)
    for p in range(pat.n):
        j = node_of[group[p]]
        pe_of[p] = node_pes[nodes[j]][used[j] // capacity]
        used[j] += 1
    return pe_of


def rcm_reference(adj: list[list[int]], start: str) -> list[int]:
    """Reverse Cuthill-McKee by the rules of map_libtopomap.h, in plain Python."""
    n = len(adj)
    deg = [len(a) for a in adj]
    visited = [False] * n

    def levels(r):
        seen, lv = {r}, [[r]]
        while True:
            nxt = []
            for v in lv[-1]:
                for w in adj[v]:
                    if not visited[w] and w not in seen:
                        seen.add(w)
                        nxt.append(w)
            if not nxt:
                return lv
            lv.append(nxt)

    def peripheral(v):
        lv, r = levels(v), v
        while True:
            x = min(lv[-1], key=lambda u: deg[u])
            lv2 = levels(x)
            if len(lv2) <= len(lv):
                return r
            r, lv = x, lv2

    order: list[int] = []
    seq = range(n) if start == "peripheral" else sorted(range(n), key=lambda v: (deg[v], v))
    for v in seq:
        if visited[v]:
            continue
        r = peripheral(v) if start == "peripheral" else v
        q, head = [r], 0
        visited[r] = True
        while head < len(q):
            new = [w for w in adj[q[head]] if not visited[w]]
            head += 1
            for w in new:
                visited[w] = True
            q += sorted(new, key=lambda w: deg[w])
        order += q
    return order[::-1]


def adjacency(pat: tm.Pattern) -> list[list[int]]:
    xadj, adj, _ = _core.ugraph_from_pattern(pat.indptr, pat.indices, pat.bytes)
    return [[int(x) for x in adj[xadj[v]:xadj[v + 1]]] for v in range(pat.n)]


# ---------------------------------------------------------------- the greedy rule

@pytest.mark.parametrize("spec,cap", [("torus:3x3", 1), ("mesh:4x2/2", 1), ("fattree:k=4,levels=2", 1),
                                      ("torus:2x3/2", 2), ("dragonfly:g=3,a=2,h=1,p=2", 1),
                                      ("fattree:k=4,levels=3", 1)])  # large enough for the free-node scan
@pytest.mark.parametrize("congestion,candidates", [(True, 0), (False, 0), (True, 1), (True, 3), (False, 2)])
def test_greedy_follows_its_rule(spec, cap, congestion, candidates):
    m = tm.machine(spec)
    if m.nlinks:
        m.set_capacities(np.where(np.arange(m.nlinks) % 3 == 0, 2.0, 1.0))
    rng = np.random.default_rng(len(spec) + cap)
    for trial in range(3):
        alloc = m.allocate(m.npes if trial else m.npes - m.pes_per_node, policy="random", seed=trial)
        pat = random_pattern(rng, len(alloc) * cap)
        got = tm.map(pat, alloc, method="greedy", seed=trial, capacity=cap, congestion=congestion,
                     candidates=candidates).pe_of
        np.testing.assert_array_equal(got, greedy_reference(pat, alloc, trial, cap, congestion, candidates))


def test_congestion_awareness_lowers_max_congestion_on_meshes():
    m = tm.machine("mesh:4x4")
    rng = np.random.default_rng(0)
    on = off = 0.0
    for _ in range(20):
        pat = random_pattern(rng, 16, 0.15)
        alloc = m.allocate(16)
        on += tm.evaluate(pat, alloc, tm.map(pat, alloc, method="greedy")).max_congestion
        off += tm.evaluate(pat, alloc, tm.map(pat, alloc, method="greedy", congestion=False)).max_congestion
    assert on < off


def test_greedy_tries_keep_the_best():
    m = tm.machine("torus:4x4/2")
    pat = random_pattern(np.random.default_rng(3), 32, 0.1)
    alloc = m.allocate(32)
    one = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="greedy", seed=5))
    many = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="greedy", seed=5, tries=6))
    assert (many.max_congestion, many.hop_bytes) <= (one.max_congestion, one.hop_bytes)
    rand = [tm.map(pat, alloc, method="greedy", seed=s, start="random").pe_of for s in (5, 5, 6, 7)]
    np.testing.assert_array_equal(rand[0], rand[1])
    assert any(not np.array_equal(rand[0], r) for r in rand[2:])  # the seed picks the start node


# ---------------------------------------------------------------- RCM orders

def connected_graph(rng: np.random.Generator, n: int) -> tm.Pattern:
    """A random connected graph whose least-degree vertex (a pendant) is unique."""
    dense = np.zeros((n, n))
    for v in range(2, n):  # a spanning tree over 1..n-1, every vertex of degree >= 2 after the extra edges
        dense[v, rng.integers(1, v)] = 1
    extra = rng.random((n, n)) < 0.25
    dense = np.maximum(dense, extra)
    dense[0, :] = dense[:, 0] = 0
    dense = np.maximum(dense, dense.T)
    np.fill_diagonal(dense, 0)
    for v in range(1, n):  # raise every degree to >= 2
        while dense[v].sum() < 2:
            u = int(rng.integers(1, n))
            if u != v:
                dense[v, u] = dense[u, v] = 1
    dense[0, int(rng.integers(1, n))] = 1
    return tm.Pattern.from_dense(np.maximum(dense, dense.T))


def test_rcm_order_min_degree_is_scipys():
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import reverse_cuthill_mckee
    rng = np.random.default_rng(7)
    for n in (5, 9, 17, 40):
        pat = connected_graph(rng, n)
        xadj, adj, _ = _core.ugraph_from_pattern(pat.indptr, pat.indices, pat.bytes)
        a = csr_matrix((np.ones(xadj[-1]), adj[:xadj[-1]], xadj), shape=(n, n))
        ref = reverse_cuthill_mckee(a, symmetric_mode=True)
        np.testing.assert_array_equal(rcm_order(pat, "min_degree"), ref)


@pytest.mark.parametrize("start", ["peripheral", "min_degree"])
def test_rcm_order_follows_its_rules(start):
    rng = np.random.default_rng(11)
    pats = [random_pattern(rng, n, d) for n, d in [(6, 0.3), (20, 0.1), (30, 0.05), (25, 0.3)]]
    pats += [tm.generators.stencil_2d((5, 4)), tm.generators.stencil_3d((3, 3, 2))]
    for pat in pats:
        assert rcm_order(pat, start).tolist() == rcm_reference(adjacency(pat), start)


def test_rcm_order_of_a_grid_starts_in_a_corner():
    # 3 x 2 grid 0-1-2 / 3-4-5: from corner 0 the search meets 3 (degree 2) before 1 (degree 3)
    assert rcm_order(tm.generators.stencil_2d((3, 2))).tolist() == [5, 2, 4, 1, 3, 0]
    with pytest.raises(tm.MappingError, match="start"):
        rcm_order(tm.generators.stencil_2d((3, 2)), "middle")


# ---------------------------------------------------------------- optima and quality

def test_path_onto_a_line_is_optimal():
    w = np.zeros((7, 7))
    for i in range(6):
        w[i, i + 1] = w[i + 1, i] = 1 + i % 3
    pat = tm.Pattern.from_dense(w)
    alloc = tm.machine("mesh:7").allocate(7)
    best = exhaustive_optimum(pat, alloc)
    for method in ("recursive", "rcm"):
        assert hop_bytes(pat, alloc.machine, tm.map(pat, alloc, method=method).pe_of) == best


@pytest.mark.parametrize("spec", ["fattree:k=2,levels=3", "torus:2x4"])
def test_greedy_is_optimal_on_a_ring_of_heavy_pairs(spec):
    w = np.zeros((8, 8))
    for i in range(0, 8, 2):
        w[i, i + 1] = w[i + 1, i] = 10
    for i in range(1, 8, 2):
        w[i, (i + 1) % 8] = w[(i + 1) % 8, i] = 1
    pat = tm.Pattern.from_dense(w)
    alloc = tm.machine(spec).allocate(8)
    assert hop_bytes(pat, alloc.machine, tm.map(pat, alloc, method="greedy").pe_of) == exhaustive_optimum(pat, alloc)


def test_recursive_maps_a_2d_stencil_onto_its_torus_with_dilation_near_1():
    pat = tm.generators.stencil_2d((8, 8))
    alloc = tm.machine("torus:8x8").allocate(64)
    dil = [tm.evaluate(pat, alloc, tm.map(pat, alloc, method="recursive", seed=s)).avg_dilation for s in range(3)]
    assert max(dil) <= 1.3 and np.mean(dil) <= 1.2
    assert tm.evaluate(pat, alloc, tm.map(pat, alloc, method="random")).avg_dilation > 3


@pytest.mark.parametrize("spec", ["torus:4x4x2/8", "fattree:k=4,levels=3/4"])
@pytest.mark.parametrize("method", METHODS)
def test_beats_block_on_a_permuted_stencil(spec, method):
    base = tm.generators.stencil_3d((8, 8, 4))
    perm = np.random.default_rng(0).permutation(base.n)
    inv = np.argsort(perm)
    rows = np.repeat(np.arange(base.n), np.diff(base.indptr))
    pat = tm.Pattern.from_edges(inv[rows], inv[base.indices], base.bytes, n=base.n)
    alloc = tm.machine(spec).allocate(pat.n)
    block = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block")).hop_bytes
    assert tm.evaluate(pat, alloc, tm.map(pat, alloc, method=method)).hop_bytes < 0.8 * block


# ---------------------------------------------------------------- validity, determinism, every kind

SPECS = ["torus:4x4/4", "mesh:3x5/2", "fattree:k=4,levels=2/2", "xgft:m=4x4,w=1x4,p=1x2/2",
         "dragonfly:g=5,a=2,h=2,p=2/2", "hypercube:4/2", "circulant:16:1,2/1", "shortcut:n=16,d=4,seed=0",
         "hierarchy:4:4:2/1:10:100", "tree:pack:2 core:4", "gpc/2"]


@pytest.mark.parametrize("spec", SPECS)
def test_every_kind(spec):
    m = tm.machine(spec)
    rng = np.random.default_rng(len(spec))
    for policy, cap in [("contiguous", 1), ("random", 2), ("fragmented", 1)]:
        alloc = m.allocate(min(m.npes, 29), policy=policy, seed=1)  # the last node used in part
        pat = random_pattern(rng, len(alloc) * cap - 1, 0.2)
        for method in METHODS:
            mp = tm.map(pat, alloc, method=method, seed=2, capacity=cap)  # tm.map checks validity
            assert np.array_equal(mp.pe_of, tm.map(pat, alloc, method=method, seed=2, capacity=cap).pe_of)


@settings(max_examples=25)
@given(machines(), st.integers(0, 2**32 - 1), st.integers(1, 3), st.sampled_from(METHODS))
def test_valid_on_random_machines_and_uneven_allocations(m, seed, cap, method):
    """Nodes given different numbers of PEs: groups must still fit their nodes."""
    rng = np.random.default_rng(seed)
    P = m.pes_per_node
    pes = [int(v) * P + int(i) for v in rng.permutation(m.nnodes)[: rng.integers(1, m.nnodes + 1)]
           for i in rng.permutation(P)[: rng.integers(1, P + 1)]]
    alloc = m.allocation(np.array(pes)[rng.permutation(len(pes))])
    pat = random_pattern(rng, int(rng.integers(1, len(pes) * cap + 1)), 0.3)
    mp = tm.map(pat, alloc, method=method, seed=seed, capacity=cap)
    assert np.array_equal(mp.pe_of, tm.map(pat, alloc, method=method, seed=seed, capacity=cap).pe_of)


def test_recursive_options_all_valid():
    pat = tm.generators.stencil_2d((6, 6))
    for spec in ("torus:3x3/4", "hypercube:3/5", "fattree:k=4,levels=2/4"):
        alloc = tm.machine(spec).allocate(36)
        for context, geometric in itertools.product([True, False], repeat=2):
            tm.map(pat, alloc, method="recursive", context=context, geometric=geometric)


# ---------------------------------------------------------------- progress, cancellation, errors

@pytest.mark.parametrize("method", METHODS)
def test_progress_and_cancel(method):
    pat = tm.generators.stencil_3d((8, 8, 8))
    alloc = tm.machine("torus:4x4x4/8").allocate(512)
    seen: list[float] = []
    first = tm.map(pat, alloc, method=method, progress=seen.append)
    assert seen and seen == sorted(seen) and 0 <= seen[0] and seen[-1] == 1.0
    with pytest.raises(tm.Cancelled, match=f"^{method} cancelled by the progress callback at"):
        tm.map(pat, alloc, method=method, progress=lambda f: True)
    calls = []
    with pytest.raises(tm.Cancelled, match="cancelled"):
        tm.map(pat, alloc, method=method, progress=lambda f: calls.append(f) or len(calls) == 3)
    assert len(calls) == 3
    assert np.array_equal(tm.map(pat, alloc, method=method).pe_of, first.pe_of)  # nothing left behind


@pytest.mark.parametrize("method,options,name", [
    ("greedy", {"start": "middle"}, "start"), ("greedy", {"congestion": "yes"}, "congestion"),
    ("greedy", {"tries": 0}, "tries"), ("greedy", {"tries": 1.5}, "tries"),
    ("greedy", {"candidates": -1}, "candidates"), ("greedy", {"candidates": True}, "candidates"),
    ("recursive", {"context": 1}, "context"), ("recursive", {"geometric": None}, "geometric"),
    ("rcm", {"start": "center"}, "start")])
def test_bad_options_name_the_option(method, options, name):
    alloc = tm.machine("torus:2x2/2").allocate(8)
    with pytest.raises(tm.MappingError, match=name):
        tm.map(tm.generators.stencil_2d((4, 2)), alloc, method=method, **options)


def test_core_checks_the_geometry():
    m = tm.machine("torus:2x2")
    pat = tm.generators.stencil_2d((2, 2))
    args = (m._core, pat.indptr, pat.indices, pat.bytes, m.allocate(4).pes, 1)
    with pytest.raises(tm.CoreInputError, match="coordinate 7 in dimension 0"):
        _core.map_recursive(*args, coords=np.full(8, 7, dtype=np.int32), ring=np.array([2, 2], dtype=np.int32))
    with pytest.raises(TypeError, match="together"):
        _core.map_recursive(*args, coords=np.zeros(8, dtype=np.int32))
    fat = tm.machine("fattree:k=2,levels=2")
    with pytest.raises(tm.CoreInputError, match="direct network"):
        _core.map_recursive(fat._core, pat.indptr, pat.indices, pat.bytes, fat.allocate(4).pes, 1,
                            coords=np.zeros(fat.nnodes, dtype=np.int32), ring=np.zeros(1, dtype=np.int32))


def test_too_many_processes():
    alloc = tm.machine("torus:2x2/2").allocate(8)
    for method in METHODS:
        with pytest.raises(tm.MappingError, match="do not fit"):
            tm.map(tm.generators.stencil_2d((3, 3)), alloc, method=method)
