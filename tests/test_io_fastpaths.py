"""The fast paths of pattern construction and of the file readers give exactly what the
reference paths give: the same arrays bit for bit, the same provenance, the same errors; and
nothing depends on how many chunks (threads) parse a text."""

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap import FormatError, PatternError
from topomap.io import _text, csv_edges, dense, matrixmarket, metis, scotch_grf
from test_io_fuzz import mutate, mutations

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                            HealthCheck.too_slow])


def reference_from_edges(src, dst, w, m, n):
    """Pattern.from_edges by its definition in NumPy: drop self and zero-byte entries, stable
    sort by (sender, receiver), sum duplicates with np.add.reduceat."""
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)
    self_bytes = float(w[src == dst].sum())
    keep = (src != dst) & (w > 0)
    src, dst, w = src[keep], dst[keep], w[keep]
    m = None if m is None else np.asarray(m, dtype=np.float64)[keep]
    key = src * n + dst
    order = np.argsort(key, kind="stable")
    uniq, start = np.unique(key[order], return_index=True)
    wsum = np.add.reduceat(w[order], start) if uniq.size else w[:0]
    msum = None if m is None else (np.add.reduceat(m[order], start) if uniq.size else m[:0])
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(uniq // n, minlength=n), out=indptr[1:])
    return indptr, (uniq % n).astype(np.int32), wsum, msum, self_bytes


def assert_same_pattern(a: tm.Pattern, b: tm.Pattern) -> None:
    assert a.n == b.n
    for name in ("indptr", "indices", "bytes"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), name
    assert (a.msgs is None) == (b.msgs is None)
    if a.msgs is not None:
        assert a.msgs.tobytes() == b.msgs.tobytes()
    assert a.provenance == b.provenance


# ---------------------------------------------------------------- construction

@st.composite
def entries(draw):
    n = draw(st.integers(1, 12))
    k = draw(st.integers(0, 60))
    ids = st.lists(st.integers(0, n - 1), min_size=k, max_size=k)
    weight = st.one_of(st.just(0.0), st.floats(0, 1e6, allow_nan=False), st.sampled_from([0.1, 0.2, 0.3, 1e16]))
    w = draw(st.lists(weight, min_size=k, max_size=k))
    m = draw(st.one_of(st.none(), st.lists(st.floats(0, 100, allow_nan=False), min_size=k, max_size=k)))
    return n, draw(ids), draw(ids), w, m


@SETTINGS
@given(entries(), st.sampled_from([np.int64, np.int32, np.uint16]), st.booleans())
def test_from_edges_matches_numpy_definition(case, dtype, sort_first):
    n, src, dst, w, m = case
    src, dst = np.array(src, dtype=dtype), np.array(dst, dtype=dtype)
    if sort_first:  # rows already grouped: the builder skips the counting sort
        order = np.argsort(src, kind="stable")
        src, dst, w = src[order], dst[order], np.asarray(w)[order]
        m = None if m is None else np.asarray(m)[order]
    pat = tm.Pattern.from_edges(src, dst, w, m, n=n)
    indptr, indices, wsum, msum, self_bytes = reference_from_edges(src, dst, w, m, n)
    assert pat.indptr.tobytes() == indptr.tobytes() and pat.indices.tobytes() == indices.tobytes()
    assert pat.bytes.tobytes() == wsum.tobytes()
    assert (pat.msgs is None) == (msum is None) and (msum is None or pat.msgs.tobytes() == msum.tobytes())
    assert pat.provenance["dropped_self_bytes"] == self_bytes


@SETTINGS
@given(entries(), st.booleans())
def test_adopted_arrays_match_numpy_definition(case, sort_first):
    """A reader giving its arrays away (Pattern._adopt): entries out of sender order are
    regrouped and written back over the given arrays, which the pattern then keeps."""
    n, src, dst, w, m = case
    src, dst, w = np.array(src, np.int32), np.array(dst, np.int32), np.array(w, np.float64)
    m = None if m is None else np.array(m, np.float64)
    if sort_first:
        order = np.argsort(src, kind="stable")
        src, dst, w, m = src[order], dst[order], w[order], None if m is None else m[order]
    expected = reference_from_edges(src, dst, w, m, n)
    given_dst, given_w = dst.copy(), w.copy()
    pat = tm.Pattern._adopt(n, src, given_dst, given_w, None if m is None else m.copy(), {})
    indptr, indices, wsum, msum, self_bytes = expected
    assert pat.indptr.tobytes() == indptr.tobytes() and pat.indices.tobytes() == indices.tobytes()
    assert pat.bytes.tobytes() == wsum.tobytes()
    assert (pat.msgs is None) == (msum is None) and (msum is None or pat.msgs.tobytes() == msum.tobytes())
    assert pat.provenance["dropped_self_bytes"] == self_bytes
    if (np.diff(src) < 0).any() and not (src == dst).any() and pat.nnz:  # all-zero bytes leave nothing to keep
        assert np.shares_memory(pat.indices, given_dst) and np.shares_memory(pat.bytes, given_w)


def test_adopt_leaves_read_only_and_borrowed_arrays_alone():
    """Only arrays owning writeable data are written over (and shrunk)."""
    src, dst, w = np.array([2, 0, 1, 0], np.int32), np.array([0, 1, 0, 1], np.int32), np.array([1.0, 2, 3, 4])
    read_only = np.frombuffer(w.tobytes(), dtype=np.float64)
    backing = np.zeros(8)
    borrowed = backing[:4]
    borrowed[:] = w
    for given in (read_only, borrowed):
        pat = tm.Pattern._adopt(3, src, dst.copy(), given, None, {})
        assert pat.indices.tolist() == [1, 0, 0] and pat.bytes.tolist() == [6.0, 3.0, 1.0]
        assert given.tolist() == w.tolist() and not np.shares_memory(pat.bytes, given)
    assert backing[4:].tolist() == [0.0] * 4


def test_long_duplicate_runs_sum_like_numpy():
    """Runs longer than 8 and than 128 use NumPy's pairwise summation, whose result differs
    from a left-to-right sum for these values."""
    rng = np.random.default_rng(0)
    for run in (9, 20, 129, 1000):
        w = np.concatenate([[1e16], rng.random(run - 1)])
        pat = tm.Pattern.from_edges(np.zeros(run, np.int64), np.ones(run, np.int64), w, n=2)
        assert pat.bytes[0] == np.add.reduceat(w, [0])[0]


def test_caller_arrays_stay_writable_and_unshared():
    src, dst, w = np.array([0, 1]), np.array([1, 0]), np.array([2.0, 3.0])
    pat = tm.Pattern.from_edges(src, dst, w)
    w[0] = 99
    assert pat.bytes[0] == 2.0 and w.flags.writeable
    indptr, indices, byts = np.array([0, 1, 2]), np.array([1, 0], np.int32), np.array([1.0, 2.0])
    pat = tm.Pattern(2, indptr, indices, byts)
    byts[0] = 5
    indices[0] = 0
    assert pat.bytes[0] == 1.0 and pat.indices[0] == 1 and indices.flags.writeable
    assert not pat.bytes.flags.writeable and not pat.indptr.flags.writeable


@st.composite
def csr_arrays(draw):
    n = draw(st.integers(1, 6))
    dense_m = np.array(draw(st.lists(st.lists(st.sampled_from([0.0, 0.0, 1.0, 2.5]), min_size=n, max_size=n),
                                     min_size=n, max_size=n)))
    np.fill_diagonal(dense_m, 0)
    pat = tm.Pattern.from_dense(dense_m)
    indptr, indices, byts = pat.indptr.copy(), pat.indices.copy(), pat.bytes.copy()
    fault = draw(st.sampled_from(["none", "swap", "dup", "self", "zero", "nan", "range", "indptr", "dtype"]))
    if indices.size >= 2 and fault in ("swap", "dup"):
        row = int(np.argmax(np.diff(indptr) >= 2)) if (np.diff(indptr) >= 2).any() else None
        if row is not None:
            a = indptr[row]
            if fault == "swap":
                indices[a], indices[a + 1] = indices[a + 1], indices[a]
            else:
                indices[a + 1] = indices[a]
    elif indices.size and fault == "self":
        indices[0] = np.searchsorted(indptr, 0, side="right") - 1
    elif byts.size and fault in ("zero", "nan"):
        byts[-1] = 0.0 if fault == "zero" else np.nan
    elif indices.size and fault == "range":
        indices[-1] = n
    elif fault == "indptr":
        indptr[-1] += 1
    elif fault == "dtype":
        indices = indices.astype(np.int64)
    return n, indptr, indices, byts


@SETTINGS
@given(csr_arrays())
def test_constructor_fast_check_agrees_with_full_validation(case):
    """Canonical arrays take the one-pass check; anything else reaches the full validation,
    whose error the fast path never preempts."""
    n, indptr, indices, byts = case
    try:
        pat = tm.Pattern(n, indptr, indices, byts)
    except PatternError:
        assert not _canonical_by_definition(n, indptr, indices, byts)
    else:
        assert _canonical_by_definition(n, indptr, indices, byts)
        assert pat.indices.dtype == np.int32 and pat.indptr.dtype == np.int64


def _canonical_by_definition(n, indptr, indices, byts):
    if indptr.shape != (n + 1,) or indptr[0] != 0 or (np.diff(indptr) < 0).any() or indptr[-1] != indices.size:
        return False
    rows = np.repeat(np.arange(n), np.diff(indptr))
    key = rows * n + indices
    return bool(((indices >= 0) & (indices < n) & (rows != indices)).all() and (np.diff(key) > 0).all()
                and (np.isfinite(byts) & (byts > 0)).all())


# ---------------------------------------------------------------- readers: fast path == reference path

FAST_PATHS = {".csv": (csv_edges, "_read_table"), ".mtx": (matrixmarket, "_read_table"),
              ".graph": (metis, "_read_rows"), ".grf": (scotch_grf, "_read_rows"),
              ".mat": (dense, "_read_nonzeros")}


def read_both(path, monkeypatch):
    """(fast result, reference result): each a Pattern or the FormatError message."""
    def attempt():
        try:
            return tm.io.read(path)
        except FormatError as exc:
            return str(exc)
    fast = attempt()
    module, name = FAST_PATHS[os.path.splitext(path)[1]]
    with monkeypatch.context() as m:
        m.setattr(module, name, lambda *args, **kw: None)
        reference = attempt()
    return fast, reference


def assert_same_outcome(fast, reference):
    assert type(fast) is type(reference), (fast, reference)
    if isinstance(fast, str):
        assert fast == reference
    else:
        assert_same_pattern(fast, reference)


@st.composite
def written_files(draw, ext):
    """A random pattern written by topomap's writer, then reformatted in ways the format allows."""
    n = draw(st.integers(2, 9))
    k = draw(st.integers(1, 25))
    src = np.array(draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)))
    dst = np.array(draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)))
    w = np.array(draw(st.lists(st.sampled_from([1, 2, 7, 1000, 123456789]), min_size=k, max_size=k)), float)
    pat = tm.Pattern.from_edges(src, dst, w, n=n)
    if ext in (".graph", ".grf"):
        pat = pat.symmetric()
    if pat.nnz == 0:
        pat = tm.Pattern.from_edges([0, 1], [1, 0], [3.0, 3.0], n=n)
    return pat, draw(st.sampled_from(["as written", "crlf", "blank lines", "shuffle", "float", "comment"]))


