"""Hypercubes: hand-worked e-cube routes, a pure-Python e-cube reference,
shortest paths, golden sizes/diameter/ASPL, evaluation and spec errors."""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from topomap import MachineError


def ecube_reference(dim, a, b):
    """Links of the e-cube route, straight from the definition: walk the bits
    from the lowest to the highest, flipping each that differs."""
    route, cur = [], a
    for bit in range(dim):
        if (cur >> bit) & 1 != (b >> bit) & 1:
            route.append(cur * dim + bit)
            cur ^= 1 << bit
    return route


def test_routes_by_hand():
    m = tm.machine("hypercube:3")
    # 6 = 110 -> 1 = 001: bit 0 from 6 (link 18) to 7, bit 1 from 7 (22) to 5, bit 2 from 5 (17) to 1
    assert m.route(6, 1).tolist() == [18, 22, 17]
    assert m.route(1, 6).tolist() == [3, 1, 8]       # 1 -> 0 -> 2 -> 6: routes are not reversible
    assert m.route(4, 5).tolist() == [12]
    g = m.links()
    assert list(zip(g["src"][:6].tolist(), g["dst"][:6].tolist())) == [(0, 1), (0, 2), (0, 4), (1, 0), (1, 3), (1, 5)]
    assert m.level_names == ["PE", "Node", "network"]


@pytest.mark.parametrize("dim", [1, 2, 3, 4, 5, 6])
def test_all_routes_match_reference(dim):
    m = tm.machine(f"hypercube:{dim}")
    n = 1 << dim
    assert (m.nnodes, m.nlinks, m.max_route, m.nvertices) == (n, n * dim, dim, n)
    g = m.links()
    assert g["link"].tolist() == list(range(n * dim))
    assert g["dst"].tolist() == [x ^ (1 << i) for x in range(n) for i in range(dim)]
    for a, b in itertools.product(range(n), repeat=2):
        assert m.route(a, b).tolist() == ecube_reference(dim, a, b)


@given(st.integers(7, 20), st.data())
def test_large_cube_routes_match_reference(dim, data):
    m = tm.machine(f"hypercube:{dim}")
    a = data.draw(st.integers(0, (1 << dim) - 1))
    b = data.draw(st.integers(0, (1 << dim) - 1))
    assert m.route(a, b).tolist() == ecube_reference(dim, a, b)
    assert int(m.hops(a, b)) == bin(a ^ b).count("1")


def test_routes_are_shortest_paths():
    m = tm.machine("hypercube:5")
    G = nx.hypercube_graph(5)                     # nodes are bit tuples, most significant first
    label = {v: int("".join(map(str, v)), 2) for v in G}
    dist = dict(nx.all_pairs_shortest_path_length(nx.relabel_nodes(G, label)))
    for a, b in itertools.product(range(32), repeat=2):
        assert len(m.route(a, b)) == dist[a][b]


def test_golden_hypercube_10():
    # notes 003 §1.3: 2^n nodes, degree n, diameter n, ASPL n/2 over all (ordered) pairs
    m = tm.machine("hypercube:10/1")
    s = m.summary()
    assert (s["nodes"], s["links"], s["diameter"]) == (1024, 10 * 1024, 10)
    assert np.bincount(m.links()["src"]).tolist() == [10] * 1024
    # over distinct pairs: 10 * 512 / 1023; with the zero self-distances: exactly n/2
    assert s["aspl"] == pytest.approx(10 * 512 / 1023, rel=1e-12)
    assert s["aspl"] * 1023 / 1024 == pytest.approx(5.0, rel=1e-12)


def test_evaluate_on_hypercube():
    m = tm.machine("hypercube:4/2")
    pat = tm.generators.stencil_2d((4, 8))
    alloc = m.allocate(32)
    mp = tm.map(pat, alloc, method="random", seed=5)
    met = tm.evaluate(pat, alloc, mp, link_load=True)
    load = np.zeros(m.nlinks)
    src = np.repeat(np.arange(pat.n), np.diff(pat.indptr))
    for p, q, w in zip(src, pat.indices, pat.bytes):
        load[ecube_reference(4, mp.pe_of[p] // 2, mp.pe_of[q] // 2)] += w
    np.testing.assert_allclose(met.link_load, load)
    assert met.hop_bytes == pytest.approx(load.sum())
    assert met.max_congestion == pytest.approx(load.max())


@pytest.mark.parametrize("spec, fault", [
    ("hypercube:0", "must be >= 1"),
    ("hypercube:27", "'27'"),
    ("hypercube:ten", "'ten'"),
    ("hypercube:3/", "ends in '/'"),
    ("hypercube:3/x", "'x'"),
])
def test_spec_errors(spec, fault):
    with pytest.raises(MachineError, match="hypercube") as exc:
        tm.machine(spec)
    assert fault in str(exc.value)


def test_dataclass():
    assert tm.machine("hypercube:4/pack:2 core:2").network == tm.Hypercube(4)
    assert tm.machine(tm.Hypercube(6).spec_head()).nnodes == 64
    with pytest.raises(MachineError, match="1..26"):
        tm.Hypercube(0)
