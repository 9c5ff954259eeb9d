"""PTRAM (topomap/mappers/ptram.py, csrc/core/map_ptram.c).

The slow reference below is written from the thesis's pseudocode (Algs. 3.1
and 3.2, Mirsadeghi 2017 §3.3) and the tie rules of
csrc/include/topomap/map_ptram.h; its metrics come from the definitions
(eq. 3.1-3.3) over the machine's routes, recomputed from scratch for every
candidate.  The C mapper must take the same decision at every step.
"""

import itertools
import os
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from topomap import MappingError
from topomap.mappers.ptram import DEFAULT_CANDIDATES, DEFAULT_K, EXHAUSTIVE_NODES, run_ptram

from conftest import machines

TIE = 1e-10


def lower(a, b):
    """a below b beyond round-off (the documented tie rule)."""
    return a < b - TIE * max(abs(a), abs(b))


# ---------------------------------------------------------------- slow reference

class Ref:
    """Units (super-processes) with a dense traffic matrix on the allocation's nodes."""

    def __init__(self, machine, allocation, capacity, C, sizes, partition, weights=(1, 1, 1, 1)):
        self.m = machine
        self.nodes, self.first_pe, self.slots = [], [], []
        for pe in allocation.pes.tolist():
            nd = pe // machine.pes_per_node
            if nd not in self.nodes:
                self.nodes.append(nd)
                self.first_pe.append(pe)
                self.slots.append(0)
            self.slots[self.nodes.index(nd)] += capacity
        self.C, self.W = C, C + C.T
        self.sizes, self.partition, self.w = list(sizes), partition, weights
        self.caps = machine.capacities()
        self.routes = {}

    def route(self, a, b):
        if (a, b) not in self.routes:
            self.routes[(a, b)] = self.m.route(self.nodes[a], self.nodes[b]).tolist()
        return self.routes[(a, b)]

    def loads(self, where):
        """Bytes per link and hop-bytes of the messages between placed units."""
        load, hb = defaultdict(float), 0.0
        for a, b in zip(*np.nonzero(self.C)):
            na, nb = where[a], where[b]
            if na is None or nb is None or na == nb:
                continue
            r = self.route(na, nb)
            hb += self.C[a, b] * len(r)
            for link in r:
                load[link] += self.C[a, b]
        return load, hb

    def metrics(self, where):
        load, hb = self.loads(where)
        cong = [v / self.caps[link] for link, v in load.items() if v > 0]
        mc = max(cong, default=0.0)
        avg = sum(cong) / len(cong) if cong else 0.0
        var = sum((c - avg) ** 2 for c in cong) / len(cong) if cong else 0.0
        w = self.w
        return mc, w[0] * hb + w[1] * mc + w[2] * avg + w[3] * var, load

    def used(self, where, j):
        return sum(self.sizes[u] for u in range(len(where)) if where[u] == j)

    def placeable(self, where, p, j):
        """Can the other unplaced units still go onto empty nodes once p is on j?"""
        units = sorted((self.sizes[u] for u in range(len(where)) if where[u] is None and u != p), reverse=True)
        free = sorted((self.slots[i] for i in range(len(self.nodes))
                       if i != j and self.used(where, i) == 0), reverse=True)
        return len(units) <= len(free) and all(a <= b for a, b in zip(units, free))

    def free(self, where, p, j):
        if self.partition:
            return self.used(where, j) == 0 and self.sizes[p] <= self.slots[j] and self.placeable(where, p, j)
        return self.used(where, j) + self.sizes[p] <= self.slots[j]

    def nearest_free(self, where, p, limit):
        """The first `limit` free nodes a breadth-first search of the network reaches from the nodes of
        p's placed neighbours (in unit order), each vertex's neighbours in increasing order; sorted."""
        links = self.m.links()
        adj = defaultdict(set)
        for a, b in zip(links["src"].tolist(), links["dst"].tolist()):
            if a != b:
                adj[a].add(b)
                adj[b].add(a)
        queue = []
        for r in range(len(where)):
            if where[r] is not None and self.W[p, r] > 0 and self.nodes[where[r]] not in queue:
                queue.append(self.nodes[where[r]])
        seen, found = set(queue), []
        for v in queue:                    # grows while it is read
            if len(found) == limit:
                break
            if v in self.nodes and self.free(where, p, self.nodes.index(v)):
                found.append(self.nodes.index(v))
            for w in sorted(adj[v]):
                if w not in seen:
                    seen.add(w)
                    queue.append(w)
        return sorted(found)

    def greedy(self, limit=0):
        """Alg. 3.1: returns the placement order and the node of every unit; with `limit` > 0, only
        that many free nodes nearest the placed neighbours are scored."""
        nu = len(self.sizes)
        where, order = [None] * nu, []
        for step in range(nu):
            alpha = 1.0 / (len(order) + 1)
            p, best = None, 0.0
            for q in range(nu):
                if where[q] is not None:
                    continue
                placed = sum(self.W[q, r] for r in range(nu) if where[r] is not None)
                unplaced = sum(self.W[q, s] for s in range(nu) if where[s] is None)
                delta = placed + alpha * unplaced
                if p is None or lower(best, delta):
                    p, best = q, delta
            candidates = [j for j in range(len(self.nodes)) if self.free(where, p, j)]
            if not any(where[r] is not None and self.W[p, r] > 0 for r in range(nu)):
                target = candidates[0]
            else:
                target, score = None, 0.0
                if 0 < limit < len(self.nodes):
                    candidates = self.nearest_free(where, p, limit) or candidates[:1]
                for j in candidates:
                    where[p] = j
                    h = self.metrics(where)[1]
                    where[p] = None
                    if target is None or lower(h, score):
                        target, score = j, h
            where[p] = target
            order.append(p)
        return order, where

    def refine(self, where, rounds, k, plateau=False):
        """Alg. 3.2 with the documented order and ties; returns the MC after each round."""
        where = list(where)
        N, nu = len(self.nodes), len(where)
        mcs = [self.metrics(where)[0]]
        for _ in range(rounds):
            mc, _, load = self.metrics(where)
            if mc == 0:
                break
            lstar = min(link for link, v in load.items() if v > 0 and not lower(v / self.caps[link], mc))
            hot = load[lstar] / self.caps[lstar]
            chosen = None
            for n in range(N):
                kept = None
                for u in [u for u in range(nu) if where[u] == n]:
                    if not any(lstar in self.route(where[a], where[b]) for a, b in zip(*np.nonzero(self.C))
                               if u in (a, b) and where[a] != where[b]):
                        continue
                    near = sorted((self.m.distance(self.first_pe[n], self.first_pe[j]).item(), j)
                                  for j in range(N) if j != n)[:k]
                    for _, m in near:
                        tries = [r for r in range(nu) if where[r] == m]
                        for r in tries + [None]:
                            if r is None:
                                ok = (self.used(where, m) == 0 if self.partition else True) and \
                                    self.used(where, m) + self.sizes[u] <= self.slots[m]
                            else:
                                ok = not self.partition or (self.sizes[u] <= self.slots[m]
                                                            and self.sizes[r] <= self.slots[n])
                            if not ok:
                                continue
                            trial = list(where)
                            trial[u] = m
                            if r is not None:
                                trial[r] = n
                            tmc, _, tload = self.metrics(trial)
                            thot = tload.get(lstar, 0.0) / self.caps[lstar] if plateau and not lower(tmc, mc) else hot
                            cand = (tmc, thot, trial)
                            base = kept or (mc, hot, None)
                            if lower(cand[0], base[0]) or (not lower(base[0], cand[0]) and lower(cand[1], base[1])):
                                kept = cand
                if kept is not None and (chosen is None or lower(kept[0], chosen[0]) or
                                         (not lower(chosen[0], kept[0]) and lower(kept[1], chosen[1]))):
                    chosen = kept
            if chosen is None:
                break
            where = chosen[2]
            mcs.append(self.metrics(where)[0])
        return where, mcs


