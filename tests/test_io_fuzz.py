"""Robustness of every pattern reader: random bytes and random mutations of valid files give a
FormatError or a valid Pattern, never another exception, a crash or a hang; and the C
tokenizer agrees with the strict line-by-line parser."""

import os
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap import FormatError
from topomap.io import _text
from test_io_formats import _otf2_trace

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "patterns")
FUZZ = settings(max_examples=80, deadline=10_000, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                          HealthCheck.too_slow])

VALID = {
    ".mat": b"# comm matrix\n0 1.5 2\n3, 0, 4e2\n0 0 0\n",
    ".mtx": b"%%MatrixMarket matrix coordinate real general\n% c\n3 3 3\n1 2 1.5\n2 3 7\n3 1 2e1\n",
    ".graph": b"% g\n4 4 011 2\n1 2 2 3 3 5\n0 0 1 3 3 1\n3 1 1 5 2 1 4 9\n5 5 3 9\n",
    ".grf": b"0\n3 4\n1 011\n1 1 7 2\n1 2 7 1 4 3\n1 1 4 2\n",
    ".csv": b"# n=4\nsrc,dst,bytes,msgs\n0,1,10,1\n1,2,2.5,3\n3,0,1e3,2\n",
    ".npy": None,  # built in the test from numpy.save
}


def mutations():
    """A list of (kind, position, argument) edits applied in order."""
    edit = st.tuples(st.sampled_from(["flip", "insert", "delete", "truncate", "dup_line", "minus", "letter",
                                      "digits", "newline"]),
                     st.floats(0, 1, exclude_max=True), st.binary(min_size=1, max_size=6))
    return st.lists(edit, min_size=1, max_size=5)


def mutate(data: bytes, edits) -> bytes:
    b = bytearray(data)
    for kind, where, arg in edits:
        i = int(where * max(1, len(b)))
        if kind == "flip" and b:
            b[min(i, len(b) - 1)] = arg[0]
        elif kind == "insert":
            b[i:i] = arg
        elif kind == "delete":
            del b[i:i + len(arg)]
        elif kind == "truncate":
            del b[i:]
        elif kind == "dup_line":
            lines = bytes(b).split(b"\n")
            k = i % max(1, len(lines))
            lines.insert(k, lines[k])
            b = bytearray(b"\n".join(lines))
        elif kind == "minus":
            b[i:i] = b"-"
        elif kind == "letter":
            b[i:i] = b"x"
        elif kind == "digits":
            b[i:i] = b"9" * (len(arg) * 4)
        elif kind == "newline":
            b[i:i] = b"\n"
    return bytes(b)


def read_or_format_error(path, **kw):
    """The only acceptable outcomes: a valid Pattern or a FormatError naming the input."""
    try:
        pat = tm.io.read(path, **kw)
    except FormatError as exc:
        assert str(exc), "empty error message"
        return None
    assert isinstance(pat, tm.Pattern)
    assert pat.indptr.shape == (pat.n + 1,) and np.all(pat.bytes > 0) and np.all(np.isfinite(pat.bytes))
    return pat


def _npy_bytes(tmp_path):
    path = tmp_path / "seed.npy"
    np.save(path, np.array([[0, 2.0], [1, 0]]))
    return path.read_bytes()


@pytest.mark.parametrize("ext", sorted(VALID))
@FUZZ
@given(data=st.binary(max_size=400))
def test_random_bytes(tmp_path, ext, data):
    path = tmp_path / f"x{ext}"
    path.write_bytes(data)
    read_or_format_error(str(path))


@pytest.mark.parametrize("ext", sorted(VALID))
@FUZZ
@given(edits=mutations())
def test_mutated_valid_files(tmp_path, ext, edits):
    seed = VALID[ext] if VALID[ext] is not None else _npy_bytes(tmp_path)
    path = tmp_path / f"seed{ext}"
    path.write_bytes(seed)
    assert read_or_format_error(str(path)) is not None   # the seed itself is valid
    path.write_bytes(mutate(seed, edits))
    read_or_format_error(str(path))


