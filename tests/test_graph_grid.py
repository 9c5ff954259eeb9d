"""graph_grid: the grid of a nearest-neighbour stencil from its traffic graph, in any rank numbering."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap.mappers.graph_grid import graph_grid
from topomap.mappers.grids import process_coords


def stencil(shape, periodic=False):
    if len(shape) > 1:
        gen = tm.generators.stencil_3d if len(shape) == 3 else tm.generators.stencil_2d
        return gen(shape, points=2 * len(shape) + 1, periodic=periodic)
    a = np.arange(shape[0])
    b = (a + 1) % shape[0] if periodic else a[1:]
    a = a if periodic else a[:-1]
    return tm.Pattern.from_edges(np.r_[a, b], np.r_[b, a], np.ones(2 * a.size), n=shape[0])


def relabelled(pat, seed):
    """The pattern with rank r renamed perm[r], and perm."""
    perm = np.random.default_rng(seed).permutation(pat.n)
    return tm.Pattern.from_edges(perm[pat.senders()], perm[pat.indices], pat.bytes, n=pat.n), perm


def true_coords(shape):
    # the generators number the first axis fastest
    return np.stack(np.unravel_index(np.arange(int(np.prod(shape))), shape, order="F"), axis=1)


def assert_is_the_grid(found, shape, perm):
    """found[perm[r]] equals rank r's coordinates up to a permutation and reflection of the axes."""
    truth = true_coords(shape)[np.argsort(perm)]        # truth[q] = coordinates of new rank q
    big = [i for i, s in enumerate(shape) if s > 1]
    assert found is not None and found.dtype == np.int32 and found.shape == (len(truth), len(big))
    assert sorted(found.max(axis=0) + 1, reverse=True) == list(found.max(axis=0) + 1)
    free = set(big)
    for j in range(found.shape[1]):
        col = found[:, j]
        match = [i for i in free if np.array_equal(col, truth[:, i]) or np.array_equal(col, shape[i] - 1 - truth[:, i])]
        assert match, f"axis {j} is no axis of the grid"
        free.discard(match[0])


@pytest.mark.parametrize("shape", [(2,), (17,), (9, 7), (2, 5), (6, 4, 5), (2, 2, 2), (3, 2, 7), (36, 18, 18),
                                   (6, 4, 1)])
@pytest.mark.parametrize("seed", [0, 1])
def test_finds_the_grid_of_a_relabelled_stencil(shape, seed):
    pat, perm = relabelled(stencil(shape), seed)
    assert_is_the_grid(graph_grid(pat), shape, perm)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(2, 7), min_size=1, max_size=3), st.integers(0, 2**32 - 1))
def test_any_box_in_any_numbering(shape, seed):
    assume(shape != [2, 2])   # the ring of 4 (below)
    pat, perm = relabelled(stencil(tuple(shape)), seed)
    assert_is_the_grid(graph_grid(pat), tuple(shape), perm)


def test_a_square_of_four_is_the_ring_of_four():
    pat, perm = relabelled(stencil((2, 2)), 0)
    ring = graph_grid(pat)[:, 0]
    assert sorted(ring) == [0, 1, 2, 3]
    assert np.all(np.abs(ring[pat.senders()] - ring[pat.indices]) % 2 == 1)


def assert_is_the_ring_grid(found, shape, pat, perm):
    """Every message of pat is one step on one ring of found, and found[perm[r]] equals rank r's coordinates
    up to a permutation, reflection and rotation of the rings (but on rings of 4, whose grid graph has more
    symmetries than the rings' own)."""
    truth = true_coords(shape)[np.argsort(perm)]
    assert found is not None and found.dtype == np.int32 and found.shape == truth.shape
    dims = found.max(axis=0) + 1
    assert sorted(dims, reverse=True) == list(dims) == sorted(shape, reverse=True)
    gap = np.abs(found[pat.senders()] - found[pat.indices])
    assert np.all(np.minimum(gap, dims - gap).sum(axis=1) == 1)
    if 4 in shape:
        return
    free = set(range(len(shape)))
    for j in range(found.shape[1]):
        match = [i for i in free if shape[i] == dims[j] and any(
            np.array_equal(found[:, j], (sign * truth[:, i] + shift) % shape[i])
            for sign in (1, -1) for shift in range(shape[i]))]
        assert match, f"axis {j} is no ring of the grid"
        free.discard(match[0])


