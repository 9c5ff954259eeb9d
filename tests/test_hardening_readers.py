"""Hostile and careless input to the pattern readers (issue 19, items 1-5): header bombs refused
before allocating, endless streams bounded, overflowing sums and metrics named, undirected
formats checked, tiny and huge weights through the METIS/Scotch integer scaling.

The corpus of the issue's cases is tests/data/hostile/ (one file per case, named after it)."""

import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap import FormatError, PatternError
from topomap.io import _text, _undirected
from topomap.mappers.scotch import gmap_program
from topomap.partition import _metis_ints

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "hostile")
BOMBS = sorted(f for f in os.listdir(HOSTILE) if f.startswith("1_"))

# What the child may take: importing numpy and topomap needs about 150 MB of address space on
# 2 cores (OpenMP and BLAS reserve more per thread on larger machines); a header bomb of the
# issue asked for 3-15 GB.
ADDRESS_SPACE = 1 << 30
# The peak of this process image: VmHWM of /proc/self/status.  Not ru_maxrss, which Linux keeps
# across execve, so a child forked from a large pytest process would report the parent's size.
PEAK = """
def peak_rss_mb():
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024
"""
CHILD = PEAK + """
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
import topomap as tm
from topomap.cli import main
start = time.perf_counter()
try:
    {call}
    outcome = "read"
except tm.FormatError as exc:
    outcome = "FormatError: " + str(exc)
print(json.dumps({{"outcome": outcome, "seconds": time.perf_counter() - start,
                  "peak_mb": peak_rss_mb()}}))
"""


def run_limited(call: str) -> dict:
    """Run ``call`` (a statement) in a fresh Python under RLIMIT_AS; its outcome, time and peak RSS."""
    proc = subprocess.run([sys.executable, "-c", CHILD.format(limit=ADDRESS_SPACE, call=call)],
                          capture_output=True, text=True, timeout=120, cwd=HOSTILE)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]) | {"stderr": proc.stderr}


@pytest.mark.parametrize("name", BOMBS)
def test_header_bombs_are_refused_fast_and_small(name):
    """Each tiny file of issue 19 item 1 asked for gigabytes; now a FormatError naming the file
    and the line of the declaration, in under a second and 200 MB."""
    got = run_limited(f"tm.io.read({name!r})")
    assert got["outcome"].startswith(f"FormatError: {name}:"), got
    assert got["seconds"] < 1.0, got
    assert got["peak_mb"] < 200, got


@pytest.mark.parametrize("name", BOMBS)
def test_header_bombs_through_the_cli(name):
    """The same files through ``topomap pattern``: exit 2 and one line on stderr, within the limits."""
    got = run_limited(f"assert main(['pattern', {name!r}]) == 2")
    lines = got["stderr"].strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"topomap pattern: error: {name}:"), got["stderr"]
    assert got["seconds"] < 1.0 and got["peak_mb"] < 200, got


def test_declared_processes_are_bounded_by_entries_plus_max_processes(tmp_path):
    """One entry names 2 processes; max_processes=10 allows 10 more: n = 12 reads, n = 13 does not."""
    for n, ok in ((12, True), (13, False)):
        for ext, text in ((".csv", f"# n={n}\n0,1,5\n"),
                          (".mtx", f"%%MatrixMarket matrix coordinate integer general\n{n} {n} 1\n1 2 5\n"),
                          (".tmprof", f"# topomap-pmpi 1\n# ranks: {n}\n# columns: src dst bytes msgs coll_bytes "
                                      "coll_msgs\n0 1 5 1 0 0\n")):
            path = tmp_path / f"p{ext}"
            path.write_text(text)
            if ok:
                assert tm.io.read(path, max_processes=10).n == n
            else:
                with pytest.raises(FormatError, match=r"13 processes.*max_processes=10"):
                    tm.io.read(path, max_processes=10)


def test_default_limit_lets_honest_large_headers_through(tmp_path):
    """The default leaves room for MAX_PROCESSES silent processes, and a caller may allow more."""
    path = tmp_path / "n.csv"
    path.write_text(f"# n={tm.io.MAX_PROCESSES}\n0,1,5\n")
    assert tm.io.read(path).n == tm.io.MAX_PROCESSES
    path.write_text(f"# n={tm.io.MAX_PROCESSES + 3}\n0,1,5\n")
    with pytest.raises(FormatError, match="max_processes"):
        tm.io.read(path)
    assert tm.io.read(path, max_processes=tm.io.MAX_PROCESSES + 1).n == tm.io.MAX_PROCESSES + 3


