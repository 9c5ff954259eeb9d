"""Node grouping by boxes of a stencil's grid (csrc/core/map_nodes_grid.c), the
``grid`` option of greedy, recursive, rcm and ptram: boxes where they tile the
nodes, the partitioner where they do not, and the option's errors."""

from __future__ import annotations

import numpy as np
import pytest

import topomap as tm
from topomap import _core
from topomap.errors import MappingError
from topomap.mappers.grids import process_grid, rank_grid

METHODS = ("greedy", "recursive", "rcm", "ptram")


def node_cut(pat: tm.Pattern, node: np.ndarray) -> float:
    """Bytes between processes on different nodes."""
    return float(pat.bytes[node[pat.senders()] != node[pat.indices]].sum())


def boxes(pat: tm.Pattern, node: np.ndarray) -> set[tuple[int, ...]]:
    """Extents of every node's processes on the grid, with a check that each fills its bounding box."""
    xyz = process_grid(pat)
    shapes = set()
    for g in np.unique(node):
        pts = xyz[node == g]
        ext = tuple(int(e) for e in pts.max(axis=0) - pts.min(axis=0) + 1)
        assert np.prod(ext) == len(pts), f"node {g} is no box"
        shapes.add(ext)
    return shapes


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("spec", ["torus:2x2x2/16", "fattree:k=4,levels=2/16"])
def test_each_node_gets_a_box_of_least_surface(method, spec):
    pat = tm.generators.stencil_3d((8, 4, 4), points=7)   # 128 processes, 8 nodes of 16
    alloc = tm.machine(spec).allocate(pat.n)
    node = tm.map(pat, alloc, method=method, seed=0, grid="auto").pe_of // alloc.machine.pes_per_node
    assert boxes(pat, node) == {(2, 2, 4)}                # surface 20, the first of the least by axis 0, 1
    assert node_cut(pat, node) == 2 * (3 * 16 + 32)       # 3 cuts across x, 1 across y, both directions
    plain = tm.map(pat, alloc, method=method, seed=0, grid=None).pe_of // alloc.machine.pes_per_node
    assert node_cut(pat, plain) >= node_cut(pat, node)


@pytest.mark.parametrize("method, default", [("recursive", "auto"), ("ptram", None), ("greedy", None), ("rcm", None)])
def test_defaults_boxes_where_they_measured_better(method, default):
    pat = tm.generators.stencil_3d((12, 6, 6), points=7)  # 27 nodes of 16: boxes 4x2x2 cut 720, the partitioner more
    alloc = tm.machine("torus:3x3x3/16").allocate(pat.n)
    assert tm.methods()[method].options["grid"][0] == default
    node = tm.map(pat, alloc, method=method, seed=0).pe_of // 16
    parted = tm.map(pat, alloc, method=method, seed=0, grid=None).pe_of // 16
    assert node_cut(pat, parted) > 720
    assert node_cut(pat, node) == (720 if default else node_cut(pat, parted))


def test_a_bare_stencil_is_grouped_by_the_grid_it_is_given():
    gen = tm.generators.stencil_3d((8, 4, 4), points=7)
    bare = tm.Pattern.from_edges(gen.senders(), gen.indices, gen.bytes, n=gen.n)   # no provenance
    alloc = tm.machine("torus:2x2x2/16").allocate(bare.n)
    # "auto" trusts recorded grids only: rank_grid also fits non-stencils (an all-to-all of 4 neighbours)
    assert np.array_equal(tm.map(bare, alloc, method="recursive", seed=0).pe_of,
                          tm.map(bare, alloc, method="recursive", seed=0, grid=None).pe_of)
    node = tm.map(bare, alloc, method="recursive", seed=0, grid=rank_grid(bare)).pe_of // 16
    assert boxes(gen, node) == {(2, 2, 4)}


@pytest.mark.parametrize("method", METHODS)
def test_grids_the_nodes_do_not_tile_keep_the_partitioner(method):
    pat = tm.generators.stencil_3d((6, 5, 3), points=7)   # 90 processes: 6 nodes of 16 leave room
    alloc = tm.machine("torus:2x2x2/16").allocate(pat.n)
    assert np.array_equal(tm.map(pat, alloc, method=method, seed=3).pe_of,
                          tm.map(pat, alloc, method=method, seed=3, grid=None).pe_of)


def test_uneven_nodes_keep_the_partitioner_and_their_slots():
    pat = tm.generators.stencil_3d((4, 4, 4), points=7)
    m = tm.machine("torus:4x4/8")
    pes = np.random.default_rng(2).permutation(m.npes)[:64]   # nodes hold different numbers of the PEs
    alloc = tm.Allocation(m, pes)
    slots = np.bincount(pes // 8, minlength=m.nnodes)
    assert len(set(slots[slots > 0])) > 1
    for method in METHODS:
        pe_of = tm.map(pat, alloc, method=method, seed=1).pe_of
        assert sorted(pe_of.tolist()) == sorted(alloc.pes.tolist())
        assert np.array_equal(pe_of, tm.map(pat, alloc, method=method, seed=1, grid=None).pe_of)


def test_core_grouping_matches_the_mappers_and_checks_its_grid():
    pat = tm.generators.stencil_3d((8, 4, 4), points=7)
    m = tm.machine("torus:2x2x2/16")
    alloc = m.allocate(pat.n)
    args = (m._core, pat.indptr, pat.indices, pat.bytes, alloc.pes, 1, 0, None)
    xyz = process_grid(pat)
    group, slots = _core.group_by_node(*args, grid=xyz)
    assert slots.tolist() == [16] * 8
    assert np.array_equal(group, xyz[:, 0] // 2 + 4 * (xyz[:, 1] // 2))   # boxes in grid order, axis 0 fastest
    with pytest.raises(ValueError, match=r"shape \(n, d\) = \(128, 1..3\)"):
        _core.group_by_node(*args, grid=xyz[:5])
    with pytest.raises(ValueError, match="process 7 has grid coordinate -1 on axis 2"):
        bad = xyz.copy()
        bad[7, 2] = -1
        _core.group_by_node(*args, grid=bad)
    with pytest.raises(TypeError):
        _core.group_by_node(*args, grid=xyz.astype(np.float64))   # no silent truncation


@pytest.mark.parametrize("grid, match", [
    ("boxes", "option grid must be 'auto', None or an"),
    (np.zeros((5, 3), dtype=np.int32), r"option grid must have shape \(n, d\) = \(128, 1..3\)"),
    (np.full((128, 3), -1), "option grid must be integers from 0 to"),
    (np.zeros((128, 3)) + 0.5, "option grid must be integers from 0 to"),
])
def test_bad_grid_options_name_the_option(grid, match):
    pat = tm.generators.stencil_3d((8, 4, 4), points=7)
    alloc = tm.machine("torus:2x2x2/16").allocate(pat.n)
    for method in METHODS:
        with pytest.raises(MappingError, match=f"{method}: {match}"):
            tm.map(pat, alloc, method=method, grid=grid)


def test_a_given_grid_is_used_and_results_repeat_by_seed():
    pat = tm.generators.stencil_2d((8, 8))
    alloc = tm.machine("torus:4x4/4").allocate(64)
    xy = np.stack([np.arange(64) % 8, np.arange(64) // 8], axis=1)
    for method in METHODS:
        a = tm.map(pat, alloc, method=method, seed=5, grid=xy).pe_of
        assert np.array_equal(a, tm.map(pat, alloc, method=method, seed=5, grid=xy).pe_of)
        assert boxes(pat, a // 4) == {(2, 2)}
