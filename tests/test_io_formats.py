"""Pattern readers and writers (topomap.io): real fixtures, golden and hand-worked cases,
cross-checks against the real tools (scipy, networkx, pandas, Scotch, Open MPI, otf2) and
against slow line-by-line reference parsers written here from the format descriptions."""

import os
import re
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from topomap import FormatError
from topomap.cli import main

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "patterns")
OMPI = os.path.join(DATA, "ompi")
DUMPI = os.path.join(DATA, "dumpi")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


def fails(func, path, where, what):
    """``func()`` raises a FormatError starting with ``path + where`` and containing ``what``."""
    with pytest.raises(FormatError) as info:
        func()
    msg = str(info.value)
    assert msg.startswith(f"{path}{where}"), msg
    assert what in msg, msg


def dense_of(triples, n):
    out = np.zeros((n, n))
    for s, d, b in triples:
        if s != d:
            out[s, d] += b
    return out


# ====================================================================== Open MPI monitoring

def program_pattern(p=4):
    """What tests/data/patterns/ompi/pattern.c sends, per kind: {kind: [(src, dst, bytes, msgs)]}."""
    e, s, r = [], [], []
    for rank in range(p):
        right, left = (rank + 1) % p, (rank - 1) % p
        e += [(rank, right, 3 * 1024, 3), (rank, rank ^ 1, 2 * 100 * 8, 2), (rank, rank ^ 2, 2 * 50 * 8, 2),
              (rank, p - 1 - rank, 32 * 8, 1)]
        s += [(rank, right, 10 * 8, 1), (rank, left, 0, 1)]     # the get's request carries no data
        r += [(left, rank, 20 * 8, 1)]                          # data flows from the get's target
    return {"E": e, "S": s, "R": r}


def as_dense(entries, n, col):
    out = np.zeros((n, n))
    for entry in entries:
        out[entry[0], entry[1]] += entry[col]
    return out


def ref_prof(files, kinds):
    """profile2mat.pl's line regex, R lines transposed: (bytes, msgs) dense matrices."""
    n = len(files)
    byts, msgs = np.zeros((n, n)), np.zeros((n, n))
    for f in files:
        for line in open(f):
            m = re.match(r"^(E|I|S|R|C)\s+(\d+)\s+(\d+)\s+(\d+)\D+(\d+)", line)
            if m and m.group(1) in kinds:
                a, b = int(m.group(2)), int(m.group(3))
                if m.group(1) == "R":
                    a, b = b, a
                if a != b and int(m.group(4)):
                    byts[a, b] += int(m.group(4))
                    msgs[a, b] += int(m.group(5))
    return byts, msgs


def fixture_files(directory=OMPI):
    return [os.path.join(directory, f"prof.{r}.prof") for r in range(4)]


def test_ompi_fixture_user_traffic_is_the_program():
    expected = program_pattern()
    pat = tm.io.read(os.path.join(OMPI, "prof.2.prof"), kinds="E")
    assert np.array_equal(pat.to_dense(), as_dense(expected["E"], 4, 2))
    msgs = np.zeros((4, 4))
    msgs[pat.senders(), pat.indices] = pat.msgs
    assert np.array_equal(msgs, as_dense(expected["E"], 4, 3))
    assert pat.provenance["source"] == "ompi-monitoring" and pat.provenance["files"] == 4
    assert pat.provenance["file"] == os.path.join(OMPI, "prof*.prof").replace("prof*", "prof.*")


def test_ompi_fixture_one_sided_and_default_kinds():
    expected = program_pattern()
    onesided = tm.io.read_ompi_monitoring(os.path.join(OMPI, "prof"), kinds=["S", "R"])
    want = as_dense(expected["S"], 4, 2) + as_dense(expected["R"], 4, 2)
    assert np.array_equal(onesided.to_dense(), want)
    assert onesided.provenance["zero_byte_msgs"] == 4.0      # one data-less request per MPI_Get
    default = tm.io.read_ompi_monitoring(os.path.join(OMPI, "prof.0.prof"))
    prov = default.provenance
    assert prov["kinds"] == "E,I"
    assert prov["bytes_by_kind"]["E"] == sum(b for _, _, b, _ in expected["E"])
    assert prov["bytes_by_kind"]["I"] > 0                    # MPI_Win_create and MPI_Allreduce
    assert default.total_bytes == prov["bytes_by_kind"]["E"] + prov["bytes_by_kind"]["I"]
    assert prov["communicators"]["MPI_COMM_WORLD"]["ranks_reporting"] == 4
    for kinds in ("E", "E,I", "S,R", "C", "E,I,S,R,C"):
        byts, msgs = ref_prof(fixture_files(), kinds.split(","))
        pat = tm.io.read_ompi_monitoring(fixture_files(), kinds=kinds)
        assert np.array_equal(pat.to_dense(), byts), kinds
        got = np.zeros((4, 4))
        got[pat.senders(), pat.indices] = pat.msgs
        assert np.array_equal(got, msgs), kinds


def _monitoring_available():
    if not (shutil.which("mpicc") and shutil.which("mpirun") and shutil.which("ompi_info")):
        return False
    out = subprocess.run(["ompi_info", "--param", "pml", "monitoring", "--level", "9"], capture_output=True,
                         text=True)
    return "pml_monitoring_enable" in out.stdout


@pytest.mark.skipif(not _monitoring_available(), reason="needs Open MPI with the monitoring PML")
def test_ompi_fixture_regenerated_by_a_real_run(tmp_path):
    exe = str(tmp_path / "pattern")
    subprocess.run(["mpicc", "-O1", "-o", exe, os.path.join(OMPI, "pattern.c")], check=True)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    subprocess.run(["mpirun", "--oversubscribe", "-np", "4", "--mca", "pml_monitoring_enable", "2",
                    "--mca", "pml_monitoring_enable_output", "3", "--mca", "pml_monitoring_filename",
                    str(tmp_path / "prof"), exe], check=True, env=env, timeout=300, capture_output=True)
    fresh = str(tmp_path / "prof")
    for kinds in ("E", "S,R"):
        a = tm.io.read_ompi_monitoring(fresh, kinds=kinds)
        b = tm.io.read_ompi_monitoring(os.path.join(OMPI, "prof"), kinds=kinds)
        assert np.array_equal(a.to_dense(), b.to_dense()) and np.array_equal(a.msgs, b.msgs), kinds
    assert tm.io.read_ompi_monitoring(fresh, kinds="I").total_bytes > 0


def _copy_fixture(tmp_path):
    for f in fixture_files():
        shutil.copy(f, tmp_path)
    return [str(tmp_path / f"prof.{r}.prof") for r in range(4)]


def _edit(path, old, new, count=1):
    text = open(path).read()
    assert old in text
    open(path, "w").write(text.replace(old, new, count))


def _line_of(path, needle):
    return next(i for i, line in enumerate(open(path), 1) if needle in line)