@pytest.mark.parametrize("kind", ["prof", "dumpi"])
@FUZZ
@given(edits=mutations(), which=st.integers(0, 3), data=st.binary(max_size=300), whole=st.booleans())
def test_mutated_per_rank_files(tmp_path, kind, edits, which, data, whole):
    src = os.path.join(DATA, "ompi" if kind == "prof" else "dumpi")
    run = tmp_path / "run"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(src, run)
    files = sorted(str(run / f) for f in os.listdir(run) if f.endswith((".prof", ".dumpi.txt")))
    victim = files[which % len(files)]
    seed = open(victim, "rb").read()
    open(victim, "wb").write(data if whole else mutate(seed, edits))
    read_or_format_error(files[0])
    if kind == "prof":
        read_or_format_error(files[0], kinds="E,I,S,R,C")


@settings(FUZZ, max_examples=25, deadline=None)  # each read runs the OTF2 library in a child process
@given(edits=mutations(), which=st.sampled_from(["traces.otf2", "traces.def", "traces/0.evt", "traces/0.def"]),
       data=st.binary(max_size=200), whole=st.booleans())
def test_mutated_otf2_trace(tmp_path, edits, which, data, whole):
    pytest.importorskip("otf2")
    seed_dir = tmp_path / "seed"
    if not seed_dir.exists():
        _otf2_trace(str(seed_dir))
    trace = tmp_path / "t"
    shutil.rmtree(trace, ignore_errors=True)
    shutil.copytree(seed_dir, trace)
    victim = trace / which
    victim.write_bytes(data if whole else mutate(victim.read_bytes(), edits))
    read_or_format_error(str(trace / "traces.otf2"), timeout=10)  # some corrupt traces make the library loop


# ---------------------------------------------------------------- the two parsing tiers agree

TOKENS = st.sampled_from([b"0", b"7", b"-1", b"+3", b"-0", b"12345678901234567890", b"9223372036854775807",
                          b"9223372036854775806", b"-9223372036854775807", b"-9223372036854775808", b"9007199254740993",
                          b"1.5", b"-2e3", b".5", b"5.", b"1e400", b"1e-400", b"nan", b"-NaN", b"inf", b"Infinity",
                          b"x", b"1,2", b"0x1", b"0x1p3", b"1_0", b"1e", b".", b"+-1", b"1.2.3", b"nan(1)", b"\xff",
                          b"\x00", b"%", b"#", b"0." + b"3" * 140])
SEPARATORS = st.sampled_from([b" ", b"\t", b"\n", b"\r\n", b"  ", b"\n\n", b","])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(TOKENS, SEPARATORS), max_size=30), st.booleans(), st.booleans(), st.booleans())
def test_fast_and_strict_tiers_agree(pieces, integer, commas, final_newline):
    data = b"".join(t + s for t, s in pieces)
    if final_newline and not data.endswith(b"\n"):
        data += b"\n"
    text = data.replace(b",", b" ") if commas else data
    try:
        slow = _text._parse_slow("f", text, 1, integer)
    except FormatError as exc:
        slow = exc
    fast = _text._parse_fast(data, integer, commas)   # the C tier
    if isinstance(fast, tuple):
        assert not isinstance(slow, FormatError), f"the C tier accepted what the strict tier rejects: {slow}"
        values, counts = fast
        np.testing.assert_array_equal(values, slow[0])
        np.testing.assert_array_equal(counts, slow[1])
        assert values.dtype == slow[0].dtype or (not integer and values.dtype == np.int64)
    elif fast is not None:
        assert isinstance(slow, FormatError), "the C tier rejected what the strict tier accepts"
        bad_line = 1 + text.count(b"\n", 0, fast)
        assert str(slow).startswith(f"f:{bad_line}:"), (slow, bad_line)
    try:
        block = _text.parse_block("f", data, 1, integer=integer, commas=commas)
    except FormatError as exc:
        assert isinstance(slow, FormatError) and str(exc) == str(slow)
    else:
        assert not isinstance(slow, FormatError)
        np.testing.assert_array_equal(block.values, slow[0])
        np.testing.assert_array_equal(block.counts, slow[1])
