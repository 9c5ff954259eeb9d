"""The top-down mapper (topomap/mappers/topdown.py, csrc/core/map_dualrb.c,
map_qap_search.c): embeddings it must find, capacities, determinism, the
search never worsening J, the target decomposition and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap import _core
from topomap.mappers.topdown import BOTH_LIMIT, decomposition, process_grid, rank_grid

from conftest import machines


def hops_of(pat, alloc, mp):
    m = alloc.machine
    node = m.node_of(mp.pe_of)
    return np.asarray(m.hops(node[pat.senders()], node[pat.indices]))


def block_embedding_hop_bytes(shape, nodes):
    """Hop-bytes of the geometric embedding of a unit 7-point (or 5-point)
    stencil of `shape` onto a torus of `nodes`, whose extents divide it:
    every cut between blocks is one hop, counted both ways."""
    cuts = 0
    for d, (s, k) in enumerate(zip(shape, nodes)):
        planes = k - 1
        cuts += planes * int(np.prod([x for i, x in enumerate(shape) if i != d]))
    return 2 * cuts


@pytest.mark.parametrize("shape,spec", [
    ((8, 4, 4), "torus:2x2x2/16"),
    ((16, 16), "torus:4x4/16"),
    ((32, 32), "torus:8x8/16"),
])
def test_finds_the_geometric_embedding_of_power_of_two_stencils(shape, spec):
    pat = tm.generators.stencil_3d(shape, points=7) if len(shape) == 3 else tm.generators.stencil_2d(shape)
    alloc = tm.machine(spec).allocate(pat.n)
    for coords in (None, "auto"):                  # the graph partitioner and the stencil's grid
        mp = tm.map(pat, alloc, method="topdown", seed=0, effort="strong", coords=coords)
        h = hops_of(pat, alloc, mp)
        assert h.max() == 1
        nodes = tuple(int(x) for x in spec.split(":")[1].split("/")[0].split("x"))
        assert h.sum() == block_embedding_hop_bytes(shape, nodes)


@pytest.mark.parametrize("shape,spec,within", [((32, 32), "mesh:8x8/16", 1.05), ((16, 8, 8), "torus:4x4x4/16", 1.1)])
def test_near_the_embedding(shape, spec, within):
    # every seed lands near it; on most every node gets a whole block and a few block neighbours end up 2 hops apart
    pat = tm.generators.stencil_3d(shape, points=7) if len(shape) == 3 else tm.generators.stencil_2d(shape)
    alloc = tm.machine(spec).allocate(pat.n)
    nodes = tuple(int(x) for x in spec.split(":")[1].split("/")[0].split("x"))
    whole = 0
    for seed in range(4):
        h = hops_of(pat, alloc, tm.map(pat, alloc, method="topdown", seed=seed, effort="strong", coords=None))
        whole += (h == 0).sum() == pat.nnz - block_embedding_hop_bytes(shape, nodes)
        assert h.sum() <= within * block_embedding_hop_bytes(shape, nodes)
    assert whole >= 2


def test_beats_scotch_level_on_an_odd_torus():
    # the 10^4 instance: recursive 0.279, scotch_gmap 0.202 x block, the embedding 0.107
    pat = tm.generators.stencil_3d((36, 18, 18), points=7)
    alloc = tm.machine("torus:9x9x9/16").allocate(pat.n)
    blk = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block")).hop_bytes
    top = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="topdown", seed=0, coords=None)).hop_bytes
    # recursive from the graph too (with the grid its nodes hold boxes: 0.64 x the hop-bytes at 10^6)
    rec = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="recursive", seed=0, grid=None)).hop_bytes
    assert top / blk < 0.19 and top < 0.7 * rec


def test_context_orients_the_halves():
    # without external gains each part is cut well but turned at random
    pat = tm.generators.stencil_2d((36, 36))
    alloc = tm.machine("torus:9x9/16").allocate(pat.n)
    opts = {"method": "topdown", "seed": 0, "sweeps": 0, "coords": None}
    on = hops_of(pat, alloc, tm.map(pat, alloc, **opts)).sum()
    off = hops_of(pat, alloc, tm.map(pat, alloc, context=False, **opts)).sum()
    assert on < 0.75 * off


@pytest.mark.parametrize("spec", ["fattree:k=4,levels=3/4", "dragonfly:g=5,a=4,h=2,p=2/4", "hierarchy:4:4:4",
                                  "hypercube:4/4"])
def test_other_machines_beat_block(spec):
    pat = tm.generators.stencil_3d((4, 4, 4), points=7)
    m = tm.machine(spec)
    alloc = m.allocate(min(pat.n, m.npes))
    pat = tm.generators.stencil_3d((4, 4, alloc.pes.size // 16), points=7)
    blk = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block")).qap
    top = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="topdown", seed=1)).qap
    assert top <= blk


@settings(max_examples=60, deadline=None)
@given(machines(), st.sampled_from(["contiguous", "random", "fragmented"]), st.integers(1, 3),
       st.integers(0, 2**32 - 1), st.data())
def test_mappings_are_valid_and_seeded(m, policy, capacity, seed, data):
    k = data.draw(st.integers(1, m.npes))
    alloc = m.allocate(k, policy=policy, seed=seed % 1000)
    n = data.draw(st.integers(1, k * capacity))
    rng = np.random.default_rng(seed)
    dense = (rng.random((n, n)) < data.draw(st.floats(0.05, 0.6))) * rng.choice([1.0, 4.0, 9.0], size=(n, n))
    np.fill_diagonal(dense, 0)
    pat = tm.Pattern.from_dense(dense)
    mp = tm.map(pat, alloc, method="topdown", seed=seed, capacity=capacity)
    assert np.isin(mp.pe_of, alloc.pes).all()
    assert np.bincount(mp.pe_of, minlength=m.npes).max() <= capacity
    assert tm.map(pat, alloc, method="topdown", seed=seed, capacity=capacity).pe_of.tolist() == mp.pe_of.tolist()
    # the search only ever lowers J, the congestion search the maximum congestion
    run = {cs: tm.map(pat, alloc, method="topdown", seed=seed, capacity=capacity, congestion_sweeps=cs)
           for cs in (0, 5)}
    raw = tm.map(pat, alloc, method="topdown", seed=seed, capacity=capacity, sweeps=0, congestion_sweeps=0)
    assert tm.evaluate(pat, alloc, run[0]).qap <= tm.evaluate(pat, alloc, raw).qap * (1 + 1e-12) + 1e-9
    assert (tm.evaluate(pat, alloc, run[5]).max_congestion
            <= tm.evaluate(pat, alloc, run[0]).max_congestion * (1 + 1e-12))
    assert np.bincount(run[5].pe_of, minlength=m.npes).max() <= capacity


def test_partial_allocation_uses_few_close_nodes():
    # 40 processes, 16 slots a node: 3 nodes, adjacent ones
    pat = tm.generators.stencil_2d((8, 5))
    alloc = tm.machine("torus:4x4/16").allocate(256)
    mp = tm.map(pat, alloc, method="topdown", seed=0)
    nodes = np.unique(alloc.machine.node_of(mp.pe_of))
    assert nodes.size == 3
    assert alloc.machine.hops(nodes[:, None], nodes[None, :]).max() <= 2


def test_decomposition_follows_the_levels():
    order, gap = decomposition(tm.machine("fattree:k=4,levels=2").allocate(8))
    assert order.tolist() == list(range(8))
    assert gap.tolist() == [-2, -2, -2, -4, -2, -2, -2]     # the two leaf switches of 4 nodes part first
    order, gap = decomposition(tm.machine("torus:4x4/2").allocate(2))
    assert order.tolist() == [0] and gap.size == 0


def test_bad_options_and_order():
    pat = tm.generators.stencil_2d((4, 4))
    alloc = tm.machine("torus:4x4").allocate(16)
    for opts, msg in [({"context": 1}, "context must be True or False"), ({"sweeps": -1}, "sweeps must be"),
                      ({"effort": "max"}, "effort must be one of"),
                      ({"depth": 1.5}, "depth must be"), ({"max_partners": 0}, "max_partners must be"),
                      ({"congestion_sweeps": -1}, "congestion_sweeps must be an integer >= 0"),
                      ({"flow_min": -1}, "flow_min must be an integer >= 0")]:
        with pytest.raises(tm.MappingError, match=msg):
            tm.map(pat, alloc, method="topdown", **opts)
    m = alloc.machine._core
    args = (m, pat.indptr, pat.indices, pat.bytes, alloc.pes, 1, 0)
    good = np.arange(16, dtype=np.int32)
    with pytest.raises(tm.TopomapError, match="order entry 3 is node 2, not a node of the allocation or listed twice"):
        _core.map_topdown(*args, order=np.array([0, 1, 2, 2] + list(range(4, 16)), dtype=np.int32),
                          gap=np.zeros(15, dtype=np.int32))
    with pytest.raises(tm.TopomapError, match="order of the allocation's 16 nodes"):
        _core.map_topdown(*args, order=good[:8], gap=np.zeros(7, dtype=np.int32))
    with pytest.raises(tm.TopomapError, match="coordinate 7 in dimension 0"):
        _core.map_topdown(*args, order=good, gap=np.zeros(15, dtype=np.int32),
                          coords=np.full(32, 7, dtype=np.int32), ring=np.array([4, 4], dtype=np.int32))
    with pytest.raises(tm.TopomapError, match=r"flow_min >= 0 \(got 2, 1, 4, 2, 64, 0, -5\)"):
        _core.map_topdown(*args, order=good, gap=np.zeros(15, dtype=np.int32), ntries=2, tries=1, flow_min=-5)
    with pytest.raises(TypeError, match="coords and ring go together"):
        _core.map_topdown(*args, order=good, gap=np.zeros(15, dtype=np.int32), ring=np.array([4], dtype=np.int32))


def test_progress_and_cancel():
    pat = tm.generators.stencil_3d((8, 8, 8), points=7)
    alloc = tm.machine("torus:4x4x4/8").allocate(pat.n)
    seen: list[float] = []
    first = tm.map(pat, alloc, method="topdown", progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 1.0
    with pytest.raises(tm.Cancelled, match="^topdown cancelled by the progress callback at"):
        tm.map(pat, alloc, method="topdown", progress=lambda f: True)
    assert np.array_equal(tm.map(pat, alloc, method="topdown").pe_of, first.pe_of)


def test_graph_fabric_is_cut_by_graph_bisection():
    # a 2-level fat tree read as a graph fabric with shuffled node ids
    ft = tm.machine("fattree:k=4,levels=2/2")
    links, nn, nv = ft.links(), ft.nnodes, ft.nvertices
    perm = np.random.default_rng(1).permutation(nn)
    relabel = np.concatenate([perm, np.arange(nn, nv)])
    g = tm.Machine(tm.GraphNetwork(nn, nv - nn, relabel[links["src"]], relabel[links["dst"]]), tm.NodeTree.flat(2))
    alloc = g.allocate(g.npes)
    order, gap = decomposition(alloc)
    assert sorted(order.tolist()) == list(range(nn)) and gap.size == nn - 1
    assert gap.min() == 0 and (gap == 0).sum() == 1                    # one root cut, 8 | 8
    assert order[:8].size == 8 and np.argmin(gap) == 7
    pat = tm.generators.stencil_2d((8, 4))
    hb = {m: tm.evaluate(pat, alloc, tm.map(pat, alloc, method=m, seed=0)).hop_bytes for m in ("block", "topdown")}
    assert hb["topdown"] < hb["block"]


def test_tries_keep_the_lowest_j():
    pat = tm.generators.stencil_3d((12, 6, 6), points=7)
    alloc = tm.machine("torus:3x3x3/16").allocate(pat.n)
    opts = {"method": "topdown", "congestion_sweeps": 0, "coords": None}
    one = {s: tm.evaluate(pat, alloc, tm.map(pat, alloc, seed=s, **opts)).qap for s in range(3)}
    best = tm.map(pat, alloc, seed=0, tries=3, **opts)
    assert tm.evaluate(pat, alloc, best).qap <= one[0] + 1e-9                  # the first try is seed 0's run
    assert tm.map(pat, alloc, seed=0, tries=3, **opts).pe_of.tolist() == best.pe_of.tolist()
    with pytest.raises(tm.MappingError, match="tries must be an integer >= 1"):
        tm.map(pat, alloc, method="topdown", tries=0)


def test_flows_straighten_the_top_cuts():
    """flow_min reaches the bisections: on the 32x16x16 stencil without its grid, seed 3, max-flow
    refinement of the parts of 1,024 processes and more takes hop-bytes from 0.2265 to 0.2130 x block
    (no sure gain at this size: seed 4 goes from 0.1938 to 0.2245, seeds 2 and 5-7 are unchanged);
    capacities and seeds hold."""
    pat = tm.generators.stencil_3d((32, 16, 16), points=7)
    alloc = tm.machine("torus:8x8x8/16").allocate(pat.n)
    block = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block")).hop_bytes
    opts = {"method": "topdown", "coords": None, "seed": 3}
    plain, flows = (tm.map(pat, alloc, flow_min=f, **opts) for f in (0, 1024))
    for mp in (plain, flows):
        assert np.unique(mp.pe_of).size == pat.n
    assert tm.evaluate(pat, alloc, plain).hop_bytes / block == pytest.approx(0.2265, abs=5e-4)
    assert tm.evaluate(pat, alloc, flows).hop_bytes / block == pytest.approx(0.2130, abs=5e-4)
    assert tm.map(pat, alloc, flow_min=1024, **opts).pe_of.tolist() == flows.pe_of.tolist()
    assert tm.map(pat, alloc, **opts).pe_of.tolist() == plain.pe_of.tolist()   # no part reaches 16,384


@pytest.mark.parametrize("shape,spec,seed,before,after", [
    ((12, 6, 6), "torus:3x3x3/16", 0, 18.0, 15.0),
    ((12, 6, 6), "fattree:k=3,levels=3/16", 1, 42.0, 39.0),
])
def test_congestion_search_lowers_the_hottest_link(shape, spec, seed, before, after):
    pat = tm.generators.stencil_3d(shape, points=7)
    alloc = tm.machine(spec).allocate(pat.n)
    raw, refined = (tm.evaluate(pat, alloc, tm.map(pat, alloc, method="topdown", seed=seed, congestion_sweeps=cs,
                                                   coords=None))
                    for cs in (0, 10))
    assert (raw.max_congestion, refined.max_congestion) == (before, after)
    assert refined.hop_bytes <= raw.hop_bytes * 1.05                           # hop-bytes barely move


def test_cancel_inside_the_congestion_search():
    pat = tm.generators.stencil_3d((12, 6, 6), points=7)
    alloc = tm.machine("torus:3x3x3/16").allocate(pat.n)
    seen: list[float] = []

    def late(f: float) -> bool:
        seen.append(f)
        return 0.85 < f < 1.0                          # past the bipartitioning's share, before the end

    with pytest.raises(tm.Cancelled, match="^topdown cancelled"):
        tm.map(pat, alloc, method="topdown", effort="strong", coords=None, seed=1, progress=late)
    assert 0.85 < seen[-1] < 1.0


def test_the_stencils_grid_gives_the_embedding_on_an_odd_torus():
    # the 10^4 instance: 4 x 2 x 2 blocks on 9^3 nodes, every cut edge one hop
    pat = tm.generators.stencil_3d((36, 18, 18), points=7)
    alloc = tm.machine("torus:9x9x9/16").allocate(pat.n)
    for effort in ("fast", "eco"):
        mp = tm.map(pat, alloc, method="topdown", seed=0, effort=effort)
        h = hops_of(pat, alloc, mp)
        assert h.max() == 1 and h.sum() == block_embedding_hop_bytes((36, 18, 18), (9, 9, 9))
    grid = process_grid(pat)
    assert grid.shape == (pat.n, 3) and grid.max(axis=0).tolist() == [35, 17, 17]
    given = tm.map(pat, alloc, method="topdown", seed=0, coords=grid)
    assert given.pe_of.tolist() == mp.pe_of.tolist()


def test_process_grid_is_trusted_only_where_it_fits():
    pat = tm.generators.stencil_2d((6, 4))
    assert process_grid(pat)[7].tolist() == [1, 1]
    assert process_grid(tm.generators.moore((5, 5), r=2)) is not None
    perm = np.random.default_rng(0).permutation(pat.n)
    moved = tm.Pattern.from_edges(perm[pat.senders()], perm[pat.indices], pat.bytes, n=pat.n,
                                  provenance=pat.provenance)                  # relabelled, provenance kept
    assert process_grid(moved) is None
    assert process_grid(tm.generators.subcomm_alltoall((4, 4), 0)) is None   # whole rows, not neighbours
    assert process_grid(tm.generators.random_sparse(10, 0.3)) is None


@settings(max_examples=30, deadline=None)
@given(machines(), st.integers(1, 3), st.integers(1, 3), st.integers(0, 2**32 - 1), st.data())
def test_coordinate_splits_are_valid_and_seeded(m, capacity, pdims, seed, data):
    alloc = m.allocate(data.draw(st.integers(1, m.npes)), seed=seed % 1000)
    n = data.draw(st.integers(1, alloc.pes.size * capacity))
    rng = np.random.default_rng(seed)
    dense = (rng.random((n, n)) < 0.3) * 1.0
    np.fill_diagonal(dense, 0)
    pat = tm.Pattern.from_dense(dense)
    xy = rng.integers(0, data.draw(st.sampled_from([1, 3, 2**20])), size=(n, pdims))
    mp = tm.map(pat, alloc, method="topdown", seed=seed, capacity=capacity, coords=xy)
    assert np.isin(mp.pe_of, alloc.pes).all()
    assert np.bincount(mp.pe_of, minlength=m.npes).max() <= capacity
    again = tm.map(pat, alloc, method="topdown", seed=seed, capacity=capacity, coords=xy)
    assert again.pe_of.tolist() == mp.pe_of.tolist()


@pytest.mark.parametrize("coords, msg", [
    ("grid", "must be 'auto', None or an"),
    (np.zeros((16, 4), dtype=int), r"shape \(n, d\) = \(16, 1..3\), got \(16, 4\)"),
    (np.zeros((15, 2), dtype=int), r"got \(15, 2\)"),
    (np.full((16, 2), -1), "integers from 0 to 1048575"),
    (np.full((16, 2), 2**20), "integers from 0 to 1048575"),
    (np.full((16, 2), 0.5), "integers from 0 to 1048575"),
])
def test_bad_coordinates(coords, msg):
    pat = tm.generators.stencil_2d((4, 4))
    alloc = tm.machine("torus:4x4").allocate(16)
    with pytest.raises(tm.MappingError, match=msg):
        tm.map(pat, alloc, method="topdown", coords=coords)


def test_strong_keeps_the_partitioners_mapping_where_the_grid_loses():
    # ten times the bytes along z: blocks cut by the grid's axes are the wrong shape
    pat = tm.generators.stencil_3d((12, 6, 6), points=7, weights=(1, 1, 10))
    alloc = tm.machine("torus:3x3x3/16").allocate(pat.n)
    J = {c: tm.evaluate(pat, alloc, tm.map(pat, alloc, method="topdown", seed=0, effort="strong", coords=c)).qap
         for c in ("auto", None)}
    eco = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="topdown", seed=0)).qap
    seen: list[float] = []
    tm.map(pat, alloc, method="topdown", seed=0, effort="strong", progress=seen.append)
    assert J["auto"] == J[None] < eco                      # the grid alone (eco) loses; strong kept the other
    assert seen == sorted(seen) and seen[-1] == 1.0 and any(0.4 < f < 0.6 for f in seen)


def bare(pat):
    return tm.Pattern.from_edges(pat.senders(), pat.indices, pat.bytes, n=pat.n)


@pytest.mark.parametrize("pat", [
    tm.generators.stencil_3d((12, 6, 5), points=7),
    tm.generators.stencil_3d((6, 6, 4), points=27),
    tm.generators.stencil_3d((5, 4, 3), points=7, periodic=True),
    tm.generators.stencil_2d((9, 7)),
    tm.generators.stencil_2d((7, 9), periodic=True),
], ids=["7pt", "27pt", "periodic", "2d", "2d-periodic"])
def test_rank_grid_finds_the_grid_of_a_bare_stencil(pat):
    assert np.array_equal(rank_grid(bare(pat)), process_grid(pat))


def test_rank_grid_refuses_what_is_no_grid():
    pat = tm.generators.stencil_3d((6, 4, 4), points=7)
    perm = np.random.default_rng(1).permutation(pat.n)
    assert rank_grid(tm.Pattern.from_edges(perm[pat.senders()], perm[pat.indices], pat.bytes, n=pat.n)) is None
    assert rank_grid(tm.generators.random_sparse(200, 0.05)) is None
    assert rank_grid(bare(tm.generators.moore((8, 8), r=2))) is None              # reach 2: not nearest
    assert rank_grid(tm.Pattern.from_edges([0], [5], [1.0], n=7)) is None         # 7 is prime: no 2-D grid, 1-D too far


def test_a_bare_stencil_maps_as_its_grid():
    # a profiled halo exchange carries no provenance: topdown finds the grid from the ranks
    pat = bare(tm.generators.stencil_3d((36, 18, 18), points=7))
    alloc = tm.machine("torus:9x9x9/16").allocate(pat.n)
    h = hops_of(pat, alloc, tm.map(pat, alloc, method="topdown", seed=0))
    assert h.max() == 1 and h.sum() == block_embedding_hop_bytes((36, 18, 18), (9, 9, 9))


def test_machines_without_axes_also_partition_the_graph():
    # a dragonfly has no axes to pair with the grid's: up to BOTH_LIMIT processes the graph is partitioned
    # too and the lower J kept (here the partitioner's: 0.630 against the grid's 0.662 x block's hop-bytes)
    pat = tm.generators.stencil_3d((16, 12, 12), points=7)
    alloc = tm.machine("dragonfly:g=9,a=8,h=4,p=4/8").allocate(pat.n)
    J = {c: tm.evaluate(pat, alloc, tm.map(pat, alloc, method="topdown", seed=0, coords=c)).qap
         for c in ("auto", None)}
    assert J["auto"] == J[None]
    assert pat.n <= BOTH_LIMIT