@pytest.mark.parametrize("shape", [(5,), (12,), (3, 3), (9, 7), (4, 4), (4, 6), (5, 5, 5), (3, 3, 3), (4, 4, 4),
                                   (6, 4, 5), (7, 3, 4), (10, 8, 6)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_finds_the_grid_of_a_relabelled_periodic_stencil(shape, seed):
    pat, perm = relabelled(stencil(shape, periodic=True), seed)
    assert_is_the_ring_grid(graph_grid(pat), shape, pat, perm)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(3, 7), min_size=1, max_size=3), st.integers(0, 2**32 - 1))
def test_any_ring_grid_in_any_numbering(shape, seed):
    pat, perm = relabelled(stencil(tuple(shape), periodic=True), seed)
    assert_is_the_ring_grid(graph_grid(pat), tuple(shape), pat, perm)


def test_one_way_messages_and_unequal_bytes_are_the_same_graph():
    gen = tm.generators.stencil_3d((5, 4, 3), points=7, weights=(3.0, 1.0, 0.5))
    up = gen.senders() < gen.indices
    pat, perm = relabelled(tm.Pattern.from_edges(gen.senders()[up], gen.indices[up], gen.bytes[up], n=gen.n), 3)
    assert_is_the_grid(graph_grid(pat), (5, 4, 3), perm)


def swapped_edges(shape):
    """A 2-D grid with two edges rewired so that every degree stays: it passes the degree check only."""
    gen = tm.generators.stencil_2d(shape, points=5)
    e = {(int(a), int(b)) for a, b in zip(gen.senders(), gen.indices) if a < b}
    a, b = 1 + shape[0] * 2, 2 + shape[0] * 2                      # (1, 2) - (2, 2)
    c, d = 1 + shape[0] * 4, 2 + shape[0] * 4                      # (1, 4) - (2, 4)
    e -= {(a, b), (c, d)}
    e |= {(a, c), (b, d)}
    src, dst = np.array(sorted(e)).T
    return tm.Pattern.from_edges(np.r_[src, dst], np.r_[dst, src], np.ones(2 * src.size), n=gen.n)


def grid_plus(shape, extra):
    gen = tm.generators.stencil_2d(shape, points=5)
    src, dst = np.r_[gen.senders(), extra[0]], np.r_[gen.indices, extra[1]]
    return tm.Pattern.from_edges(src, dst, np.ones(src.size), n=gen.n)


def grid_minus_one(shape):
    gen = tm.generators.stencil_2d(shape, points=5)
    keep = ~(((gen.senders() == 7) & (gen.indices == 8)) | ((gen.senders() == 8) & (gen.indices == 7)))
    return tm.Pattern.from_edges(gen.senders()[keep], gen.indices[keep], gen.bytes[keep], n=gen.n)


def two_grids():
    a = tm.generators.stencil_2d((4, 3), points=5)
    src, dst = np.r_[a.senders(), a.senders() + a.n], np.r_[a.indices, a.indices + a.n]
    return tm.Pattern.from_edges(src, dst, np.ones(src.size), n=2 * a.n)


def twisted_ring(n, jump):
    """The circulant graph C_n(1, jump): 4-regular and a torus grid up close, but its rows join in a helix."""
    a = np.arange(n)
    src, dst = np.r_[a, a, (a + 1) % n, (a + jump) % n], np.r_[(a + 1) % n, (a + jump) % n, a, a]
    return tm.Pattern.from_edges(src, dst, np.ones(src.size), n=n)


@pytest.mark.parametrize("pat", [
    tm.generators.stencil_3d((6, 4, 5), points=7, periodic=(True, True, False)),
    tm.generators.stencil_2d((6, 5), periodic=(True, False)),
    tm.generators.stencil_3d((6, 2, 5), points=7, periodic=True),     # a ring of 2 is a single link
    twisted_ring(30, 7),
    tm.generators.stencil_3d((6, 4, 5), points=27),
    tm.generators.stencil_2d((6, 5), points=9),
    tm.generators.moore((6, 6), periodic=False),
    tm.generators.random_sparse(200, 0.05),
    swapped_edges((6, 7)),
    grid_plus((6, 5), ([0], [7])),                                 # a diagonal message
    grid_plus((6, 5), ([0, 29], [29, 0])),                         # corner to corner
    grid_minus_one((6, 5)),
    two_grids(),
    tm.Pattern.from_edges(np.zeros(9, int), np.arange(1, 10), np.ones(9), n=10),   # a star
    tm.Pattern.from_edges([0, 1], [1, 0], [1.0, 1.0], n=3),                      # a process without messages
    tm.Pattern.from_edges([0], [0], [1.0], n=1),
], ids=["periodic-2-axes", "periodic-axis", "ring-of-2", "twisted", "27pt", "9pt", "moore", "random", "swapped", "diagonal", "corners",
        "missing", "two-grids", "star", "isolated", "single"])
