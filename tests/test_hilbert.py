"""Hilbert curve renumbering (topomap.networks.hilbert and the `hilbert` mapper)."""

import itertools

import numpy as np
import pytest

import topomap as tm
from topomap import MappingError
from topomap.networks import hilbert


def wikipedia_d2xy(n, d):
    """The classic 2-D Hilbert curve (the d2xy of Wikipedia's "Hilbert curve" article)."""
    x = y = 0
    s, t = 1, d
    while s < n:
        rx = 1 & (t // 2)
        ry = 1 & (t ^ rx)
        if ry == 0:
            if rx == 1:
                x, y = s - 1 - x, s - 1 - y
            x, y = y, x
        x += s * rx
        y += s * ry
        t //= 4
        s *= 2
    return x, y


def cube(d, bits):
    return np.array(list(itertools.product(range(2**bits), repeat=d)), dtype=np.int64)


@pytest.mark.parametrize("bits", [1, 2, 3, 4])
def test_2d_is_the_classic_curve(bits):
    n = 2**bits
    classic = [wikipedia_d2xy(n, d) for d in range(n * n)]
    assert hilbert.index(np.array(classic), bits=bits).tolist() == list(range(n * n))


def test_first_order_curve_by_hand():
    # axis 0 most significant: (0,0) (0,1) (1,1) (1,0)
    assert hilbert.index([[0, 0], [0, 1], [1, 1], [1, 0]], bits=1).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("d,bits", [(2, 3), (3, 1), (3, 2), (3, 3), (4, 2), (5, 1)])
def test_bijection_and_unit_steps(d, bits):
    pts = cube(d, bits)
    h = hilbert.index(pts, bits=bits)
    assert sorted(h.tolist()) == list(range(len(pts)))          # a bijection onto 0..2^(d bits)-1
    path = pts[np.argsort(h)]
    assert (path[0] == 0).all()                                   # starts at the origin
    assert (np.abs(np.diff(path, axis=0)).sum(axis=1) == 1).all()  # consecutive positions are neighbours


def test_index_keeps_the_leading_shape_and_picks_bits():
    pts = cube(3, 2).reshape(4, 16, 3)
    h = hilbert.index(pts)            # bits = 2: the largest coordinate is 3
    assert h.shape == (4, 16) and h.dtype == np.uint64
    assert (h == hilbert.index(pts.reshape(-1, 3), bits=2).reshape(4, 16)).all()
    assert hilbert.index(np.zeros((5, 3), dtype=int)).tolist() == [0] * 5


@pytest.mark.parametrize("bad,match", [
    (dict(coords=[[-1, 0]]), "non-negative"),
    (dict(coords=[[0.5, 0]]), "integers"),
    (dict(coords=[[4, 0]], bits=2), "does not fit"),
    (dict(coords=[[0] * 3], bits=22), "bits"),
    (dict(coords=[[0, 0]], bits=-1), "bits"),
    (dict(coords=np.zeros((2, 0), dtype=int)), "d >= 1"),
])
def test_index_errors(bad, match):
    with pytest.raises(MappingError, match=match):
        hilbert.index(**bad)


def test_node_order_sorts_a_torus_allocation_along_the_curve():
    m = tm.machine("torus:5x3x6/2")
    alloc = m.allocate(40, policy="random", seed=3)
    nodes = alloc.nodes()
    order = hilbert.node_order(m, nodes)
    assert sorted(order.tolist()) == list(range(len(nodes)))
    xyz = np.stack([nodes % 5, nodes // 5 % 3, nodes // 15], axis=1)
    keys = hilbert.index(xyz, bits=3)                           # the enclosing 8 x 8 x 8 cube
    assert (np.diff(keys[order].astype(np.int64)) > 0).all()


def test_hilbert_order_keeps_each_nodes_pes_together_and_in_order():
    m = tm.machine("torus:4x4/3")
    alloc = m.allocate(20, policy="random", seed=5)                 # 7 nodes, the last one partly used
    h = hilbert.order_allocation(alloc)
    assert sorted(h.pes.tolist()) == sorted(alloc.pes.tolist())
    node = h.pes // 3
    runs = node[np.r_[True, node[1:] != node[:-1]]]
    assert len(runs) == len(set(runs.tolist()))                    # one run per node
    for v in runs:
        assert h.pes[node == v].tolist() == alloc.pes[alloc.pes // 3 == v].tolist()
    assert h.nodes().tolist() == alloc.nodes()[hilbert.node_order(m, alloc.nodes())].tolist()


def test_hilbert_mapper_is_block_on_the_renumbered_allocation():
    alloc = tm.machine("torus:4x4x4/2").allocate(40, policy="fragmented", seed=2)
    pat = tm.generators.stencil_2d((5, 8))
    for cap in (1, 2):
        mp = tm.map(pat, alloc, method="hilbert", capacity=cap)
        assert mp.pe_of.tolist() == tm.map(pat, hilbert.order_allocation(alloc), method="block", capacity=cap).pe_of.tolist()


def test_sfc_order_shortens_a_random_allocation_order():
    # a random allocation order scatters neighbouring ranks; the curve brings them back together
    alloc = tm.machine("torus:8x8x8").allocate(128, policy="random", seed=0)
    ring = tm.Pattern.from_edges(np.arange(128), (np.arange(128) + 1) % 128, np.ones(128))
    hb = {m: tm.evaluate(ring, alloc, tm.map(ring, alloc, method=m)).hop_bytes for m in ("block", "hilbert")}
    assert hb["hilbert"] < 0.5 * hb["block"]


@pytest.mark.parametrize("spec", ["fattree:k=4,levels=2", "hierarchy:4:4/1:10", "hypercube:4", "dragonfly:g=3,a=2,h=1,p=2"])
def test_hilbert_needs_a_torus(spec):
    alloc = tm.machine(spec).allocate(8)
    with pytest.raises(MappingError, match="torus or mesh"):
        hilbert.order_allocation(alloc)
    with pytest.raises(MappingError, match="torus or mesh"):
        tm.map(tm.generators.stencil_2d((2, 4)), alloc, method="hilbert")
