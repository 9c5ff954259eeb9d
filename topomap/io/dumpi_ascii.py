"""DUMPI traces in the text form ``dumpi2ascii`` prints: one file per rank.

Source: SST DUMPI (``sstsimulator/sst-dumpi``) ``dumpi/bin/dumpi2ascii.c``,
``dumpi2ascii-callbacks.c`` and ``dumpi2ascii-defs.h`` (record layout),
``dumpi/common/constants.{h,c}`` (datatype and communicator indices).  A call
prints as::

    MPI_Send entering at walltime 8.046512000, cputime 0.020001000 seconds in thread 0.
    [Perfcounters: [...]]
    int count=1024
    MPI_Datatype datatype=5 (MPI_BYTE)
    int dest=1
    int tag=1
    MPI_Comm comm=2 (MPI_COMM_WORLD)
    MPI_Send returning at walltime 8.046530000, cputime 0.020019000 seconds in thread 0.

The subset parsed: the send half of ``MPI_Send``, ``MPI_Bsend``, ``MPI_Ssend``,
``MPI_Rsend``, ``MPI_Isend``, ``MPI_Ibsend``, ``MPI_Issend``, ``MPI_Irsend``,
``MPI_Sendrecv`` (``sendcount``/``sendtype``/``dest``) and
``MPI_Sendrecv_replace``; the ``Datatype <i> (<name>) has size <s>`` lines of
``dumpi2ascii -X`` (or ``-a``).  Everything else (receives, waits,
collectives, header, footer) is skipped.

Choices the source leaves open:

* The rank of a file is the last number in its name (DUMPI names binary
  traces ``dumpi-<date>-<rank>.bin``; convert each to a matching text file).
* Bytes = count x datatype size.  Sizes come from the file's ``-X`` lines
  when present, else from the built-in MPI types' sizes on LP64 platforms
  (``MPI_LONG`` 8, ``MPI_LONG_DOUBLE`` 16, ``MPI_DOUBLE_INT`` 12, ...); a
  derived type without a ``-X`` size is an error naming the call.
* Destinations are world ranks only on ``MPI_COMM_WORLD``: sends on
  user-defined communicators (whose membership the text form does not
  carry) and to negative destinations (``MPI_PROC_NULL``) are skipped and
  counted in ``provenance["skipped"]``; ``MPI_COMM_SELF`` sends are
  self-messages.
* Persistent sends (``MPI_Send_init`` + ``MPI_Start``) are not counted.
"""

from __future__ import annotations

import os
import re
from typing import Sequence

import numpy as np

from .. import _core
from ..errors import FormatError
from ..pattern import Pattern
from ._ranks import rank_files
from ._text import read_bytes

# Sizes of DUMPI's built-in datatypes (constants.h order), as MPI_Type_size gives them on LP64.
BUILTIN_SIZES = {
    "MPI_CHAR": 1, "MPI_SIGNED_CHAR": 1, "MPI_UNSIGNED_CHAR": 1, "MPI_BYTE": 1, "MPI_WCHAR": 4,
    "MPI_SHORT": 2, "MPI_UNSIGNED_SHORT": 2, "MPI_INT": 4, "MPI_UNSIGNED": 4, "MPI_LONG": 8,
    "MPI_UNSIGNED_LONG": 8, "MPI_FLOAT": 4, "MPI_DOUBLE": 8, "MPI_LONG_DOUBLE": 16, "MPI_LONG_LONG_INT": 8,
    "MPI_UNSIGNED_LONG_LONG": 8, "MPI_LONG_LONG": 8, "MPI_PACKED": 1, "MPI_LB": 0, "MPI_UB": 0,
    "MPI_FLOAT_INT": 8, "MPI_DOUBLE_INT": 12, "MPI_LONG_INT": 12, "MPI_SHORT_INT": 6, "MPI_2INT": 8,
    "MPI_LONG_DOUBLE_INT": 20,
}
SEND_CALLS = ("MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend", "MPI_Isend", "MPI_Ibsend", "MPI_Issend",
              "MPI_Irsend", "MPI_Sendrecv", "MPI_Sendrecv_replace")
_COMM_WORLD, _COMM_SELF, _FIRST_USER_COMM = 2, 3, 4


def _enter(calls: Sequence[str]) -> bytes:
    # a leading newline (the text gets one prepended) gives the regex engine a literal to skip to
    return (rb"\nMPI_(" + b"|".join(c[4:].encode() for c in calls) + rb") entering at walltime [0-9.]+, cputime [0-9.]+ "
            rb"seconds in thread [0-9]+\.\r?\n(?:Perfcounters: [^\n]*\n)?")


def _value(kind: bytes, name: bytes) -> bytes:
    return kind + b" " + name + rb"=(-?[0-9]+)[^\n]*\n"


