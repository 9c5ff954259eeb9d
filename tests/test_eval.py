"""The C evaluator against the pure-Python reference, and incremental updates
against full recomputation."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import reference as ref
import topomap as tm
from conftest import cases, machine_desc

SCALARS = ["hop_bytes", "dilation", "avg_dilation", "max_dilation", "pairs", "messages", "total_bytes", "qap",
           "max_congestion", "nz_links", "nz_congestion_avg", "nz_congestion_var", "hybrid", "edge_cut",
           "edge_cut_messages"]


def reference_of(m, pat, pe_of, weights=(1, 1, 1, 1)):
    return ref.metrics(machine_desc(m), pat.senders().tolist(), pat.indices.tolist(), pat.bytes.tolist(),
                       [int(x) for x in pe_of], weights, None if pat.msgs is None else pat.msgs.tolist())


def assert_matches(met, want, scale=1.0):
    for k in SCALARS:
        assert getattr(met, k) == pytest.approx(want[k], rel=1e-9, abs=1e-9 * scale), k


@given(cases(), st.lists(st.floats(0, 3, allow_nan=False), min_size=4, max_size=4))
def test_c_evaluator_equals_reference(case, weights):
    m, pat, pe_of = case
    met = tm.evaluate(pat, m, pe_of, weights=weights, link_load=True)
    want = reference_of(m, pat, pe_of, weights)
    assert_matches(met, want, scale=max(1.0, max(want["congestion"] or [0]) ** 2))
    np.testing.assert_allclose(met.link_load, want["link_load"], rtol=1e-12)
    levels = np.array(list(met.level_bytes.values()))
    wl = np.array(want["level_bytes"])
    # the reference keeps an (always empty) network slot for single-node machines
    np.testing.assert_allclose(levels, wl[: levels.size], rtol=1e-12)
    assert not wl[levels.size:].any()


@given(cases(), st.data())
def test_routes_and_distances_equal_reference(case, data):
    m, _, _ = case
    desc = machine_desc(m)
    a = data.draw(st.integers(0, m.nnodes - 1))
    b = data.draw(st.integers(0, m.nnodes - 1))
    assert m.route(a, b).tolist() == ref.route(desc, a, b)
    assert int(m.hops(a, b)) == len(ref.route(desc, a, b))
    pa = data.draw(st.integers(0, m.npes - 1))
    pb = data.draw(st.integers(0, m.npes - 1))
    assert float(m.distance(pa, pb)) == pytest.approx(ref.distance(desc, pa, pb))
    assert int(m.level_of(pa, pb)) == ref.level_of(desc, pa, pb)


@given(cases(), st.data())
def test_incremental_moves_and_swaps_equal_recomputation(case, data):
    m, pat, pe_of = case
    ev = tm.Evaluator(pat, m, pe_of)
    for _ in range(data.draw(st.integers(1, 12))):
        if data.draw(st.booleans()):
            p = data.draw(st.integers(0, pat.n - 1))
            pe = data.draw(st.integers(0, m.npes - 1))
            before = ev.metrics()
            tried = ev.try_move(p, pe)
            assert ev.metrics().to_dict() == before.to_dict()  # a try changes nothing
            ev.move(p, pe)
        else:
            p = data.draw(st.integers(0, pat.n - 1))
            q = data.draw(st.integers(0, pat.n - 1))
            tried = ev.try_swap(p, q)
            ev.swap(p, q)
        now = ev.metrics()
        full = tm.evaluate(pat, m, ev.mapping(), link_load=True)
        scale = max(1.0, full.max_congestion ** 2)
        for k in SCALARS:
            assert getattr(tried, k) == pytest.approx(getattr(full, k), rel=1e-9, abs=1e-9 * scale), k
            assert getattr(now, k) == pytest.approx(getattr(full, k), rel=1e-9, abs=1e-9 * scale), k
        np.testing.assert_allclose(ev.link_loads(), full.link_load, rtol=1e-9, atol=1e-9)
        assert now.level_bytes == pytest.approx(full.level_bytes)


def test_long_random_walk_keeps_running_sums_exact():
    """Thousands of applied swaps: the running sums must not drift from a recomputation."""
    m = tm.machine("torus:4x4x2/2")
    pat = tm.generators.random_sparse(64, 0.2, seed=5, bytes=1.0)
    rng = np.random.default_rng(1)
    ev = tm.Evaluator(pat, m, rng.permutation(m.npes)[: pat.n])
    for _ in range(3000):
        p, q = rng.integers(0, pat.n, 2)
        ev.swap(p, q)
    full = tm.evaluate(pat, m, ev.mapping())
    now = ev.metrics()
    for k in SCALARS:
        assert getattr(now, k) == pytest.approx(getattr(full, k), rel=1e-9), k


def test_hand_computed_2x2_torus(torus2x2):
    """Ring 0->1->2->3->0 with bytes 1,2,3,4 on a 2x2 torus, identity mapping.

    Nodes (x, y): 0=(0,0) 1=(1,0) 2=(0,1) 3=(1,1).  DOR, ties go +:
      0->1: 1 hop, link (0*2+0)*2+0 = 0
      1->2: x 1->0 (tie, +): link (1*2+0)*2+0 = 4, now at node 0; y 0->1: link (0*2+1)*2+0 = 2
      2->3: link (2*2+0)*2+0 = 8
      3->0: x 1->0: link 12 (now node 2), y 1->0 (tie, +): link (2*2+1)*2+0 = 10
    hop-bytes = 1*1 + 2*2 + 3*1 + 4*2 = 16; dilation = 6; max dilation 2.
    Loads: l0=1, l4=2, l2=2, l8=3, l12=4, l10=4 -> MC 4, NZ 6 links,
    NZCA = 16/6 = 8/3, NZCV = (1+4+4+9+16+16)/6 - (8/3)^2 = 50/6 - 64/9 = 11/9.
    """
    pat = tm.Pattern.from_edges([0, 1, 2, 3], [1, 2, 3, 0], [1.0, 2.0, 3.0, 4.0])
    met = tm.evaluate(pat, torus2x2, [0, 1, 2, 3], link_load=True)
    assert met.hop_bytes == 16 and met.dilation == 6 and met.max_dilation == 2
    assert met.max_congestion == 4 and met.nz_links == 6
    assert met.nz_congestion_avg == pytest.approx(8 / 3)
    assert met.nz_congestion_var == pytest.approx(11 / 9)
    assert met.hybrid == pytest.approx(16 + 4 + 8 / 3 + 11 / 9)
    assert met.qap == 16 and met.edge_cut == 10 and met.edge_cut_messages == 4
    assert np.flatnonzero(met.link_load).tolist() == [0, 2, 4, 8, 10, 12]


def test_intra_node_traffic_loads_no_link():
    m = tm.machine("torus:4/4")
    pat = tm.Pattern.from_edges([0, 1], [1, 0], [5.0, 7.0])
    met = tm.evaluate(pat, m, [0, 1])
    assert met.hop_bytes == 0 and met.max_congestion == 0 and met.nz_links == 0
    assert met.edge_cut == 0 and met.level_bytes["Node"] == 12


def test_hierarchy_qap_counts_each_direction():
    """hierarchy 2:2 / 1:10 and a symmetric pair between the two nodes: J = 2 * 10 * w."""
    m = tm.machine("hierarchy:2:2/1:10")
    pat = tm.Pattern.from_edges([0, 1], [1, 0], [4.0, 4.0])
    assert tm.evaluate(pat, m, [0, 3]).qap == 80
    assert tm.evaluate(pat, m, [0, 1]).qap == 8


def test_evaluate_rejects_bad_mappings(torus2x2):
    pat = tm.Pattern.from_edges([0], [1], [1.0])
    with pytest.raises(tm.MappingError, match="2 processes"):
        tm.evaluate(pat, torus2x2, [0])
    with pytest.raises(tm.MappingError, match="PE 9"):
        tm.evaluate(pat, torus2x2, [0, 9])
    with pytest.raises(tm.MappingError, match="invalid PE -1"):
        tm.evaluate(pat, torus2x2, [0, -1])
    with pytest.raises(tm.MappingError, match="integers"):
        tm.evaluate(pat, torus2x2, [0.5, 1.0])
    with pytest.raises(tm.MappingError, match="not in the allocation"):
        tm.evaluate(pat, torus2x2.allocate(2), [0, 3])
    with pytest.raises(tm.MappingError, match="hybrid weights"):
        tm.evaluate(pat, torus2x2, [0, 1], weights=(1, -1, 1, 1))
    ev = tm.Evaluator(pat, torus2x2, [0, 1])
    with pytest.raises(tm.MappingError, match="out of range"):
        ev.move(5, 0)
    with pytest.raises(tm.MappingError, match="out of range"):
        ev.try_move(0, 4)


def test_threaded_full_evaluation_equals_incremental_build():
    """Above 2**16 messages evaluate() splits the work over threads; the serial
    incremental build must agree exactly (integral bytes make sums exact)."""
    pat = tm.generators.stencil_3d((24, 24, 24), points=27, weights=(3, 2, 1))
    assert pat.nnz > 2**16
    alloc = tm.machine("torus:12x12x12/8").allocate(pat.n)
    for method in ("block", "random"):
        mp = tm.map(pat, alloc, method=method, seed=2)
        full = tm.evaluate(pat, alloc, mp, link_load=True)
        ev = tm.Evaluator(pat, alloc, mp)
        inc = ev.metrics().to_dict()
        for k, v in full.to_dict().items():
            # the variance is two-pass in one, running sums in the other
            assert v == (pytest.approx(inc[k], rel=1e-12) if k in ("nz_congestion_var", "hybrid") else inc[k]), k
        np.testing.assert_array_equal(full.link_load, ev.link_loads())
