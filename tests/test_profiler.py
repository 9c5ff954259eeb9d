"""The PMPI profiler: command preparation, the .tmprof reader, and real MPI runs.

The MPI tests compile small programs with known patterns (tests/data/profiler)
and run them under ``mpiexec`` with 4 to 8 oversubscribed ranks; they are
skipped when no ``mpicc``/``mpiexec`` is installed.  Expected matrices are
computed here, independently, from the rules each program's header states.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap import profiler
from topomap.cli import main as cli_main
from topomap.collectives.schedules import binomial_bcast, binomial_gather, recursive_doubling, ring_allgather
from topomap.io.tmprof import read_tmprof, write_tmprof

DATA = Path(__file__).parent / "data" / "profiler"
HAVE_MPI = shutil.which("mpicc") is not None and shutil.which("mpiexec") is not None
needs_mpi = pytest.mark.skipif(not HAVE_MPI, reason="needs an MPI (mpicc and mpiexec)")
ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


# ---------------------------------------------------------------- helpers
def launcher_flags() -> list[str]:
    return ["--oversubscribe"] if profiler.launcher_of(["mpiexec"]) == "openmpi" else []


def mpiexec(n: int, *argv: str) -> list[str]:
    return ["mpiexec", "-n", str(n), *launcher_flags(), *argv]


def raw_rows(path: Path) -> np.ndarray:
    """The data lines of a .tmprof file, parsed without topomap."""
    return np.array([[int(v) for v in line.split()] for line in path.read_text().splitlines()
                     if line and not line.startswith("#")], dtype=np.int64).reshape(-1, 6)


def raw_dense(path: Path, p: int) -> tuple[np.ndarray, ...]:
    """(p2p bytes, p2p msgs, coll bytes, coll msgs) as dense p x p arrays, diagonal included."""
    rows = raw_rows(path)
    out = [np.zeros((p, p), dtype=np.int64) for _ in range(4)]
    for k in range(4):
        out[k][rows[:, 0], rows[:, 1]] = rows[:, 2 + k]
    return tuple(out)


def profile_dense(lib: Path, argv: list[str], out: Path, p: int, **options: object) -> tuple:
    """Profile ``argv`` on p ranks into ``out``: (pattern, *raw_dense(out, p))."""
    pat = profiler.profile(mpiexec(p, *argv), out, library=lib, **options)
    return (pat, *raw_dense(out, p))


def expected_known(p: int, persistent_and_collectives: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Bytes and message counts of known_pattern.c's point-to-point traffic (see its header)."""
    B = np.zeros((p, p), dtype=np.int64)
    M = np.zeros((p, p), dtype=np.int64)

    def send(a: int, b: int, nbytes: int, times: int = 1) -> None:
        B[a, b % p] += nbytes * times
        M[a, b % p] += times

    for r in range(p):
        send(r, r + 1, 1000)                            # ring
        send(r, r - 1, 512, 3), send(r, r + 1, 512, 3)  # halo
        if r ^ 1 < p:
            send(r, r ^ 1, 28, 2)
        if r ^ 2 < p:
            send(r, r ^ 2, 40)
        if persistent_and_collectives:
            send(r, r + 2, 33, 5)
        send(r, r + 3, 17), send(r, r + 1, 11), send(r, r + 1, 6), send(r, r - 2, 9)
        send(r, r - 1, 12), send(r, r, 13)
    for key_sign, nbytes in ((-1, 21), (1, 19)):        # the two splits
        for color in (0, 1):
            members = sorted((w for w in range(p) if w % 2 == color), key=lambda w: key_sign * w)
            if len(members) > 1:
                for s, w in enumerate(members):
                    send(w, members[(s + 1) % len(members)], nbytes)
    return B, M


def expected_collectives(p: int) -> tuple[np.ndarray, np.ndarray]:
    """known_pattern.c's collectives under the profiler's models, built from the generators."""
    B = np.zeros((p, p))
    M = np.zeros((p, p))

    def put(pat: tm.Pattern, transpose: bool = False) -> None:
        s, d = pat.senders(), pat.indices
        if transpose:
            s, d = d, s
        np.add.at(B, (s, d), pat.bytes)
        np.add.at(M, (s, d), pat.msgs)

    put(binomial_bcast(p, 40, root=1).total)                # bcast 10 int from 1
    put(binomial_bcast(p, 32, root=2).total, transpose=True)  # reduce 4 double to 2: the tree upwards
    if p & (p - 1) == 0:
        put(recursive_doubling(p, 12).total)                # allreduce 3 int
    else:
        put(binomial_bcast(p, 12, root=0).total, transpose=True)
        put(binomial_bcast(p, 12, root=0).total)
    put(binomial_gather(p, 8, root=0).total)                # gather 2 int to 0
    put(binomial_gather(p, 5, root=p - 1).total, transpose=True)  # scatter 5 char from p-1
    put(ring_allgather(p, 8).total)                         # allgather 1 double
    for a in range(p):
        for b in range(p):
            if a != b:
                B[a, b] += 2 + (b + 1)                      # alltoall 2 char; alltoallv b+1 chars
                M[a, b] += 2
    return B, M