def units_of(pattern, group, nu):
    C = np.zeros((nu, nu))
    for p in range(pattern.n):
        for t in range(pattern.indptr[p], pattern.indptr[p + 1]):
            a, b = group[p], group[pattern.indices[t]]
            if a != b:
                C[a, b] += pattern.bytes[t]
    return C


@st.composite
def ptram_cases(draw):
    m = draw(machines())
    capacity = draw(st.integers(1 if m.npes > 1 else 2, 2))
    n = draw(st.integers(2, min(10, m.npes * capacity)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dense = (rng.random((n, n)) < draw(st.floats(0.1, 0.8))) * rng.choice([1.0, 2.0, 3.5, 10.0], size=(n, n))
    np.fill_diagonal(dense, 0)
    dense[0, n - 1] = max(dense[0, n - 1], 1.0)
    npe = -(-n // capacity) + draw(st.integers(0, 2))
    alloc = m.allocation(rng.permutation(m.npes)[:min(npe, m.npes)].astype(np.int32))
    return m, tm.Pattern.from_dense(dense), alloc, capacity, draw(st.booleans())


@given(ptram_cases(), st.integers(0, 3), st.integers(1, 3), st.booleans(), st.sampled_from([None, 0, 1, 2, 3]))
def test_greedy_and_refinement_match_the_reference_step_by_step(case, rounds, k, plateau, candidates):
    m, pat, alloc, capacity, partition = case
    res = run_ptram(pat, alloc, seed=3, capacity=capacity, rounds=rounds, k=k, partition=partition, plateau=plateau,
                    candidates=candidates)
    nu = len(res.order)
    sizes = np.bincount(res.group, minlength=nu)
    ref = Ref(m, alloc, capacity, units_of(pat, res.group, nu), sizes, partition)
    order, where = ref.greedy(candidates or 0)
    assert res.order.tolist() == order
    final, mcs = ref.refine(where, rounds, k, plateau)
    assert res.unit_node.tolist() == final
    np.testing.assert_allclose(res.round_mc, mcs, rtol=1e-9)
    assert res.rounds_done == len(mcs) - 1 <= rounds
    # processes sit on their unit's node, in rank order
    node_of = alloc.machine.node_of(res.pe_of)
    assert all(node_of[p] == ref.nodes[final[res.group[p]]] for p in range(pat.n))


# ---------------------------------------------------------------- §2.4: routing awareness

def routing_example():
    """Four 2-core nodes n1..n4 on leaf switches S1 (n1, n2) and S2 (n3, n4),
    each leaf cabled to both top switches T1, T2.  D-mod-k routing: the up
    link of a leaf is picked by the destination, so S1 sends traffic for n3
    over T1 and for n4 over T2, S2 for n1 over T1 and for n2 over T2 (the
    labels of the thesis's Fig. 3.6(a)).  Pattern: equal-weight chain
    5-0-2-3-7-1-6 (process 4 idle)."""
    cables = [(0, 4), (1, 4), (2, 5), (3, 5), (4, 6), (4, 7), (5, 6), (5, 7)]
    src = [a for a, _ in cables] + [b for _, b in cables]
    dst = [b for _, b in cables] + [a for a, _ in cables]
    m = tm.Machine(tm.GraphNetwork(4, 4, src=src, dst=dst, routing="dmodk"), tm.NodeTree.flat(2))
    chain = [(5, 0), (0, 2), (2, 3), (3, 7), (7, 1), (1, 6)]
    a = [x for x, y in chain] + [y for x, y in chain]
    b = [y for x, y in chain] + [x for x, y in chain]
    return m, tm.Pattern.from_edges(a, b, [1.0] * len(a), n=8)


def test_routing_aware_choice_gives_max_congestion_2_not_3():
    m, pat = routing_example()
    alloc = m.allocate(8)
    # the leaf up links carry the destinations of Fig. 3.6(a)
    assert m.route(0, 2)[1] != m.route(0, 3)[1] and m.route(0, 2)[1] == m.route(1, 2)[1]
    aware = run_ptram(pat, alloc, partition=False, rounds=0)
    ignorant = run_ptram(pat, alloc, partition=False, rounds=0, weights=(1, 0, 0, 0))   # hop-bytes only
    # the first five placements agree (routing plays no role yet); rank 5 comes next
    assert aware.order.tolist()[:6] == ignorant.order.tolist()[:6] and aware.order[5] == 5
    first5 = aware.order[:5]
    assert (aware.pe_of[first5] // 2).tolist() == (ignorant.pe_of[first5] // 2).tolist()
    # n3 and n4 tie on hop-bytes: the ignorant choice falls to n3, the routing-aware one picks n4
    assert ignorant.pe_of[5] // 2 == 2 and aware.pe_of[5] // 2 == 3
    assert tm.evaluate(pat, alloc, ignorant.pe_of).max_congestion == 3
    assert tm.evaluate(pat, alloc, aware.pe_of).max_congestion == 2
    # with the first six placed, n3 and n4 give rank 5 the same hop-bytes
    first6 = aware.order[:6]
    sub, _ = tm.patterns_util.restrict(pat, first6)
    hb = {tm.evaluate(sub, alloc, ours.pe_of[first6]).hop_bytes for ours in (aware, ignorant)}
    assert len(hb) == 1
    assert tm.evaluate(pat, alloc, tm.map(pat, alloc, method="ptram", partition=False)).max_congestion == 2


# ---------------------------------------------------------------- exhaustive optimum

@pytest.mark.parametrize("spec", ["torus:4x4", "torus:3x3x2", "hypercube:4"])
def test_two_units_on_a_vertex_transitive_network_reach_the_optimum(spec):
    """With two communicating processes the greedy puts the first on node 0
    and scores every node for the second; on a network that looks the same
    from every node this is the optimum over all n(n-1) placements."""
    m = tm.machine(spec)
    alloc = m.allocate(m.npes)
    pat = tm.Pattern.from_edges([0, 1], [1, 0], [5.0, 2.0], n=2)
    ours = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="ptram", rounds=0)).hybrid
    best = min(tm.evaluate(pat, alloc, np.array(pe, dtype=np.int32)).hybrid
               for pe in itertools.permutations(range(m.npes), 2))
    assert ours == pytest.approx(best)


# ---------------------------------------------------------------- validity, determinism, quality

@pytest.mark.parametrize("spec", ["hierarchy:2:4:4/1:10:100", "tree:pack:2 core:4", "torus:4x4/2", "mesh:3x3x2/2",
                                  "fattree:k=4,levels=2/2", "xgft:m=4x4,w=1x4,p=1x2/2",
                                  "dragonfly:g=5,a=2,h=2,p=2/2", "hypercube:4/2", "circulant:16:1,2,4/2",
                                  "shortcut:n=16,d=4,seed=0/2"])
@pytest.mark.parametrize("capacity", [1, 3])
def test_every_machine_kind_valid_under_capacities(spec, capacity):
    m = tm.machine(spec)
    npes = min(m.npes, 19)                                    # a partially used last node
    alloc = m.allocate(npes, policy="random", seed=2) if m.nnodes > 1 else m.allocation(np.arange(npes))
    pat = tm.generators.stencil_2d((7, npes * capacity // 7), weights=(1, 3))
    for partition in (True, False):
        mp = tm.map(pat, alloc, method="ptram", capacity=capacity, seed=5, partition=partition)   # check_mapping
        again = tm.map(pat, alloc, method="ptram", capacity=capacity, seed=5, partition=partition)
        assert np.array_equal(mp.pe_of, again.pe_of)


def test_gpc_partially_used_last_node():
    alloc = tm.machine("gpc/8").allocate(1020)              # 127 full nodes and one with 4 PEs
    pat = tm.generators.stencil_2d((34, 30), weights=(1, 3))
    res = run_ptram(pat, alloc, seed=0)
    assert np.bincount(res.group).max() <= 8 and len(res.order) == 128
    mp = tm.map(pat, alloc, method="ptram", seed=0)         # check_mapping: one process per PE
    assert np.array_equal(mp.pe_of, res.pe_of)


def permuted_stencil(dims, weights, seed):
    pat = tm.generators.stencil_2d(dims, weights=weights)
    perm = np.random.default_rng(seed).permutation(pat.n)
    src = np.repeat(np.arange(pat.n), np.diff(pat.indptr))
    return tm.Pattern.from_edges(perm[src], perm[pat.indices], pat.bytes, n=pat.n)


def test_beats_block_on_a_randomly_permuted_stencil():
    alloc = tm.machine("gpc/8").allocate(512)
    pat = permuted_stencil((32, 16), (1, 3), seed=4)
    block = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block"))
    ours = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="ptram", seed=0))
    assert ours.max_congestion < 0.5 * block.max_congestion
    assert ours.hop_bytes < 0.3 * block.hop_bytes
    assert ours.hybrid < 0.3 * block.hybrid


def test_refinement_never_raises_mc_and_respects_rounds():
    alloc = tm.machine("gpc/8").allocate(512, policy="random", seed=3)
    pat = tm.generators.stencil_3d((8, 8, 8), points=15)
    for rounds in (0, 1, 4):
        for plateau in (False, True):
            res = run_ptram(pat, alloc, seed=0, rounds=rounds, plateau=plateau)
            assert res.rounds_done <= rounds and len(res.round_mc) == res.rounds_done + 1
            assert np.all(np.diff(res.round_mc) <= 0)
            if not plateau:
                assert np.all(np.diff(res.round_mc) < 0)
            assert tm.evaluate(pat, alloc, res.pe_of).max_congestion == pytest.approx(res.round_mc[-1])
    # the refinement starts from the greedy mapping: rounds=0 is its first entry
    greedy = run_ptram(pat, alloc, seed=0, rounds=0)
    assert run_ptram(pat, alloc, seed=0).round_mc[0] == greedy.round_mc[0]


def test_same_mapping_whatever_the_thread_count():
    code = ("import topomap as tm, sys; a = tm.machine('gpc/8').allocate(256, policy='random', seed=1); "
            "p = tm.generators.stencil_3d((8, 8, 4), points=15); "
            "sys.stdout.write(tm.map(p, a, method='ptram', seed=7).pe_of.tobytes().hex())")
    out = set()
    for threads in ("1", "2"):
        env = dict(os.environ, OMP_NUM_THREADS=threads)
        out.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                               check=True).stdout)
    assert len(out) == 1


