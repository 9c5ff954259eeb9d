"""Whole-block number parsing for the text readers, with errors naming file and line.

Why two tiers: a Python loop over lines parses about 10 MB/s; the C core's
tokenizer (``topomap._core.scan_numbers``, ``csrc/core/tokenize_*.c``) parses a
whole block at about a ns per byte, on several threads, but only says *where*
the first bad token is.  So :func:`parse_block` parses in C; on a bad token the
strict line-by-line tier re-reads that one line and raises
:class:`~topomap.errors.FormatError` naming the file, line and token; when C
cannot convert a valid number (a decimal longer than 127 characters, an unusual
C locale) the strict tier parses the whole block.  The strict tier is also the
reference the C tier is tested against.

Readers first try the shape their format has, straight from C and typed as the
pattern keeps it: :func:`parse_table` (fixed-width lines: CSV, MatrixMarket),
:func:`parse_rows` (adjacency lines: METIS, Scotch), :func:`parse_nonzeros`
(dense matrices: only the non-zero numbers).  ``None`` says "not that clean
shape": the reader then takes :func:`parse_block` and its checks, which name
the fault.

Large files are memory-mapped (:func:`read_text`): the tokenizer reads the page
cache in place instead of copying the file into a fresh buffer, which costs
more than parsing it.  A file truncated by another process while it is read
then ends the process with SIGBUS, as with ``numpy.memmap``.

Token grammar (both tiers): tokens are separated by ASCII whitespace (and
commas when asked); integers are ``[+-]?[0-9]+`` strictly inside the int64
range; floats add a decimal point, an exponent, ``inf``/``infinity``/``nan``
(callers reject non-finite values with their own message).
"""

from __future__ import annotations

import mmap
import os
import re
import stat
from dataclasses import dataclass

import numpy as np

from .. import _core
from ..errors import FormatError

_INT_RE = re.compile(rb"[+-]?[0-9]+")
_FLOAT_RE = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)",
                       re.IGNORECASE)
_INT64_MAX = int(np.iinfo(np.int64).max)
_INT64_MIN = int(np.iinfo(np.int64).min)
_COMMA_TO_BLANK = bytes.maketrans(b",", b" ")
_LEAD_BLANKS = b" \t\r\f\v"
_MAP_AT = 1 << 20  # smaller files are read: mapping costs more than copying them

#: Number of chunks a text is parsed in (0: chosen from its size and the threads).  The result
#: never depends on it; tests set it to check that.
CHUNKS = 0


#: The most bytes read from a file that has no size (a pipe, a FIFO, a character device such as
#: ``/dev/zero``): an endless stream must end in an error, not in all the memory there is.
MAX_STREAM_BYTES = 1 << 30
_STREAM_CHUNK = 1 << 20


def read_bytes(path: str) -> bytes:
    """The whole file; an unreadable path is a FormatError naming it.

    A regular file is read whole.  Anything else is read a chunk at a time: a
    NUL byte (binary data, ``/dev/zero``) or more than :data:`MAX_STREAM_BYTES`
    bytes is a FormatError as soon as it is seen.
    """
    return _read(path, mapped=False)


def _read_stream(path: str, fh) -> bytes:
    parts: list[bytes] = []
    size = lines = 0
    while True:
        chunk = fh.read(_STREAM_CHUNK)
        if not chunk:
            return b"".join(parts)
        nul = chunk.find(b"\x00")
        if nul >= 0:
            lineno = lines + chunk.count(b"\n", 0, nul) + 1
            raise FormatError(f"{path}:{lineno}: NUL byte (binary file?)")
        size += len(chunk)
        if size > MAX_STREAM_BYTES:
            raise FormatError(f"{path}: more than {MAX_STREAM_BYTES} bytes from a stream that is not a regular "
                              "file (endless?); save it to a file first")
        lines += chunk.count(b"\n")
        parts.append(chunk)