# ---------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def mpi_env(tmp_path_factory):
    """Root-friendly Open MPI variables and a private build cache for the whole module."""
    saved = {k: os.environ.get(k) for k in [*ROOT_ENV, "TOPOMAP_CACHE_DIR"]}
    os.environ.update(ROOT_ENV)
    os.environ["TOPOMAP_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="module")
def lib(mpi_env):
    return profiler.build()


@pytest.fixture(scope="module")
def exe(tmp_path_factory, mpi_env):
    """Compile a test program from tests/data/profiler once per module."""
    out_dir = tmp_path_factory.mktemp("bin")
    built: dict[str, Path] = {}

    def compile_(name: str) -> Path:
        if name not in built:
            src = DATA / name
            compiler = "mpif90" if src.suffix == ".f90" else "mpicc"
            target = out_dir / src.stem
            flags = ["-O1"] if src.suffix == ".f90" else ["-O1", "-pthread"]
            res = subprocess.run([compiler, *flags, "-o", str(target), str(src)], capture_output=True, text=True)
            if res.returncode != 0:
                pytest.skip(f"{compiler} cannot build {name}: {res.stderr.strip()[:200]}")
            built[name] = target
        return built[name]

    return compile_


# ---------------------------------------------------------------- real runs
@needs_mpi
@pytest.mark.parametrize("p", [5, 8])
def test_known_pattern_exact(p, lib, exe, tmp_path):
    pat, B, M, CB, CM = profile_dense(lib, [str(exe("known_pattern.c"))], tmp_path / "known.tmprof", p,
                                      collectives=True)
    eb, em = expected_known(p)
    np.testing.assert_array_equal(B, eb)
    np.testing.assert_array_equal(M, em)
    cb, cm = expected_collectives(p)
    np.testing.assert_array_equal(CB, cb)
    np.testing.assert_array_equal(CM, cm)
    # the reader: the diagonal (MPI_Isend to self) is dropped and recorded
    assert pat.provenance["dropped_self_bytes"] == 13 * p
    np.testing.assert_array_equal(pat.to_dense(), (eb + cb) * (1 - np.eye(p)))
    assert "allgather=ring" in pat.provenance["collectives"]


@needs_mpi
def test_collectives_off_by_default(lib, exe, tmp_path):
    pat, B, M, CB, CM = profile_dense(lib, [str(exe("known_pattern.c"))], tmp_path / "off.tmprof", 4)
    assert not CB.any() and not CM.any() and pat.provenance["collectives"] == "off"
    np.testing.assert_array_equal(B, expected_known(4)[0])


@needs_mpi
def test_subcommunicators_translate_to_world_ranks(lib, exe, tmp_path):
    p = 6
    _, B, M, _, _ = profile_dense(lib, [str(exe("split_pattern.c"))], tmp_path / "split.tmprof", p)
    eb, em = np.zeros((2, p, p), dtype=np.int64)

    def send(a: int, b: int) -> None:
        eb[a, b] += 100 + a
        em[a, b] += 1

    groups = {c: sorted((w for w in range(p) if w % 2 == c), key=lambda w: -w) for c in (0, 1)}
    for c, members in groups.items():
        for s, w in enumerate(members):
            send(w, members[(s + 1) % len(members)])        # split, key -r
            if s:
                send(w, members[0])                         # dup, to sub-rank 0
            if s < len(groups[1 - c]):
                send(w, groups[1 - c][s])                   # intercommunicator: remote rank s
    np.testing.assert_array_equal(B, eb)
    np.testing.assert_array_equal(M, em)


@needs_mpi
def test_thread_multiple_counts_exactly(lib, exe, tmp_path):
    p = 4
    exe_path = exe("threads_pattern.c")
    res = subprocess.run(mpiexec(1, str(exe_path)), capture_output=True, text=True, env={**os.environ, **ROOT_ENV})
    if "no-threads" in res.stdout:
        pytest.skip("this MPI does not provide MPI_THREAD_MULTIPLE")
    pat, B, M, _, _ = profile_dense(lib, [str(exe_path)], tmp_path / "thr.tmprof", p)
    ring = np.roll(np.eye(p, dtype=np.int64), 1, axis=1)       # r -> r + 1
    np.testing.assert_array_equal(B, ring * 1000 * (8 + 9 + 10 + 11))
    np.testing.assert_array_equal(M, ring * 4000)
    assert pat.provenance["threads"] == "multiple"


def _has_monitoring() -> bool:
    if shutil.which("ompi_info") is None:
        return False
    out = subprocess.run(["ompi_info"], capture_output=True, text=True).stdout
    return "MCA pml: monitoring" in out


@needs_mpi
@pytest.mark.skipif(not _has_monitoring(), reason="needs Open MPI's pml_monitoring component")
def test_matches_open_mpi_monitoring(lib, exe, tmp_path):
    """Same run, two counters: the profiler and Open MPI's monitoring PML (E lines, user p2p)."""
    p = 6
    out = tmp_path / "mon.tmprof"
    prefix = tmp_path / "mon"
    cmd = ["mpiexec", "-n", str(p), "--oversubscribe", "--mca", "pml_monitoring_enable", "2",
           "--mca", "pml_monitoring_enable_output", "3", "--mca", "pml_monitoring_filename", str(prefix),
           str(exe("known_pattern.c")), "--monitoring-comparable"]
    profiler.profile(cmd, out, library=lib, launcher="openmpi")
    B, M, _, _ = raw_dense(out, p)
    eb, em = expected_known(p, persistent_and_collectives=False)
    np.testing.assert_array_equal(B, eb)
    mon_b = np.zeros((p, p), dtype=np.int64)
    mon_m = np.zeros((p, p), dtype=np.int64)
    for r in range(p):
        for line in (tmp_path / f"mon.{r}.prof").read_text().splitlines():
            f = line.split("\t")
            if f[0] == "E":
                mon_b[int(f[1]), int(f[2])] += int(f[3].split()[0])
                mon_m[int(f[1]), int(f[2])] += int(f[4].split()[0])
    # monitoring also sees the profiler's own gather at MPI_Finalize: one message of
    # 5 x 8 bytes per row from every rank r > 0 to rank 0
    rows = raw_rows(out)
    for r in range(1, p):
        nnz = int((rows[:, 0] == r).sum())
        mon_b[r, 0] -= 40 * nnz
        mon_m[r, 0] -= 1
    np.testing.assert_array_equal(mon_b, B)
    np.testing.assert_array_equal(mon_m, M)


@needs_mpi
@pytest.mark.skipif(shutil.which("mpif90") is None, reason="needs mpif90")
def test_fortran_mpif_bindings(lib, exe, tmp_path):
    p = 4
    _, B, M, _, _ = profile_dense(lib, [str(exe("known_pattern_f.f90"))], tmp_path / "f.tmprof", p)
    eb, em = np.zeros((2, p, p), dtype=np.int64)
    for r in range(p):
        for dst, nbytes, times in (((r + 1) % p, 400, 1), ((r - 1) % p, 64, 2), ((r + 2) % p, 12, 1),
                                   ((r + 1) % p, 40, 3)):
            eb[r, dst] += nbytes * times
            em[r, dst] += times
    for c in (0, 1):
        members = sorted((w for w in range(p) if w % 2 == c), key=lambda w: -w)
        for s, w in enumerate(members):
            eb[w, members[(s + 1) % len(members)]] += 6
            em[w, members[(s + 1) % len(members)]] += 1
    np.testing.assert_array_equal(B, eb)
    np.testing.assert_array_equal(M, em)


def _has_mpi4py() -> bool:
    return subprocess.run([sys.executable, "-c", "import mpi4py.MPI"], capture_output=True).returncode == 0


@needs_mpi
@pytest.mark.skipif(not _has_mpi4py(), reason="needs mpi4py")
def test_mpi4py_program(lib, tmp_path):
    script = tmp_path / "ring.py"
    script.write_text(
        "from mpi4py import MPI\nimport numpy as np\n"
        "c = MPI.COMM_WORLD; r, p = c.rank, c.size\n"
        "c.Sendrecv(np.zeros(100), dest=(r + 1) % p, recvbuf=np.empty(100), source=(r - 1) % p)\n"
        "q = c.Isend(np.zeros(7, dtype=np.int32), dest=(r + 2) % p)\n"
        "c.Recv(np.empty(7, dtype=np.int32), source=(r - 2) % p); q.Wait()\n")
    p = 4
    pat = profiler.profile(mpiexec(p, sys.executable, str(script)), tmp_path / "py.tmprof", library=lib)
    expected = np.zeros((p, p))
    for r in range(p):
        expected[r, (r + 1) % p] += 800
        expected[r, (r + 2) % p] += 28
    np.testing.assert_array_equal(pat.to_dense(), expected)


@needs_mpi
def test_build_is_cached_and_forced(lib):
    mtime = lib.stat().st_mtime_ns
    assert profiler.build() == lib and lib.stat().st_mtime_ns == mtime
    assert profiler.build(force=True) == lib and lib.stat().st_mtime_ns != mtime


@needs_mpi
def test_cli_profile_to_dense_and_failures(lib, exe, tmp_path, capsys):
    out = tmp_path / "c.mat"
    assert cli_main(["profile", "-o", str(out), "--", *mpiexec(4, str(exe("known_pattern.c")))]) == 0
    eb, _ = expected_known(4)
    np.testing.assert_array_equal(np.loadtxt(out), eb * (1 - np.eye(4)))
    assert "ranks" in capsys.readouterr().out
    # the command's own failure is passed on
    assert cli_main(["profile", "-o", str(tmp_path / "x.tmprof"), "--", sys.executable, "-c",
                     "raise SystemExit(3)"]) == 3
    # a program that is not MPI writes no profile: status 2, one line naming the file
    assert cli_main(["profile", "-o", str(tmp_path / "y.tmprof"), "--", sys.executable, "-c", "pass"]) == 2
    err = capsys.readouterr().err
    assert "no profile was written" in err and "y.tmprof" in err


# ---------------------------------------------------------------- without MPI
def test_prepare_openmpi_mpich_env(monkeypatch):
    monkeypatch.setenv("LD_PRELOAD", "/other.so")
    run = profiler.prepare(["mpirun", "-n", "2", "./a"], "/p.so", "out.tmprof", collectives=True,
                           launcher="openmpi")
    out = os.path.abspath("out.tmprof")
    assert run.command == ["mpirun", "-x", "LD_PRELOAD=/p.so:/other.so", "-x", f"TOPOMAP_PROFILE_OUT={out}",
                           "-x", "TOPOMAP_PROFILE_COLLECTIVES=1", "-n", "2", "./a"]
    assert "LD_PRELOAD" not in run.env and run.env["TOPOMAP_PROFILE_OUT"] == out
    run = profiler.prepare(["mpiexec.hydra", "-n", "2", "./a"], "/p.so", "/o.tmprof", launcher="mpich")
    assert run.command[:5] == ["mpiexec.hydra", "-genv", "LD_PRELOAD", "/p.so:/other.so", "-genv"]
    run = profiler.prepare(["srun", "./a"], "/p.so", "/o.tmprof", launcher="env")
    assert run.command == ["srun", "./a"] and run.env["LD_PRELOAD"] == "/p.so:/other.so"


def test_prepare_rejects_bad_input():
    with pytest.raises(profiler.ProfilerError, match="no command"):
        profiler.prepare([], "/p.so", "o.tmprof")
    with pytest.raises(profiler.ProfilerError, match="launcher 'slurm'"):
        profiler.prepare(["./a"], "/p.so", "o.tmprof", launcher="slurm")


def test_launcher_detection_by_name():
    assert profiler.launcher_of(["./mpiexec_like_app"]) == "env"
    assert profiler.launcher_of([]) == "env"
    assert profiler.launcher_of(["/nonexistent/mpiexec"]) == "env"      # cannot ask it: plain environment
    if shutil.which("mpiexec") and shutil.which("ompi_info"):
        assert profiler.launcher_of(["mpiexec"]) == "openmpi"


def test_profile_rejects_missing_output_directory(tmp_path):
    with pytest.raises(profiler.ProfilerError, match="output directory .*nodir does not exist"):
        profiler.profile(["./a"], tmp_path / "nodir" / "x.tmprof", library="/p.so")


def test_missing_mpicc(monkeypatch):
    monkeypatch.delenv("MPICC", raising=False)
    with pytest.raises(profiler.ProfilerError, match="'/nonexistent/mpicc' not found"):
        profiler.build("/nonexistent/mpicc")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(profiler.ProfilerError, match="openmpi-bin"):
        profiler.find_mpicc()


def test_sources_ship_with_the_package():
    names = {f.name for f in profiler.source_dir().iterdir()}
    assert {"topomap_pmpi.c", "topomap_pmpi.h", "topomap_pmpi_coll.c", "topomap_pmpi_fortran.c"} <= names


HEAD = "# topomap-pmpi 1\n# ranks: 3\n# failed_ranks: none\n# columns: src dst bytes msgs coll_bytes coll_msgs\n"


@pytest.mark.parametrize("text, message", [
    ("# something else\n", r"x\.tmprof:1: not a topomap profile"),
    ("# topomap-pmpi 1\n# columns: src dst bytes msgs coll_bytes coll_msgs\n", "no 'ranks:' line"),
    ("# topomap-pmpi 1\n# ranks: 3\n# columns: a b\n", "columns are 'a b'"),
    ("# topomap-pmpi 1\n# ranks: -3\n# columns: src dst bytes msgs coll_bytes coll_msgs\n", "not a positive"),
    ("# topomap-pmpi 1\n# ranks: 3\n# failed_ranks: 1,2\n# columns: src dst bytes msgs coll_bytes coll_msgs\n",
     "ranks 1,2 lost their counts"),
    ("# topomap-pmpi 1\n# ranks\n", r"x\.tmprof:2: header line without"),
    (HEAD + "0 1 5 1 0 0\n0 3 5 1 0 0\n", r"x\.tmprof:6: rank 3 is out of range \[0, 3\)"),
    (HEAD + "0 1 5 1 0\n", r"x\.tmprof:5: expected 6 non-negative integers"),
    (HEAD + "0 1 -5 1 0 0\n", r"x\.tmprof:5: expected 6"),
    (HEAD + "0 1 5 0 0 0\n", r"x\.tmprof:5: bytes without messages"),
    (HEAD + "1 0 5 1 0 0\n0 2 5 1 0 0\n", r"x\.tmprof:6: pair \(0, 2\) is repeated or out of order"),
    (HEAD + "0 2 5 1 0 0\n0 2 5 1 0 0\n", r"x\.tmprof:6: pair \(0, 2\) is repeated"),
])
def test_reader_rejects_malformed(tmp_path, text, message):
    path = tmp_path / "x.tmprof"
    path.write_text(text)
    with pytest.raises(tm.FormatError, match=message):
        tm.io.read(path)


def test_reader_binary_and_missing(tmp_path):
    path = tmp_path / "b.tmprof"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(tm.FormatError, match="not UTF-8"):
        read_tmprof(path)
    with pytest.raises(tm.FormatError, match="cannot open"):
        read_tmprof(tmp_path / "none.tmprof")
    with pytest.raises(ValueError, match="what='bytes'"):
        read_tmprof(path, what="bytes")


def test_reader_columns_and_provenance(tmp_path):
    path = tmp_path / "r.tmprof"
    path.write_text("# topomap-pmpi 1\n# ranks: 3\n# collectives: bcast=binomial\n# mpi: X MPI 1.0\n"
                    "# seconds: 1.5\n# outside_world: 7 1 0 0\n# failed_ranks: none\n"
                    "# columns: src dst bytes msgs coll_bytes coll_msgs\n0 0 9 1 0 0\n0 1 10 2 4 1\n2 1 0 0 6 3\n")
    both, p2p, coll = (read_tmprof(path, w) for w in ("all", "p2p", "collectives"))
    assert both.to_dense()[0, 1] == 14 and both.to_dense()[2, 1] == 6 and both.msgs.tolist() == [3.0, 3.0]
    assert p2p.nnz == 1 and p2p.msgs.tolist() == [2.0] and p2p.provenance["dropped_self_bytes"] == 9
    assert coll.to_dense()[2, 1] == 6 and coll.msgs.tolist() == [1.0, 3.0]
    prov = both.provenance
    assert (prov["mpi"], prov["seconds"], prov["outside_world"], prov["p2p_bytes"], prov["coll_msgs"]) == \
        ("X MPI 1.0", 1.5, "7 1 0 0", 19.0, 4.0)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 8), st.data())
def test_write_read_round_trip(n, data):
    k = data.draw(st.integers(0, 20))
    src = data.draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k))
    dst = data.draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k))
    byts = data.draw(st.lists(st.integers(1, 10**12), min_size=k, max_size=k))
    pat = tm.Pattern.from_edges(np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
                                np.array(byts, dtype=np.float64), np.ones(k), n=n)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "p.tmprof")
        write_tmprof(pat, path)
        back = read_tmprof(path)
    np.testing.assert_array_equal(back.to_dense(), pat.to_dense())
    np.testing.assert_array_equal(back.msgs, pat.msgs)


def test_writer_refuses_fractional_bytes(tmp_path):
    with pytest.raises(tm.FormatError, match="whole bytes"):
        write_tmprof(tm.Pattern.from_edges([0], [1], [1.5]), tmp_path / "f.tmprof")
