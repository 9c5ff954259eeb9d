"""CSV edge lists (``.csv``): one ``src,dst,bytes[,msgs]`` line per message volume.

The format pandas (``DataFrame.to_csv``), networkx edge lists and most
profilers' exports share.  Choices made here (there is no standard):

* Ranks are 0-based MPI ranks.  Fields are separated by commas and/or blanks.
* An optional header names the columns, in any order: ``src`` (or
  ``source``, ``sender``), ``dst`` (``target``, ``dest``, ``receiver``),
  ``bytes`` (``weight``), ``msgs`` (``messages``, ``count``); ``src``, ``dst``
  and ``bytes`` are required.  Without a header the columns are
  ``src,dst,bytes[,msgs]``.
* ``#`` starts a comment.  A comment ``# n=<processes>`` before the data sets
  the number of processes (so trailing processes without messages are not
  lost); otherwise it is the largest rank + 1.
* Repeated pairs add up (like every pattern source); sums past the largest
  double are an error naming the lines.
* Message counts are whole numbers.
* Processes that exchange nothing (beyond the largest rank the entries
  name, or declared by ``# n=``) are limited to ``max_processes`` (default
  :data:`topomap.io.MAX_PROCESSES`): a 14-byte ``# n=400000000`` must not
  build a pattern of 400 million rows.
* The writer writes the header, ``msgs`` when the pattern has counts, and the
  ``# n=`` comment only when the largest rank does not imply ``n``.
"""

from __future__ import annotations

import os
import re

import numpy as np

from ..errors import FormatError
from ..pattern import Pattern
from ._format import number_column, write_rows
from ._limits import check_processes, from_entries, processes_allowed
from ._text import check_text_line, iter_lines, parse_block, parse_table, read_text
from .atomic import atomic_write

_ALIASES = {"src": "src", "source": "src", "sender": "src", "dst": "dst", "target": "dst", "dest": "dst",
            "receiver": "dst", "bytes": "bytes", "weight": "bytes", "msgs": "msgs", "messages": "msgs",
            "count": "msgs"}
_N_COMMENT = re.compile(r"#\s*n\s*=\s*([0-9]+)\s*$")
_NUMBER_START = re.compile(r"[+\-.0-9]")


def read_csv_edges(path: "str | os.PathLike[str]", max_processes: int | None = None) -> Pattern:
    """Read a CSV edge list ``src,dst,bytes[,msgs]`` (optional header, ``#`` comments).

    ``max_processes`` bounds the processes ``# n=`` (or a large rank) may add
    beyond the ``2 k`` that ``k`` edge lines can name (default
    :data:`topomap.io.MAX_PROCESSES`).

    Examples
    --------
    >>> import topomap as tm, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "e.csv")
    >>> _ = open(path, "w").write("# n=3\\nsrc,dst,bytes,msgs\\n0,1,100,2\\n1,0,50,1\\n0,1,10,1\\n")
    >>> pat = tm.io.read_csv_edges(path)
    >>> pat.n, pat.to_dense()[0].tolist(), pat.msgs.tolist()
    (3, [0.0, 110.0, 0.0], [3.0, 1.0])
    """
    path = os.fspath(path)
    data = read_text(path)
    columns, n_given, n_line, body_line, body_at = _preamble(path, data)
    provenance = {"source": "csv-edges", "file": path, "counted": "bytes (and msgs) per line, summed per pair"}
    fast = _read_table(data, columns, n_given, body_at, provenance, max_processes)
    if fast is not None:
        return fast
    block = parse_block(path, data, body_line, integer=False, comment=b"#", commas=True, start=body_at)
    lines = np.flatnonzero(block.counts)
    if columns is None:
        first = int(block.counts[lines[0]]) if lines.size else 3
        if first not in (3, 4):
            hint = " (a dense matrix? read it with format='dense')" if first > 4 else ""
            raise block.error(lines[0], f"{first} fields; an edge line is src,dst,bytes[,msgs]{hint}")
        columns = ["src", "dst", "bytes", "msgs"][:first]
    width = len(columns)
    bad = np.flatnonzero(block.counts[lines] != width)
    if bad.size:
        raise block.error(lines[bad[0]], f"{block.counts[lines[bad[0]]]} fields where {width} "
                                         f"({','.join(columns)}) were expected")
    table = block.values.reshape(-1, width)
    col = {name: table[:, k] for k, name in enumerate(columns)}
    for name in ("src", "dst"):
        ids = col[name]
        fractional = (ids != np.round(ids)) if ids.dtype.kind == "f" else False
        bad = np.flatnonzero((ids < 0) | fractional | (ids >= 2**31))
        if bad.size:
            raise block.error(lines[bad[0]], f"{name} {float(ids[bad[0]])!r} is not a rank (an integer 0 .. 2^31-1)")
    for name in ("bytes", "msgs"):
        if name in col:
            bad = np.flatnonzero(~np.isfinite(col[name]) | (col[name] < 0))
            if bad.size:
                raise block.error(lines[bad[0]], f"{name} {float(col[name][bad[0]])!r} is negative, NaN or infinite")
    if "msgs" in col:
        bad = np.flatnonzero(col["msgs"] != np.round(col["msgs"]))
        if bad.size:
            raise block.error(lines[bad[0]], f"msgs {float(col['msgs'][bad[0]])!r} is not a whole number of messages")
    src, dst = col["src"].astype(np.int64), col["dst"].astype(np.int64)
    if not src.size and n_given is None:
        raise FormatError(f"{path}: no edge lines (and no '# n=<processes>' comment)")
    top = int(max(src.max(), dst.max())) + 1 if src.size else 1
    n = top if n_given is None else n_given
    if n_given is not None and top > n_given:
        i = int(np.flatnonzero((src >= n) | (dst >= n))[0])
        raise block.error(lines[i], f"rank {max(src[i], dst[i])} is out of range: '# n={n}' declares {n} processes")
    where = f"{path}:{n_line}" if n_given is not None else \
        f"{path}:{block.first_line + lines[int(np.argmax(np.maximum(src, dst)))]}"
    check_processes(where, n, src.size, max_processes)
    return from_entries(path, src, dst, col["bytes"], col.get("msgs"), n, provenance,
                        lambda i: block.first_line + int(lines[i]))


