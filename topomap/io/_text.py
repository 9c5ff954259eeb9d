"""Whole-block number parsing for the text readers, with errors naming file and line.

Why two tiers: a Python loop over lines parses about 10 MB/s; the C core's
tokenizer (``topomap._core.parse_numbers``, ``csrc/core/tokenize.c``) parses a
whole block at a few ns per byte but only says *where* the first bad token is.
So :func:`parse_block` parses in C; on a bad token the strict line-by-line tier
re-reads that one line and raises :class:`~topomap.errors.FormatError` naming
the file, line and token; when C cannot convert a valid number (a decimal
longer than 127 characters, an unusual C locale) the strict tier parses the
whole block.  The strict tier is also the reference the C tier is tested
against.

Token grammar (both tiers): tokens are separated by ASCII whitespace (and
commas when asked); integers are ``[+-]?[0-9]+`` strictly inside the int64
range; floats add a decimal point, an exponent, ``inf``/``infinity``/``nan``
(callers reject non-finite values with their own message).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .. import _core
from ..errors import FormatError

_INT_RE = re.compile(rb"[+-]?[0-9]+")
_FLOAT_RE = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)",
                       re.IGNORECASE)
_INT64_MAX = int(np.iinfo(np.int64).max)
_INT64_MIN = int(np.iinfo(np.int64).min)
_FLOAT_MARKS = (b".", b"e", b"E", b"n", b"N", b"i", b"I")
_COMMA_TO_BLANK = bytes.maketrans(b",", b" ")


def read_bytes(path: str) -> bytes:
    """The whole file; an unreadable path is a FormatError naming it."""
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise FormatError(f"{path}: cannot open ({exc.strerror})") from None


def shown(raw: bytes) -> str:
    """A token or line as it appears in an error message."""
    return repr(raw.decode("utf-8", errors="backslashreplace"))


def check_text_line(path: str, lineno: int, raw: bytes) -> str:
    """``raw`` decoded as UTF-8; binary data is a FormatError naming the line."""
    if b"\x00" in raw:
        raise FormatError(f"{path}:{lineno}: NUL byte (binary file?)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(f"{path}:{lineno}: not UTF-8 text (binary file?)") from None


def iter_lines(data: bytes, start: int = 0):
    """(offset of the next line, line without its newline) from ``start`` on."""
    end = len(data)
    while start < end:
        stop = data.find(b"\n", start)
        if stop < 0:
            stop = end
        yield stop + 1, data[start:stop]
        start = stop + 1


def count_lines(data: bytes) -> int:
    """Number of lines; a final line without a newline counts."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


@dataclass(frozen=True)
class Block:
    """Numbers of a block of lines.

    ``values`` holds every number in file order (int64 when every token is an
    integer, else float64), ``counts[i]`` how many are on
    line ``first_line + i``; ``comment_lines`` lists the block-relative
    indices of whole-line comments (when the caller asked for them); ``data``
    is the block as parsed (comments removed), kept for error messages.
    """

    path: str
    data: bytes
    commas: bool
    values: np.ndarray
    counts: np.ndarray
    first_line: int
    comment_lines: np.ndarray

    def line_of(self, token: int) -> int:
        """File line number of the ``token``-th number of the block."""
        return self.first_line + int(np.searchsorted(np.cumsum(self.counts), token, side="right"))

    def tokens(self, line_index: int) -> list[bytes]:
        """The tokens of block-relative line ``line_index``, as written."""
        for i, (_, raw) in enumerate(iter_lines(self.data)):
            if i == line_index:
                return (raw.translate(_COMMA_TO_BLANK) if self.commas else raw).split()
        return []

    def error(self, line_index: int, message: str) -> FormatError:
        """A FormatError naming block-relative line ``line_index``."""
        return FormatError(f"{self.path}:{self.first_line + int(line_index)}: {message}")