# ---------------------------------------------------------------- progress, cancellation, errors

def test_progress_reports_and_cancellation_leaves_a_clean_state():
    alloc = tm.machine("gpc/8").allocate(1024, policy="random", seed=0)
    pat = tm.generators.stencil_2d((32, 32), weights=(1, 3))
    seen = []
    first = tm.map(pat, alloc, method="ptram", progress=seen.append).pe_of
    assert seen and seen == sorted(seen) and 0 <= seen[0] and seen[-1] == 1
    with pytest.raises(tm.Cancelled, match="ptram cancelled by the progress callback at") as info:
        tm.map(pat, alloc, method="ptram", progress=lambda f: f > 0.5)
    assert info.value.fraction > 0.5 and f"{info.value.fraction:.0%}" in str(info.value)
    with pytest.raises(ZeroDivisionError):
        tm.map(pat, alloc, method="ptram", progress=lambda f: 1 / 0)
    assert np.array_equal(tm.map(pat, alloc, method="ptram").pe_of, first)


@pytest.mark.parametrize("options, message", [
    ({"weights": (1, -1, 1, 1)}, "weights"),
    ({"weights": (1, 1, 1)}, "weights"),
    ({"weights": (1, float("nan"), 1, 1)}, "weights"),
    ({"k": 0}, "k = 0"),
    ({"k": 2.5}, "k = 2.5"),
    ({"rounds": -1}, "rounds = -1"),
    ({"partition": 2}, "partition = 2"),
    ({"plateau": "yes"}, "plateau = 'yes'"),
    ({"candidates": -1}, "candidates = -1"),
    ({"candidates": 2.5}, "candidates = 2.5"),
])
def test_bad_options_name_the_option(options, message):
    alloc = tm.machine("torus:2x2/2").allocate(8)
    with pytest.raises(MappingError, match=message):
        tm.map(tm.generators.stencil_2d((4, 2)), alloc, method="ptram", **options)