def reformat(data: bytes, ext: str, how: str, rng) -> bytes:
    lines = data.split(b"\n")
    head = {".csv": next(i for i, line in enumerate(lines) if line[:1].isdigit()), ".mtx": 3, ".graph": 1, ".grf": 3,
            ".mat": 0}[ext]
    body = lines[head:]
    if how == "crlf":
        return b"\r\n".join(lines)
    if how == "blank lines":
        body = [x for line in body for x in (line, b"")]
    elif how == "shuffle" and ext in (".csv", ".mtx"):
        body = [body[i] for i in rng.permutation(len(body))]
    elif how == "float" and ext in (".csv", ".mtx", ".mat"):
        body = [line.replace(b" 1\n", b" 1.0\n").replace(b"7", b"7.0") if line else line for line in body]
    elif how == "comment":
        marker = {".csv": b"# c", ".mtx": b"% c", ".graph": b"% c", ".grf": b"", ".mat": b"# c"}[ext]
        body = body[:1] + [marker] + body[1:]
    return b"\n".join(lines[:head] + body)


@pytest.mark.parametrize("ext", sorted(FAST_PATHS))
@SETTINGS
@given(data=st.data())
def test_readers_fast_equals_reference(tmp_path, monkeypatch, ext, data):
    pat, how = data.draw(written_files(ext))
    path = str(tmp_path / f"p{ext}")
    tm.io.write(pat, path)
    raw = open(path, "rb").read()
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    open(path, "wb").write(reformat(raw, ext, how, rng))
    fast, reference = read_both(path, monkeypatch)
    assert_same_outcome(fast, reference)
    if how == "as written":
        assert isinstance(fast, tm.Pattern) and fast.nnz == pat.nnz


