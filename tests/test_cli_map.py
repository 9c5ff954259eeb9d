"""``topomap map`` and ``topomap compare``: mapping files, metric tables,
typed method options and the errors a user can make."""

import csv
import json
import os
import re
import signal
import threading

import numpy as np
import pytest

import topomap as tm
from topomap import registry
from topomap.cli import main
from topomap.cli.map_cmd import parse_options

JOB = ["stencil3d:8x8x8", "fattree:k=8,levels=2/8"]


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def error_line(capsys, cmd, *argv):
    rc, out, err = run(capsys, cmd, *argv)
    assert rc == 2 and out == "", (out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"topomap {cmd}: error: "), err
    return lines[0]


@pytest.fixture
def isolated_registry(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    seen = {}

    @registry.register("test-typed", "records its options", {
        "flag": (False, "a bool"), "count": (3, "an int"), "ratio": (0.5, "a float"), "name": ("x", "a str"),
        "dims": ((1, 2), "ints"), "weights": ((1.0,), "floats"), "anything": (None, "inferred"),
        "empty": ((), "inferred items")})
    def typed(pattern, allocation, *, seed, capacity, progress, **options):
        seen.update(options)
        return allocation.pes[:pattern.n]
    return seen


# ---------------------------------------------------------------- map
def test_map_writes_the_mapping_and_compares_with_block(capsys, tmp_path):
    out_file = tmp_path / "pe_of.txt"
    rc, out, err = run(capsys, "map", *JOB, "--method", "aphid", "--seed", "3", "-o", str(out_file))
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["method", "HB", "dilation", "MC", "NZCA", "NZCV", "qap", "edge", "cut", "time", "s"]
    assert [ln.split()[0] for ln in lines[2:5]] == ["aphid", "block", "aphid/block"]
    assert lines[-1] == f"wrote {out_file} (pe: one line per process)"
    pat = tm.generators.from_spec(JOB[0])
    alloc = tm.machine(JOB[1]).allocate(pat.n)
    written = tm.io.read_mapping(out_file).pe_of
    assert np.array_equal(written, tm.map(pat, alloc, method="aphid", seed=3).pe_of)
    met = tm.evaluate(pat, alloc, written)
    blk = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block"))
    hb = [float(ln.split()[1]) for ln in lines[2:5]]
    assert hb == pytest.approx([met.hop_bytes, blk.hop_bytes, met.hop_bytes / blk.hop_bytes], rel=1e-3)
    # topomap eval reads the file back to the same numbers
    rc, out, _ = run(capsys, "eval", *JOB, "--mapping", str(out_file), "--json")
    assert rc == 0 and json.loads(out)["hop_bytes"] == met.hop_bytes


def test_map_node_format_json_and_capacity(capsys, tmp_path):
    out_file = tmp_path / "nodes.txt"
    rc, out, _ = run(capsys, "map", *JOB, "--method", "aphid", "--capacity", "2", "--format", "node",
                     "-o", str(out_file), "--json", "-O", "prune=0", "-O", "ntries=2")
    assert rc == 0
    doc = json.loads(out)
    assert doc["options"] == {"prune": 0.0, "partitioner": "recursive", "fill": "proportional", "ntries": 2}
    assert doc["capacity"] == 2 and [r["method"] for r in doc["metrics"]] == ["aphid", "block", "aphid/block"]
    nodes = np.loadtxt(out_file, dtype=int)
    assert nodes.size == 512 and np.bincount(nodes).max() <= 16  # 8 PEs x capacity 2 per node
    assert set(nodes.tolist()) <= set(range(32))  # 256 PEs allocated: nodes 0..31


def test_map_block_alone_and_allocation_options(capsys):
    rc, out, _ = run(capsys, "map", "stencil2d:4x4", "fattree:k=4,levels=2/2", "--policy", "random",
                     "--alloc-seed", "2", "--alloc", "10", "--capacity", "2", "--method", "block", "--json")
    assert rc == 0
    rows = json.loads(out)["metrics"]
    assert [r["method"] for r in rows] == ["block"]
    pat = tm.generators.stencil_2d((4, 4))
    alloc = tm.machine("fattree:k=4,levels=2/2").allocate(10, policy="random", seed=2)
    assert rows[0]["hop_bytes"] == tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block", capacity=2)).hop_bytes


def test_options_are_typed_from_the_registry_defaults(isolated_registry, capsys):
    rc, _, _ = run(capsys, "map", "stencil2d:2x2", "torus:2x2", "--method", "test-typed",
                   "-O", "flag=yes", "-O", "count=7", "-O", "ratio=2", "-O", "name=abc", "-O", "dims=4, 5,6",
                   "-O", "weights=0.5,1e3", "-O", "anything=12", "-O", "empty=1,2.5,x")
    assert rc == 0
    assert isolated_registry == {"flag": True, "count": 7, "ratio": 2.0, "name": "abc", "dims": (4, 5, 6),
                                 "weights": (0.5, 1000.0), "anything": 12, "empty": (1, 2.5, "x")}
    assert parse_options("test-typed", ["flag=OFF", "anything=1.5", "dims="]) == \
        {"flag": False, "anything": 1.5, "dims": ()}


@pytest.mark.parametrize("option, message", [
    ("count=2.5", "option 'count' of method 'test-typed' expects an integer, got '2.5'"),
    ("ratio=half", "option 'ratio' of method 'test-typed' expects a number, got 'half'"),
    ("flag=maybe", "option 'flag' of method 'test-typed' expects true or false, got 'maybe'"),
    ("dims=1,b", r"option 'dims' of method 'test-typed' \(item 1\) expects an integer, got 'b'"),
    ("cuont=2", "method 'test-typed' has no option 'cuont'; its options: flag, count"),
    ("count", "--option expects NAME=VALUE, got 'count'"),
    ("=3", "--option expects NAME=VALUE, got '=3'"),
])
def test_option_errors(isolated_registry, capsys, option, message):
    line = error_line(capsys, "map", "stencil2d:2x2", "torus:2x2", "--method", "test-typed", "-O", option)
    assert re.search(message, line), line


def test_option_given_twice_and_out_of_range(capsys):
    line = error_line(capsys, "map", *JOB, "--method", "aphid", "-O", "prune=0", "-O", "prune=0.1")
    assert "option 'prune' of method 'aphid' is given twice" in line
    line = error_line(capsys, "map", *JOB, "--method", "aphid", "-O", "prune=2")
    assert "aphid option prune = 2.0 must be a fraction in [0, 1)" in line


def test_bad_method(capsys):
    line = error_line(capsys, "map", *JOB, "--method", "nope")
    assert "unknown mapping method 'nope'; registered: " in line and "aphid" in line


@pytest.mark.parametrize("argv, message", [
    (["stencil2d:8x8", "torus:4x4/2"], "64 processes at capacity 1 need 64 PEs; the machine has 32 (torus:4x4/2)"),
    (["stencil2d:8x8", "torus:4x4/2", "--capacity", "2", "--alloc", "20"],
     "64 processes at capacity 2 need 32 PEs; --alloc gives 20"),
    (["stencil2d:8x8", "torus:4x4/2", "--capacity", "0"], "--capacity must be >= 1 or 'auto', got 0"),
    (["no_such_file.mtx", "torus:4x4/2"], "no_such_file.mtx: no such pattern file"),
    (["stencil2d:4x4", "torus:4x4x/2"], "torus"),
])
def test_pattern_and_machine_errors(capsys, argv, message):
    assert message in error_line(capsys, "map", *argv)


def test_machine_without_levels_for_aphid(capsys):
    assert "needs a network with levels" in error_line(capsys, "map", "stencil2d:4x4", "torus:4x4",
                                                        "--method", "aphid")


def test_ctrl_c_prints_interrupted_and_exits_130(capsys):
    """SIGINT while the core maps: the glue's signal check stops it, the CLI
    says "interrupted" and exits 130."""
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        rc, out, err = run(capsys, "map", "stencil2d:256x256", "fattree:k=16,levels=2/256", "--method", "aphid")
    finally:
        timer.cancel()
    assert rc == 130 and err.strip() == "topomap map: interrupted"


# ---------------------------------------------------------------- compare
def test_compare_table_csv_and_seeds(capsys, tmp_path):
    out_csv = tmp_path / "cmp.csv"
    rc, out, _ = run(capsys, "compare", *JOB, "--methods", "random,aphid", "--seeds", "0,1", "--csv", str(out_csv))
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["method", "seed", "HB/block", "dilation/block"]
    body = [ln.split() for ln in lines[2:8]]
    assert [(r[0], r[1]) for r in body] == [(m, s) for s in "01" for m in ("block", "random", "aphid")]
    assert all(float(r[2]) == 1.0 for r in body if r[0] == "block")
    with open(out_csv) as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 6 and {"hop_bytes", "hop_bytes_norm", "bytes_spine", "seconds"} <= set(rows[0])
    pat = tm.generators.from_spec(JOB[0])
    alloc = tm.machine(JOB[1]).allocate(pat.n)
    aph = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="aphid", seed=1))
    assert float(rows[5]["hop_bytes"]) == aph.hop_bytes and rows[5]["seed"] == "1"
    assert float(body[5][2]) == pytest.approx(float(rows[5]["hop_bytes_norm"]), rel=1e-3)


def test_compare_raw_json(capsys):
    rc, out, _ = run(capsys, "compare", *JOB, "--methods", "block,cyclic", "--normalize", "none", "--json")
    rows = json.loads(out)
    assert rc == 0 and [r["method"] for r in rows] == ["block", "cyclic"] and "hop_bytes_norm" not in rows[0]
    rc, out, _ = run(capsys, "compare", *JOB, "--methods", "cyclic", "--normalize", "none")
    assert out.splitlines()[0].split()[:2] == ["method", "HB"]


@pytest.mark.parametrize("argv, message", [
    (["--methods", "block,nope"], "unknown mapping method 'nope'"),
    (["--methods", ","], "--methods names no method"),
    (["--seeds", "1,x"], "--seeds expects comma-separated integers, got '1,x'"),
    (["--seeds", "-1"], "--seeds expects non-negative integers"),
    (["--normalize", "nope", "--methods", "block"], "unknown mapping method 'nope'"),
])
def test_compare_errors(capsys, argv, message):
    assert message in error_line(capsys, "compare", "stencil2d:4x4", "fattree:k=4,levels=2", *argv)


def test_commands_are_listed(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "map" in out and "compare" in out