def test_counts_declared_beyond_the_file_name_the_size_line(tmp_path):
    path = tmp_path / "m.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n% c\n2 2 1000000\n1 2 3\n")
    with pytest.raises(FormatError, match=r"m.mtx:3: declares 1000000 entries but only 1 fit in the 6 bytes"):
        tm.io.read(path)


def test_dev_zero_is_refused_at_its_first_chunk(tmp_path):
    """An endless device: the first NUL byte ends the reading (every text format refuses NUL)."""
    for ext in (".csv", ".mtx", ".graph", ".grf", ".mat", ".tmprof"):
        link = tmp_path / f"zero{ext}"
        link.symlink_to("/dev/zero")
        with pytest.raises(FormatError, match=r":1: NUL byte|not a topomap profile"):
            tm.io.read(link)


def test_endless_text_stream_stops_at_the_limit(tmp_path, monkeypatch):
    """A FIFO fed forever with valid lines: the reader stops after MAX_STREAM_BYTES."""
    monkeypatch.setattr(_text, "MAX_STREAM_BYTES", 1 << 20)
    fifo = tmp_path / "endless.csv"
    os.mkfifo(fifo)

    def feed() -> None:
        try:
            with open(fifo, "wb") as fh:
                while True:
                    fh.write(b"0,1,5\n" * 4096)
        except (BrokenPipeError, OSError):
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    with pytest.raises(FormatError, match=r"endless.csv: more than 1048576 bytes from a stream"):
        tm.io.read(fifo)
    writer.join(timeout=10)
    assert not writer.is_alive()


def test_a_finite_stream_is_read(tmp_path):
    fifo = tmp_path / "once.csv"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(b"0,1,5\n1,0,7\n"), daemon=True)
    writer.start()
    assert tm.io.read(fifo).to_dense().tolist() == [[0.0, 5.0], [7.0, 0.0]]
    writer.join(timeout=10)


@pytest.mark.parametrize("name, lines", [("3_csv_duplicate_1e308.csv", "line 2 (1e+308), line 3 (1e+308)"),
                                         ("3_matrixmarket_duplicate_1e308.mtx", "line 3 (1e+308), line 4 (1e+308)")])
def test_duplicates_summing_past_the_largest_double_name_their_lines(name, lines):
    with pytest.raises(FormatError, match="the bytes of 0 -> 1 overflow") as info:
        tm.io.read(os.path.join(HOSTILE, name))
    assert lines in str(info.value)


def test_symmetric_matrixmarket_mirror_overflow_names_the_line(tmp_path):
    """A symmetric file's entry counts both ways; two stored copies of (2, 1) overflow on both."""
    path = tmp_path / "s.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1e308\n2 1 1e308\n")
    with pytest.raises(FormatError, match=r"line 3 \(1e\+308\), line 4 \(1e\+308\)"):
        tm.io.read(path)


def test_from_edges_and_symmetric_refuse_sums_that_overflow():
    with pytest.raises(PatternError, match=r"bytes of 0 -> 1 overflow: entry 0 \(1e\+308\), entry 2 \(1e\+308\)"):
        tm.Pattern.from_edges([0, 1, 0], [1, 0, 1], [1e308, 1.0, 1e308])
    with pytest.raises(PatternError, match=r"msgs of 0 -> 1 overflow"):
        tm.Pattern.from_edges([0, 0], [1, 1], [1.0, 1.0], [1e308, 1e308])
    big = tm.Pattern.from_edges([0, 1], [1, 0], [1e308, 1e308])
    with pytest.raises(PatternError, match=r"symmetric\(\): the bytes of 0 -> 1 overflow: 0 -> 1 \(1e\+308\), "
                                           r"1 -> 0 \(1e\+308\)"):
        big.symmetric()
    # just below the limit still sums
    half = float(np.finfo(np.float64).max) / 2
    assert tm.Pattern.from_edges([0, 0], [1, 1], [half, half]).bytes.tolist() == [2 * half]


def test_metrics_report_overflow_instead_of_inf():
    pat = tm.Pattern.from_edges([0, 1], [1, 0], [1e308, 1e308])
    with pytest.raises(PatternError, match="hop_bytes overflows the double range"):
        tm.evaluate(pat, tm.machine("torus:4"), [0, 2])
    ev_pat = tm.Pattern.from_edges([0, 1], [1, 0], [1e308, 1e308])
    with pytest.raises(PatternError, match="overflows the double range"):
        tm.Evaluator(ev_pat, tm.machine("torus:4"), [0, 2]).metrics()
    # one hop: 1e308 x 1 hop per direction sums to 2e308, past the range; 1e307 does not
    fine = tm.evaluate(tm.Pattern.from_edges([0, 1], [1, 0], [1e307, 1e307]), tm.machine("torus:4"), [0, 1])
    assert fine.hop_bytes == 2e307