def test_refuses_what_is_no_box_grid(pat):
    assert graph_grid(pat) is None
    assert graph_grid(relabelled(pat, 5)[0]) is None


@pytest.mark.parametrize("periodic,planes", [(False, 8), (True, 9)])
def test_topdown_maps_a_relabelled_stencil_as_its_grid(periodic, planes):
    # the ranks say nothing (a relabelled halo exchange): the graph's grid still gives the embedding, 4 x 2 x 2
    # blocks with one hop across each plane between them (8 per axis, 9 with the wraps); the partitioner alone
    # gives 2x that with wraps (57,940 hops, 62,878 relabelled, at most 9 per message)
    shape = (36, 18, 18)
    pat, _ = relabelled(tm.generators.stencil_3d(shape, points=7, periodic=periodic), 0)
    alloc = tm.machine("torus:9x9x9/16").allocate(pat.n)
    node = alloc.machine.node_of(tm.map(pat, alloc, method="topdown", seed=0).pe_of)
    hops = np.asarray(alloc.machine.hops(node[pat.senders()], node[pat.indices]))
    assert hops.max() == 1
    assert hops.sum() == 2 * planes * (18 * 18 + 2 * 36 * 18)


def test_only_topdown_auto_looks_at_the_graph():
    pat, _ = relabelled(tm.generators.stencil_2d((8, 6)), 2)
    assert process_coords(pat, "auto", "topdown", "coords").shape == (48, 2)
    assert process_coords(pat, "auto", "greedy", "grid", ranks=False) is None   # node boxes: provenance only
    assert process_coords(pat, None, "topdown", "coords") is None


@pytest.mark.parametrize("effort", ["eco", "strong"])
def test_topdown_renumbers_along_the_grid_and_back(effort):
    # coordinates given in another order than the ranks': topdown maps the pattern renumbered along its grid,
    # which is the original stencil here, so each process lands where its original rank does
    shape = (12, 6, 4)
    gen = tm.generators.stencil_3d(shape, points=7)
    pat, perm = relabelled(gen, 4)
    xyz = np.empty((gen.n, 3), dtype=np.int64)
    xyz[perm] = true_coords(shape)
    alloc = tm.machine("torus:3x3x2/16").allocate(gen.n)
    got = tm.map(pat, alloc, method="topdown", seed=3, effort=effort, coords=xyz).pe_of
    want = tm.map(gen, alloc, method="topdown", seed=3, effort=effort, coords=true_coords(shape)).pe_of
    assert np.array_equal(got[perm], want)


def test_core_search_matches_hops_and_names_bad_input():
    from topomap import _core
    pat = stencil((7, 5))
    xadj, adj, _ = _core.ugraph_from_pattern(pat.indptr, pat.indices, pat.bytes)
    xy = true_coords((7, 5))
    corners = [0, 34]                                      # (0, 0) and (6, 4)
    want = np.minimum(np.abs(xy - xy[0]).sum(axis=1), np.abs(xy - xy[34]).sum(axis=1))
    assert np.array_equal(_core.ugraph_bfs(xadj, adj, corners), want)
    with pytest.raises(tm.TopomapError, match="source 0 of the search is 35"):
        _core.ugraph_bfs(xadj, adj, [35])
    bad = adj.copy()
    bad[3] = -2
    with pytest.raises(tm.TopomapError, match="neighbour -2"):
        _core.ugraph_bfs(xadj, bad, [0])
    with pytest.raises(ValueError, match="adjncy"):
        _core.ugraph_bfs(xadj, adj[:-1], [0])


def test_the_renumbered_path_keeps_capacity_seed_and_cancellation():
    shape = (8, 6, 4)
    gen = tm.generators.stencil_3d(shape, points=7)
    pat, perm = relabelled(gen, 6)
    alloc = tm.machine("torus:3x2x2/8").allocate(gen.n // 2)              # 96 PEs for 192 processes
    runs = [tm.map(pat, alloc, method="topdown", seed=5, capacity=2).pe_of for _ in range(2)]
    assert np.array_equal(runs[0], runs[1])
    assert np.bincount(runs[0], minlength=alloc.machine.npes).max() == 2 and np.isin(runs[0], alloc.pes).all()
    hops = tm.evaluate(pat, alloc, runs[0]).hop_bytes   # the grid's mapping, up to the grid's symmetry
    assert hops == tm.evaluate(gen, alloc, tm.map(gen, alloc, method="topdown", seed=5, capacity=2).pe_of).hop_bytes
    with pytest.raises(tm.Cancelled, match="^topdown cancelled"):
        tm.map(pat, alloc, method="topdown", seed=0, capacity=2, progress=lambda f: True)