def read_text(path: str) -> "bytes | mmap.mmap":
    """The whole file, memory-mapped when it is large (read in place, not copied).

    The result supports ``len``, ``find``, slicing (to ``bytes``) and the buffer
    protocol; ``bytes(result)`` gives a copy for code that needs ``bytes``.
    Streams are read as :func:`read_bytes` reads them.
    """
    return _read(path, mapped=True)


def _read(path: str, mapped: bool) -> "bytes | mmap.mmap":
    try:
        with open(path, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode):
                return _read_stream(path, fh)
            if mapped and info.st_size >= _MAP_AT:
                try:
                    return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                except (OSError, ValueError):  # a file system that cannot map files
                    pass
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


def iter_lines(data, start: int = 0):
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


def line_at(data, index: int) -> bytes:
    """Line ``index`` (0-based) of a buffer, without its newline."""
    buf = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(buf == 10)
    start = int(newlines[index - 1]) + 1 if index > 0 else 0
    stop = int(newlines[index]) if index < newlines.size else buf.size
    return bytes(buf[start:stop])


def _strip_comment(raw: bytes, comment: bytes | None, whole_line: bool) -> bytes:
    """A line as the tokenizer sees it: without its comment."""
    if comment is None:
        return raw
    if whole_line:
        return b"" if raw.lstrip(_LEAD_BLANKS).startswith(comment) else raw
    return raw.split(comment, 1)[0]


@dataclass(frozen=True)
class Block:
    """Numbers of a block of lines.

    ``values`` holds every number in file order (int64 when every token is an
    integer, else float64), ``counts[i]`` how many are on line
    ``first_line + i``; ``comment_lines`` lists the block-relative indices of
    whole-line comments (when the caller asked for them); ``data`` is the text
    as given, kept for error messages, read with the comment marker and commas
    setting the block was parsed with.
    """

    path: str
    data: object
    values: np.ndarray
    counts: np.ndarray
    first_line: int
    comment_lines: np.ndarray
    commas: bool
    comment: bytes | None
    whole_line_comments: bool

    def line_of(self, token: int) -> int:
        """File line number of the ``token``-th number of the block."""
        return self.first_line + int(np.searchsorted(np.cumsum(self.counts), token, side="right"))

    def tokens(self, line_index: int) -> list[bytes]:
        """The tokens of block-relative line ``line_index``, as written."""
        raw = _strip_comment(line_at(self.data, int(line_index)), self.comment, self.whole_line_comments)
        return (raw.translate(_COMMA_TO_BLANK) if self.commas else raw).split()

    def error(self, line_index: int, message: str) -> FormatError:
        """A FormatError naming block-relative line ``line_index``."""
        return FormatError(f"{self.path}:{self.first_line + int(line_index)}: {message}")


def _view(data, start: int):
    return memoryview(data)[start:] if start else data


def _comment_byte(comment: bytes | None) -> int:
    if comment is None:
        return -1
    if len(comment) != 1 or comment in b"0123456789+-":
        raise ValueError(f"comment marker {comment!r} must be one byte, not a digit or sign")
    return comment[0]