def test_ompi_errors_name_file_and_line(tmp_path):
    files = _copy_fixture(tmp_path)
    _edit(files[1], "E\t1\t0\t1600 bytes", "E\t1\t0\t16x0 bytes")
    fails(lambda: tm.io.read(files[0]), files[1], f":{_line_of(files[1], '16x0')}:", "not a pml_monitoring line")
    _edit(files[1], "16x0", "1600")
    _edit(files[1], "E\t1\t0\t1600", "E\t2\t0\t1600")
    line = _line_of(files[1], "E\t2\t0")
    fails(lambda: tm.io.read(files[0]), files[1], f":{line}:", "the file is rank 1's, but this line is rank 2's")
    _edit(files[1], "E\t2\t0\t1600", "E\t1\t0\t1600")
    _edit(files[3], "E\t3\t1\t800", "E\t3\t9\t800")
    line = _line_of(files[3], "E\t3\t9")
    fails(lambda: tm.io.read(files[0]), files[3], f":{line}:", "peer 9 is out of range: 4 ranks have files (missing files?)")
    _edit(files[3], "E\t3\t9\t800", "E\t3\t1\t-800")
    fails(lambda: tm.io.read(files[0]), files[3], f":{_line_of(files[3], '-800')}:", "not a pml_monitoring line")


def test_ompi_inconsistent_rank_sets(tmp_path):
    files = _copy_fixture(tmp_path)
    _edit(files[2], "D\tMPI_COMM_WORLD\tprocs: 0,1,2,3", "D\tMPI_COMM_WORLD\tprocs: 0,1,2")
    line = _line_of(files[2], "D\tMPI_COMM_WORLD")
    fails(lambda: tm.io.read(files[0]), files[2], f":{line}:", "MPI_COMM_WORLD has 3 ranks but 4 .prof files were found")
    _edit(files[2], "procs: 0,1,2\n", "procs: 0,1,2,3,4\n")
    fails(lambda: tm.io.read(files[0]), files[2], ":", "MPI_COMM_WORLD lists rank 4, but only 4 ranks have files")
    _edit(files[2], "procs: 0,1,2,3,4\n", "procs: 0,1,2,3\n")
    os.remove(files[2])
    fails(lambda: tm.io.read(files[0]), str(tmp_path / "prof*.prof").replace("prof*", "prof.*"), ":",
          "3 per-rank files but rank 2 has none")
    shutil.copy(files[1], tmp_path / "prof.01.prof")
    shutil.copy(files[3], tmp_path / "prof.2.prof")
    fails(lambda: tm.io.read(files[0]), str(tmp_path), "/prof.", "both hold rank 1")


def test_ompi_communicator_sections(tmp_path):
    files = _copy_fixture(tmp_path)
    text = open(files[0]).read()
    open(files[0], "w").write(text[:text.rindex("A2A")])
    fails(lambda: tm.io.read(files[0]), files[0], ": truncated", "has no A2A line")
    _copy_fixture(tmp_path)
    _edit(files[1], "A2O\t1\t", "A2A\t1\t")
    fails(lambda: tm.io.read(files[1]), files[1], ":", "A2A line where A2O was expected")
    _copy_fixture(tmp_path)
    _edit(files[3], "O2A\t3\t", "O2A\t2\t")
    fails(lambda: tm.io.read(files[3]), files[3], ":", "the file is rank 3's, but this line is rank 2's")


def test_ompi_old_release_header_and_unresolved_rank(tmp_path):
    # before Open MPI 4.0 communicator sections started with "C"; "-1" and "(null)" appear when
    # a communicator's ranks were not resolved yet
    a = write(tmp_path, "run.0.prof", "# POINT TO POINT\nE\t0\t1\t10 bytes\t1 msgs sent\n"
              "C\tMPI_COMM_WORLD\tprocs: 0,1\nO2A\t0\t5 bytes\t1 msgs sent\nA2O\t0\t0 bytes\t0 msgs sent\n"
              "A2A\t0\t0 bytes\t0 msgs sent\nD\tMPI COMMUNICATOR 3 DUP FROM 0\tprocs: (null)\n"
              "O2A\t-1\t0 bytes\t0 msgs sent\nA2O\t-1\t0 bytes\t0 msgs sent\nA2A\t-1\t7 bytes\t1 msgs sent\n")
    write(tmp_path, "run.1.prof", "")
    pat = tm.io.read(a)
    assert pat.to_dense().tolist() == [[0, 10], [0, 0]]
    comms = pat.provenance["communicators"]
    assert comms["MPI_COMM_WORLD"]["o2a_bytes"] == 5 and comms["MPI COMMUNICATOR 3 DUP FROM 0"]["a2a_msgs"] == 1


@pytest.mark.parametrize("kinds, what", [("E,X", "must be letters of E,I,S,R,C"), ("", "must be letters"),
                                         (["E", "EI"], "must be letters")])
def test_ompi_bad_kinds(kinds, what):
    with pytest.raises(FormatError, match=what):
        tm.io.read_ompi_monitoring(os.path.join(OMPI, "prof"), kinds=kinds)


def test_ompi_binary_garbage(tmp_path):
    files = _copy_fixture(tmp_path)
    with open(files[2], "ab") as fh:
        fh.write(b"\xff\xfe garbage\n")
    fails(lambda: tm.io.read(files[0]), files[2], f":{sum(1 for _ in open(files[2], 'rb'))}:",
          "not UTF-8 text (binary file?)")


@st.composite
def prof_runs(draw):
    """Random monitoring runs: per rank, lines of random kinds, bytes, counts, histograms, sections."""
    n = draw(st.integers(1, 5))
    texts = []
    for rank in range(n):
        lines = ["# POINT TO POINT"]
        for _ in range(draw(st.integers(0, 6))):
            kind = draw(st.sampled_from("EISRC"))
            peer = draw(st.integers(0, n - 1))
            hist = draw(st.sampled_from(["", "\t" + ",".join(["0"] * 65 + ["1"])]))
            nbytes = draw(st.integers(0, 10**12))
            lines.append(f"{kind}\t{rank}\t{peer}\t{nbytes} bytes\t"
                         f"{draw(st.integers(1 if nbytes else 0, 99))} msgs sent{hist}")  # bytes need messages
        if draw(st.booleans()):
            lines += [f"D\tMPI_COMM_WORLD\tprocs: {','.join(map(str, range(n)))}",
                      f"O2A\t{rank}\t3 bytes\t1 msgs sent", f"A2O\t{rank}\t0 bytes\t0 msgs sent",
                      f"A2A\t{rank}\t9 bytes\t2 msgs sent"]
        texts.append("\n".join(lines) + "\n")
    kinds = draw(st.lists(st.sampled_from("EISRC"), min_size=1, unique=True))
    return texts, kinds


@given(prof_runs())
def test_ompi_matches_the_profile2mat_reference(tmp_path_factory, run):
    texts, kinds = run
    d = tmp_path_factory.mktemp("prof")
    files = [write(d, f"p.{r}.prof", t) for r, t in enumerate(texts)]
    byts, msgs = ref_prof(files, kinds)
    pat = tm.io.read(files[-1], kinds=",".join(kinds))
    assert np.array_equal(pat.to_dense(), byts)
    got = np.zeros_like(msgs)
    got[pat.senders(), pat.indices] = pat.msgs
    assert np.array_equal(got, msgs)