@pytest.mark.parametrize("ext", sorted(FAST_PATHS))
@SETTINGS
@given(data=st.data(), edits=mutations())
def test_readers_fast_equals_reference_on_broken_files(tmp_path, monkeypatch, ext, data, edits):
    """Mutated files: the fast path either gives the reference pattern or steps aside so that
    the reference error (file, line, fault) is raised unchanged."""
    pat, _ = data.draw(written_files(ext))
    path = str(tmp_path / f"p{ext}")
    tm.io.write(pat, path)
    open(path, "wb").write(mutate(open(path, "rb").read(), edits))
    assert_same_outcome(*read_both(path, monkeypatch))


# ---------------------------------------------------------------- chunks (threads)

@pytest.mark.parametrize("ext", sorted(FAST_PATHS))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), edits=st.one_of(st.just([]), mutations()))
def test_results_do_not_depend_on_chunks(tmp_path, monkeypatch, ext, data, edits):
    pat, how = data.draw(written_files(ext))
    path = str(tmp_path / f"p{ext}")
    tm.io.write(pat, path)
    open(path, "wb").write(mutate(open(path, "rb").read(), edits) if edits else open(path, "rb").read())
    outcomes = []
    for chunks in (1, 2, 3, 7, 64):
        monkeypatch.setattr(_text, "CHUNKS", chunks)
        try:
            outcomes.append(tm.io.read(path))
        except FormatError as exc:
            outcomes.append(str(exc))
    for other in outcomes[1:]:
        assert_same_outcome(other, outcomes[0])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([b"0", b"17", b"-3", b"123456789", b"2.5", b"1e3", b"-0", b"x"]),
                          st.sampled_from([b" ", b"\n", b"\t", b",", b"\r\n", b" # c\n"])), max_size=40),
       st.booleans(), st.integers(2, 64))