@pytest.mark.parametrize("name, where, what", [
    ("4_metis_not_symmetric.graph", ":2:", "edge (1, 2) weighs 5 at vertex 1 but 7 at vertex 2"),
    ("4_metis_duplicate_neighbour.graph", ":2:", "vertex 1 lists neighbour 2 twice"),
    ("4_scotch_one_way_arc.grf", ":4:", "vertex 0 lists neighbour 1 but vertex 1 does not list 0"),
    ("4_scotch_duplicate_neighbour.grf", ":4:", "vertex 0 lists neighbour 1 twice"),
])
def test_undirected_formats_are_checked(name, where, what):
    path = os.path.join(HOSTILE, name)
    with pytest.raises(FormatError) as info:
        tm.io.read(path)
    assert str(info.value).startswith(path + where) and what in str(info.value), str(info.value)


def test_undirected_check_can_be_turned_off():
    one_way = tm.io.read(os.path.join(HOSTILE, "4_scotch_one_way_arc.grf"), check_symmetry=False)
    assert one_way.to_dense().tolist() == [[0.0, 1.0], [0.0, 0.0]]
    skewed = tm.io.read(os.path.join(HOSTILE, "4_metis_not_symmetric.graph"), check_symmetry=False)
    assert skewed.to_dense().tolist() == [[0.0, 5.0], [7.0, 0.0]]
    doubled = tm.io.read(os.path.join(HOSTILE, "4_metis_duplicate_neighbour.graph"), check_symmetry=False)
    assert doubled.to_dense().tolist() == [[0.0, 2.0], [2.0, 0.0]]


def test_undirected_check_with_comments_and_weights(tmp_path):
    """The slow path (comment lines) names the same faults with the file's own line numbers."""
    path = tmp_path / "c.graph"
    path.write_text("% a comment\n3 2 1\n% vertex 1\n2 4\n1 4 3 2\n2 3\n")
    with pytest.raises(FormatError, match=r"c.graph:5: edge \(2, 3\) weighs 2 at vertex 2 but 3 at vertex 3"):
        tm.io.read(path)
    path.write_text("% a comment\n3 2 1\n% vertex 1\n2 4\n1 4 3 2\n2 2\n")
    assert tm.io.read(path).to_dense().tolist() == [[0, 4, 0], [4, 0, 2], [0, 2, 0]]


def test_ompi_bytes_without_messages_is_refused():
    path = os.path.join(HOSTILE, "4_ompi_bytes_without_msgs", "prof.0.prof")
    with pytest.raises(FormatError, match=r"prof.0.prof:2: 100 bytes in 0 messages \(bytes without messages\)"):
        tm.io.read(path)


def test_csv_refuses_fractional_message_counts():
    with pytest.raises(FormatError, match=r"4_csv_half_message.csv:2: msgs 0.5 is not a whole number"):
        tm.io.read(os.path.join(HOSTILE, "4_csv_half_message.csv"))


@pytest.mark.parametrize("name, line, token", [("4_tmprof_int64_overflow.tmprof", 4, "9223372036854775808"),
                                               ("2_tmprof_bytes_past_int64.tmprof", 4, "99999999999999999999")])
def test_tmprof_counts_past_int64_are_overflow(name, line, token):
    with pytest.raises(FormatError, match=f"{name}:{line}: {token} is out of the 64-bit integer range"):
        tm.io.read(os.path.join(HOSTILE, name))


def test_tmprof_columns_sum_as_doubles(tmp_path):
    """Two int64 maxima for one pair (p2p + collectives) add up, not wrap to a negative volume."""
    top = 2**63 - 1
    path = tmp_path / "sum.tmprof"
    path.write_text(f"# topomap-pmpi 1\n# ranks: 2\n# columns: src dst bytes msgs coll_bytes coll_msgs\n"
                    f"0 1 {top} 1 {top} 1\n")
    pat = tm.io.read(path)
    assert pat.bytes.tolist() == [2.0 * top] and pat.msgs.tolist() == [2.0]


def test_tmprof_header_values_name_their_line():
    with pytest.raises(FormatError, match=r"2_tmprof_seconds_abc.tmprof:3: 'seconds: abc' is not a number"):
        tm.io.read(os.path.join(HOSTILE, "2_tmprof_seconds_abc.tmprof"))


