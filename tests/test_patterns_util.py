"""Pattern utilities against dense NumPy references written from the definitions."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap.cli import main as cli_main
from topomap.patterns.util import (EVENT_DTYPE, add, events, prune, restrict, scale, summary, symmetrize,
                                   time_window)


@st.composite
def dense_patterns(draw, max_n=8):
    """(dense bytes, dense msgs) with a zero diagonal and some empty entries."""
    n = draw(st.integers(1, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mask = rng.random((n, n)) < draw(st.floats(0.1, 1.0))
    B = mask * rng.choice([1.0, 2.0, 5.0, 100.0], size=(n, n))
    np.fill_diagonal(B, 0)
    M = (B > 0) * rng.integers(1, 4, size=(n, n))
    return B, M.astype(float)


def pattern_of(B, M=None):
    return tm.Pattern.from_dense(B, M)


def dense_msgs(p):
    out = np.zeros((p.n, p.n))
    out[p.senders(), p.indices] = p.msgs
    return out


# ---------------------------------------------------------------- restrict
@settings(max_examples=60, deadline=None)
@given(dense_patterns(), st.data())
def test_restrict_matches_submatrix(bm, data):
    B, M = bm
    n = B.shape[0]
    sel = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    sub, old = restrict(pattern_of(B, M), sel)
    ix = np.ix_(sel, sel)
    np.testing.assert_array_equal(sub.to_dense(), B[ix])
    np.testing.assert_array_equal(dense_msgs(sub), M[ix])
    assert old.tolist() == sel and old.dtype == np.int32
    assert sub.provenance["dropped_outside_bytes"] == pytest.approx(B.sum() - B[ix].sum())


def test_restrict_mask_and_errors():
    pat = tm.Pattern.from_edges([0, 1, 2], [1, 2, 0], 1.0)
    sub, old = restrict(pat, np.array([True, False, True]))
    assert old.tolist() == [0, 2] and sub.to_dense().tolist() == [[0.0, 0.0], [1.0, 0.0]]
    for bad, msg in (([], "empty"), ([0, 0], "twice"), ([3], r"processes\[0\] = 3 is out of range"),
                     ([-1], "out of range"), (np.array([True]), "mask must have 3"), ([0.5], "list of ranks")):
        with pytest.raises(tm.PatternError, match=msg):
            restrict(pat, bad)
    with pytest.raises(TypeError, match="topomap.Pattern"):
        restrict(np.eye(2), [0])


# ---------------------------------------------------------------- scale, add
@given(dense_patterns(), st.floats(0.01, 100))
def test_scale(bm, f):
    B, M = bm
    out = scale(pattern_of(B, M), f)
    np.testing.assert_allclose(out.to_dense(), B * f)
    np.testing.assert_array_equal(dense_msgs(out), M)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "2"])
def test_scale_rejects(bad):
    with pytest.raises(tm.PatternError, match="factor"):
        scale(tm.Pattern.from_edges([0], [1], [1.0]), bad)


def test_scale_overflow_names_the_entry():
    pat = tm.Pattern.from_edges([0, 2], [1, 1], [1.0, 1e308], n=3)
    with pytest.raises(tm.PatternError, match=r"scaling by 10 overflows the bytes of 2 -> 1 \(1e\+308\)"):
        scale(pat, 10)
    with pytest.raises(tm.PatternError, match="overflow"):
        add(pat, pat)


@given(st.integers(1, 6), st.data())
def test_add_matches_dense_sum(n, data):
    mats = [data.draw(dense_patterns(max_n=n).filter(lambda bm: bm[0].shape[0] == n)) for _ in range(3)]
    out = add(*(pattern_of(B, M) for B, M in mats))
    np.testing.assert_array_equal(out.to_dense(), sum(B for B, _ in mats))
    np.testing.assert_array_equal(dense_msgs(out), sum(M for _, M in mats))


def test_add_errors_and_missing_msgs():
    a = tm.Pattern.from_edges([0], [1], [1.0], n=2)
    b = tm.Pattern.from_edges([0], [1], [1.0], [3.0], n=2)
    assert add(a, b).msgs is None and add(b, b).msgs.tolist() == [6.0]
    with pytest.raises(tm.PatternError, match="patterns\\[1\\] has 3 processes"):
        add(a, tm.Pattern.from_edges([0], [2], [1.0]))
    with pytest.raises(tm.PatternError, match="at least one"):
        add()


# ---------------------------------------------------------------- symmetrize
@given(dense_patterns())
def test_symmetrize(bm):
    B, M = bm
    pat = pattern_of(B, M)
    np.testing.assert_array_equal(symmetrize(pat, "sum").to_dense(), B + B.T)
    np.testing.assert_array_equal(symmetrize(pat, "max").to_dense(), np.maximum(B, B.T))
    np.testing.assert_array_equal(symmetrize(pat, "mean").to_dense(), (B + B.T) / 2)
    np.testing.assert_array_equal(dense_msgs(symmetrize(pat, "sum")), M + M.T)
    for how in ("sum", "max", "mean"):
        assert summary(symmetrize(pat, how)).symmetric


def test_symmetrize_max_keeps_heavier_direction_msgs():
    pat = tm.Pattern.from_edges([0, 1], [1, 0], [4.0, 9.0], [1.0, 7.0])
    out = symmetrize(pat, "max")
    assert out.to_dense().tolist() == [[0.0, 9.0], [9.0, 0.0]] and out.msgs.tolist() == [7.0, 7.0]
    with pytest.raises(tm.PatternError, match="how = 'avg'"):
        symmetrize(pat, "avg")


# ---------------------------------------------------------------- prune (APHiD §2.4)
@given(dense_patterns(), st.sampled_from([0.0, 0.05, 0.1, 0.5, 1.0]))
def test_prune_is_the_aphid_rule(bm, f):
    B, M = bm
    out = prune(pattern_of(B, M), f)
    keep = B >= f * B.max() if B.any() else B > 0
    np.testing.assert_array_equal(out.to_dense(), np.where(keep, B, 0))
    assert out.provenance["pruned_bytes"] == pytest.approx(B[~keep].sum())


def test_prune_golden_boundary():
    # weights 100, 5 and 4.999: with the default 5 % the edge of exactly 5 stays
    pat = tm.Pattern.from_edges([0, 1, 2], [1, 2, 0], [100.0, 5.0, 4.999])
    out = prune(pat)
    assert out.to_dense()[1, 2] == 5.0 and out.to_dense()[2, 0] == 0.0
    assert out.provenance["threshold"] == 5.0 and out.provenance["pruned_edges"] == 1
    assert prune(pat, 0.06).nnz == 1
    with pytest.raises(tm.PatternError, match="fraction"):
        prune(pat, 1.5)


# ---------------------------------------------------------------- events and windows
@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5), st.lists(st.tuples(st.floats(0, 10), st.integers(0, 4), st.integers(0, 4),
                                             st.integers(0, 50)), max_size=30),
       st.floats(0, 10), st.floats(0, 10))
def test_time_window_matches_loop(n, evs, a, b):
    start, stop = min(a, b), max(a, b)
    evs = [(t, s % n, d % n, w) for t, s, d, w in evs]
    ev = events([e[0] for e in evs], np.array([e[1] for e in evs], dtype=np.int64),
                np.array([e[2] for e in evs], dtype=np.int64), [float(e[3]) for e in evs])
    pat = time_window(ev, n, start, stop)
    ref = np.zeros((n, n))
    cnt = np.zeros((n, n))
    for t, s, d, w in evs:
        if start <= t < stop and s != d and w > 0:
            ref[s, d] += w
            cnt[s, d] += 1
    np.testing.assert_array_equal(pat.to_dense(), ref)
    np.testing.assert_array_equal(dense_msgs(pat), cnt)


def test_events_validation():
    ev = events([2.0, 1.0], [0, 1], [1, 0], 3)
    assert ev.dtype == EVENT_DTYPE and ev["t"].tolist() == [1.0, 2.0]
    with pytest.raises(tm.PatternError, match="src must be 2 integers"):
        events([0.0, 1.0], [0], [1, 0], 1)
    with pytest.raises(tm.PatternError, match="event 1"):
        events([0.0, float("nan")], [0, 1], [1, 0], 1)
    with pytest.raises(tm.PatternError, match="dst\\[0\\] = -1"):
        events([0.0], [0], [-1], 1)
    with pytest.raises(tm.PatternError, match="reversed window"):
        time_window(ev, 2, 3.0, 1.0)
    with pytest.raises(TypeError, match="EVENT_DTYPE"):
        time_window(np.zeros(3), 2)


# ---------------------------------------------------------------- summary
def ref_summary(B):
    n = B.shape[0]
    out_deg = (B > 0).sum(axis=1)
    in_deg = (B > 0).sum(axis=0)
    hist = {}
    for d in out_deg:
        hist[int(d)] = hist.get(int(d), 0) + 1
    total = B.sum()
    return {"nnz": int((B > 0).sum()), "hist": dict(sorted(hist.items())),
            "struct": bool(((B > 0) == (B.T > 0)).all()), "sym": bool((B == B.T).all()),
            "asym": float(np.abs(B - B.T).sum() / (2 * total)) if total else 0.0,
            "isolated": int(((out_deg == 0) & (in_deg == 0)).sum()),
            "density": (B > 0).sum() / (n * (n - 1)) if n > 1 else 0.0}


@given(dense_patterns())
def test_summary_matches_reference(bm):
    B, M = bm
    s = summary(pattern_of(B, M))
    r = ref_summary(B)
    assert (s.nnz, s.degree_histogram, s.structurally_symmetric, s.symmetric, s.isolated) == \
        (r["nnz"], r["hist"], r["struct"], r["sym"], r["isolated"])
    assert s.asymmetry == pytest.approx(r["asym"]) and s.density == pytest.approx(r["density"])
    assert s.total_bytes == B.sum() and s.total_msgs == M.sum()
    json.dumps(s.to_dict())


def test_summary_of_stencil_golden():
    s = summary(tm.generators.stencil_2d((3, 3)))
    assert s.degree_histogram == {2: 4, 3: 4, 4: 1} and s.symmetric and s.nnz == 24


# ---------------------------------------------------------------- CLI
def test_cli_pattern_summary_and_transforms(tmp_path, capsys):
    assert cli_main(["pattern", "stencil2d:4x4", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["n"] == 16 and info["nnz"] == 48 and info["degree_histogram"] == {"2": 4, "3": 8, "4": 4}
    out = tmp_path / "p.mat"
    assert cli_main(["pattern", "stencil2d:4x4", "--subset", "0,1,4", "--scale", "2", "-o", str(out)]) == 0
    assert "degree_histogram" in capsys.readouterr().out
    np.testing.assert_array_equal(np.loadtxt(out), [[0, 2, 2], [2, 0, 0], [2, 0, 0]])
    assert cli_main(["pattern", str(tmp_path / "missing.mat")]) == 2
    assert "missing.mat" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["pattern", "stencil2d:4x4", "--prune", "2"])
