"""The CLI boundary (issue 19, item 2): an error a user can cause is one line on stderr and exit
status 2, naming the file and line; any other exception is a bug and keeps its traceback.

Every case of the issue's corpus (tests/data/hostile/) goes through ``topomap.cli.main``; the
header bombs also run under a memory limit in tests/test_hardening_readers.py."""

import os

import pytest

import topomap as tm
from topomap.cli import main

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "hostile")

# (corpus file, command line around it, where the message must point, what it must say)
CASES = [
    ("2_tmprof_bytes_past_int64.tmprof", ["pattern"], ":4:", "out of the 64-bit integer range"),
    ("2_tmprof_seconds_abc.tmprof", ["pattern"], ":3:", "'seconds: abc' is not a number"),
    ("3_csv_duplicate_1e308.csv", ["pattern"], ":", "line 2 (1e+308), line 3 (1e+308) sum past the largest"),
    ("3_matrixmarket_duplicate_1e308.mtx", ["pattern"], ":", "line 3 (1e+308), line 4 (1e+308) sum past"),
    ("4_metis_not_symmetric.graph", ["pattern"], ":2:", "weighs 5 at vertex 1 but 7 at vertex 2"),
    ("4_metis_duplicate_neighbour.graph", ["pattern"], ":2:", "lists neighbour 2 twice"),
    ("4_scotch_one_way_arc.grf", ["pattern"], ":4:", "vertex 1 does not list 0"),
    ("4_scotch_duplicate_neighbour.grf", ["pattern"], ":4:", "lists neighbour 1 twice"),
    ("4_csv_half_message.csv", ["pattern"], ":2:", "msgs 0.5 is not a whole number"),
    ("4_tmprof_int64_overflow.tmprof", ["pattern"], ":4:", "9223372036854775808 is out of the 64-bit"),
    ("4_ompi_bytes_without_msgs/prof.0.prof", ["pattern"], ":2:", "100 bytes in 0 messages"),
    ("3_csv_duplicate_1e308.csv", ["convert", "--symmetrize", "{out}/x.graph"], ":", "sum past the largest double"),
    ("4_metis_not_symmetric.graph", ["map", "torus:2"], ":2:", "not undirected"),
    ("4_csv_half_message.csv", ["eval", "torus:2"], ":2:", "not a whole number"),
]


def one_error_line(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("name, command, where, what", CASES)
def test_user_errors_are_one_line_and_exit_2(capsys, tmp_path, name, command, where, what):
    path = os.path.join(HOSTILE, name)
    argv = [command[0], path] + [arg.format(out=tmp_path) for arg in command[1:]]
    line = one_error_line(capsys, argv)
    assert line.startswith(f"topomap {command[0]}: error: {path}{where}"), line
    assert what in line, line


def test_hwloc_xml_with_an_unknown_encoding(capsys):
    path = os.path.join(HOSTILE, "2_hwloc_encoding_stf8.xml")
    line = one_error_line(capsys, ["machine", f"xml:{path}"])
    assert line.startswith("topomap machine: error: ") and path in line and "STF-8" in line, line


def test_metric_overflow_is_a_user_error(capsys, tmp_path):
    """Every entry is finite, but hop-bytes of two 1e308 messages are not: a message, not inf."""
    path = tmp_path / "big.csv"
    path.write_text("0,1,1e308\n1,0,1e308\n")
    line = one_error_line(capsys, ["eval", str(path), "torus:4"])
    assert line.startswith("topomap eval: error: hop_bytes overflows the double range"), line


def test_endless_device_is_a_user_error(capsys, tmp_path):
    link = tmp_path / "zero.csv"
    link.symlink_to("/dev/zero")
    line = one_error_line(capsys, ["pattern", str(link)])
    assert line == f"topomap pattern: error: {link}:1: NUL byte (binary file?)"


def test_multi_line_messages_are_joined(capsys, monkeypatch):
    """A TopomapError whose text spans lines still prints as one line."""
    def fails(path, **_):
        raise tm.FormatError(f"{path}: first\n  second")

    monkeypatch.setitem(tm.io._READERS, ".csv", fails)
    path = os.path.join(HOSTILE, "4_csv_half_message.csv")
    assert one_error_line(capsys, ["pattern", path]) == f"topomap pattern: error: {path}: first second"


@pytest.mark.parametrize("bug", [KeyError("k"), ValueError("a bare ValueError is a bug here"), OverflowError("o")])
def test_other_exceptions_are_bugs_with_a_traceback(monkeypatch, bug):
    """A Python exception that is not a TopomapError leaves main() unchanged (a fuzzer's finding)."""
    def fails(path, **_):
        raise bug

    monkeypatch.setitem(tm.io._READERS, ".csv", fails)
    with pytest.raises(type(bug)):
        main(["pattern", os.path.join(HOSTILE, "4_csv_half_message.csv")])