def test_candidates_default_bounds_the_greedy_only_on_large_allocations():
    """Above EXHAUSTIVE_NODES nodes the default scores the DEFAULT_CANDIDATES free nodes nearest the
    placed neighbours (below, every free node: the reference test above)."""
    large = tm.machine("torus:17x17x17/1").allocate(4913)
    pat = tm.generators.stencil_3d((17, 17, 17))
    auto = run_ptram(pat, large, rounds=0)
    assert np.array_equal(auto.unit_node, run_ptram(pat, large, rounds=0, candidates=DEFAULT_CANDIDATES).unit_node)
    assert not np.array_equal(auto.unit_node, run_ptram(pat, large, rounds=0, candidates=1).unit_node)
    assert EXHAUSTIVE_NODES == 4096


def test_candidate_search_meets_tied_vertices_lowest_first():
    """A star whose links are listed from the highest node down: the search from node 0 reaches the
    switch, then nodes 1..4 at equal distance, and the one candidate is node 1 (link order would give 4)."""
    leaves = [4, 3, 2, 1, 0]
    net = tm.GraphNetwork(5, 1, src=[5] * 5 + leaves, dst=leaves + [5] * 5)
    alloc = tm.Machine(net, tm.NodeTree.flat(1)).allocate(5)
    pat = tm.Pattern.from_dense(np.array([[0.0, 1.0], [1.0, 0.0]]))
    res = run_ptram(pat, alloc, rounds=0, candidates=1, partition=False)
    nu = len(res.order)
    ref = Ref(alloc.machine, alloc, 1, units_of(pat, res.group, nu), np.bincount(res.group, minlength=nu), False)
    order, where = ref.greedy(1)
    assert sorted(res.unit_node.tolist()) == [0, 1]
    assert res.order.tolist() == order and [ref.nodes[j] for j in where] == res.unit_node.tolist()


def test_registered_with_its_options():
    info = tm.methods()["ptram"]
    assert set(info.options) == {"weights", "k", "rounds", "partition", "plateau", "candidates", "grid"}
    assert info.options["grid"][0] is None   # the thesis partitions; boxes on request
    assert info.options["k"][0] == DEFAULT_K and info.options["rounds"][0] == 10
    assert "3.3" in info.source
