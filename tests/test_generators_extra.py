"""Collective schedules and NAS-like patterns against slow references from the definitions."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from topomap.collectives.schedules import binomial_bcast, binomial_gather, bruck, recursive_doubling, ring_allgather
from topomap.patterns.nas import nas_bt, nas_cg, nas_ft, nas_lu, nas_mg, nas_sp


def stage_edges(pat: tm.Pattern) -> list[tuple[int, int, float]]:
    return sorted(zip(pat.senders().tolist(), pat.indices.tolist(), pat.bytes.tolist()))


# ---------------------------------------------------------------- binomial trees
def ref_parent(rel: int) -> int:
    """Binomial tree parent: clear the lowest set bit."""
    return rel - (rel & -rel)


def ref_subtree(rel: int, n: int) -> int:
    """Number of ranks in the subtree of rel: rel .. rel + lowbit(rel) - 1, cut at n."""
    return min(rel & -rel, n - rel)


def test_bcast_golden_cui_p8():
    # 003 §2.1: step 1: 0->4; step 2: 0->2, 4->6; step 3: 0->1, 2->3, 4->5, 6->7
    s = binomial_bcast(8, bytes=3)
    assert [[(a, b) for a, b, _ in stage_edges(st)] for st in s] == [
        [(0, 4)], [(0, 2), (4, 6)], [(0, 1), (2, 3), (4, 5), (6, 7)]]


@given(st.integers(1, 40), st.data())
def test_bcast_tree_and_delivery(n, data):
    root = data.draw(st.integers(0, n - 1))
    s = binomial_bcast(n, bytes=5, root=root)
    assert len(s) == (math.ceil(math.log2(n)) if n > 1 else 0)
    have = {root}
    for stage in s:
        for a, b, w in stage_edges(stage):
            assert a in have and b not in have and w == 5      # only informed ranks send, once per receiver
            assert ref_parent((b - root) % n) == (a - root) % n
        have |= {b for _, b, _ in stage_edges(stage)}
    assert have == set(range(n)) and s.total.nnz == n - 1


@given(st.integers(1, 40), st.data())
def test_gather_subtree_volumes(n, data):
    root = data.draw(st.integers(0, n - 1))
    s = binomial_gather(n, bytes=2, root=root)
    edges = [e for stage in s for e in stage_edges(stage)]
    assert sorted(e[0] for e in edges) == sorted(set(range(n)) - {root})       # every non-root sends once
    for a, b, w in edges:
        rel = (a - root) % n
        assert (b - root) % n == ref_parent(rel) and w == 2 * ref_subtree(rel, n)
    into_root = sum(w for a, b, w in edges if b == root)
    assert into_root == 2 * (n - 1)                                            # the root gets every block
    if n & (n - 1) == 0:                               # full tree: messages grow toward the root
        assert [max(st.bytes) for st in s] == [2.0 * (1 << k) for k in range(len(s))]


# ---------------------------------------------------------------- recursive doubling, ring, Bruck
@given(st.integers(0, 6))
def test_recursive_doubling(k):
    n = 1 << k
    ar = recursive_doubling(n, bytes=4)
    ag = recursive_doubling(n, bytes=4, op="allgather")
    assert len(ar) == k and ar.total.nnz == n * k                      # P log2 P unicasts (003 §2.1)
    for s, (a, g) in enumerate(zip(ar, ag)):
        assert stage_edges(a) == [(r, r ^ (1 << s), 4.0) for r in range(n)]
        assert set(g.bytes.tolist()) == {4.0 * (1 << s)}              # the volume doubles each stage
    if n > 1:
        assert ag.total.bytes.sum() == 4.0 * n * (n - 1)                # every rank receives n-1 blocks


def test_recursive_doubling_rejects_non_power_of_two():
    with pytest.raises(tm.PatternError, match="power-of-two number of ranks, got n = 6"):
        recursive_doubling(6)
    with pytest.raises(tm.PatternError, match="op = 'reduce'"):
        recursive_doubling(8, op="reduce")


@given(st.integers(1, 30))
def test_ring_allgather(n):
    s = ring_allgather(n, bytes=3)
    assert len(s) == n - 1
    for stage in s:
        assert stage_edges(stage) == ([] if n == 1 else sorted((r, (r + 1) % n, 3.0) for r in range(n)))


@given(st.integers(1, 40))
def test_bruck_volumes(n):
    a2a = bruck(n, bytes=1)
    ag = bruck(n, bytes=1, op="allgather")
    assert len(a2a) == len(ag) == (math.ceil(math.log2(n)) if n > 1 else 0)
    for k, stage in enumerate(a2a):
        blocks = sum(1 for j in range(n) if j >> k & 1)
        assert stage_edges(stage) == sorted((r, (r + (1 << k)) % n, float(blocks)) for r in range(n))
    # alltoall: each block j travels popcount(j) hops; allgather: every rank gets n - 1 blocks
    assert a2a.total.total_bytes == n * sum(bin(j).count("1") for j in range(n))
    assert ag.total.total_bytes == n * (n - 1)
    for k, stage in enumerate(ag):
        assert {b for _, b, _ in stage_edges(stage)} <= set(range(n))
        assert all(b == (a - (1 << k)) % n for a, b, _ in stage_edges(stage))


def test_schedule_errors():
    with pytest.raises(tm.PatternError, match="root = 5"):
        binomial_bcast(4, root=5)
    with pytest.raises(tm.PatternError, match="bytes"):
        ring_allgather(4, bytes=0)
    with pytest.raises(tm.PatternError, match="op = 'x'"):
        bruck(4, op="x")


# ---------------------------------------------------------------- NAS
def neighbours(pat: tm.Pattern, p: int) -> list[int]:
    return pat.indices[pat.indptr[p]:pat.indptr[p + 1]].tolist()


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32, 64])
def test_cg_partners(n):
    pat = nas_cg(n, "S")
    nprows = 2 ** (int(math.log2(n)) // 2)
    npcols = n // nprows
    for me in range(n):
        row, col = divmod(me, npcols)
        # row partners: col with one bit of log2(npcols) flipped (recursive halving)
        expect = {row * npcols + (col ^ (1 << b)) for b in range(int(math.log2(npcols)))}
        if npcols == nprows:
            expect.add(col * nprows + row)            # the transpose of (row, col)
        elif npcols > 1:
            half = me // 2
            expect.add(2 * ((half % nprows) * nprows + half // nprows) + me % 2)
        expect.discard(me)
        assert set(neighbours(pat, me)) == expect
    assert tm.patterns_util.summary(pat).structurally_symmetric


def test_cg_volumes_class_a_square():
    pat = nas_cg(16, "A")                              # 4 x 4, row_size 3500
    dense = pat.to_dense()
    assert dense[0, 1] == 8 * (3500 + 2) and dense[1, 4] == 8 * 3500 and dense[0, 0] == 0


@pytest.mark.parametrize("n, dims", [(1, (1, 1, 1)), (2, (1, 1, 2)), (4, (1, 2, 2)), (8, (2, 2, 2)), (16, (2, 2, 4)),
                                     (32, (2, 4, 4)), (64, (4, 4, 4)), (128, (4, 4, 8))])
def test_mg_grid(n, dims):
    pat = nas_mg(n, "S")
    assert tuple(pat.provenance["grid"]) == dims
    # periodic 6-neighbour torus, first coordinate fastest
    for me in range(n):
        x = (me % dims[0], me // dims[0] % dims[1], me // (dims[0] * dims[1]))
        expect = set()
        for a in range(3):
            for s in (-1, 1):
                y = list(x)
                y[a] = (y[a] + s) % dims[a]
                expect.add(y[0] + dims[0] * (y[1] + dims[1] * y[2]))
        expect.discard(me)
        assert set(neighbours(pat, me)) == expect


def test_mg_face_volume():
    # 8 ranks, class S (32^3, 5 levels): local 16^3, faces 16*16 at the top level, halving per level
    pat = nas_mg(8, "S")
    faces = sum((16 >> k) ** 2 for k in range(5) if 16 >> k >= 1)
    assert pat.to_dense()[0, 1] == 2 * 8 * faces       # both the +1 and the -1 neighbour are rank 1


@pytest.mark.parametrize("n, layout", [(4, "1D"), (64, "1D"), (128, "2D"), (256, "2D")])
def test_ft_layout(n, layout):
    pat = nas_ft(n, "S")                               # nz = 64
    assert pat.provenance["layout"] == layout
    total = 16 * 64 ** 3
    if layout == "1D":
        assert pat.nnz == n * (n - 1)
        assert pat.total_bytes == pytest.approx(total * (n - 1) / n)
    else:
        np1, np2 = 64, n // 64
        for me in range(n):
            expect = {q for q in range(n) if q % np1 == me % np1 or q // np1 == me // np1} - {me}
            assert set(neighbours(pat, me)) == expect
        assert pat.total_bytes == pytest.approx(total * ((np2 - 1) / np2 + (np1 - 1) / np1))
    with pytest.raises(tm.PatternError, match="multiple of nz"):
        nas_ft(100, "S")


@pytest.mark.parametrize("n, xdim", [(2, 2), (4, 2), (8, 4), (16, 4), (32, 8)])
def test_lu_grid_not_periodic(n, xdim):
    pat = nas_lu(n, "S")
    ydim = n // xdim
    assert pat.provenance["grid"] == [xdim, ydim]
    for me in range(n):
        row, col = me % xdim, me // xdim
        expect = {me + d for d, ok in ((-1, row > 0), (1, row < xdim - 1), (-xdim, col > 0),
                                       (xdim, col < ydim - 1)) if ok}
        assert set(neighbours(pat, me)) == expect
    assert tm.patterns_util.summary(pat).symmetric


@pytest.mark.parametrize("gen", [nas_bt, nas_sp])
@pytest.mark.parametrize("n", [4, 9, 16, 25])
def test_multipartition_neighbours(gen, n):
    q = math.isqrt(n)
    pat = gen(n, "S")
    for me in range(n):
        i, j = me % q, me // q
        cells = {((i + 1) % q, j), ((i - 1) % q, j), (i, (j + 1) % q), (i, (j - 1) % q),
                 ((i - 1) % q, (j + 1) % q), ((i + 1) % q, (j - 1) % q)}
        assert set(neighbours(pat, me)) == {a + q * b for a, b in cells} - {me}
    with pytest.raises(tm.PatternError, match="square number of processes, got 8"):
        gen(8)


def test_nas_errors():
    for gen in (nas_cg, nas_mg, nas_lu):
        with pytest.raises(tm.PatternError, match="power-of-two number of processes, got 6"):
            gen(6)
    with pytest.raises(tm.PatternError, match="class 'Z'"):
        nas_cg(4, "Z")