def _skip(kind: bytes, name: bytes) -> bytes:
    return kind + b" " + name + rb"=[^\n]*\n"


_TYPE = rb"MPI_Datatype %s=([0-9]+) \(([^)\n]*)\)\r?\n"
_COMM = rb"MPI_Comm comm=([0-9]+) \(([^)\n]*)\)\r?\n"
_RECORDS = [re.compile(body) for body in (
    _enter(SEND_CALLS[:8]) + _value(b"int", b"count") + _TYPE % b"datatype" + _value(b"int", b"dest")
    + _skip(b"int", b"tag") + _COMM,
    _enter(["MPI_Sendrecv"]) + _value(b"int", b"sendcount") + _TYPE % b"sendtype" + _value(b"int", b"dest")
    + _skip(b"int", b"sendtag") + _skip(b"int", b"recvcount") + _skip(b"MPI_Datatype", b"recvtype")
    + _skip(b"int", b"source") + _skip(b"int", b"recvtag") + _COMM,
    _enter(["MPI_Sendrecv_replace"]) + _value(b"int", b"count") + _TYPE % b"datatype" + _value(b"int", b"dest")
    + _skip(b"int", b"sendtag") + _skip(b"int", b"source") + _skip(b"int", b"recvtag") + _COMM,
)]
_ANY_SEND = re.compile(rb"\nMPI_(?:" + b"|".join(c[4:].encode() for c in SEND_CALLS) + rb") entering at walltime")
_ANY_CALL = re.compile(rb"\nMPI_\w+ entering at walltime ")
_SIZES = re.compile(rb"\nDatatype ([0-9]+) \(([^)\n]*)\) has size (-?[0-9]+)\r?(?=\n)")


def _int64(f: str, data: bytes, record: tuple, field: int, what: str) -> int:
    """A record's integer field, refused (naming the line) outside int64."""
    value = int(record[field])
    if not -2**63 <= value < 2**63:
        raise FormatError(f"{f}:{_line(data, record[-1])}: {what} {value} is out of range")
    return value


def read_dumpi_ascii(path: "str | os.PathLike[str] | Sequence[str | os.PathLike[str]]") -> Pattern:
    """Read the ``dumpi2ascii`` text of every rank of one run.

    Parameters
    ----------
    path : str, path or sequence of paths
        One rank's file (its siblings, named alike with another rank number,
        are found) or all the files.

    Returns
    -------
    Pattern
        Bytes and messages sent per (sender, receiver) pair on
        ``MPI_COMM_WORLD``; provenance counts the sends skipped.

    Examples
    --------
    >>> import topomap as tm, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> call = ("MPI_Send entering at walltime 1.0, cputime 0.1 seconds in thread 0.\\n"
    ...         "int count=4\\nMPI_Datatype datatype=14 (MPI_DOUBLE)\\nint dest={dest}\\nint tag=0\\n"
    ...         "MPI_Comm comm=2 (MPI_COMM_WORLD)\\n"
    ...         "MPI_Send returning at walltime 1.1, cputime 0.1 seconds in thread 0.\\n")
    >>> for r in range(2):
    ...     _ = open(os.path.join(d, f"rank-{r}.dumpi.txt"), "w").write(call.format(dest=1 - r))
    >>> tm.io.read_dumpi_ascii(os.path.join(d, "rank-0.dumpi.txt")).to_dense().tolist()
    [[0.0, 32.0], [32.0, 0.0]]
    """
    files, label = rank_files(path)
    n = len(files)
    fast = _read_scanned(files, label)
    if fast is not None:
        return fast
    src: list[np.ndarray] = []
    dst: list[np.ndarray] = []
    nbytes: list[np.ndarray] = []
    skipped = {"user-defined communicator": 0, "negative destination (MPI_PROC_NULL)": 0}
    for rank, f in enumerate(files):
        data = read_bytes(f)
        records = _records(f, data)
        sizes = {int(i): (name.decode(errors="replace"), int(s)) for i, name, s in _SIZES.findall(b"\n" + data + b"\n")}
        dest = np.array([_int64(f, data, r, 2, "destination") for r in records], dtype=np.int64)
        comm = np.array([_int64(f, data, r, 4, "communicator") for r in records], dtype=np.int64)
        on_user = comm >= _FIRST_USER_COMM
        skipped["user-defined communicator"] += int(on_user.sum())
        negative = ~on_user & (dest < 0)
        skipped["negative destination (MPI_PROC_NULL)"] += int(negative.sum())
        keep = ~on_user & ~negative
        for i in np.flatnonzero(keep & (comm < _COMM_WORLD)):
            raise FormatError(f"{f}:{_line(data, records[i][-1])}: send on communicator {comm[i]} "
                              f"({records[i][5].decode(errors='replace')}), an invalid handle")
        for i in np.flatnonzero(keep & (comm == _COMM_WORLD) & (dest >= n)):
            raise FormatError(f"{f}:{_line(data, records[i][-1])}: destination {dest[i]} is out of range: "
                              f"{n} ranks have files (missing files?)")
        size = np.array([_type_size(f, data, r, sizes) for r in records], dtype=np.float64)
        count = np.array([_int64(f, data, r, 0, "count") for r in records], dtype=np.float64)
        for i in np.flatnonzero(keep & (count < 0)):
            raise FormatError(f"{f}:{_line(data, records[i][-1])}: negative count {int(count[i])}")
        src.append(np.full(int(keep.sum()), rank, dtype=np.int64))
        dst.append(np.where(comm == _COMM_SELF, rank, dest)[keep])
        nbytes.append((count * size)[keep])
    byts = np.concatenate(nbytes) if nbytes else np.zeros(0)
    return Pattern.from_edges(np.concatenate(src), np.concatenate(dst), byts, np.ones_like(byts), n=n,
                              provenance=_provenance(label, n, skipped))