def test_tokenizer_chunks_agree(pieces, integer, chunks):
    data = b"".join(t + s for t, s in pieces)
    one = _core_scan(data, integer, 1)
    many = _core_scan(data, integer, chunks)
    assert type(one) is type(many)
    if isinstance(one, tuple) and len(one) == 6:
        assert one[0].dtype == many[0].dtype and one[0].tobytes() == many[0].tobytes()
        assert one[1].tobytes() == many[1].tobytes() and one[2:] == many[2:]
    else:
        assert one == many


def _core_scan(data, integer, chunks):
    from topomap import _core
    return _core.scan_numbers(data, integer, True, ord("#"), False, True, chunks)


def test_openmp_thread_count_does_not_change_results(tmp_path):
    """The same file read by processes with 1 and 3 OpenMP threads."""
    rng = np.random.default_rng(1)
    pat = tm.Pattern.from_edges(rng.integers(0, 500, 20000), rng.integers(0, 500, 20000),
                                rng.integers(1, 10**6, 20000).astype(float), n=500)
    path = str(tmp_path / "p.csv")
    tm.io.write(pat, path)
    code = ("import sys, hashlib, topomap as tm; p = tm.io.read(sys.argv[1]); "
            "print(hashlib.sha256(p.indptr.tobytes() + p.indices.tobytes() + p.bytes.tobytes()).hexdigest())")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digests = {subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, check=True, cwd=root,
                              env={**os.environ, "OMP_NUM_THREADS": str(t)}).stdout for t in (1, 3)}
    assert len(digests) == 1