def parse_block(path: str, data: bytes, first_line: int = 1, *, integer: bool, comment: bytes | None = None,
                whole_line_comments: bool = False, commas: bool = False) -> Block:
    """Parse every number in ``data`` (lines ``first_line``, ``first_line + 1``, ...).

    Parameters
    ----------
    integer : bool
        Integers only; otherwise floats are allowed too (the values are
        float64 unless every token is an integer).
    comment : bytes, optional
        Comment marker; text from it to the end of the line is ignored, or,
        with ``whole_line_comments``, only lines starting with it (after
        blanks) are comments and a marker elsewhere is a bad token.
    commas : bool
        Commas separate tokens like blanks.
    """
    comment_lines = np.zeros(0, dtype=np.int64)
    if comment is not None and comment in data:
        data, comment_lines = _drop_comments(data, comment, whole_line_comments)
    commas = commas and b"," in data
    fast = _parse_fast(data, integer, commas)
    if isinstance(fast, tuple):
        values, counts = fast
    else:
        text = data.translate(_COMMA_TO_BLANK) if commas else data
        if fast is not None:
            _raise_for_line(path, text, first_line, integer, fast)
        values, counts = _parse_slow(path, text, first_line, integer)
    # a comment on a last line without a newline leaves no line behind
    return Block(path, data, commas, values, counts, first_line, comment_lines[comment_lines < counts.size])


def _drop_comments(data: bytes, comment: bytes, whole_line: bool) -> tuple[bytes, np.ndarray]:
    if not whole_line:
        return re.sub(re.escape(comment) + rb"[^\n]*", b"", data), np.zeros(0, dtype=np.int64)
    pattern = re.compile(rb"(?m)^[ \t\r\f\v]*" + re.escape(comment) + rb"[^\n]*")
    lines, line, prev = [], 0, 0
    for m in pattern.finditer(data):
        line += data.count(b"\n", prev, m.start())
        prev = m.start()
        lines.append(line)
    return pattern.sub(b"", data), np.array(lines, dtype=np.int64)


def _parse_fast(data: bytes, integer: bool, commas: bool) -> "tuple[np.ndarray, np.ndarray] | int | None":
    """(values, per-line counts) from the C tokenizer; else the byte offset of a token outside
    the grammar, or None when the strict tier must convert the block."""
    # int64 even when floats are allowed, if every token is an integer: the callers convert only
    # the columns they need; a block without any float mark can only hold integers (or faults)
    as_int = integer or not any(mark in data for mark in _FLOAT_MARKS)
    result = _core.parse_numbers(data, as_int, commas)
    if result[0] is None and as_int and not integer:  # an integer beyond int64 is still a float
        result = _core.parse_numbers(data, False, commas)
    if result[0] is False:
        return None
    return result[1] if result[0] is None else result


def _raise_for_line(path: str, text: bytes, first_line: int, integer: bool, offset: int) -> None:
    """Raise the strict tier's error for the line holding the bad token at ``offset``."""
    start = text.rfind(b"\n", 0, offset) + 1
    stop = text.find(b"\n", offset)
    line = text[start:stop if stop >= 0 else len(text)]
    _parse_slow(path, line, first_line + text.count(b"\n", 0, start), integer)


def _parse_slow(path: str, data: bytes, first_line: int, integer: bool) -> tuple[np.ndarray, np.ndarray]:
    """The strict line-by-line tier: same result as the fast one, or the first fault."""
    grammar, convert = (_INT_RE, int) if integer else (_FLOAT_RE, float)
    what = "an integer" if integer else "a number"
    values: list = []
    counts: list[int] = []
    for lineno, (_, raw) in enumerate(iter_lines(data), first_line):
        tokens = raw.split()
        if tokens:
            check_text_line(path, lineno, raw)
        for tok in tokens:
            if not grammar.fullmatch(tok):
                raise FormatError(f"{path}:{lineno}: {shown(tok)} is not {what}")
            value = convert(tok)
            if integer and not _INT64_MIN < value < _INT64_MAX:
                raise FormatError(f"{path}:{lineno}: {shown(tok)} is out of the 64-bit integer range")
            values.append(value)
        counts.append(len(tokens))
    return np.array(values, dtype=np.int64 if integer else np.float64), np.array(counts, dtype=np.int64)