def _read_table(data, columns: list[str] | None, n_given: int | None, body_at: int,
                provenance: dict, max_processes: int | None) -> Pattern | None:
    """The pattern straight from C-typed columns when the file is a clean table of ranks and
    valid volumes; None sends the file to the checks above, which name what is wrong."""
    if columns is None:
        first = next((raw for _, raw in iter_lines(data, body_at)
                      if raw.split(b"#", 1)[0].replace(b",", b" ").split()), None)
        if first is None:
            return None
        width = len(first.split(b"#", 1)[0].replace(b",", b" ").split())
        if width not in (3, 4):
            return None
        columns = ["src", "dst", "bytes", "msgs"][:width]
    types = "".join("n" if name in ("src", "dst") else "f" for name in columns)
    table = parse_table(data, types, comment=b"#", commas=True, start=body_at)
    if table is None:
        return None
    col = dict(zip(columns, table))
    src, dst = col["src"], col["dst"]
    if not src.size and n_given is None:
        return None
    top = max(int(src.max()), int(dst.max())) + 1 if src.size else 1
    n = top if n_given is None else n_given
    if n_given is not None and top > n_given:
        return None
    if "msgs" in col and bool((col["msgs"] != np.round(col["msgs"])).any()):
        return None
    if n > processes_allowed(src.size, max_processes):
        return None
    return Pattern._adopt(n, src, dst, col["bytes"], col.get("msgs"), provenance)


def _preamble(path: str, data: bytes) -> tuple[list[str] | None, int | None, int, int, int]:
    """(header columns or None, n from '# n=', its line, line number and offset where data lines start)."""
    n_given = None
    n_line = 0
    offset = 0
    for lineno, (next_offset, raw) in enumerate(iter_lines(data), 1):
        text = check_text_line(path, lineno, raw).strip()
        if text.startswith("#"):
            m = _N_COMMENT.fullmatch(text)
            if m:
                n_given, n_line = int(m.group(1)), lineno
                if not 1 <= n_given < 2**31:
                    raise FormatError(f"{path}:{lineno}: n={n_given} is outside 1 .. 2^31-1")
            offset = next_offset
            continue
        if not text:
            offset = next_offset
            continue
        if _NUMBER_START.match(text):
            return None, n_given, n_line, lineno, offset
        names = [f.strip().lower() for f in re.split(r"[,\s]+", text.split("#", 1)[0].strip())]
        unknown = [f for f in names if f not in _ALIASES]
        if unknown:
            raise FormatError(f"{path}:{lineno}: unknown column {unknown[0]!r}; columns are src, dst, bytes[, msgs]")
        columns = [_ALIASES[f] for f in names]
        missing = [c for c in ("src", "dst", "bytes") if c not in columns]
        if missing or len(set(columns)) != len(columns):
            raise FormatError(f"{path}:{lineno}: header {text[:60]!r} must name src, dst and bytes (and "
                              "optionally msgs) once each")
        return columns, n_given, n_line, lineno + 1, next_offset
    return None, n_given, n_line, 1, len(data)


def write_csv_edges(pattern: Pattern, path: "str | os.PathLike[str]") -> None:
    """Write ``src,dst,bytes[,msgs]`` with a header, one line per communicating pair.

    Examples
    --------
    >>> import topomap as tm, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "e.csv")
    >>> tm.io.write_csv_edges(tm.Pattern.from_edges([0], [1], [2.5], [1], n=3), path)
    >>> print(open(path).read(), end="")
    # n=3
    src,dst,bytes,msgs
    0,1,2.5,1
    """
    path = os.fspath(path)
    fmt_b, byts = number_column(pattern.bytes)
    columns = [pattern.senders().astype(np.int64), pattern.indices.astype(np.int64), byts]
    row, header = f"%d,%d,{fmt_b}", "src,dst,bytes"
    if pattern.msgs is not None:
        fmt_m, msgs = number_column(pattern.msgs)
        columns.append(msgs)
        row, header = row + f",{fmt_m}", header + ",msgs"
    top = int(max(columns[0].max(), columns[1].max())) + 1 if pattern.nnz else 0
    try:
        with atomic_write(path, encoding="ascii") as fh:
            if top != pattern.n:
                fh.write(f"# n={pattern.n}\n")
            fh.write(header + "\n")
            write_rows(fh, row + "\n", columns)
    except OSError as exc:
        raise FormatError(f"{path}: cannot write ({exc.strerror})") from None