def parse_block(path: str, data, first_line: int = 1, *, integer: bool, comment: bytes | None = None,
                whole_line_comments: bool = False, commas: bool = False, start: int = 0) -> Block:
    """Parse every number in ``data[start:]`` (lines ``first_line``, ``first_line + 1``, ...).

    Parameters
    ----------
    data : bytes or buffer
        The text (bytes, or the memory map :func:`read_text` gives).
    integer : bool
        Integers only; otherwise floats are allowed too (the values are
        float64 unless every token is an integer).
    comment : bytes, optional
        One-byte comment marker; text from it to the end of the line is
        ignored, or, with ``whole_line_comments``, only lines starting with it
        (after blanks) are comments and a marker elsewhere is a bad token.
    commas : bool
        Commas separate tokens like blanks.
    start : int
        Offset of the block in ``data``.
    """
    view = _view(data, start)
    result = _core.scan_numbers(view, integer, commas, _comment_byte(comment), whole_line_comments, True, CHUNKS)
    if len(result) == 6:
        values, line_counts, _, _, _, ncomments = result
        comment_lines = np.zeros(0, dtype=np.int64)
        if ncomments:
            comment_lines = np.flatnonzero(line_counts < 0)
            line_counts[comment_lines] = 0
        return Block(path, view, values, line_counts, first_line, comment_lines, commas, comment, whole_line_comments)
    raw = bytes(view)
    comment_lines = np.zeros(0, dtype=np.int64)
    stripped = raw
    if comment is not None and comment in raw:
        stripped, comment_lines = _drop_comments(raw, comment, whole_line_comments)
    text = stripped.translate(_COMMA_TO_BLANK) if commas else stripped
    if result[0] is None:
        _raise_for_line(path, text, first_line, integer, raw.count(b"\n", 0, result[1]))
    values, line_counts = _parse_slow(path, text, first_line, integer)
    # a comment on a last line without a newline leaves no line behind
    return Block(path, view, values, line_counts, first_line, comment_lines[comment_lines < line_counts.size], commas,
                 comment, whole_line_comments)


def parse_table(data, types: str, *, comment: bytes | None = None, whole_line_comments: bool = False,
                commas: bool = False, start: int = 0) -> "list[np.ndarray] | None":
    """The columns of a text whose every line holding numbers holds ``len(types)`` of them.

    ``types[j]`` says what column ``j`` holds: ``"i"`` int64 integers, ``"n"``
    int32 integers in ``[0, 2^31)``, ``"f"`` float64 numbers, ``"d"`` float64
    from integers.  ``None`` when the text is anything else (another width, a
    token outside the grammar or its column's type): :func:`parse_block` then
    tells what is wrong.  Other arguments as for :func:`parse_block`.
    """
    return _core.scan_table(_view(data, start), types, commas, _comment_byte(comment), whole_line_comments, CHUNKS)


def parse_rows(data, n: int, *, head: int, degree: bool, step: int, weight_first: bool, base: int,
               start: int = 0) -> "tuple[np.ndarray, np.ndarray, np.ndarray] | None":
    """Adjacency lists, line ``i`` of ``data[start:]`` being row ``i`` of ``n``.

    A row holds ``head`` non-negative integers (vertex values, not kept), then
    (with ``degree``) its number of entries, then its entries of ``step``
    integers: a neighbour id in ``[base, base + n)`` and, when ``step`` is 2, a
    non-negative weight (first when ``weight_first``).  Lines after the last
    row hold no numbers.  Returns ``(row_ptr, dst, weights)`` (CSR arrays, ids
    less ``base``, weights 1 when there are none), or ``None`` for any other
    text.
    """
    return _core.scan_rows(_view(data, start), n, head, int(degree), step, weight_first, base, CHUNKS)


def parse_nonzeros(data, *, comment: bytes | None = None,
                   commas: bool = False) -> "tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None":
    """The numbers of ``data`` that are not zero: ``(line, column, value, line_counts)``
    (0-based line and position in the line; ``line_counts`` as :attr:`Block.counts`), or
    ``None`` when a token is outside the grammar (:func:`parse_block` names it)."""
    found = _core.scan_nonzeros(data, commas, _comment_byte(comment), False, CHUNKS)
    return found if len(found) == 4 else None


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


def _parse_fast(data, integer: bool, commas: bool, chunks: int = 0) -> "tuple[np.ndarray, np.ndarray] | int | None":
    """(values, per-line counts) from the C tokenizer; else the byte offset of a token outside
    the grammar, or None when the strict tier must convert the block."""
    result = _core.scan_numbers(data, integer, commas, -1, False, True, chunks)
    if result[0] is False:
        return None
    return result[1] if result[0] is None else (result[0], result[1])


def _raise_for_line(path: str, text: bytes, first_line: int, integer: bool, line_index: int) -> None:
    """Raise the strict tier's error for block-relative line ``line_index`` of ``text``."""
    _parse_slow(path, line_at(text, line_index), first_line + line_index, integer)


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