EXTREME = st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(EXTREME, st.sampled_from([1e-300, 5e-324, 1.0, 1e300, 1.7e308])), min_size=1,
                max_size=40), st.sampled_from([0, 1]))
def test_metis_ints_scale_any_weights(weights, minimum):
    """Whatever the range: integers of at least ``minimum``, the order kept, the total near 2^30
    (each rounded up by at most 1 or raised to ``minimum``), the largest weight near 2^30 / share."""
    w = np.array(weights)
    out = _metis_ints(w, minimum)
    assert out.dtype == np.int64 and (out >= minimum).all()
    order = np.argsort(w, kind="stable")
    assert (np.diff(out[order]) >= 0).all()
    if not (np.array_equal(w, np.round(w)) and w.max() < 2**31 and w.sum() < 2**31):
        assert out.sum() <= 2**30 + w.size * max(1, minimum)
        top = w.max()
        assert abs(out.max() - 2**30 * 1.0 / (w / top).sum()) <= 1


def test_metis_ints_keeps_small_integers():
    assert _metis_ints(np.array([3.0, 0.0, 7.0]), 0).tolist() == [3, 0, 7]
    assert _metis_ints(np.array([1e-300, 1e-300]), 1).tolist() == [2**29, 2**29]
    assert _metis_ints(np.array([1e300, 1e-300]), 1).tolist() == [2**30, 1]


@pytest.mark.skipif(gmap_program() is None, reason="Scotch's gmap is not installed")
@pytest.mark.parametrize("weight", [1e-300, 5e-324, 1e-10, 1e300, 8e307])
def test_scotch_mapper_on_extreme_weights(weight):
    """Issue 19 item 5: tiny valid weights made the scotch mapper cast inf to an integer."""
    pat = tm.Pattern.from_edges([0, 1], [1, 0], [weight] * 2, n=2)
    mapping = tm.map(pat, tm.machine("torus:2").allocate(2), method="scotch")
    assert sorted(mapping.pe_of.tolist()) == [0, 1]


WRITE_CUT = """
import os, resource, signal, sys
import numpy as np
import topomap as tm
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
big = tm.Pattern.from_edges(np.arange(5000), (np.arange(5000) + 1) % 5000, 7.0).symmetric()
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
for path in sys.argv[1:]:
    try:
        if path.endswith("map.txt"):
            tm.io.write_mapping(tm.Mapping(np.arange(5000)), path)
        else:
            tm.io.write(big, path)
        print(path, "written")
    except tm.FormatError as exc:
        print(path, "refused:", exc)
"""


def test_writers_killed_mid_way_keep_the_previous_file(tmp_path):
    """A write cut short by the file size limit (as by a full disk) leaves the old file as it was."""
    small = tm.Pattern.from_edges([0, 1], [1, 0], [3.0, 3.0])
    paths = [str(tmp_path / f"p{ext}") for ext in (".csv", ".mtx", ".graph", ".grf", ".mat", ".npy", ".tmprof")]
    before = {}
    for path in paths:
        tm.io.write(small, path)
        before[path] = open(path, "rb").read()
    mapping = str(tmp_path / "map.txt")
    tm.io.write_mapping(tm.Mapping([1, 0]), mapping)
    before[mapping] = open(mapping, "rb").read()
    proc = subprocess.run([sys.executable, "-c", WRITE_CUT] + paths + [mapping], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    for path in paths + [mapping]:
        assert f"{path} refused: {path}: cannot write (" in proc.stdout, proc.stdout
        assert open(path, "rb").read() == before[path]
    assert sorted(os.listdir(tmp_path)) == sorted(os.path.basename(p) for p in paths + [mapping])  # no temporaries


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.sampled_from([1.0, 2.0, 0.5, 1e300])),
                min_size=1, max_size=20), st.booleans())
def test_fingerprint_agrees_with_the_exact_check(entries, mirror):
    """The fast symmetry test of METIS/Scotch reading (a keyed multiset fingerprint) and the exact
    one (two sorts) agree on patterns with and without mirrors."""
    src, dst, w = (np.array(c) for c in zip(*entries))
    pat = tm.Pattern.from_edges(src, dst, w, n=6)
    if mirror:
        pat = tm.Pattern.from_edges(np.r_[src, dst], np.r_[dst, src], np.r_[w, w], n=6)
    exact = _undirected.unmatched(pat.senders(), pat.indices, pat.bytes, pat.n) is None
    assert _undirected.is_undirected(pat) == exact
    if mirror:
        assert exact
