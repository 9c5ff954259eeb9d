"""Tests for the counter-based RNG and the synthetic pattern generators."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import topomap.patterns.generators as gen
from topomap._rng import splitmix64, stream_seed, uniform
from topomap.errors import PatternError
from topomap.patterns.generators import (
    from_spec, moore, random_sparse, stencil_2d, stencil_3d, subcomm_alltoall,
)

M64 = 2**64


# ---------------------------------------------------------------- references
def ref_splitmix64(seed: int, count: int) -> list[int]:
    """The sequential reference algorithm (Steele/Vigna) in plain Python ints."""
    x, out = seed, []
    for _ in range(count):
        x = (x + 0x9E3779B97F4A7C15) % M64
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % M64
        out.append(z ^ (z >> 31))
    return out


def ref_splitmix64_at(seed: int, k: int) -> int:
    """Output k of the stream in closed form: the state after k+1 steps is seed + (k+1)*gamma."""
    x = (seed + (k + 1) * 0x9E3779B97F4A7C15) % M64
    z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) % M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % M64
    return z ^ (z >> 31)


def ref_offsets(d: int, r: int, nonzero_counts: set[int] | None = None) -> list[tuple[int, ...]]:
    return [
        o for o in itertools.product(range(-r, r + 1), repeat=d)
        if any(o) and (nonzero_counts is None or sum(c != 0 for c in o) in nonzero_counts)
    ]


def ref_pattern(dims, offsets, periodic, weights=None, volume=1.0):
    """Dense bytes, dense message counts and dropped self bytes, by brute force."""
    d = len(dims)
    weights = weights or (1.0,) * d
    n = math.prod(dims)
    byts, msgs, dropped = np.zeros((n, n)), np.zeros((n, n)), 0.0
    for p in range(n):
        x, rest = [], p
        for e in dims:
            x.append(rest % e)
            rest //= e
        for o in offsets:
            y = [x[a] + o[a] for a in range(d)]
            if any(not periodic[a] and not 0 <= y[a] < dims[a] for a in range(d)):
                continue
            y = [y[a] % dims[a] for a in range(d)]
            q = sum(y[a] * math.prod(dims[:a]) for a in range(d))
            w = volume * max(weights[a] for a in range(d) if o[a])
            if q == p:
                dropped += w
            else:
                byts[p, q] += w
                msgs[p, q] += 1
    return byts, msgs, dropped


def dense_msgs(pat) -> np.ndarray:
    out = np.zeros((pat.n, pat.n))
    out[pat.senders(), pat.indices] = pat.msgs
    return out


def degrees(pat) -> np.ndarray:
    return np.diff(pat.indptr)


def in_degrees(pat) -> np.ndarray:
    return np.bincount(pat.indices, minlength=pat.n)


STENCIL_SETS = {5: {1}, 9: {1, 2}, 7: {1}, 15: {1, 3}, 27: {1, 2, 3}}


# ---------------------------------------------------------------- _rng
def test_splitmix64_golden_seed0():
    assert [int(v) for v in splitmix64(0, range(3))] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F,
    ]


@pytest.mark.parametrize("seed", [0, 1, 42, 0x123456789ABCDEF, M64 - 1])
def test_splitmix64_matches_reference(seed):
    expected = ref_splitmix64(seed, 20)
    assert [int(v) for v in splitmix64(seed, np.arange(20))] == expected
    # counter-based: any subset, in any order, gives the same values
    assert [int(v) for v in splitmix64(seed, [19, 3, 0])] == [expected[19], expected[3], expected[0]]


def test_splitmix64_shape_dtype_and_large_counters():
    out = splitmix64(5, np.arange(6).reshape(2, 3))
    assert out.shape == (2, 3) and out.dtype == np.uint64
    # far positions of the stream cannot be reached by walking it: use the closed form
    big = M64 - 2
    assert int(splitmix64(0, np.array([big], dtype=np.uint64))[0]) == ref_splitmix64_at(0, big)


def test_splitmix64_does_not_modify_input():
    c = np.arange(5, dtype=np.uint64)
    splitmix64(3, c)
    assert c.tolist() == [0, 1, 2, 3, 4]


def test_uniform_is_top_53_bits():
    expected = [(v >> 11) / 2**53 for v in ref_splitmix64(9, 50)]
    u = uniform(9, range(50))
    assert u.dtype == np.float64 and u.tolist() == expected
    assert ((u >= 0) & (u < 1)).all()


def test_uniform_chunks_agree_with_whole():
    c = np.arange(10_000)
    whole = uniform(77, c)
    parts = np.concatenate([uniform(77, c[i:i + 999]) for i in range(0, c.size, 999)])
    assert np.array_equal(whole, parts)


def test_stream_seed_golden_and_independence():
    # Pinned: changing the derivation would silently change every seeded pattern.
    assert stream_seed(0) == 2805872175847487577
    assert stream_seed(12345, "random_sparse") == 9433424764370424395
    assert stream_seed(1, "a", 7) == 16924178294836641049
    seeds = {stream_seed(s, *labels) for s in range(3) for labels in [(), ("a",), ("b",), ("a", 1), (1, "a")]}
    assert len(seeds) == 15
    assert stream_seed(1, "ab") != stream_seed(1, "a", "b")


@pytest.mark.parametrize("call", [
    lambda: splitmix64(-1, [0]),
    lambda: splitmix64(M64, [0]),
    lambda: splitmix64(True, [0]),
    lambda: splitmix64(1.5, [0]),
    lambda: splitmix64(0, [-1]),
    lambda: splitmix64(0, [0.5]),
    lambda: stream_seed(0, 1.5),
    lambda: stream_seed(0, -3),
])
def test_rng_rejects_bad_input(call):
    with pytest.raises(PatternError):
        call()


# ---------------------------------------------------------------- stencil_2d
def test_stencil_2d_3x3_five_point_dense():
    expected = np.array([
        # 0  1  2  3  4  5  6  7  8
        [0, 1, 0, 1, 0, 0, 0, 0, 0],
        [1, 0, 1, 0, 1, 0, 0, 0, 0],
        [0, 1, 0, 0, 0, 1, 0, 0, 0],
        [1, 0, 0, 0, 1, 0, 1, 0, 0],
        [0, 1, 0, 1, 0, 1, 0, 1, 0],
        [0, 0, 1, 0, 1, 0, 0, 0, 1],
        [0, 0, 0, 1, 0, 0, 0, 1, 0],
        [0, 0, 0, 0, 1, 0, 1, 0, 1],
        [0, 0, 0, 0, 0, 1, 0, 1, 0],
    ], dtype=float)
    pat = stencil_2d((3, 3))
    assert np.array_equal(pat.to_dense(), expected)
    assert np.array_equal(dense_msgs(pat), expected)
    assert pat.provenance == {
        "generator": "stencil_2d", "dims": [3, 3], "points": 5, "weights": [1.0, 1.0],
        "periodic": [False, False], "bytes": 1.0, "dropped_self_bytes": 0.0,
    }


def test_stencil_2d_first_coordinate_fastest():
    pat = stencil_2d((4, 2))  # process 1 = (1, 0): neighbours (0,0)=0, (2,0)=2, (1,1)=5
    assert pat.indices[pat.indptr[1]:pat.indptr[2]].tolist() == [0, 2, 5]


def test_stencil_2d_4x4_periodic_dense():
    pat = stencil_2d((4, 4), periodic=True, bytes=8.0)
    dense = pat.to_dense()
    # (x0, x1) -> x0 + 4*x1; process 0 = (0,0) talks to (1,0), (3,0), (0,1), (0,3)
    assert np.flatnonzero(dense[0]).tolist() == [1, 3, 4, 12]
    # process 5 = (1,1): an interior process, no wrap
    assert np.flatnonzero(dense[5]).tolist() == [1, 4, 6, 9]
    # process 15 = (3,3) wraps in both dimensions
    assert np.flatnonzero(dense[15]).tolist() == [3, 11, 12, 14]
    assert set(dense[dense > 0].tolist()) == {8.0}
    assert (degrees(pat) == 4).all()
    ref, _, _ = ref_pattern((4, 4), ref_offsets(2, 1, {1}), (True, True), volume=8.0)
    assert np.array_equal(dense, ref)


def test_stencil_2d_nine_point_degrees_and_weights():
    pat = stencil_2d((3, 3), points=9)
    assert degrees(pat).tolist() == [3, 5, 3, 5, 8, 5, 3, 5, 3]
    w = stencil_2d((5, 5), points=9, weights=(2, 5), periodic=True).to_dense()
    c = 2 + 5 * 2  # centre (2, 2)
    assert w[c, c + 1] == 2.0 and w[c, c - 1] == 2.0      # along dim 0
    assert w[c, c + 5] == 5.0 and w[c, c - 5] == 5.0      # along dim 1
    assert w[c, c + 6] == 5.0 and w[c, c - 4] == 5.0      # diagonals: max(2, 5), not 10


def test_stencil_2d_thesis_weighted_form():
    pat = stencil_2d((8, 8), weights=(3, 1), periodic=True)
    dense = pat.to_dense()
    assert dense[9, 10] == 3.0 and dense[9, 8] == 3.0 and dense[9, 17] == 1.0 and dense[9, 1] == 1.0
    assert pat.total_bytes == 64 * (3 + 3 + 1 + 1)


@pytest.mark.parametrize("dims, points, interior, edge, corner", [
    ((5, 6), 5, 4, 3, 2),
    ((5, 6), 9, 8, 5, 3),
])
def test_stencil_2d_boundary_degrees(dims, points, interior, edge, corner):
    deg = degrees(stencil_2d(dims, points=points)).reshape(dims[1], dims[0])
    assert deg[1:-1, 1:-1].ravel().tolist() == [interior] * ((dims[0] - 2) * (dims[1] - 2))
    for border in (deg[0, 1:-1], deg[-1, 1:-1], deg[1:-1, 0], deg[1:-1, -1]):
        assert (border == edge).all()
    assert [deg[0, 0], deg[0, -1], deg[-1, 0], deg[-1, -1]] == [corner] * 4


def test_stencil_2d_mixed_periodicity():
    pat = stencil_2d((4, 5), periodic=(True, False))
    deg = degrees(pat).reshape(5, 4)
    assert (deg[0] == 3).all() and (deg[-1] == 3).all() and (deg[1:-1] == 4).all()
    ref, _, _ = ref_pattern((4, 5), ref_offsets(2, 1, {1}), (True, False))
    assert np.array_equal(pat.to_dense(), ref)


def test_stencil_tiny_periodic_extents():
    # extent 2: +1 and -1 reach the same process, summed into one entry of 2 messages
    pat = stencil_2d((2, 3), periodic=True, bytes=5.0)
    dense, msgs = pat.to_dense(), dense_msgs(pat)
    assert dense[0, 1] == 10.0 and msgs[0, 1] == 2.0
    assert dense[0, 2] == 5.0 and dense[0, 4] == 5.0
    assert (degrees(pat) == 3).all()
    assert pat.provenance["dropped_self_bytes"] == 0.0
    # extent 1: both offsets along that dimension wrap onto the process itself
    pat = stencil_2d((1, 4), periodic=True)
    assert (degrees(pat) == 2).all()
    assert pat.provenance["dropped_self_bytes"] == 2 * 4
    assert pat.total_bytes + pat.provenance["dropped_self_bytes"] == 4 * 4
    single = stencil_2d((1, 1), points=9, periodic=True)
    assert single.nnz == 0 and single.provenance["dropped_self_bytes"] == 8.0


# ---------------------------------------------------------------- stencil_3d
def test_stencil_3d_3x3x3_fifteen_point():
    pat = stencil_3d((3, 3, 3), points=15)
    nbrs = lambda p: pat.indices[pat.indptr[p]:pat.indptr[p + 1]].tolist()
    assert nbrs(0) == [1, 3, 9, 13]                      # 3 faces + corner (1,1,1)
    assert nbrs(1) == [0, 2, 4, 10, 12, 14]              # edge centre: 4 faces + 2 corners
    assert nbrs(4) == [1, 3, 5, 7, 9, 11, 13, 15, 17]    # face centre: 5 faces + 4 corners
    assert nbrs(13) == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26]  # 6 faces + 8 corners
    assert pat.nnz == 172
    ref, _, _ = ref_pattern((3, 3, 3), ref_offsets(3, 1, {1, 3}), (False,) * 3)
    assert np.array_equal(pat.to_dense(), ref)
    assert np.array_equal(pat.to_dense(), pat.to_dense().T)


@pytest.mark.parametrize("points, interior, face, edge, corner", [
    (7, 6, 5, 4, 3),
    (15, 14, 9, 6, 4),
    (27, 26, 17, 11, 7),
])
def test_stencil_3d_boundary_degrees(points, interior, face, edge, corner):
    dims = (4, 5, 6)
    deg = degrees(stencil_3d(dims, points=points)).reshape(dims[2], dims[1], dims[0])
    assert (deg[1:-1, 1:-1, 1:-1] == interior).all()
    assert (deg[0, 1:-1, 1:-1] == face).all() and (deg[1:-1, 1:-1, -1] == face).all()
    assert (deg[0, 0, 1:-1] == edge).all() and (deg[1:-1, -1, -1] == edge).all()
    assert all(deg[i, j, k] == corner for i in (0, -1) for j in (0, -1) for k in (0, -1))


@pytest.mark.parametrize("points", [7, 15, 27])
def test_stencil_3d_periodic_degree(points):
    pat = stencil_3d((3, 4, 5), points=points, periodic=True)
    assert (degrees(pat) == points - 1).all() and (in_degrees(pat) == points - 1).all()
    assert pat.total_bytes == 60 * (points - 1)


def test_stencil_3d_weights_on_corners():
    dense = stencil_3d((4, 4, 4), points=15, weights=(3, 1, 1), periodic=True).to_dense()
    c = 1 + 4 * 1 + 16 * 1
    assert dense[c, c + 1] == 3.0 and dense[c, c + 4] == 1.0 and dense[c, c + 16] == 1.0
    assert dense[c, c + 1 + 4 + 16] == 3.0 and dense[c, c - 1 - 4 - 16] == 3.0


def test_stencil_3d_medium_scale():
    pat = stencil_3d((64, 64, 64), points=27, periodic=True)
    assert pat.n == 64**3 and pat.nnz == 26 * 64**3
    assert (degrees(pat) == 26).all()
    row = pat.indices[pat.indptr[0]:pat.indptr[1]]
    assert np.all(np.diff(row) > 0)


# ---------------------------------------------------------------- moore
@pytest.mark.parametrize("dims, r", [((8,), 3), ((5, 7), 1), ((8, 8), 2), ((9, 10), 4), ((5, 5, 6), 2), ((3, 3, 4, 5), 1)])
def test_moore_degree_when_periodic_and_large(dims, r):
    pat = moore(dims, r=r)
    k = (2 * r + 1) ** len(dims) - 1
    assert (degrees(pat) == k).all() and (in_degrees(pat) == k).all()
    assert np.array_equal(pat.to_dense(), pat.to_dense().T)
    assert pat.provenance["periodic"] == [True] * len(dims)


def test_moore_is_chebyshev_box():
    dense = moore((7, 7), r=2, periodic=False).to_dense()
    c = 3 + 7 * 3
    assert dense[c, c + 2 + 7 * 2] == 1.0           # offset (2, 2): Manhattan 4, Chebyshev 2
    assert dense[c, c + 3] == 0.0                   # offset (3, 0) is outside
    assert np.count_nonzero(dense[c]) == 24


def test_moore_open_boundaries():
    deg = degrees(moore((6, 7), r=2, periodic=False)).reshape(7, 6)
    assert deg[0, 0] == 3 * 3 - 1 and deg[3, 3] == 24 and deg[0, 3] == 3 * 5 - 1


def test_moore_equals_27_point_stencil():
    a, b = moore((4, 5, 6), r=1), stencil_3d((4, 5, 6), points=27, periodic=True)
    assert np.array_equal(a.to_dense(), b.to_dense())


def test_moore_small_extent_sums_duplicates():
    pat = moore((4, 4), r=2, bytes=2.0)  # offsets -2 and +2 coincide along each dimension
    assert (degrees(pat) == 15).all()
    assert pat.total_bytes == 16 * 24 * 2.0 and pat.provenance["dropped_self_bytes"] == 0.0
    ref, ref_msgs, _ = ref_pattern((4, 4), ref_offsets(2, 2), (True, True), volume=2.0)
    assert np.array_equal(pat.to_dense(), ref) and np.array_equal(dense_msgs(pat), ref_msgs)


# ---------------------------------------------------------------- random_sparse
def test_random_sparse_matches_definition():
    n, p, seed = 40, 0.3, 11
    pat = random_sparse(n, p, seed=seed, bytes=4.0)
    s = stream_seed(seed, "random_sparse")
    expected = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j and (ref_splitmix64_at(s, i * n + j) >> 11) / 2**53 < p:
                expected[i, j] = 4.0
    assert np.array_equal(pat.to_dense(), expected)


def test_random_sparse_golden():
    # Pinned so that a change of the generator (or of NumPy) is caught.
    assert random_sparse(6, 0.5, seed=0).to_dense().astype(int).tolist() == [
        [0, 1, 1, 0, 1, 1], [0, 0, 1, 0, 1, 1], [0, 0, 0, 0, 1, 1],
        [0, 0, 0, 0, 0, 0], [1, 0, 0, 1, 0, 0], [0, 0, 0, 1, 1, 0],
    ]


def test_random_sparse_edge_count_within_bound():
    n, p = 2000, 0.05
    pat = random_sparse(n, p, seed=3)
    pairs = n * (n - 1)
    mean, sd = p * pairs, math.sqrt(pairs * p * (1 - p))
    assert abs(pat.nnz - mean) < 6 * sd          # P(failure) < 1e-8 for a fair generator
    assert not np.any(pat.senders() == pat.indices)
    assert np.all(pat.bytes == 1.0) and np.all(pat.msgs == 1.0)
    # out-degrees are Binomial(n-1, p): mean 99.95, sd ~9.7
    assert abs(degrees(pat).mean() - p * (n - 1)) < 1.0


def test_random_sparse_determinism_and_seed_independence():
    n, p = 500, 0.1
    a, b, c = random_sparse(n, p, seed=1), random_sparse(n, p, seed=1), random_sparse(n, p, seed=2)
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    ea = set(zip(a.senders().tolist(), a.indices.tolist()))
    ec = set(zip(c.senders().tolist(), c.indices.tolist()))
    assert ea != ec
    # independent graphs share each edge with probability p: ~0.1 * |ea| = ~2495, sd ~47
    overlap = len(ea & ec)
    assert abs(overlap - p * len(ea)) < 6 * math.sqrt(len(ea) * p * (1 - p))


def test_random_sparse_does_not_depend_on_chunking(monkeypatch):
    whole = random_sparse(300, 0.2, seed=5)
    monkeypatch.setattr(gen, "_CHUNK", 7)
    chunked = random_sparse(300, 0.2, seed=5)
    assert np.array_equal(whole.indptr, chunked.indptr) and np.array_equal(whole.indices, chunked.indices)


def test_random_sparse_extremes():
    assert random_sparse(20, 0.0).nnz == 0
    full = random_sparse(20, 1.0)
    assert full.nnz == 20 * 19 and np.array_equal(full.to_dense(), 1 - np.eye(20))
    assert random_sparse(1, 1.0).nnz == 0
    assert random_sparse(50, 0.2).provenance == {
        "generator": "random_sparse", "n": 50, "p": 0.2, "seed": 0, "bytes": 1.0, "dropped_self_bytes": 0.0,
    }


def test_random_sparse_refuses_huge_sizes():
    with pytest.raises(PatternError, match="pairs"):
        random_sparse(70_000, 0.001)
    with pytest.raises(PatternError, match="limit"):
        random_sparse(10_000, 0.9)


# ---------------------------------------------------------------- subcomm_alltoall
def test_alltoall_columns_2d():
    dims = (4, 3)
    pat = subcomm_alltoall(dims, axes=(1,), bytes=2.0)
    p = np.arange(12)
    same_column = (p[:, None] % 4) == (p[None, :] % 4)
    expected = np.where(same_column & (p[:, None] != p[None, :]), 2.0, 0.0)
    assert np.array_equal(pat.to_dense(), expected)
    assert (degrees(pat) == 2).all()
    assert pat.provenance == {"generator": "subcomm_alltoall", "dims": [4, 3], "axes": [1],
                              "bytes": 2.0, "dropped_self_bytes": 0.0}


def test_alltoall_planes_3d_block_structure():
    dims = (4, 3, 5)
    pat = subcomm_alltoall(dims, axes=(0, 2))
    p = np.arange(60)
    x1 = (p // 4) % 3
    order = np.argsort(x1, kind="stable")     # group-major order
    blocks = pat.to_dense()[np.ix_(order, order)]
    g = 20
    expected = np.kron(np.eye(3), np.ones((g, g)) - np.eye(g))
    assert np.array_equal(blocks, expected)
    assert (degrees(pat) == g - 1).all()


def test_alltoall_axes_forms():
    a = subcomm_alltoall((3, 4, 2), axes=(2, 0))
    b = subcomm_alltoall((3, 4, 2), axes=[0, 2])
    assert np.array_equal(a.to_dense(), b.to_dense()) and a.provenance["axes"] == [0, 2]
    assert np.array_equal(subcomm_alltoall((5, 2), 1).to_dense(), subcomm_alltoall((5, 2), (1,)).to_dense())
    everything = subcomm_alltoall((3, 4), axes=(0, 1))
    assert np.array_equal(everything.to_dense(), 1 - np.eye(12))
    assert subcomm_alltoall((1, 4), axes=0).nnz == 0


@pytest.mark.parametrize("axes", [(2,), (0, 0), (), (-1,), (0.0,), "0", None])
def test_alltoall_bad_axes(axes):
    with pytest.raises(PatternError):
        subcomm_alltoall((4, 4), axes=axes)


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize("call", [
    lambda: stencil_2d((0, 4)),
    lambda: stencil_2d((4,)),
    lambda: stencil_2d((4, 4, 4)),
    lambda: stencil_2d(4),
    lambda: stencil_2d((4.0, 4)),
    lambda: stencil_2d((True, 4)),
    lambda: stencil_2d((4, 4), points=7),
    lambda: stencil_2d((4, 4), points=5.0),
    lambda: stencil_3d((4, 4, 4), points=9),
    lambda: stencil_2d((4, 4), weights=(3,)),
    lambda: stencil_2d((4, 4), weights=(3, 0)),
    lambda: stencil_2d((4, 4), weights=(3, -1)),
    lambda: stencil_2d((4, 4), weights=(float("inf"), 1)),
    lambda: stencil_2d((4, 4), weights=(float("nan"), 1)),
    lambda: stencil_2d((4, 4), weights="31"),
    lambda: stencil_2d((4, 4), periodic=(True,)),
    lambda: stencil_2d((4, 4), periodic=1),
    lambda: stencil_2d((4, 4), periodic=(1, 0)),
    lambda: stencil_2d((4, 4), bytes=0),
    lambda: stencil_2d((4, 4), bytes=float("nan")),
    lambda: moore((4, 4), r=0),
    lambda: moore((4, 4), r=1.5),
    lambda: moore(()),
    lambda: random_sparse(0, 0.1),
    lambda: random_sparse(10, 1.5),
    lambda: random_sparse(10, -0.1),
    lambda: random_sparse(10, float("nan")),
    lambda: random_sparse(10, 0.1, seed=-1),
    lambda: random_sparse(10.0, 0.1),
    lambda: stencil_3d((2000, 2000, 1000)),            # more processes than int32 ids
    lambda: stencil_3d((1000, 1000, 1000), points=27),  # too many messages
    lambda: moore((100, 100), r=500),
])
def test_bad_arguments_raise_pattern_error(call):
    with pytest.raises(PatternError):
        call()


def test_size_limit_message_is_clear():
    with pytest.raises(PatternError, match=r"stencil_3d would generate 26000000000 messages"):
        stencil_3d((1000, 1000, 1000), points=27)


# ---------------------------------------------------------------- from_spec
def same(a, b) -> bool:
    return (a.n == b.n and np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
            and np.array_equal(a.bytes, b.bytes) and np.array_equal(a.msgs, b.msgs)
            and a.provenance == b.provenance)


@pytest.mark.parametrize("spec, direct", [
    ("stencil2d:6x5", lambda: stencil_2d((6, 5))),
    ("stencil2d:6x5:9,periodic,weights=3x1", lambda: stencil_2d((6, 5), 9, (3, 1), True)),
    ("stencil2d:6x5:points=9,periodic=1x0,bytes=64", lambda: stencil_2d((6, 5), 9, None, (True, False), 64)),
    ("stencil3d:4x4x4:27", lambda: stencil_3d((4, 4, 4), 27)),
    ("stencil3d:4x5x6:15,weights=3x1x1,periodic=yes", lambda: stencil_3d((4, 5, 6), 15, (3, 1, 1), True)),
    ("moore:8x8:r=2", lambda: moore((8, 8), r=2)),
    ("moore:8x8x5:periodic=false", lambda: moore((8, 8, 5), periodic=False)),
    ("random:300:p=0.05,seed=1", lambda: random_sparse(300, 0.05, seed=1)),
    ("random:300:p=1e-2,bytes=4", lambda: random_sparse(300, 0.01, bytes=4.0)),
    ("alltoall:16x16:axes=1", lambda: subcomm_alltoall((16, 16), (1,))),
    ("alltoall:4x3x4:axes=0x2,bytes=2.5", lambda: subcomm_alltoall((4, 3, 4), (0, 2), 2.5)),
    ("  stencil2d:3x3  ", lambda: stencil_2d((3, 3))),
])
def test_spec_equals_direct_call(spec, direct):
    assert same(from_spec(spec), direct())


@pytest.mark.parametrize("spec, token", [
    ("stencil2d", "stencil2d"),
    ("cube:4x4", "cube"),
    ("Stencil2d:4x4", "Stencil2d"),
    ("stencil2d:4xq", "4xq"),
    ("stencil2d:4x", "4x"),
    ("stencil2d:4x4x4", "4x4x4"),
    ("stencil3d:0x4x4", "0x4x4"),
    ("stencil2d:4x4:6", "6"),
    ("stencil2d:4x4:", ""),
    ("stencil2d:4x4:9,,periodic", ""),
    ("stencil2d:4x4:r=2", "r=2"),
    ("stencil2d:4x4:weights=3", "weights=3"),
    ("stencil2d:4x4:weights=3xa", "weights=3xa"),
    ("stencil2d:4x4:weights=3x-1", "weights=3x-1"),
    ("stencil2d:4x4:periodic=maybe", "periodic=maybe"),
    ("stencil2d:4x4:periodic=1x1x1", "periodic=1x1x1"),
    ("stencil2d:4x4:9,points=5", "points=5"),
    ("stencil2d:4x4:bytes=nan", "bytes=nan"),
    ("stencil2d:4x4:9:extra", "extra"),
    ("moore:8x8:r=0", "r=0"),
    ("moore:8x8:r=1.5", "r=1.5"),
    ("moore:8x8:2", "2"),
    ("random:64x64:p=0.1", "64x64"),
    ("random:0:p=0.1", "0"),
    ("random:64:p=1.5", "p=1.5"),
    ("random:64:p=0.1,seed=-1", "seed=-1"),
    ("random:64:p=0.1,seed=x", "seed=x"),
    ("random:64:q=0.1", "q=0.1"),
    ("alltoall:4x4:axes=2", "axes=2"),
    ("alltoall:4x4:axes=0x0", "axes=0x0"),
    ("alltoall:4x4:periodic", "periodic"),
])
def test_bad_spec_names_token(spec, token):
    with pytest.raises(PatternError) as info:
        from_spec(spec)
    assert f"bad token {token!r}" in str(info.value)
    assert repr(spec) in str(info.value)


@pytest.mark.parametrize("spec, missing", [("random:64", "p="), ("alltoall:4x4", "axes="), ("random:64:seed=2", "p=")])
def test_spec_missing_required_key(spec, missing):
    with pytest.raises(PatternError, match=missing):
        from_spec(spec)


def test_spec_size_limit_and_type():
    with pytest.raises(PatternError, match="limit"):
        from_spec("stencil3d:1000x1000x1000:27")
    with pytest.raises(PatternError):
        from_spec(b"stencil2d:4x4")


# ---------------------------------------------------------------- properties
small_extent = st.integers(1, 5)


@settings(max_examples=60, deadline=None)
@given(
    dims=st.tuples(small_extent, small_extent),
    points=st.sampled_from([5, 9]),
    periodic=st.tuples(st.booleans(), st.booleans()),
    weights=st.tuples(st.sampled_from([0.5, 1.0, 3.0]), st.sampled_from([1.0, 2.0, 7.0])),
)
def test_stencil_2d_matches_brute_force(dims, points, periodic, weights):
    pat = stencil_2d(dims, points, weights, periodic, bytes=2.0)
    ref, ref_msgs, dropped = ref_pattern(dims, ref_offsets(2, 1, STENCIL_SETS[points]), periodic, weights, 2.0)
    assert np.array_equal(pat.to_dense(), ref)
    assert np.array_equal(dense_msgs(pat), ref_msgs)
    assert pat.provenance["dropped_self_bytes"] == dropped


@settings(max_examples=40, deadline=None)
@given(
    dims=st.tuples(small_extent, small_extent, small_extent),
    points=st.sampled_from([7, 15, 27]),
    periodic=st.tuples(st.booleans(), st.booleans(), st.booleans()),
    weights=st.tuples(*[st.sampled_from([1.0, 3.0])] * 3),
)
def test_stencil_3d_properties(dims, points, periodic, weights):
    pat = stencil_3d(dims, points, weights, periodic)
    dense = pat.to_dense()
    assert np.array_equal(dense, dense.T)                        # symmetric volumes
    assert np.array_equal(degrees(pat), in_degrees(pat))
    # total bytes: each offset o is realised by prod_a c_a(o_a) processes
    offsets = ref_offsets(3, 1, STENCIL_SETS[points])
    nominal = sum(
        max(weights[a] for a in range(3) if o[a])
        * math.prod(dims[a] if periodic[a] else max(dims[a] - abs(o[a]), 0) for a in range(3))
        for o in offsets
    )
    assert math.isclose(pat.total_bytes + pat.provenance["dropped_self_bytes"], nominal)
    if all(periodic) and min(dims) >= 3:
        assert (degrees(pat) == points - 1).all()


@settings(max_examples=40, deadline=None)
@given(
    dims=st.lists(st.integers(1, 6), min_size=1, max_size=3).map(tuple),
    r=st.integers(1, 3),
    periodic=st.booleans(),
)
def test_moore_matches_brute_force(dims, r, periodic):
    pat = moore(dims, r=r, periodic=periodic)
    per = (periodic,) * len(dims)
    ref, ref_msgs, dropped = ref_pattern(dims, ref_offsets(len(dims), r), per)
    assert np.array_equal(pat.to_dense(), ref)
    assert np.array_equal(dense_msgs(pat), ref_msgs)
    assert pat.provenance["dropped_self_bytes"] == dropped
    assert np.array_equal(degrees(pat), in_degrees(pat))
    if periodic:
        k = (2 * r + 1) ** len(dims) - 1
        assert pat.total_bytes + dropped == math.prod(dims) * k


@settings(max_examples=40, deadline=None)
@given(
    dims=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
    data=st.data(),
)
def test_alltoall_properties(dims, data):
    axes = data.draw(st.sets(st.integers(0, len(dims) - 1), min_size=1))
    pat = subcomm_alltoall(dims, tuple(axes))
    n, g = math.prod(dims), math.prod(dims[a] for a in axes)
    assert pat.nnz == n * (g - 1) and pat.total_bytes == n * (g - 1)
    dense = pat.to_dense()
    assert np.array_equal(dense, dense.T)
    # p and q share a communicator iff they agree on every axis outside `axes`
    p = np.arange(n)
    coords = [(p // math.prod(dims[:a])) % dims[a] for a in range(len(dims))]
    same = np.ones((n, n), dtype=bool)
    for a in range(len(dims)):
        if a not in axes:
            same &= coords[a][:, None] == coords[a][None, :]
    assert np.array_equal(dense > 0, same & ~np.eye(n, dtype=bool))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 60), p=st.floats(0, 1), seed=st.integers(0, 2**64 - 1))
def test_random_sparse_properties(n, p, seed):
    pat = random_sparse(n, p, seed=seed)
    again = random_sparse(n, p, seed=seed)
    assert np.array_equal(pat.indices, again.indices) and np.array_equal(pat.indptr, again.indptr)
    assert not np.any(pat.senders() == pat.indices)
    assert pat.nnz <= n * (n - 1)
    if p == 0:
        assert pat.nnz == 0
    if p == 1:
        assert pat.nnz == n * (n - 1)