def test_simd_level_does_not_change_results(tmp_path):
    """Every text format, clean, with CRLF and float weights, and broken, read by processes
    limited to bytes only, SSE2 and AVX2 (TOPOMAP_SIMD): the same arrays or the same error."""
    rng = np.random.default_rng(2)
    pat = tm.Pattern.from_edges(rng.integers(0, 400, 6000), rng.integers(0, 400, 6000),
                                rng.integers(1, 10**12, 6000).astype(float), n=400)
    paths = []
    for ext in (".csv", ".mtx", ".graph", ".grf", ".mat"):
        path = str(tmp_path / f"p{ext}")
        tm.io.write(pat.symmetric() if ext in (".graph", ".grf") else pat, path)
        paths.append(path)
    with open(paths[0], "rb") as fh:
        text = fh.read()
    for name, body in {"crlf.csv": text.replace(b"\n", b"\r\n"), "float.csv": text.replace(b"7,", b"7.5e0,"),
                       "broken.mtx": open(paths[1], "rb").read().replace(b" 1", b" 1x", 1)}.items():
        (tmp_path / name).write_bytes(body)
        paths.append(str(tmp_path / name))
    code = ("import sys, hashlib, topomap as tm\n"
            "for f in sys.argv[1:]:\n"
            "    try:\n"
            "        p = tm.io.read(f)\n"
            "        print(hashlib.sha256(p.indptr.tobytes() + p.indices.tobytes() + p.bytes.tobytes()).hexdigest())\n"
            "    except tm.TopomapError as exc:\n"
            "        print(exc)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    runs = {level: subprocess.run([sys.executable, "-c", code, *paths], capture_output=True, text=True, check=True,
                                  cwd=root, env={**os.environ, "TOPOMAP_SIMD": level}).stdout.splitlines()
            for level in ("none", "sse2", "avx2")}
    assert runs["none"] == runs["sse2"] == runs["avx2"]
    csv, mtx, graph, grf, mat, crlf, floats, broken = runs["none"]
    assert csv == mtx == mat == crlf != floats and graph == grf != csv  # the files were read, and differ as built
    assert "broken.mtx:4: '1x" in broken
    bad = subprocess.run([sys.executable, "-c", code, paths[0]], capture_output=True, text=True, cwd=root,
                         env={**os.environ, "TOPOMAP_SIMD": "avx9"})
    assert "TOPOMAP_SIMD='avx9' must be none, sse2 or avx2" in bad.stderr


# ---------------------------------------------------------------- per-rank formats: C scanners == Python readers

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "patterns")


def read_run_both(first, monkeypatch, module, **kw):
    def attempt():
        try:
            return tm.io.read(first, **kw)
        except FormatError as exc:
            return str(exc)
    fast = attempt()
    with monkeypatch.context() as m:
        m.setattr(module, "_read_scanned", lambda *args, **kwargs: None)
        reference = attempt()
    return fast, reference


