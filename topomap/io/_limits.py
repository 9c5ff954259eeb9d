"""What a file may make a reader allocate: sizes declared in headers, checked against content.

Why: a header is a promise the file need not keep.  ``# n=400000000`` in a
14-byte CSV file, or a METIS header ``2000000000 0``, would make a reader
allocate gigabytes (8 bytes per process for the pattern's row pointers alone)
before it reads anything that contradicts the header.  So every reader bounds
what a header declares by what the rest of the file can hold:

* A count of entries or vertices is bounded by the bytes after the header:
  each entry takes at least a few bytes (its digits and separators; the reader
  says how many in a comment), so ``count <= (bytes + 1) // entry_bytes`` (the
  last entry may lack its newline).
* A number of processes is bounded by the entries: ``k`` entries name at most
  ``2 k`` processes; up to :data:`MAX_PROCESSES` more may be declared without
  content (processes that exchange nothing), or ``max_processes=`` more when
  the caller passes it.  The same bound holds for a number of processes
  implied by a large rank in the entries.

Entries that are finite one by one can still sum past the largest double
(two entries of 1e308 for the same pair): :func:`from_entries` names the lines.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import FormatError, PatternError
from ..pattern import Pattern, _overflow_message

#: Processes a file may declare (or imply by a large rank) beyond the ``2 k`` its ``k`` entries
#: can name: about 32 MB of row pointers.  Readers take ``max_processes=`` to raise it.
MAX_PROCESSES = 1 << 22


def check_count(where: str, what: str, count: int, room: int, entry_bytes: int) -> None:
    """Refuse ``count`` entries when ``room`` bytes cannot hold them at ``entry_bytes`` each.

    ``where`` is ``path:line`` of the declaration, ``what`` names the entries
    (``"entries"``, ``"vertices"``).
    """
    most = (max(room, 0) + 1) // entry_bytes
    if count > most:
        raise FormatError(f"{where}: declares {count} {what} but only {most} fit in the {max(room, 0)} bytes after "
                          f"it (each takes at least {entry_bytes} byte{'s' if entry_bytes > 1 else ''}; truncated file?)")


def processes_allowed(entries: int, max_processes: int | None) -> int:
    """The most processes a file of ``entries`` entries may hold."""
    return 2 * entries + (MAX_PROCESSES if max_processes is None else int(max_processes))


def check_processes(where: str, n: int, entries: int, max_processes: int | None) -> None:
    """Refuse ``n`` processes when more than ``max_processes`` of them can have no entry."""
    limit = MAX_PROCESSES if max_processes is None else int(max_processes)
    if n > processes_allowed(entries, max_processes):
        raise FormatError(f"{where}: {n} processes, but the file's {entries} entries name at most {2 * entries} "
                          f"of them and at most max_processes={limit} more may have no entries (pass a larger "
                          "max_processes to read this file)")


def from_entries(path: str, src: np.ndarray, dst: np.ndarray, byts: np.ndarray, msgs: np.ndarray | None, n: int,
                 provenance: dict, line_of: Callable[[int], "int | str"]) -> Pattern:
    """:meth:`Pattern.from_edges` of entries a reader has checked one by one; a sum that
    overflows is a FormatError naming its entries by ``line_of(entry index)``: a line
    number, or ``"file:line"`` for readers of several files."""
    try:
        return Pattern.from_edges(src, dst, byts, msgs, n=n, provenance=provenance)
    except PatternError as exc:
        def name(i: int) -> str:
            where = line_of(i)
            return f"line {where}" if isinstance(where, (int, np.integer)) else str(where)
        message = _overflow_message(src, dst, byts, msgs, name) or str(exc)
        raise FormatError(f"{path}: {message}") from None