def _provenance(label: str, n: int, skipped: dict[str, int]) -> dict:
    return {"source": "dumpi-ascii", "file": label, "files": n, "skipped": skipped,
            "counted": "count x datatype size of every " + "/".join(SEND_CALLS) + " on MPI_COMM_WORLD"}


def _read_scanned(files: list[str], label: str) -> Pattern | None:
    """The pattern from the send records C scanned in every file (:func:`topomap._core.read_dumpi`,
    the same grammar and type sizes), when nothing needs a message; None sends the run to the
    loop above, which names the fault."""
    rec = _core.read_dumpi(files, list(BUILTIN_SIZES), list(BUILTIN_SIZES.values()))
    if isinstance(rec, tuple):
        return None
    n = len(files)
    count, dest, comm, rank = rec["count"], rec["dest"], rec["comm"], rec["file"]
    on_user = comm >= _FIRST_USER_COMM
    negative = ~on_user & (dest < 0)
    keep = ~on_user & ~negative
    if (keep & ((comm < _COMM_WORLD) | ((comm == _COMM_WORLD) & (dest >= n)) | (count < 0))).any():
        return None
    byts = (count.astype(np.float64) * rec["size"].astype(np.float64))[keep]
    dst = np.where(comm == _COMM_SELF, rank, dest)[keep]
    skipped = {"user-defined communicator": int(on_user.sum()),
               "negative destination (MPI_PROC_NULL)": int(negative.sum())}
    return Pattern._adopt(n, rank[keep], dst, byts, np.ones_like(byts), _provenance(label, n, skipped))


def _records(path: str, data: bytes) -> list[tuple]:
    """(count, datatype, dest, type name, comm, comm name, offset) of every send call, in file order."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"{path}:{_line(data, exc.start)}: not UTF-8 text (binary file?)") from None
    nul = data.find(b"\x00")
    if nul >= 0:
        raise FormatError(f"{path}:{_line(data, nul)}: NUL byte (binary file?)")
    text = b"\n" + data  # offsets in text are those of data's line starts, less one
    if not _ANY_CALL.search(text):
        raise FormatError(f"{path}: no 'MPI_... entering at walltime' lines: not dumpi2ascii output")
    found = []
    for pattern in _RECORDS:
        for m in pattern.finditer(text):
            _, count, type_index, type_name, dest, comm, comm_name = m.groups()
            found.append((m.start(), (count, type_index, dest, type_name, comm, comm_name, m.start())))
    calls = _ANY_SEND.findall(text)
    if len(found) != len(calls):
        starts = {start for start, _ in found}
        bad = next(m.start() for m in _ANY_SEND.finditer(text) if m.start() not in starts)
        call = data[bad:data.index(b" ", bad)].decode()
        raise FormatError(f"{path}:{_line(data, bad)}: {call} record does not have the parameter lines "
                          "dumpi2ascii prints (count, datatype, dest, tag, comm)")
    found.sort(key=lambda item: item[0])
    return [record for _, record in found]


def _type_size(path: str, data: bytes, record: tuple, sizes: dict[int, tuple[str, int]]) -> int:
    index, name = int(record[1]), record[3].decode(errors="replace")
    if index in sizes:
        if sizes[index][1] < 0:
            raise FormatError(f"{path}: datatype {index} ({sizes[index][0]}) has negative size {sizes[index][1]}")
        return sizes[index][1]
    if name in BUILTIN_SIZES:
        return BUILTIN_SIZES[name]
    raise FormatError(f"{path}:{_line(data, record[-1])}: datatype {index} ({name}) has no known size; convert "
                      "the trace with dumpi2ascii -X (or -a) so that its type sizes are included")


def _line(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1
