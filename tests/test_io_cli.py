"""Pattern and mapping files (topomap.io) and the command line (topomap.cli)."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import topomap as tm
from topomap import FormatError
from topomap.cli import main
from topomap.compare import DEFAULT_METHODS

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


def assert_format_error_at(read, path, where, what):
    """``read(path)`` raises a FormatError that starts with ``path + where`` and contains ``what``."""
    with pytest.raises(FormatError) as info:
        read(path)
    msg = str(info.value)
    assert msg.startswith(path + where), msg
    assert what in msg


# ------------------------------------------------------------------ dense patterns

@pytest.mark.parametrize("ext", [".mat", ".txt", ".dense", ".npy"])  # .csv is an edge list (test_io_formats)
def test_dense_round_trip(tmp_path, ext):
    c = np.array([[0, 1.5, 0], [2, 0, 1e-3], [1e17 + 8, 0, 0]])
    pat = tm.Pattern.from_dense(c)
    path = str(tmp_path / f"c{ext}")
    tm.io.write(pat, path)
    back = tm.io.read(path)
    assert np.array_equal(back.to_dense(), c)           # %.17g text and .npy are exact
    assert back.provenance["file"] == path
    assert back.provenance["source"] == ("npy" if ext == ".npy" else "dense-text")


def test_dense_text_comments_commas_blank_lines_and_diagonal(tmp_path):
    path = write(tmp_path, "c.mat", "# profile2mat output\n\n0, 3 ,1  # row 0\n\n2 5 0\n0 0 0\n")
    pat = tm.io.read(path)
    assert pat.to_dense().tolist() == [[0, 3, 1], [2, 0, 0], [0, 0, 0]]
    assert pat.provenance["dropped_self_bytes"] == 5.0


def test_read_dense_directly_and_extension_case(tmp_path):
    path = write(tmp_path, "C.MAT", "0 1\n1 0\n")
    assert tm.io.read(path).total_bytes == 2.0
    assert tm.io.read_dense(path).total_bytes == 2.0


@pytest.mark.parametrize("text, where, what", [
    ("0 1 2\n2 0 1\n", ":2:", "2 rows of 3 entries; the matrix must be square (truncated file?)"),
    ("0 1\n1 0\n\n0 1\n", ":4:", "3 rows of 2 entries"),
    ("0 1\n2\n", ":2:", "row has 1 entries, the first row has 2"),
    ("# c\n0 1 1\n1 0 1 1\n", ":3:", "row has 4 entries, the first row has 3"),
    ("0 x\n2 0\n", ":1:", "'x' is not a number"),
    ("0 1\n2 0,,\n1;2 0\n", ":3:", "'1;2' is not a number"),
    ("0 1\n# c\n\n-2 0\n", ":4:", "entry 0 ('-2') of row 1 is negative, NaN or infinite"),
    ("0 nan\n1 0\n", ":1:", "entry 1 ('nan') of row 0 is negative, NaN or infinite"),
    ("0 1\ninf 0\n", ":2:", "entry 0 ('inf') of row 1"),
    (b"0 1\n\xff\xfe 0\n", ":2:", "not UTF-8 text"),
])
def test_bad_dense_text_names_file_and_line(tmp_path, text, where, what):
    assert_format_error_at(tm.io.read, write(tmp_path, "bad.mat", text), where, what)


@pytest.mark.parametrize("text", ["", "\n\n", "# nothing here\n  \n"])
def test_empty_dense_text(tmp_path, text):
    path = write(tmp_path, "empty.mat", text)
    with pytest.raises(FormatError, match=f"^{path}: no matrix rows$"):
        tm.io.read(path)


@pytest.mark.parametrize("array, what", [
    (np.zeros((2, 3)), r"must be square, got shape \(2, 3\)"),
    (np.ones(3), r"must be square, got shape \(3,\)"),
    (np.zeros((0, 0)), "needs at least one process"),
    (-np.ones((2, 2)), r"matrix\[0, 0\] = .*-1.0.* is negative"),
    (np.ones((2, 2), dtype=bool), "must be numeric, got dtype bool"),
])
def test_bad_npy_names_file_and_entry(tmp_path, array, what):
    path = str(tmp_path / "bad.npy")
    np.save(path, array)
    with pytest.raises(FormatError, match=f"^{path}: .*{what}"):
        tm.io.read(path)


def test_unreadable_npy(tmp_path):
    garbage = write(tmp_path, "garbage.npy", "not numpy")
    with pytest.raises(FormatError, match=f"^{garbage}: not a readable .npy matrix"):
        tm.io.read(garbage)
    obj = str(tmp_path / "obj.npy")
    np.save(obj, np.array([[None]], dtype=object), allow_pickle=True)
    with pytest.raises(FormatError, match=f"^{obj}: not a readable .npy matrix"):
        tm.io.read(obj)
    truncated = str(tmp_path / "trunc.npy")
    np.save(truncated, np.ones((4, 4)))
    data = open(truncated, "rb").read()
    open(truncated, "wb").write(data[:-40])
    with pytest.raises(FormatError, match=f"^{truncated}: not a readable .npy matrix"):
        tm.io.read(truncated)


def test_missing_file_and_unknown_format(tmp_path):
    missing = str(tmp_path / "missing.mat")
    with pytest.raises(FormatError, match=f"^{missing}: cannot open \\(No such file or directory\\)"):
        tm.io.read(missing)
    with pytest.raises(FormatError, match=r"x\.foo: unknown pattern format '\.foo'; known: .csv, .dense, .dumpi.txt"):
        tm.io.read(str(tmp_path / "x.foo"))
    with pytest.raises(FormatError, match=r"x\.foo: cannot write format '\.foo'"):
        tm.io.write(tm.Pattern.from_dense([[0, 1], [1, 0]]), str(tmp_path / "x.foo"))


# ------------------------------------------------------------------ mapping files

def test_mapping_file_round_trip(tmp_path):
    path = str(tmp_path / "map.txt")
    tm.io.write_mapping(tm.Mapping([3, 1, 2, 0]), path)
    assert open(path).read() == "3\n1\n2\n0\n"
    mp = tm.io.read_mapping(path)
    assert mp.pe_of.tolist() == [3, 1, 2, 0]
    assert mp.method == "file" and mp.options == {"file": path}


def test_mapping_file_comments_and_blank_lines(tmp_path):
    path = write(tmp_path, "m.txt", "# pe_of\n3  # process 0\n\n 4 \n")
    assert tm.io.read_mapping(path).pe_of.tolist() == [3, 4]


@pytest.mark.parametrize("text, where, what", [
    ("0\nx\n", ":2:", "'x' is not a PE id (a non-negative integer)"),
    ("0\n-1\n", ":2:", "'-1' is not a PE id"),
    ("0\n1.5\n", ":2:", "'1.5' is not a PE id"),
    ("0 1\n", ":1:", "'0 1' is not a PE id"),
    ("\u0663\n", ":1:", "is not a PE id"),                 # an Arabic-Indic digit is not an ASCII id
    ("1\n99999999999\n", ":2:", "PE id 99999999999 is out of the int32 range"),
    (b"1\n\xff\n", ":2:", "not UTF-8 text"),
])
def test_bad_mapping_file_names_file_and_line(tmp_path, text, where, what):
    assert_format_error_at(tm.io.read_mapping, write(tmp_path, "m.txt", text), where, what)


def test_empty_or_missing_mapping_file(tmp_path):
    path = write(tmp_path, "m.txt", "# nothing\n\n")
    with pytest.raises(FormatError, match=f"^{path}: no PE ids$"):
        tm.io.read_mapping(path)
    with pytest.raises(FormatError, match="cannot open"):
        tm.io.read_mapping(str(tmp_path / "none.txt"))


def test_mapping_file_out_of_range_for_the_machine(tmp_path):
    path = write(tmp_path, "m.txt", "0\n1\n16\n")
    mp = tm.io.read_mapping(path)
    pat = tm.Pattern.from_edges([0], [1], 1.0, n=3)
    with pytest.raises(tm.MappingError, match="process 2 is mapped to PE 16, outside the machine's 16 PEs"):
        tm.evaluate(pat, tm.machine("torus:4x4"), mp)


# ------------------------------------------------------------------ CLI

def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def one_error_line(err, cmd):
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"topomap {cmd}: error: "), err
    return lines[0]


def test_demo(capsys):
    rc, out, err = run(capsys, "demo")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("method "))
    header = lines[head].split()
    assert header == ["method", "hop_bytes_norm", "avg_dilation", "max_dilation", "max_congestion_norm",
                      "nz_congestion_avg_norm", "nz_congestion_var_norm", "edge_cut_norm", "seconds"]
    assert set(lines[head + 1].replace(" ", "")) == {"-"}
    end = lines.index("", head)
    rows = [ln.split() for ln in lines[head + 2:end]]
    # one row per default method that applies to the torus, then auto; the others are named
    assert [r[0] for r in rows] == [m for m in DEFAULT_METHODS if m not in ("hierarchy", "aphid")] + ["auto"]
    assert lines[-1].startswith("not run, as they do not apply to torus:16x16x8/8: hierarchy, aphid")
    ran = re.fullmatch(r"auto \(the default of .*\) ran (.*) and kept (\S+), the lowest hop-bytes", lines[end + 1])
    candidates = ran.group(1).split(", ")
    assert candidates[0] == "block" and ran.group(2) in candidates
    hop = {r[0]: float(r[1]) for r in rows}
    assert hop["auto"] <= min(hop[m] for m in candidates if m in hop)      # block, cyclic, recursive, ... ran in both
    block = dict(zip(header, next(r for r in rows if r[0] == "block")))
    for col in header:
        if col.endswith("_norm"):
            assert block[col] == "1.000"
    assert "stencil_3d" in out and "torus:16x16x8/8" in out and "fragmented" in out


def test_demo_small_job(capsys):
    rc, out, _ = run(capsys, "demo", "--pattern", "stencil2d:4x4", "--machine", "torus:4x4",
                     "--allocation", "contiguous")
    assert rc == 0
    row = next(ln.split() for ln in out.splitlines() if ln.startswith("block "))
    # the 4x4 stencil in block order on a 4x4 torus: process (x0, x1) on node (x0, x1), every message 1 hop
    assert row[1:4] == ["1.000", "1.000", "1"]


def _eval_json(capsys, *argv):
    rc, out, err = run(capsys, "eval", *argv, "--json")
    assert rc == 0 and err == ""
    return json.loads(out)


def test_eval_with_method_json_matches_evaluate(capsys):
    got = _eval_json(capsys, "stencil2d:8x4", "torus:4x4/2", "--method", "cyclic", "--seed", "3")
    pat = tm.generators.from_spec("stencil2d:8x4")
    alloc = tm.machine("torus:4x4/2").allocate(pat.n)
    want = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="cyclic", seed=3)).to_dict()
    assert got == pytest.approx(want)
    assert set(got) == set(want)


def test_eval_allocation_options(capsys):
    got = _eval_json(capsys, "stencil2d:4x4", "torus:4x4/2", "--allocation", "fragmented", "--alloc-seed", "5",
                     "--runs", "2", "--method", "random", "--seed", "1")
    pat = tm.generators.from_spec("stencil2d:4x4")
    alloc = tm.machine("torus:4x4/2").allocate(16, policy="fragmented", seed=5, runs=2)
    want = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="random", seed=1)).to_dict()
    assert got == pytest.approx(want)


def test_eval_with_mapping_file_and_pattern_file(capsys, tmp_path):
    # 0 <-> 1 (4 bytes each way) and 1 -> 2 (2 bytes) on a ring of 4: PEs 0, 2, 3
    mat = write(tmp_path, "c.mat", "0 4 0\n4 0 2\n0 0 0\n")
    mapping = write(tmp_path, "m.txt", "0\n2\n3\n")
    got = _eval_json(capsys, mat, "torus:4", "--mapping", mapping)
    # 0->1: 2 hops x 4, 1->0: 2 hops x 4, 1->2: 1 hop x 2 -> hop_bytes 18, dilation 5
    assert got["hop_bytes"] == 18.0 and got["dilation"] == 5 and got["max_dilation"] == 2
    assert got["messages"] == 3 and got["total_bytes"] == 10.0
    want = tm.evaluate(tm.io.read(mat), tm.machine("torus:4"), [0, 2, 3]).to_dict()
    assert got == pytest.approx(want)


def test_eval_plain_text(capsys):
    rc, out, _ = run(capsys, "eval", "stencil2d:4x4", "torus:4x4")
    assert rc == 0
    table = dict(ln.split() for ln in out.splitlines())
    assert table["hop_bytes"] == "48" and table["max_dilation"] == "1" and table["messages"] == "48"


def test_methods(capsys):
    rc, out, _ = run(capsys, "methods")
    assert rc == 0
    assert out.strip() == "\n\n".join(tm.registry.describe(i) for i in tm.methods().values())
    assert out.startswith("aphid: ")
    rc, out, _ = run(capsys, "methods", "--json")
    data = json.loads(out)
    assert rc == 0 and list(data) == list(tm.methods())
    assert data["random"] == {"name": "random", "summary": tm.methods()["random"].summary, "source": "",
                              "options": {}}


def test_machine_json(capsys):
    rc, out, _ = run(capsys, "machine", "torus:4x4", "--json")
    assert rc == 0
    assert json.loads(out) == {"spec": "torus:4x4", "network": "torus", "nodes": 16, "pes_per_node": 1,
                               "pes": 16, "links": 64, "node_levels": ["Node"], "diameter": 4,
                               "aspl": pytest.approx(32 / 15), "aspl_exact": True}
    rc, out, _ = run(capsys, "machine", "hierarchy:2:2:2/1:10:100")
    assert rc == 0
    table = dict(ln.split(None, 1) for ln in out.splitlines())
    assert table["nodes"] == "4" and table["diameter"] == "4" and table["network"] == "tree"


def test_features(capsys):
    rc, out, _ = run(capsys, "features")
    assert rc == 0
    data = json.loads(out)
    assert data["version"] == tm.__version__
    assert data == json.loads(json.dumps(tm.features()))


@pytest.mark.parametrize("cmd", [[], ["demo"], ["eval"], ["methods"], ["machine"], ["features"]])
def test_help(capsys, cmd):
    with pytest.raises(SystemExit) as info:
        main([*cmd, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: topomap" + (f" {cmd[0]}" if cmd else ""))


@pytest.mark.parametrize("argv, cmd, what", [
    (["machine", "foo:4"], "machine", "unknown machine kind 'foo'"),
    (["machine", "torus:0x4"], "machine", "got 0"),
    (["eval", "stencil2d:4x4", "foo:4"], "eval", "unknown machine kind 'foo'"),
    (["eval", "stencil2d:4x4", "torus:2x2"], "eval", "16 processes at capacity 1 need 16 PEs; the machine has 4"),
    (["eval", "nosuchfile.mat", "torus:4x4"], "eval", "nosuchfile.mat: no such pattern file"),
    (["eval", "stencil9d:4", "torus:4x4"], "eval", "stencil9d"),
    (["eval", "stencil2d:4x4", "torus:4x4", "--method", "nope"], "eval", "unknown mapping method 'nope'"),
    (["demo", "--machine", "torus:2x2"], "demo", "cannot allocate 4096 PEs"),
])
def test_bad_input_is_one_line_and_status_2(capsys, argv, cmd, what):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    assert what in one_error_line(err, cmd)


@pytest.mark.parametrize("text, what", [
    ("0\nx\n", ":2: 'x' is not a PE id"),
    ("0\n1\n", "the mapping has 2 entries but the pattern has 16 processes"),
    ("0\n" * 15 + "16\n", "process 15 is mapped to PE 16, outside the machine's 16 PEs"),
])
def test_bad_mapping_file_in_cli(capsys, tmp_path, text, what):
    mapping = write(tmp_path, "m.txt", text)
    rc, out, err = run(capsys, "eval", "stencil2d:4x4", "torus:4x4", "--mapping", mapping)
    assert rc == 2 and out == ""
    assert what in one_error_line(err, "eval")


def test_bad_pattern_file_in_cli(capsys, tmp_path):
    mat = write(tmp_path, "c.mat", "0 1\n1\n")
    rc, _, err = run(capsys, "eval", mat, "torus:4x4")
    assert rc == 2
    assert one_error_line(err, "eval") == f"topomap eval: error: {mat}:2: row has 1 entries, the first row has 2"


def test_usage_errors_exit_2(capsys):
    for argv in ([], ["nope"], ["eval", "stencil2d:4x4"], ["demo", "--allocation", "odd"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        assert "usage: topomap" in capsys.readouterr().err


def test_console_entry_point_subprocess():
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "topomap", "machine", "torus:4x4", "--json"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["nodes"] == 16
    bad = subprocess.run([sys.executable, "-m", "topomap", "machine", "foo:4"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith("topomap machine: error: unknown machine kind 'foo'")
    assert len(bad.stderr.splitlines()) == 1