# ====================================================================== MatrixMarket

def ref_mm(path):
    """Line-by-line MatrixMarket coordinate reader (general/symmetric, real/integer/pattern)."""
    lines = [l for l in open(path).read().splitlines()]
    field, symmetry = lines[0].split()[3:5]
    body = [l for l in lines[1:] if l.strip() and not l.lstrip().startswith("%")]
    n = int(body[0].split()[0])
    out = np.zeros((n, n))
    for line in body[1:]:
        parts = line.split()
        i, j = int(parts[0]) - 1, int(parts[1]) - 1
        v = 1.0 if field == "pattern" else float(parts[2])
        if i != j:
            out[i, j] += v
            if symmetry == "symmetric":
                out[j, i] += v
    return out


@st.composite
def square_matrices(draw, integer=False, symmetric=False, max_n=7):
    n = draw(st.integers(1, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mask = rng.random((n, n)) < draw(st.floats(0.0, 1.0))
    vals = rng.integers(1, 10**6, (n, n)).astype(float) if integer else rng.random((n, n)) * 10.0**rng.integers(-3, 9)
    m = np.where(mask, vals, 0.0)
    if symmetric:
        m = np.tril(m, -1)
        m = m + m.T
    np.fill_diagonal(m, 0.0)
    return m


@given(square_matrices())
def test_mm_round_trip_and_scipy_reads_it(tmp_path_factory, m):
    import scipy.io
    path = str(tmp_path_factory.mktemp("mm") / "c.mtx")
    tm.io.write(tm.Pattern.from_dense(m), path)
    assert np.array_equal(tm.io.read(path).to_dense(), m)
    assert np.array_equal(scipy.io.mmread(path).toarray(), m)
    assert np.array_equal(ref_mm(path), m)


@given(square_matrices(integer=True, symmetric=True), st.sampled_from(["general", "symmetric"]),
       st.sampled_from(["real", "integer", "pattern"]))
def test_mm_reads_what_scipy_writes(tmp_path_factory, m, symmetry, field):
    import scipy.io
    import scipy.sparse as sp
    path = str(tmp_path_factory.mktemp("mm") / "s.mtx")
    scipy.io.mmwrite(path, sp.coo_matrix(m), field=field, symmetry=symmetry)
    pat = tm.io.read(path)
    assert np.array_equal(pat.to_dense(), ref_mm(path))
    want = (m != 0).astype(float) if field == "pattern" else m
    assert np.array_equal(pat.to_dense(), want)
    assert pat.provenance["symmetry"] == symmetry
    assert pat.provenance["field"] == (field if m.any() else pat.provenance["field"])  # scipy: empty -> real


def test_mm_hand_worked_symmetric_with_diagonal_and_comments(tmp_path):
    path = write(tmp_path, "h.mtx", "%%MatrixMarket matrix coordinate integer symmetric\n% comment\n\n"
                 "3 3 4\n1 1 9\n2 1 5\n% between entries\n3 2 1\n3 3 4\n")
    pat = tm.io.read(path)
    assert pat.to_dense().tolist() == [[0, 5, 0], [5, 0, 1], [0, 1, 0]]
    assert pat.provenance["dropped_self_bytes"] == 13.0


@pytest.mark.parametrize("text, where, what", [
    ("", ":", "empty file"),
    ("%MatrixMarket matrix coordinate real general\n1 1 0\n", ":1:", "not a MatrixMarket file"),
    ("%%MatrixMarket matrix coordinate real\n1 1 0\n", ":1:", "banner must read"),
    ("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", ":1:", "'array' format is not supported"),
    ("%%MatrixMarket matrix coordinate complex general\n1 1 0\n", ":1:", "field 'complex' is not supported"),
    ("%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", ":1:", "symmetry 'hermitian' is not supported"),
    ("%%MatrixMarket matrix coordinate real general\n% c\n", ":", "no size line after the banner"),
    ("%%MatrixMarket matrix coordinate real general\n2 x 1\n", ":2:", "size line must be"),
    ("%%MatrixMarket matrix coordinate real general\n2 3 1\n1 2 1\n", ":2:", "2 x 3; a communication matrix must be square"),
    ("%%MatrixMarket matrix coordinate real general\n0 0 0\n", ":2:", "0 processes"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 3\n1 2 1\n2 1 1\n", ":", "declares 3 entries but only 2"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1\n2 1 1\n", ":4:", "more entries than the 1"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 1\n0 2 1\n", ":3:", "index (0, 2) is outside the 2 x 2"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1\n2 3 1\n", ":4:", "index (2, 3) is outside"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1.5 2 1\n", ":3:", "is not a pair of integers"),
    ("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1.5 2 1\n", ":3:", "'1.5' is not an integer"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1\n2 1 -3e2\n", ":4:", "value '-3e2' is negative"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 nan\n", ":3:", "value 'nan' is negative, NaN"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2\n", ":3:", "2 numbers where 3 (row column value)"),
    ("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2 5\n", ":3:", "3 numbers where 2 (row column)"),
    ("%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1\n", ":3:", "entry (1, 2) is above the diagonal"),
    (b"%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 \xff\n", ":3:", "not UTF-8 text"),
])
def test_mm_errors(tmp_path, text, where, what):
    path = write(tmp_path, "bad.mtx", text)
    fails(lambda: tm.io.read(path), path, where, what)


def test_mm_through_scotch_gcv(tmp_path):
    if not shutil.which("gcv"):
        pytest.skip("Scotch gcv not installed")
    m = np.array([[0, 3, 0, 1], [3, 0, 2, 0], [0, 2, 0, 0], [1, 0, 0, 0]], dtype=float)
    mtx = str(tmp_path / "c.mtx")
    tm.io.write(tm.Pattern.from_dense(m), mtx)
    grf = str(tmp_path / "c.grf")
    subprocess.run(["gcv", "-im", "-os", mtx, grf], check=True, capture_output=True)
    assert np.array_equal(tm.io.read(grf).to_dense(), (m != 0).astype(float))


# ====================================================================== METIS

def ref_metis(path):
    """Line-by-line METIS reader from the manual's description."""
    lines = [l for l in open(path).read().split("\n") if not l.startswith("%")]
    head = lines[0].split()
    n = int(head[0])
    fmt = head[2].rjust(3, "0") if len(head) > 2 else "000"
    ncon = (int(head[3]) if len(head) > 3 else 1) if fmt[1] == "1" else 0
    skip = int(fmt[0]) + ncon
    out = np.zeros((n, n))
    for u, line in enumerate(lines[1:n + 1]):
        vals = [int(t) for t in line.split()][skip:]
        pairs = zip(vals[::2], vals[1::2]) if fmt[2] == "1" else ((v, 1) for v in vals)
        for v, w in pairs:
            if v - 1 != u:
                out[u, v - 1] += w
    return out


def metis_text(m, fmt, ncon, rng):
    """A METIS file of symmetric integer matrix m, with comments and the fmt's vertex fields."""
    n = m.shape[0]
    lines = ["% generated", f"{n} {int(np.count_nonzero(m)) // 2} {fmt}" + (f" {ncon}" if ncon else "")]
    for u in range(n):
        parts = []
        if fmt.rjust(3, "0")[0] == "1":
            parts.append(str(rng.integers(1, 9)))
        parts += [str(rng.integers(0, 9)) for _ in range(ncon or (1 if fmt.rjust(3, "0")[1] == "1" else 0))]
        for v in np.flatnonzero(m[u]):
            parts.append(str(v + 1))
            if fmt.endswith("1"):
                parts.append(str(int(m[u, v])))
        if rng.random() < 0.3:
            lines.append("%  a comment between vertex lines")
        lines.append(" ".join(parts))
    return "\n".join(lines) + "\n"


@given(square_matrices(integer=True, symmetric=True), st.sampled_from(["1", "001", "011", "111", "101"]),
       st.integers(0, 3), st.integers(0, 2**32 - 1))
def test_metis_matches_reference(tmp_path_factory, m, fmt, ncon, seed):
    ncon = ncon if fmt.rjust(3, "0")[1] == "1" and ncon else 0
    path = write(tmp_path_factory.mktemp("metis"), "g.graph", metis_text(m, fmt, ncon, np.random.default_rng(seed)))
    pat = tm.io.read(path)
    assert np.array_equal(pat.to_dense(), m)
    assert np.array_equal(ref_metis(path), m)
    assert ("ignored" in pat.provenance) == (fmt.rjust(3, "0")[:2] != "00")


@given(square_matrices(integer=True, symmetric=True))
def test_metis_write_read_round_trip(tmp_path_factory, m):
    path = str(tmp_path_factory.mktemp("metis") / "g.graph")
    pat = tm.Pattern.from_dense(m)
    tm.io.write(pat, path)
    assert np.array_equal(tm.io.read(path).to_dense(), m)
    assert np.array_equal(ref_metis(path), m)


def test_metis_manual_example_and_unit_weights(tmp_path):
    # the 7-vertex, 11-edge unweighted graph of the METIS manual's graph-format figure
    path = write(tmp_path, "manual.graph", "7 11\n5 3 2\n1 3 4\n5 4 2 1\n2 3 6 7\n1 3 6\n5 4 7\n6 4\n")
    pat = tm.io.read(path)
    assert pat.nnz == 22 and pat.total_bytes == 22.0
    assert np.array_equal(pat.to_dense(), pat.to_dense().T)
    assert sorted(np.flatnonzero(pat.to_dense()[3]) + 1) == [2, 3, 6, 7]
    assert "unit weights" in pat.provenance["counted"]


def test_metis_against_scotch_chaco_output(tmp_path):
    if not (shutil.which("gcv") and shutil.which("gmk_m2")):
        pytest.skip("Scotch tools not installed")
    grf, chaco = str(tmp_path / "m.grf"), str(tmp_path / "m.graph")
    subprocess.run(["gmk_m2", "5", "4", grf], check=True)
    subprocess.run(["gcv", "-is", "-oc", grf, chaco], check=True)
    a, b = tm.io.read(grf), tm.io.read(chaco)
    assert a.n == b.n == 20 and a.nnz == b.nnz == 2 * (4 * 4 + 5 * 3)
    assert np.array_equal(a.to_dense(), b.to_dense())


@pytest.mark.parametrize("text, where, what", [
    ("", ":", "no METIS header line"),
    ("% only comments\n", ":", "no METIS header line"),
    ("3\n", ":1:", "METIS header must be 'n m [fmt [ncon]]'"),
    ("3 x\n", ":1:", "METIS header must be"),
    ("2 1 2\n2\n1\n", ":1:", "fmt '2' must be up to three binary digits"),
    ("2 1 1001\n2\n1\n", ":1:", "fmt '1001' must be"),
    ("2 1 1 2\n2 1\n1 1\n", ":1:", "ncon is given but fmt 001 has no vertex weights"),
    ("2 1 10 0\n1 2\n1 1\n", ":1:", "ncon must be at least 1"),
    ("0 0\n", ":1:", "0 vertices"),
    ("3 1\n2\n1\n", ":", "2 vertex lines after the header, 3 expected"),
    ("2 1\n2\n1\n3\n", ":4:", "more than the 2 vertex lines"),
    ("2 2\n2\n1\n", ":", "the header declares 2 edges (4 adjacency entries) but the vertex lines hold 2"),
    ("2 1\n3\n1\n", ":2:", "neighbour 3 of vertex 1 is outside 1..2"),
    ("2 1\n0\n1\n", ":2:", "neighbour 0 of vertex 1 is outside"),
    ("2 1 1\n2 5\n1\n", ":3:", "vertex 2 has 1 numbers"),
    ("2 1 1\n2 -5\n1 -5\n", ":2:", "edge (1, 2) has negative weight -5"),
    ("2 1 10\n-1 2\n1 1\n", ":2:", "vertex 1 has a negative size or weight"),
    ("2 1\n2.0\n1\n", ":2:", "'2.0' is not an integer"),
    ("% c\n2 1\n% c\n2\n1 x\n", ":5:", "'x' is not an integer"),
    (b"2 1\n2\n\x00\n", ":3:", "NUL byte"),
])
def test_metis_errors(tmp_path, text, where, what):
    path = write(tmp_path, "bad.graph", text)
    fails(lambda: tm.io.read(path), path, where, what)


def test_metis_blank_lines_are_isolated_vertices_and_trailing_blanks_allowed(tmp_path):
    path = write(tmp_path, "g.graph", "4 1\n\n3\n2\n\n\n\n")
    assert tm.io.read(path).to_dense().tolist() == [[0] * 4, [0, 0, 1, 0], [0, 1, 0, 0], [0] * 4]


def test_undirected_writers_refuse_what_they_cannot_hold(tmp_path):
    one_way = tm.Pattern.from_edges([0, 1, 2], [1, 2, 1], [3.0, 4.0, 4.0])
    for ext, fmt in ((".graph", "METIS"), (".grf", "Scotch")):
        path = str(tmp_path / f"x{ext}")
        fails(lambda: tm.io.write(one_way, path), path, ":",
              f"{fmt} graphs are undirected but 0 -> 1 carries 3 bytes and 1 -> 0 0; write pattern.symmetric()")
        reverse_missing = tm.Pattern.from_edges([1, 0, 2], [0, 2, 0], [3.0, 1.0, 1.0])
        fails(lambda: tm.io.write(reverse_missing, path), path, ":", "1 -> 0 carries 3 bytes and 0 -> 1 0")
        unequal = tm.Pattern.from_edges([0, 1], [1, 0], [3.0, 5.0])
        fails(lambda: tm.io.write(unequal, path), path, ":", "0 -> 1 carries 3 bytes and 1 -> 0 5")
        fractional = tm.Pattern.from_edges([0, 1], [1, 0], [1.5, 1.5])
        fails(lambda: tm.io.write(fractional, path), path, ":", "edge weights are integers but 0 -> 1 carries 1.5")
        tm.io.write(one_way.symmetric(), path)
        assert np.array_equal(tm.io.read(path).to_dense(), one_way.symmetric().to_dense())


# ====================================================================== Scotch

def ref_scotch(path):
    """Token-stream Scotch graph reader from the user's guide description."""
    tok = [int(t) for t in open(path).read().split()]
    _, n, _, base, flag = tok[:5]
    labels, weighted, loads = flag // 100 % 10, flag // 10 % 10, flag % 10
    pos, out = 5, np.zeros((n, n))
    for v in range(n):
        vid = v
        if labels:
            vid, pos = tok[pos] - base, pos + 1
        pos += loads
        deg, pos = tok[pos], pos + 1
        for _ in range(deg):
            w = 1
            if weighted:
                w, pos = tok[pos], pos + 1
            end, pos = tok[pos] - base, pos + 1
            if end != vid:
                out[vid, end] += w
    return out


def scotch_text(m, base, flag, rng):
    """Scotch text of symmetric integer m; labels permute the vertex order; random line breaks."""
    n = m.shape[0]
    order = rng.permutation(n) if flag[0] == "1" else np.arange(n)
    toks = ["0", str(n), str(int(np.count_nonzero(m))), str(base), flag]
    for v in order:
        if flag[0] == "1":
            toks.append(str(v + base))
        if flag[2] == "1":
            toks.append(str(rng.integers(0, 5)))
        nbrs = np.flatnonzero(m[v])
        toks.append(str(nbrs.size))
        for u in nbrs:
            if flag[1] == "1":
                toks.append(str(int(m[v, u])))
            toks.append(str(u + base))
    seps = rng.choice([" ", "\t", "\n", "\n\n"], size=len(toks))
    return "".join(t + s for t, s in zip(toks, seps)) + "\n"


@given(square_matrices(integer=True, symmetric=True), st.sampled_from([0, 1]),
       st.sampled_from(["000", "010", "011", "100", "110", "111", "001"]), st.integers(0, 2**32 - 1))
def test_scotch_matches_reference(tmp_path_factory, m, base, flag, seed):
    path = write(tmp_path_factory.mktemp("grf"), "g.grf", scotch_text(m, base, flag, np.random.default_rng(seed)))
    want = m if flag[1] == "1" else (m != 0).astype(float)
    assert np.array_equal(tm.io.read(path).to_dense(), want)
    assert np.array_equal(ref_scotch(path), want)


@given(square_matrices(integer=True, symmetric=True))
def test_scotch_round_trip_and_gtst_accepts(tmp_path_factory, m):
    path = str(tmp_path_factory.mktemp("grf") / "g.grf")
    tm.io.write(tm.Pattern.from_dense(m), path)
    assert np.array_equal(tm.io.read(path).to_dense(), m)
    if shutil.which("gtst"):
        out = subprocess.run(["gtst", path], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        edges = int(re.search(r"S\tEdge\tnbr=(\d+)", out.stdout).group(1))
        assert edges == np.count_nonzero(m) // 2
        if edges:
            load_sum = float(re.search(r"S\tEdge load\tmin=\S+\tmax=\S+\tsum=(\S+)", out.stdout).group(1))
            assert load_sum == m.sum()


def test_scotch_reads_its_own_generators(tmp_path):
    if not shutil.which("gmk_hy"):
        pytest.skip("Scotch gmk_hy not installed")
    path = str(tmp_path / "hy.grf")
    subprocess.run(["gmk_hy", "4", path], check=True)
    pat = tm.io.read(path)
    dense = pat.to_dense()
    want = np.array([[1.0 if bin(a ^ b).count("1") == 1 else 0.0 for b in range(16)] for a in range(16)])
    assert np.array_equal(dense, want)


@pytest.mark.parametrize("text, where, what", [
    ("0\n2\n", ":2:", "truncated header"),
    ("1\n2 2\n0 000\n1 1\n1 0\n", ":1:", "graph file version 1"),
    ("0\n0 0\n0 000\n", ":2:", "vertnbr 0"),
    ("0\n2 2\n2 000\n1 1\n1 0\n", ":3:", "baseval 2 must be 0 or 1"),
    ("0\n2 2\n0 020\n1 1\n1 0\n", ":3:", "flagval 20 must be three binary digits"),
    ("0\n2 4\n0 000\n1 1\n1 0\n", ":2:", "edgenbr 4 but the degrees sum to 2"),
    ("0\n2 2\n0 000\n1 1\n", ":4:", "truncated: vertex 1 of 2 is missing"),
    ("0\n2 2\n0 000\n1 1\n3 0\n", ":5:", "vertex 1 has degree 3 but the file ends first"),
    ("0\n2 2\n0 000\n1 1\n1 0\n7\n", ":6:", "numbers after the last of the 2 vertices"),
    ("0\n2 2\n0 000\n1 1\n-1 0\n", ":5:", "vertex 1 has negative degree -1"),
    ("0\n2 2\n0 000\n1 2\n1 0\n", ":4:", "arc end 2 is outside 0..1"),
    ("0\n2 2\n1 000\n1 0\n1 1\n", ":4:", "arc end 0 is outside 1..2"),
    ("0\n2 2\n0 010\n1 -4 1\n1 4 0\n", ":4:", "edge load -4 is negative"),
    ("0\n2 2\n0 001\n-3 1 1\n1 1 0\n", ":4:", "vertex load -3 is negative"),
    ("0\n2 2\n0 100\n0 1 1\n0 1 0\n", ":5:", "label 0 is used twice"),
    ("0\n2 2\n0 100\n5 1 1\n0 1 0\n", ":4:", "label 5 is outside 0..1"),
    ("0\n2 2\n0 000\n1 1\n1 0x\n", ":5:", "'0x' is not an integer"),
])
def test_scotch_errors(tmp_path, text, where, what):
    path = write(tmp_path, "bad.grf", text)
    fails(lambda: tm.io.read(path), path, where, what)


# ====================================================================== CSV edge lists

@given(square_matrices(), st.booleans())
def test_csv_round_trip_pandas_and_networkx(tmp_path_factory, m, with_msgs):
    import networkx as nx
    import pandas as pd
    path = str(tmp_path_factory.mktemp("csv") / "e.csv")
    msgs = np.where(m > 0, np.arange(m.size).reshape(m.shape) % 7 + 1, 0) if with_msgs else None
    pat = tm.Pattern.from_dense(m, msgs)
    tm.io.write(pat, path)
    back = tm.io.read(path)
    assert back.n == pat.n and np.array_equal(back.to_dense(), m)
    assert (back.msgs is None) == (not with_msgs)
    if with_msgs:
        assert np.array_equal(back.msgs, pat.msgs)
    df = pd.read_csv(path, comment="#")
    assert list(df.columns) == ["src", "dst", "bytes"] + (["msgs"] if with_msgs else [])
    assert np.array_equal(tm.Pattern.from_edges(df.src, df.dst, df.bytes, n=pat.n).to_dense(), m)
    g = nx.from_pandas_edgelist(df, "src", "dst", "bytes", create_using=nx.DiGraph)
    g.add_nodes_from(range(pat.n))
    assert np.array_equal(tm.Pattern.from_networkx(g, weight="bytes").to_dense(), m)


def test_csv_header_aliases_order_blanks_and_n_comment(tmp_path):
    path = write(tmp_path, "e.csv", "# exported\n# n = 5\n\ncount, weight ,target,source  # aliases\n"
                 "2, 10, 1, 0\n\n1,4.5,0,1 # inline comment\n3 , 1e3 , 3 , 0\n")
    pat = tm.io.read(path)
    assert pat.n == 5
    assert pat.to_dense()[:2, :4].tolist() == [[0, 10, 0, 1000], [4.5, 0, 0, 0]]
    assert pat.msgs.tolist() == [2, 3, 1]
    headerless = write(tmp_path, "h.csv", "0 1 5\n1,0,2\n")
    assert tm.io.read(headerless).to_dense().tolist() == [[0, 5], [2, 0]]
    assert tm.io.read(headerless).msgs is None
    only_n = write(tmp_path, "n.csv", "# n=3\nsrc,dst,bytes\n")
    assert tm.io.read(only_n).n == 3 and tm.io.read(only_n).nnz == 0


@pytest.mark.parametrize("text, where, what", [
    ("0,1,2,3,4\n", ":1:", "5 fields; an edge line is src,dst,bytes[,msgs] (a dense matrix? read it with format='dense')"),
    ("0,1\n", ":1:", "2 fields; an edge line is"),
    ("0,1,2\n1,0,2,1\n", ":2:", "4 fields where 3 (src,dst,bytes) were expected"),
    ("src,dst,volume\n0,1,2\n", ":1:", "unknown column 'volume'"),
    ("src,dst,msgs\n0,1,2\n", ":1:", "must name src, dst and bytes"),
    ("src,src,bytes\n0,1,2\n", ":1:", "must name src, dst and bytes (and optionally msgs) once each"),
    ("src,dst,bytes\n0,1,2\n1,0,-2\n", ":3:", "bytes -2.0 is negative, NaN or infinite"),
    ("src,dst,bytes,msgs\n0,1,2,inf\n", ":2:", "msgs inf is negative"),
    ("0,1.5,2\n", ":1:", "dst 1.5 is not a rank"),
    ("-1,1,2\n", ":1:", "src -1.0 is not a rank"),
    ("0,3000000000,2\n", ":1:", "dst 3000000000.0 is not a rank"),
    ("# n=2\n0,1,2\n0,2,1\n", ":3:", "rank 2 is out of range: '# n=2' declares 2 processes"),
    ("# n=0\n0,1,2\n", ":1:", "n=0 is outside"),
    ("0,1,2\n0;1,2\n", ":2:", "'0;1' is not a number"),
    ("", ":", "no edge lines"),
    (b"0,1,2\n\xc3\x28,1,2\n", ":2:", "not UTF-8 text"),
])
def test_csv_errors(tmp_path, text, where, what):
    path = write(tmp_path, "bad.csv", text)
    fails(lambda: tm.io.read(path), path, where, what)


# ====================================================================== OTF2

def _otf2_trace(directory, duplicate_world=False):
    """A 4-rank trace written by the otf2 package: world and a [3, 1] sub-communicator."""
    otf2 = pytest.importorskip("otf2")
    from otf2.enums import GroupType, LocationGroupType, Paradigm

    class Writer(otf2.writer.Writer):
        def _write_global_definitions(self):
            with otf2.definition_writer.DefinitionWriter(self) as dw:
                dw.write_clock_properties(self.timer_resolution, self._first_timestamp,
                                          self._last_timestamp - self._first_timestamp,
                                          otf2.Undefined.TIMESTAMP.value)
                self.definitions.write(dw)
                if duplicate_world:  # what EZTrace 2 writes: the world group defined once per rank
                    g = next(g for g in self.definitions.groups if g.name == "world")
                    dw.write_group(g._ref, self.definitions.strings.get_ref("world"), GroupType.COMM_GROUP,
                                   Paradigm.MPI, g.group_flags, (0, 1, 2, 3))

    w = Writer(directory, timer_resolution=10**6)
    defs = w.definitions
    node = defs.system_tree_node("node")
    locs = [defs.location("Master thread", group=defs.location_group(
        f"MPI Rank {r}", system_tree_parent=node, location_group_type=LocationGroupType.PROCESS)) for r in range(4)]
    defs.group("MPI_COMM_WORLD locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
    world = defs.comm("MPI_COMM_WORLD", group=defs.group("world", group_type=GroupType.COMM_GROUP,
                                                          paradigm=Paradigm.MPI, members=[0, 1, 2, 3]))
    sub = defs.comm("SUB", group=defs.group("sub", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                                             members=[3, 1]), parent=world)
    self_comm = defs.comm("MPI_COMM_SELF", group=defs.group("self", group_type=GroupType.COMM_SELF,
                                                             paradigm=Paradigm.MPI, members=[]))
    t = iter(range(10, 1000))
    ev = [w.event_writer_from_location(loc) for loc in locs]
    ev[0].mpi_send(next(t), receiver=1, communicator=world, msg_tag=0, msg_length=100)
    ev[0].mpi_isend(next(t), receiver=2, communicator=world, msg_tag=0, msg_length=50, request_id=7)
    ev[0].mpi_send(next(t), receiver=1, communicator=world, msg_tag=1, msg_length=11)
    ev[3].mpi_send(next(t), receiver=1, communicator=sub, msg_tag=0, msg_length=30)   # sub rank 1 = world 1
    ev[1].mpi_isend(next(t), receiver=0, communicator=sub, msg_tag=0, msg_length=7, request_id=1)  # world 3
    ev[2].mpi_send(next(t), receiver=0, communicator=self_comm, msg_tag=0, msg_length=99)  # to itself
    ev[2].mpi_recv(next(t), sender=0, communicator=world, msg_tag=0, msg_length=50)
    w.close()
    return os.path.join(directory, "traces.otf2")


def test_otf2_sends_with_communicator_translation(tmp_path):
    anchor = _otf2_trace(str(tmp_path / "t"))
    pat = tm.io.read(anchor)
    want = np.zeros((4, 4))
    want[0, 1], want[0, 2], want[3, 1], want[1, 3] = 111, 50, 30, 7
    assert np.array_equal(pat.to_dense(), want)
    assert pat.msgs.tolist() == [2, 1, 1, 1]
    assert pat.provenance["dropped_self_bytes"] == 99
    assert pat.provenance["events"] == 6 and pat.provenance["duplicate_definitions"] == 0
    assert pat.provenance["ranks_from"] == "MPI COMM_LOCATIONS group"


def test_otf2_tolerates_duplicate_definitions(tmp_path):
    otf2 = pytest.importorskip("otf2")
    anchor = _otf2_trace(str(tmp_path / "dup"), duplicate_world=True)
    with pytest.raises(Exception, match="Duplicate definition|INTERRUPTED_BY_CALLBACK"):
        with otf2.reader.open(anchor) as trace:  # the high-level reader refuses such traces
            list(trace.events)
    pat = tm.io.read(anchor)
    assert pat.provenance["duplicate_definitions"] == 1
    assert pat.total_bytes == 111 + 50 + 30 + 7


def test_otf2_errors(tmp_path):
    pytest.importorskip("otf2")
    garbage = write(tmp_path, "g.otf2", "not a trace\n")
    fails(lambda: tm.io.read(garbage), garbage, ": ", "not a readable OTF2 anchor file")
    missing = str(tmp_path / "none.otf2")
    fails(lambda: tm.io.read(missing), missing, ": ", "cannot open")
    anchor = _otf2_trace(str(tmp_path / "t"))
    shutil.rmtree(str(tmp_path / "t" / "traces"))
    fails(lambda: tm.io.read(anchor), anchor, ": ", "corrupt or missing event files")


def test_otf2_sends_translated_and_the_first_bad_one_named():
    """The sends' translation to world ranks, vectorised over millions of events, gives the
    pattern and, for a bad trace, names the first event the per-event rules refuse."""
    pytest.importorskip("otf2")
    import _otf2 as otf2
    from topomap.io.otf2_trace import _Definitions, _pattern

    mpi = int(otf2.PARADIGM_MPI.value)
    defs = _Definitions()
    defs.group(1, int(otf2.GROUP_TYPE_COMM_LOCATIONS.value), mpi, [10, 11, 12])
    defs.group(5, int(otf2.GROUP_TYPE_COMM_GROUP.value), mpi, [2, 0])
    defs.group(6, int(otf2.GROUP_TYPE_COMM_SELF.value), mpi, [])
    defs.group(8, int(otf2.GROUP_TYPE_COMM_GROUP.value), mpi, [1, 2**64 - 1])
    defs.comms.update({0: 5, 1: 6, 2: 7, 3: 8, 4: 1})  # comm 2's group 7 is undefined

    def pattern(rows):
        return _pattern(otf2, "t.otf2", defs, np.array(rows, dtype=np.uint64).reshape(-1, 4))

    good = [[10, 1, 0, 100], [11, 0, 0, 5], [12, 0, 1, 9], [12, 1, 4, 7], [10, 0, 3, 3], [10, 1, 0, 1]]
    pat = pattern(good)  # sub-communicator, COMM_SELF, a world-type group, sends to oneself
    want = np.zeros((3, 3))
    want[1, 2], want[2, 1], want[0, 1] = 5, 7, 3
    assert np.array_equal(pat.to_dense(), want) and pat.provenance["dropped_self_bytes"] == 100 + 9 + 1
    for rows, what in [
        (good + [[99, 0, 0, 1], [10, 0, 2, 1]], "send event 6 on location 99, which is no MPI rank"),
        (good + [[10, 0, 2, 1], [99, 0, 0, 1]], "send event 6 (rank 0) uses undefined communicator 2"),
        ([[11, 2, 0, 1]] + good, "send event 0 (rank 1) to rank 2 of communicator 0, which has 2 ranks"),
        (good + [[11, 3, 4, 1]], "send event 6 (rank 1) to world rank 3, outside 0..2"),
        (good + [[11, 1, 3, 1]], f"send event 6 (rank 1) to world rank {2**64 - 1}, outside 0..2"),
    ]:
        with pytest.raises(FormatError, match=re.escape(what)):
            pattern(rows)


def test_otf2_library_that_never_finishes_is_stopped(tmp_path):
    pytest.importorskip("otf2")
    anchor = _otf2_trace(str(tmp_path / "t"))
    definitions = str(tmp_path / "t" / "traces.def")
    os.remove(definitions)
    os.mkfifo(definitions)  # the library blocks forever opening a FIFO nobody writes
    fails(lambda: tm.io.read_otf2(anchor, timeout=2), anchor, ": ", "the OTF2 library did not finish within 2 s")


# ====================================================================== DUMPI

def ref_dumpi(files):
    """State machine over dumpi2ascii lines: every send call's count x size on MPI_COMM_WORLD."""
    builtin = {"MPI_BYTE": 1, "MPI_INT": 4, "MPI_DOUBLE": 8, "MPI_FLOAT": 4, "MPI_LONG_DOUBLE": 16,
               "MPI_DOUBLE_INT": 12, "MPI_SHORT": 2}
    n = len(files)
    out = np.zeros((n, n))
    for rank, f in enumerate(files):
        text = open(f).read()
        sizes = {int(i): int(s) for i, s in re.findall(r"^Datatype (\d+) \(.*\) has size (\d+)$", text, re.M)}
        call, params = None, {}
        for line in text.splitlines():
            m = re.match(r"^(MPI_\w+) (entering|returning) at walltime", line)
            if m and m.group(2) == "entering":
                call, params = m.group(1), {}
            elif m:
                if call in ("MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Rsend", "MPI_Sendrecv", "MPI_Sendrecv_replace"):
                    count = int(params.get("count", params.get("sendcount")))
                    tidx, tname = params.get("datatype", params.get("sendtype"))
                    dest, (comm, _) = int(params["dest"].split()[0]), params["comm"]
                    size = sizes.get(int(tidx), builtin.get(tname))
                    if comm == "2" and dest >= 0 and dest != rank:
                        out[rank, dest] += count * size
                call = None
            elif call and "=" in line:
                key, value = line.split(" ", 1)[1].split("=", 1)
                t = re.fullmatch(r"(\d+) \((.*)\)", value)
                params[key] = (t.group(1), t.group(2)) if t else value
    return out


def dumpi_files(directory=DUMPI):
    return [os.path.join(directory, f"dumpi-2024.05.14.10.21.33-{r:04d}.dumpi.txt") for r in range(3)]


def test_dumpi_fixture_hand_worked_and_reference():
    pat = tm.io.read(dumpi_files()[1])
    # rank 0: 256 doubles + 10 bytes to 1, 100 ints + 2 x 24-byte derived type to 2 (user comm and
    # MPI_PROC_NULL sends skipped); rank 1: 64 floats + 10 bytes to 0, 3 long doubles to 2;
    # rank 2: 100 ints + 5 shorts (Sendrecv_replace) to 0, one MPI_DOUBLE_INT to 1
    want = np.array([[0, 2048 + 10, 400 + 48], [256 + 10, 0, 48], [400 + 10, 12, 0]], dtype=float)
    assert np.array_equal(pat.to_dense(), want)
    assert np.array_equal(ref_dumpi(dumpi_files()), want)
    assert pat.msgs.tolist() == [2, 2, 2, 1, 2, 1]
    assert pat.provenance["skipped"] == {"user-defined communicator": 1, "negative destination (MPI_PROC_NULL)": 1}
    assert tm.io.read_dumpi_ascii(dumpi_files()).to_dense().tolist() == want.tolist()


def _copy_dumpi(tmp_path):
    for f in dumpi_files():
        shutil.copy(f, tmp_path)
    return dumpi_files(str(tmp_path))


def test_dumpi_errors(tmp_path):
    files = _copy_dumpi(tmp_path)
    _edit(files[0], "Datatype 28 (user-defined-datatype) has size 24\n", "")
    line = [i for i, l in enumerate(open(files[0]), 1) if l.startswith("MPI_Send entering")][3]
    fails(lambda: tm.io.read(files[0]), files[0], f":{line}:",
          "datatype 28 (user-defined-datatype) has no known size; convert the trace with dumpi2ascii -X")
    _copy_dumpi(tmp_path)
    _edit(files[1], "int dest=2\n", "int dest=5\n")
    fails(lambda: tm.io.read(files[0]), files[1], f":{_line_of(files[1], 'MPI_Ssend entering')}:",
          "destination 5 is out of range: 3 ranks have files")
    _edit(files[1], "int dest=5\n", "int dest=2\n")
    _edit(files[2], "int count=1\nMPI_Datatype datatype=23", "MPI_Datatype datatype=23")
    fails(lambda: tm.io.read(files[0]), files[2], f":{_line_of(files[2], 'MPI_Rsend entering')}:",
          "MPI_Rsend record does not have the parameter lines dumpi2ascii prints")
    _copy_dumpi(tmp_path)
    _edit(files[2], "int count=1\n", "int count=-1\n")
    fails(lambda: tm.io.read(files[0]), files[2], f":{_line_of(files[2], 'MPI_Rsend entering')}:", "negative count -1")
    _copy_dumpi(tmp_path)
    _edit(files[1], "MPI_Comm comm=2 (MPI_COMM_WORLD)\nMPI_Ssend", "MPI_Comm comm=0 (MPI_COMM_ERROR)\nMPI_Ssend")
    fails(lambda: tm.io.read(files[0]), files[1], ":", "send on communicator 0 (MPI_COMM_ERROR), an invalid handle")
    garbage = write(tmp_path, "x-0.dumpi.txt", "version=1\nhello\n")
    fails(lambda: tm.io.read(garbage), garbage, ": ", "not dumpi2ascii output")
    binary = write(tmp_path, "y-0.dumpi.txt", b"MPI_Init entering at walltime 1.0\n\x00\x01")
    fails(lambda: tm.io.read(binary), binary, ":2:", "NUL byte")
    os.remove(files[1])
    fails(lambda: tm.io.read(files[0]), os.path.join(str(tmp_path), "dumpi-2024.05.14.10.21.33-*.dumpi.txt"), ":",
          "2 per-rank files but rank 1 has none")
    fails(lambda: tm.io.read_dumpi_ascii([]), "no per-rank files given", "", "")
    fails(lambda: tm.io.read_dumpi_ascii([str(tmp_path / "norank.dumpi.txt")]), str(tmp_path / "norank.dumpi.txt"),
          ": ", "no rank number in the file name")


# ====================================================================== dispatch and the command line

def test_formats_table_and_dispatch(tmp_path):
    names = [f["name"] for f in tm.io.formats()]
    assert {"dense", "ompi", "matrixmarket", "metis", "scotch", "csv", "otf2", "dumpi"} <= set(names)
    pat = tm.Pattern.from_edges([0, 1], [1, 0], [4, 4])
    odd = str(tmp_path / "graph.data")
    tm.io.write(pat, odd, format="metis")
    assert tm.io.read(odd, format="metis").to_dense().tolist() == [[0, 4], [4, 0]]
    with pytest.raises(FormatError, match="unknown format 'nope'; known: dense, ompi"):
        tm.io.read(odd, format="nope")
    fails(lambda: tm.io.write(pat, str(tmp_path / "t.otf2")), str(tmp_path / "t.otf2"), ": ", "cannot write format '.otf2'")
    fails(lambda: tm.io.write(pat, odd, format="ompi"), odd, ": ", "topomap cannot write ompi files")
    assert tm.io._ext("a/B.DUMPI.TXT") == ".dumpi.txt" and tm.io._ext("a/b.txt") == ".txt"


def test_cli_convert(tmp_path, capsys):
    prof = os.path.join(OMPI, "prof.0.prof")
    out = str(tmp_path / "o.csv")
    assert main(["convert", prof, out, "--kinds", "E"]) == 0
    total = sum(b for _, _, b, _ in program_pattern()["E"])
    assert capsys.readouterr().out == f"{prof} (ompi-monitoring) -> {out}: 4 processes, 12 pairs, {total} bytes\n"
    assert np.array_equal(tm.io.read(out).to_dense(), as_dense(program_pattern()["E"], 4, 2))
    graph = str(tmp_path / "o.graph")
    assert main(["convert", prof, graph]) == 2
    assert "METIS graphs are undirected" in capsys.readouterr().err
    assert main(["convert", prof, graph, "--symmetrize", "--kinds", "E"]) == 0
    assert "symmetrised (C + C^T)" in capsys.readouterr().out
    e = as_dense(program_pattern()["E"], 4, 2)
    assert np.array_equal(tm.io.read(graph).to_dense(), e + e.T)
    assert main(["convert", os.path.join(OMPI, "prof"), str(tmp_path / "p.mtx"), "--kinds", "S,R"]) == 0
    assert main(["convert", graph, str(tmp_path / "o.data"), "--to", "scotch"]) == 0
    assert np.array_equal(tm.io.read(str(tmp_path / "o.data"), format="scotch").to_dense(), e + e.T)
    assert main(["convert", "stencil2d:4x4", str(tmp_path / "s.mtx")]) == 0
    assert tm.io.read(str(tmp_path / "s.mtx")).n == 16
    assert main(["convert", out, str(tmp_path / "x.csv"), "--kinds", "E"]) == 2
    assert "--kinds applies to Open MPI .prof input only" in capsys.readouterr().err
    assert main(["convert", str(tmp_path / "missing.mtx"), str(tmp_path / "y.csv")]) == 2
    assert "no such pattern file" in capsys.readouterr().err


def test_dumpi_integer_beyond_int64_names_the_line(tmp_path):
    """Found by the fuzz test: a 25-digit destination used to overflow NumPy's int64."""
    src = os.path.join(os.path.dirname(__file__), "data", "patterns", "dumpi")
    for name in os.listdir(src):
        shutil.copy(os.path.join(src, name), tmp_path / name)
    victim = tmp_path / "dumpi-2024.05.14.10.21.33-0000.dumpi.txt"
    victim.write_text(victim.read_text().replace("int dest=1\n", "int dest=1000000000000000000000000\n", 1))
    with pytest.raises(FormatError, match=r"0000\.dumpi\.txt:\d+: destination 1000000000000000000000000 is out of range"):
        tm.io.read(str(victim))