@pytest.mark.parametrize("kind", ["prof", "dumpi"])
@SETTINGS
@given(edits=mutations(), which=st.integers(0, 3), kinds=st.sampled_from(["E,I", "E,I,S,R,C", "R"]))
def test_per_rank_readers_fast_equals_reference(tmp_path, monkeypatch, kind, edits, which, kinds):
    import shutil
    from topomap.io import dumpi_ascii, ompi_monitoring
    run = tmp_path / "run"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(os.path.join(DATA, "ompi" if kind == "prof" else "dumpi"), run)
    files = sorted(str(run / f) for f in os.listdir(run) if f.endswith((".prof", ".dumpi.txt")))
    victim = files[which % len(files)]
    open(victim, "wb").write(mutate(open(victim, "rb").read(), edits))
    module, kw = (ompi_monitoring, {"kinds": kinds}) if kind == "prof" else (dumpi_ascii, {})
    assert_same_outcome(*read_run_both(files[0], monkeypatch, module, **kw))


def test_per_rank_readers_fast_path_is_taken_on_fixtures(monkeypatch):
    """The fixtures from real runs are read by the C scanners (not only by the fallback)."""
    from topomap.io import dumpi_ascii, ompi_monitoring
    for module, first, kw in ((ompi_monitoring, os.path.join(DATA, "ompi", "prof.0.prof"), {"kinds": "E,I,S,R,C"}),
                              (dumpi_ascii, sorted(os.path.join(DATA, "dumpi", f) for f in os.listdir(
                                  os.path.join(DATA, "dumpi")) if f.endswith(".txt"))[0], {})):
        fast, reference = read_run_both(first, monkeypatch, module, **kw)
        assert isinstance(fast, tm.Pattern)
        assert_same_pattern(fast, reference)
        files, label = tm.io._ranks.rank_files(first, ".0.prof")
        assert module._read_scanned(files, label, *(("E", "I"),) if module is ompi_monitoring else ()) is not None


def test_monitoring_sections_summed_like_the_reference(tmp_path, monkeypatch):
    """Many ranks, several communicators with repeated and odd names (CRLF, a blank line, a
    name that decodes like another), histograms on some lines."""
    from topomap.io import ompi_monitoring
    rng = np.random.default_rng(3)
    ranks = 12
    for r in range(ranks):
        lines = ["# POINT TO POINT"]
        for d in sorted(rng.choice(ranks, 4, replace=False)):
            hist = "\t" + ",".join(str(x) for x in rng.integers(0, 3, 66)) if rng.random() < 0.5 else ""
            lines.append(f"{'EIC'[int(rng.integers(3))]}\t{r}\t{d}\t{rng.integers(0, 10**12)} bytes\t"
                         f"{rng.integers(1, 99)} msgs sent{hist}")  # bytes need messages
        lines.append("")
        for name, procs in (("MPI_COMM_WORLD", ",".join(map(str, range(ranks)))), ("MPI_COMM_SELF", str(r)),
                            ("split\\xff", "(null)"), ("SPLIT FROM 3", "")):
            lines += [f"D\t{name}\tprocs: {procs}", f"O2A\t{r}\t{rng.integers(0, 1000)} bytes\t1 msgs sent",
                      f"A2O\t{-1 if r % 3 == 0 else r}\t0 bytes\t0 msgs sent",
                      f"A2A\t{r}\t{rng.integers(0, 10**6)} bytes\t{rng.integers(0, 9)} msgs sent"]
        text = "\n".join(lines) + "\n"
        if r == 5:
            text = text.replace("\n", "\r\n")
        data = text.encode()
        if r == 7:
            data = data.replace(b"split\\xff", b"split\xff")  # decodes to the name rank 0 wrote
        (tmp_path / f"prof.{r}.prof").write_bytes(data)
    fast, reference = read_run_both(str(tmp_path / "prof"), monkeypatch, ompi_monitoring, format="ompi",
                                    kinds="E,I,C")
    assert isinstance(fast, tm.Pattern)
    assert_same_pattern(fast, reference)
    assert fast.provenance["communicators"]["split\\xff"]["ranks_reporting"] == ranks
    files, label = tm.io._ranks.rank_files(str(tmp_path / "prof"), ".0.prof")
    assert ompi_monitoring._read_scanned(files, label, ("E", "I", "C")) is not None  # the C scanner read it


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 10**19), max_size=12), min_size=3, max_size=40),
       st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from([b"x", b"-3", b"2.5", b"+7", b"1e3", b"nan", b"\xff",
                                                                     b"#", b"-0", b"\n", b"  ", b","])), max_size=3),
       st.booleans(), st.booleans(), st.integers(1, 9))
