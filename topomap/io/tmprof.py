"""Profiles written by topomap's PMPI profiler (``.tmprof``, format ``topomap-pmpi 1``).

The profiler (``csrc/profiler/topomap_pmpi.c``, run by ``topomap profile``)
writes one text file per run::

    # topomap-pmpi 1
    # ranks: 4
    # collectives: off | <the collective models used>
    # threads: single | multiple
    # mpi: Open MPI v4.1.4, ...
    # seconds: 0.012
    # outside_world: 0 0 0 0
    # failed_ranks: none
    # columns: src dst bytes msgs coll_bytes coll_msgs
    0 1 4096 3 0 0
    ...

One line per (sender, receiver) pair that exchanged anything, sorted by
``(src, dst)``: point-to-point bytes and messages, then the bytes and
messages of collectives expanded by the stated models (zero when
collectives were not counted).  Ranks are ``MPI_COMM_WORLD`` ranks.

Counts are 64-bit (the profiler's ``int64_t``): a larger number is refused
naming its line; bytes of a pair's columns are summed as doubles, so the sum
of two large counts cannot wrap around.  ``# ranks:`` may declare at most
``max_processes`` (default :data:`topomap.io.MAX_PROCESSES`) ranks beyond the
``2 k`` that ``k`` rows can name.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import FormatError
from ..pattern import Pattern
from ._format import write_rows
from ._limits import check_processes, from_entries
from ._text import read_bytes
from .atomic import atomic_write

__all__ = ["read_tmprof", "write_tmprof", "MAGIC"]

MAGIC = "# topomap-pmpi 1"
_COLUMNS = "src dst bytes msgs coll_bytes coll_msgs"
_WHAT = ("all", "p2p", "collectives")


_INT64_MAX = 2**63 - 1


def _header(path: str, lines: list[str]) -> tuple[dict[str, str], dict[str, int], int]:
    """Header ``key: value`` pairs, the line of each key, and the number of header lines."""
    if not lines or lines[0].rstrip("\n") != MAGIC:
        first = lines[0].rstrip("\n")[:60] if lines else ""
        raise FormatError(f"{path}:1: not a topomap profile: expected {MAGIC!r}, got {first!r}")
    head: dict[str, str] = {}
    at: dict[str, int] = {}
    count = 1
    for lineno, line in enumerate(lines[1:], 2):
        if not line.startswith("#"):
            break
        key, sep, value = line[1:].partition(":")
        if not sep:
            raise FormatError(f"{path}:{lineno}: header line without 'key: value': {line.strip()!r}")
        head[key.strip()] = value.strip()
        at[key.strip()] = lineno
        count = lineno
    for key in ("ranks", "columns"):
        if key not in head:
            raise FormatError(f"{path}: header has no '{key}:' line")
    if head["columns"] != _COLUMNS:
        raise FormatError(f"{path}:{at['columns']}: columns are {head['columns']!r}, expected {_COLUMNS!r}")
    if not (head["ranks"].isascii() and head["ranks"].isdigit()) or not 1 <= int(head["ranks"]) < 2**31:
        raise FormatError(f"{path}:{at['ranks']}: 'ranks: {head['ranks']}' is not a positive integer below 2^31")
    failed = head.get("failed_ranks", "none")
    if failed != "none":
        raise FormatError(f"{path}:{at['failed_ranks']}: ranks {failed} lost their counts (out of memory during "
                          "the run); the profile is incomplete")
    return head, at, count


def _rows(path: str, lines: list[str], first: int, n: int) -> np.ndarray:
    """The data lines as an int64 array of shape (k, 6), validated line by line."""
    rows = np.zeros((len(lines) - first, 6), dtype=np.int64)
    k = 0
    for lineno, line in enumerate(lines[first:], first + 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6 or not all(p.isascii() and p.isdigit() for p in parts):
            raise FormatError(f"{path}:{lineno}: expected 6 non-negative integers ({_COLUMNS}), got {line.strip()!r}")
        big = [p for p in parts if len(p.lstrip("0")) > 19 or int(p) > _INT64_MAX]  # short-circuit: no 4300-digit int()
        if big:
            raise FormatError(f"{path}:{lineno}: {big[0][:40]} is out of the 64-bit integer range the profiler "
                              "counts in")
        vals = [int(p) for p in parts]
        if vals[0] >= n or vals[1] >= n:
            raise FormatError(f"{path}:{lineno}: rank {max(vals[0], vals[1])} is out of range [0, {n})")
        if (vals[2] and not vals[3]) or (vals[4] and not vals[5]):
            raise FormatError(f"{path}:{lineno}: bytes without messages")
        if k and (vals[0], vals[1]) <= (rows[k - 1, 0], rows[k - 1, 1]):
            raise FormatError(f"{path}:{lineno}: pair ({vals[0]}, {vals[1]}) is repeated or out of order")
        rows[k] = vals
        k += 1
    return rows[:k]


def read_tmprof(path: "str | os.PathLike[str]", what: str = "all", max_processes: int | None = None) -> Pattern:
    """Read a profile of the topomap PMPI profiler.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.tmprof`` file.
    what : {"all", "p2p", "collectives"}
        Which traffic becomes the pattern: point-to-point messages,
        collectives (as expanded by the profiler's models; zero unless the
        run counted them) or both summed.
    max_processes : int, optional
        How many ranks ``# ranks:`` may declare beyond the ``2 k`` that ``k``
        rows name (default :data:`topomap.io.MAX_PROCESSES`).

    Returns
    -------
    Pattern
        ``n`` = number of ranks; bytes and message counts per pair.  The
        header is kept in ``provenance`` (``mpi``, ``collectives``,
        ``seconds``, ``outside_world``, the totals of each column).

    Raises
    ------
    FormatError
        Naming the file and line: wrong magic line, missing header keys,
        malformed or out-of-order rows, ranks out of range, counts beyond
        64 bits, more ranks than allowed, or a profile whose ranks lost
        their counts.

    Examples
    --------
    >>> import os, tempfile, topomap as tm
    >>> path = os.path.join(tempfile.mkdtemp(), "run.tmprof")
    >>> with open(path, "w") as f:
    ...     _ = f.write("# topomap-pmpi 1\\n# ranks: 3\\n# columns: src dst bytes msgs coll_bytes coll_msgs\\n"
    ...                 "0 1 800 2 0 0\\n1 2 400 1 16 1\\n")
    >>> pat = tm.io.read(path)
    >>> pat.to_dense().tolist()
    [[0.0, 800.0, 0.0], [0.0, 0.0, 416.0], [0.0, 0.0, 0.0]]
    >>> read_tmprof(path, what="p2p").msgs.tolist()
    [2.0, 1.0]
    """
    path = os.fspath(path)
    if what not in _WHAT:
        raise ValueError(f"what={what!r}: expected one of {', '.join(_WHAT)}")
    data = read_bytes(path)
    try:
        lines = data.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        lineno = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(f"{path}:{lineno}: not UTF-8 text (binary file?)") from None
    head, at, first = _header(path, lines)
    n = int(head["ranks"])
    rows = _rows(path, lines, first, n)
    check_processes(f"{path}:{at['ranks']}", n, len(rows), max_processes)
    cols = {"all": ([2, 4], [3, 5]), "p2p": ([2], [3]), "collectives": ([4], [5])}[what]
    as_float = rows.astype(np.float64)  # sums as doubles: two int64 counts may add past 2^63
    byts = as_float[:, cols[0]].sum(axis=1)
    msgs = as_float[:, cols[1]].sum(axis=1)
    prov: dict[str, Any] = {
        "source": "tmprof", "file": path, "what": what, "ranks": n,
        "collectives": head.get("collectives", "off"), "mpi": head.get("mpi", "unknown"),
        "threads": head.get("threads", "single"),
        "p2p_bytes": float(as_float[:, 2].sum()), "p2p_msgs": float(as_float[:, 3].sum()),
        "coll_bytes": float(as_float[:, 4].sum()), "coll_msgs": float(as_float[:, 5].sum()),
    }
    if "seconds" in head:
        try:
            prov["seconds"] = float(head["seconds"])
        except ValueError:
            raise FormatError(f"{path}:{at['seconds']}: 'seconds: {head['seconds']}' is not a number") from None
    if "outside_world" in head:
        prov["outside_world"] = head["outside_world"]

    def line_of(row: int) -> int:
        return [lineno for lineno, line in enumerate(lines[first:], first + 1) if line.split()][row]

    return from_entries(path, rows[:, 0], rows[:, 1], byts, msgs, n, prov, line_of)


def write_tmprof(pattern: Pattern, path: "str | os.PathLike[str]") -> None:
    """Write a pattern as a point-to-point-only profile (message counts 1 per pair if unknown).

    Examples
    --------
    >>> import os, tempfile, topomap as tm
    >>> path = os.path.join(tempfile.mkdtemp(), "p.tmprof")
    >>> tm.io.write(tm.Pattern.from_edges([0, 1], [1, 0], [5.0, 7.0]), path)
    >>> tm.io.read(path).total_bytes
    12.0
    """
    path = os.fspath(path)
    frac = pattern.bytes != np.round(pattern.bytes)
    if frac.any():
        i = int(np.flatnonzero(frac)[0])
        raise FormatError(f"{path}: a profile holds whole bytes; entry {i} has {pattern.bytes[i]!r}")
    msgs = np.ones(pattern.nnz) if pattern.msgs is None else np.maximum(np.round(pattern.msgs), 1)
    big = np.flatnonzero((pattern.bytes >= 2.0**63) | (msgs >= 2.0**63))
    if big.size:
        i = int(big[0])
        raise FormatError(f"{path}: a profile counts in 64 bits; entry {i} has {pattern.bytes[i]!r} bytes in "
                          f"{msgs[i]!r} messages")
    zeros = np.zeros(pattern.nnz, dtype=np.int64)
    try:
        with atomic_write(path, encoding="utf-8") as fh:
            fh.write(f"{MAGIC}\n# ranks: {pattern.n}\n# collectives: off\n# failed_ranks: none\n# columns: {_COLUMNS}\n")
            write_rows(fh, "%d %d %d %d %d %d\n", [pattern.senders().astype(np.int64), pattern.indices.astype(np.int64),
                                                  pattern.bytes.astype(np.int64), msgs.astype(np.int64), zeros, zeros])
    except OSError as exc:
        raise FormatError(f"{path}: cannot write ({exc.strerror})") from None