def test_long_texts_tiers_agree(lines, inserts, integer, commas, chunks):
    """Texts long enough for the block lane (lines of plain integers read 64 bytes at a time),
    with odd tokens dropped in: the C tier gives the strict tier's values, counts and faults."""
    sep = b"," if commas else b" "
    data = bytearray(b"\n".join(sep.join(str(v).encode() for v in line) for line in lines) + b"\n")
    for where, what in inserts:
        at = where % (len(data) + 1)
        data[at:at] = what
    data = bytes(data)
    text = data.replace(b",", b" ") if commas else data
    try:
        slow = _text._parse_slow("f", text, 1, integer)
    except FormatError as exc:
        slow = exc
    fast = _text._parse_fast(data, integer, commas, chunks)
    if isinstance(fast, tuple):
        assert not isinstance(slow, FormatError), slow
        np.testing.assert_array_equal(fast[0], slow[0])
        np.testing.assert_array_equal(fast[1], slow[1])
    elif fast is not None:
        assert isinstance(slow, FormatError)
        bad_line = 1 + text.count(b"\n", 0, fast)
        assert str(slow).startswith(f"f:{bad_line}:")


def test_scanners_without_room_for_the_bound_read_in_two_passes(tmp_path):
    """The table, row and non-zero scanners first ask for arrays of room for every entry (line)
    the text could hold; where that address space is refused, they count first and fill exact
    arrays."""
    table, rows, matrix = tmp_path / "padded.csv", tmp_path / "padded.graph", tmp_path / "wide.mat"
    pad = " " * 300  # long lines: the bounds are ~100 times the entries
    with open(table, "w") as fh:
        fh.writelines(f"{i % 1000},{(i * 7) % 1000},{i}{pad}\n" for i in range(60_000))
    with open(rows, "w") as fh:
        fh.writelines(f"{(i + 1) % 60_000 + 1} {i % 9}{pad}\n" for i in range(60_000))
    with open(matrix, "w") as fh:  # few long lines: the bound on lines is ~2000 times theirs
        fh.writelines(" ".join(["0"] * (i % 1000) + ["3"] + ["0"] * (999 - i % 1000)) + "\n" for i in range(5000))
    code = """
import re, resource, sys
import numpy as np
from topomap.io import _text
table, rows, matrix = (_text.read_text(path) for path in sys.argv[1:4])
_text.parse_table(table[:4096], "nnf", commas=True)  # threads and arenas made before the limit
vm = int(re.search(r"VmSize:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) * 1024
room = 12 * 60_000 * 2 + (32 << 20)  # the exact arrays fit, the bounds (over 50 MB) do not
resource.setrlimit(resource.RLIMIT_AS, (vm + room, resource.RLIM_INFINITY))
try:
    np.empty(len(table) // 6 * 2, np.float64)
    print("bound fits")
except MemoryError:
    src, dst, w = _text.parse_table(table, "nnf", commas=True)
    print(len(src), int(src[-1]), int(dst[-1]), float(w.sum()))
    row_ptr, q, w = _text.parse_rows(rows, 60_000, head=0, degree=False, step=2, weight_first=False, base=1)
    print(int(row_ptr[-1]), int(q[0]), int(q[-1]), float(w.sum()))
    line, col, value, counts = _text.parse_nonzeros(matrix)
    print(len(line), int(col[-1]), float(value.sum()), len(counts), int(counts.min()))
"""
    out = subprocess.run([sys.executable, "-c", code, str(table), str(rows), str(matrix)], capture_output=True,
                         text=True, check=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert out.stdout.split() == ["60000", str(59_999 % 1000), str(59_999 * 7 % 1000), str(float(sum(range(60_000)))),
                                  "60000", "1", "0", str(float(sum(i % 9 for i in range(60_000)))),
                                  "5000", str(4999 % 1000), "15000.0", "5000", "1000"]
