"""Open MPI ``pml_monitoring`` output: one ``<prefix>.<rank>.prof`` file per rank.

Source: Open MPI 4.1 ``ompi/mca/common/monitoring/common_monitoring.c``
(``mca_common_monitoring_output``), ``common_monitoring_coll.c``
(``mca_common_monitoring_coll_flush``) and ``common_monitoring.h`` (direction of
one-sided records); ``test/monitoring/profile2mat.pl``.  Written at
``MPI_Finalize`` by ``mpirun --mca pml_monitoring_enable 2 --mca
pml_monitoring_enable_output 3 --mca pml_monitoring_filename <prefix> ...``.

Lines (tab separated)::

    E|I|S|R|C  <me> <peer> <b> bytes <k> msgs sent [<66-bucket size histogram>]
    # <section title>
    D  <communicator name>  procs: <world ranks, comma separated>   ("C" before 4.0)
    O2A|A2O|A2A  <me> <b> bytes <k> msgs sent

Choices the source leaves open:

* Which kinds count.  Default ``E,I``: ``E`` is user point-to-point traffic
  (``MPI_Sendrecv`` included), ``I`` the point-to-point messages collectives
  are made of (tags < 0, split out when ``pml_monitoring_enable`` >= 2);
  together they are every PML message once.  ``S``/``R`` (one-sided) and ``C``
  (the coll component's per-peer view of collectives, the same data as ``I``
  counted again at the logical level) are opt-in.
* ``R`` lines record data "emitted from the given proc to the current one", so
  they are transposed: the peer is the sender.
* The size histogram is checked to be digits and commas, then ignored.
* Per-communicator ``D`` sections carry no peer: they are summed by
  communicator name into ``provenance["communicators"]``, not the pattern.
* Zero-byte entries (synchronisation messages) leave the pattern like every
  zero-byte entry; their message count is kept in ``provenance["zero_byte_msgs"]``.
  Bytes in zero messages cannot be sent: such a line is an error, as is a
  count past the double range.
* Consistency: one file per rank ``0..N-1``; each file's ``<me>`` is its
  rank; every peer and every rank of a ``procs:`` list is below ``N``;
  ``MPI_COMM_WORLD`` lists exactly ``N`` ranks.
"""

from __future__ import annotations

import os
import re
from typing import Iterable, Sequence

import numpy as np

from .. import _core
from ..errors import FormatError
from ..pattern import Pattern
from ._limits import from_entries
from ._ranks import rank_files
from ._text import check_text_line, iter_lines, read_bytes

KINDS = "EISRC"
DEFAULT_KINDS = ("E", "I")

_P2P_LINE = rb"([EISRC])\t([0-9]{1,10})\t([0-9]{1,10})\t([0-9]+) bytes\t([0-9]+) msgs sent(?:\t[0-9,]*)?"
_COMM_HEAD = rb"[CD]\t([^\t\n]*)\tprocs: ([^\n]*?)"
_COMM_LINE = rb"(O2A|A2O|A2A)\t(-?[0-9]{1,10})\t([0-9]+) bytes\t([0-9]+) msgs sent"
# Patterns match after a newline (the text is read with one prepended): a literal first byte
# lets the regex engine skip ahead with memchr instead of trying every position.
_P2P = re.compile(rb"\n" + _P2P_LINE + rb"\r?(?=\n)")
_COMM_PARTS = re.compile(rb"\n(?:" + _COMM_HEAD + rb"|" + _COMM_LINE + rb")\r?(?=\n)")
_ANY_LINE = re.compile(rb"(?:" + _P2P_LINE + rb"|#[^\n]*|" + _COMM_HEAD + rb"|" + _COMM_LINE + rb"|[ \t]*)\r?")
_PROCS = re.compile(rb"[0-9]{1,10}(?:,[0-9]{1,10})*")
_CHUNK = 1 << 20  # rows converted to arrays at a time: tuples of bytes cost ~200 B per row


def parse_kinds(kinds: "str | Iterable[str]") -> tuple[str, ...]:
    """``"E,I"`` or ``["E", "I"]`` as a tuple of distinct kind letters in ``EISRC`` order."""
    items = [k.strip() for k in kinds.split(",")] if isinstance(kinds, str) else [str(k).strip() for k in kinds]
    bad = [k for k in items if len(k) != 1 or k not in KINDS]
    if bad or not items:
        raise FormatError(f"monitoring kinds must be letters of {','.join(KINDS)}, got {kinds!r}")
    return tuple(k for k in KINDS if k in items)


def read_ompi_monitoring(path: "str | os.PathLike[str] | Sequence[str | os.PathLike[str]]",
                         kinds: "str | Iterable[str]" = DEFAULT_KINDS) -> Pattern:
    """Read the ``.prof`` files of one Open MPI run with the monitoring PML.

    Parameters
    ----------
    path : str, path or sequence of paths
        One of the files (``prof.0.prof``; its siblings ``prof.*.prof`` are
        found), the ``pml_monitoring_filename`` prefix (``prof``), or the files.
    kinds : str or iterable of str
        Line kinds to count, from ``E`` (user point-to-point), ``I``
        (point-to-point inside collectives), ``S``/``R`` (one-sided put/get;
        ``R`` is counted from the peer that held the data), ``C`` (per-peer
        collective volumes); default ``"E,I"``.

    Returns
    -------
    Pattern
        Bytes and message counts per (sender, receiver) pair; provenance names
        the files, the kinds, the bytes and messages of every kind seen and the
        per-communicator collective totals.

    Raises
    ------
    FormatError
        Naming file and line: an unrecognised line, a rank that is not the
        file's, a peer or communicator member beyond the number of files, a
        missing rank file.

    Examples
    --------
    >>> import topomap as tm, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> for r in range(2):
    ...     with open(os.path.join(d, f"prof.{r}.prof"), "w") as fh:
    ...         _ = fh.write(f"# POINT TO POINT\\nE\\t{r}\\t{1 - r}\\t{100 * (r + 1)} bytes\\t{r + 1} msgs sent\\n")
    >>> pat = tm.io.read_ompi_monitoring(os.path.join(d, "prof"))
    >>> pat.to_dense().tolist(), pat.msgs.tolist()
    ([[0.0, 100.0], [200.0, 0.0]], [1.0, 2.0])
    """
    wanted = parse_kinds(kinds)
    files, label = rank_files(path, prefix_suffix=".0.prof")
    fast = _read_scanned(files, label, wanted)
    if fast is not None:
        return fast
    run = _Run(files)
    table, at = run.p2p_rows()
    kind = table[:, 0]
    me, peer = table[:, 1].astype(np.int64), table[:, 2].astype(np.int64)
    nbytes, nmsgs = table[:, 3].astype(np.float64), table[:, 4].astype(np.float64)
    file_rank = run.file_of(at)
    n = len(files)
    for bad in (np.flatnonzero(me != file_rank), np.flatnonzero(peer >= n)):
        if bad.size:
            i = int(bad[0])
            r = int(file_rank[i])
            raise run.error(at[i], f"the file is rank {r}'s, but this line is rank {me[i]}'s" if me[i] != r else
                            f"peer {peer[i]} is out of range: {n} ranks have files (missing files?)")
    bad = np.flatnonzero(~np.isfinite(nbytes) | ~np.isfinite(nmsgs) | ((nbytes > 0) & (nmsgs == 0)))
    if bad.size:
        i = int(bad[0])
        raise run.error(at[i], f"{table[i, 3][:40].decode()} bytes in {table[i, 4][:40].decode()} messages "
                               + ("is beyond the double range" if not np.isfinite(nbytes[i] + nmsgs[i]) else
                                  "(bytes without messages)"))
    communicators = run.communicators()
    by_kind_bytes = {k.decode(): float(nbytes[kind == k].sum()) for k in np.unique(kind)}
    by_kind_msgs = {k.decode(): float(nmsgs[kind == k].sum()) for k in np.unique(kind)}
    src, dst, nbytes, nmsgs, provenance, kept = _selected(kind, me, peer, nbytes, nmsgs, wanted, label, n,
                                                          by_kind_bytes, by_kind_msgs, communicators)
    return from_entries(label, src, dst, nbytes, nmsgs, n, provenance, lambda i: run.where(int(at[kept][i])))


def _selected(kind, me, peer, nbytes, nmsgs, wanted, label, n, by_kind_bytes, by_kind_msgs, communicators):
    """The entries of the wanted kinds (R transposed), the provenance and which entries were kept."""
    keep = np.isin(kind, [k.encode() for k in wanted])
    transposed = kind == b"R"
    src = np.where(transposed, peer, me)[keep]
    dst = np.where(transposed, me, peer)[keep]
    nbytes, nmsgs = nbytes[keep], nmsgs[keep]
    provenance = {
        "source": "ompi-monitoring", "file": label, "files": n, "kinds": ",".join(wanted),
        "counted": "bytes and messages per (sender, receiver) pair from Open MPI pml_monitoring "
                   f"lines of kinds {','.join(wanted)} (R lines transposed)",
        "bytes_by_kind": by_kind_bytes, "msgs_by_kind": by_kind_msgs,
        "zero_byte_msgs": float(nmsgs[nbytes == 0].sum()), "communicators": communicators,
    }
    return src, dst, nbytes, nmsgs, provenance, keep


def _read_scanned(files: list[str], label: str, wanted: tuple[str, ...]) -> Pattern | None:
    """The pattern from the records C scanned in every file (:func:`topomap._core.read_monitoring`),
    when they are all consistent; None sends the run to :class:`_Run`, which names the fault."""
    rec = _core.read_monitoring(files)
    if isinstance(rec, tuple):
        return None
    n = len(files)
    kind, me, peer = rec["kind"].view("S1"), rec["me"], rec["peer"]
    if (me != rec["file"]).any() or (peer >= n).any():
        return None
    communicators = _communicators_scanned(rec, n)
    if communicators is None:
        return None
    nbytes, nmsgs = rec["bytes"], rec["msgs"]
    if ((nbytes > 0) & (nmsgs == 0)).any() or not (np.isfinite(nbytes).all() and np.isfinite(nmsgs).all()):
        return None
    by_kind_bytes = {k.decode(): float(nbytes[kind == k].sum()) for k in np.unique(kind)}
    by_kind_msgs = {k.decode(): float(nmsgs[kind == k].sum()) for k in np.unique(kind)}
    src, dst, nbytes, nmsgs, provenance, _ = _selected(kind, me, peer, nbytes, nmsgs, wanted, label, n,
                                                       by_kind_bytes, by_kind_msgs, communicators)
    return Pattern._adopt(n, src, dst, nbytes, nmsgs, provenance)


_SECTION = np.frombuffer(b"HOAX", dtype=np.uint8)  # a header, then its O2A, A2O, A2A lines


def _communicators_scanned(rec: dict, n: int) -> dict[str, dict[str, float]] | None:
    """:meth:`_Run.communicators` on scanned records: whole sections, ranks, procs lists and
    the sums by name (in the same order, so the same doubles); None when anything is off."""
    parts, files = rec["part_kind"], rec["part_file"]
    if parts.size % 4:
        return None
    parts, files = parts.reshape(-1, 4), files.reshape(-1, 4)
    if (parts != _SECTION).any() or (files != files[:, :1]).any():
        return None
    rank = rec["rank"].reshape(-1, 4)[:, 1:]
    if ((rank != files[:, 1:]) & (rank != -1)).any():
        return None
    heads = slice(0, None, 4)
    procs, count, top = rec["procs"][heads], rec["procs_count"][heads], rec["procs_max"][heads]
    raw = rec["names"]
    seen: dict[bytes, int] = {}  # each distinct name once: runs repeat a few names on every rank
    by_bytes = np.array([seen.setdefault(raw[a:a + b], len(seen))
                         for a, b in zip(rec["name_at"][heads].tolist(), rec["name_len"][heads].tolist())],
                        dtype=np.int64)
    world = np.array([name == b"MPI_COMM_WORLD" for name in seen], dtype=bool)[by_bytes]
    listed = procs == 1
    if (procs < 0).any() or (listed & (top >= n)).any() or (listed & world & (count != n)).any():
        return None
    first: dict[str, int] = {}  # by decoded name, in order of first appearance, as _Run keys them
    group = np.array([first.setdefault(name.decode("utf-8", errors="backslashreplace"), len(first))
                      for name in seen], dtype=np.int64)[by_bytes]
    k = len(first)
    volumes = {}
    for j, key in ((1, "o2a"), (2, "a2o"), (3, "a2a")):
        for what in ("bytes", "msgs"):
            # bincount adds in record order, as the sections' running sums do
            volumes[f"{key}_{what}"] = np.bincount(group, rec[f"part_{what}"].reshape(-1, 4)[:, j], minlength=k)
    reporting = np.bincount(group, minlength=k)
    totals: dict[str, dict[str, float]] = {}
    for name, g in first.items():
        totals[name] = {"ranks_reporting": int(reporting[g]), **{key: float(v[g]) for key, v in volumes.items()}}
    return totals


class _Run:
    """The files of one run joined into one text, so that each pattern scans them all at once.

    Why: a run has one file per rank (10^5 files are common); scanning file by file
    costs more in per-call overhead than the scans themselves.  ``text`` is a newline
    followed by every file, each ending with a newline; every match starts at the
    newline before its line, which tells the file and the line.
    """

    def __init__(self, files: list[str]) -> None:
        self.files = files
        parts, starts, pos, lines = [b"\n"], [], 0, 0
        for f in files:
            data = read_bytes(f)
            starts.append(pos)
            if data and not data.endswith(b"\n"):
                data += b"\n"
            parts.append(data)
            pos += len(data)
            lines += data.count(b"\n")
        self.text = b"".join(parts)
        self.starts = np.array(starts + [pos], dtype=np.int64)
        self.lines = lines

    def file_of(self, at: np.ndarray) -> np.ndarray:
        """File index of the lines after the newlines at offsets ``at``."""
        return np.searchsorted(self.starts, at, side="right") - 1

    def where(self, at: int) -> str:
        """``file:line`` of the line after the newline at offset ``at``."""
        r = int(self.file_of(np.array([at]))[0])
        lineno = self.text.count(b"\n", self.starts[r], at + 1)
        return f"{self.files[r]}:{lineno}"

    def error(self, at: int, message: str) -> FormatError:
        """``message`` naming the file and line after the newline at offset ``at``."""
        return FormatError(f"{self.where(at)}: {message}")

    def p2p_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(kind, me, peer, bytes, msgs) of every point-to-point line, and where each starts.

        Every line must be a known kind: when the cheap count of recognised lines
        disagrees with the number of lines (blank lines, or a bad line), the
        line-by-line check decides.
        """
        chunks, rows, at = [], [], []
        for m in _P2P.finditer(self.text):
            at.append(m.start())
            rows.append(m.groups())
            if len(rows) >= _CHUNK:
                chunks.append(np.array(rows, dtype=bytes))
                rows = []
        table = np.concatenate(chunks + [np.array(rows, dtype=bytes).reshape(-1, 5)])
        self.sections = list(_COMM_PARTS.finditer(self.text))
        if len(at) + len(self.sections) + self.text.count(b"\n#") != self.lines:
            for r, f in enumerate(self.files):
                _check_every_line(f, self.text[self.starts[r] + 1:self.starts[r + 1] + 1])
        return table, np.array(at, dtype=np.int64)

    def communicators(self) -> dict[str, dict[str, float]]:
        """The D sections (a header then O2A, A2O, A2A lines) summed by communicator name."""
        totals: dict[str, dict[str, float]] = {}
        n = len(self.files)
        owner = self.file_of(np.array([m.start() for m in self.sections], dtype=np.int64))
        current: dict[str, float] = {}
        expect: tuple[bytes, ...] = ()
        previous = -1
        for m, rank in zip(self.sections, owner.tolist()):
            if expect and rank != previous:
                raise self._truncated(previous, expect)
            previous = rank
            if m.group(3) is None:  # a communicator header
                if expect:
                    raise self.error(m.start(), "communicator section before the previous one has its "
                                                f"{expect[0].decode()} line")
                name = m.group(1).decode("utf-8", errors="backslashreplace")
                _check_procs(self.error, m, name, n)
                current = totals.setdefault(name, {"ranks_reporting": 0, "o2a_bytes": 0.0, "o2a_msgs": 0.0,
                                                   "a2o_bytes": 0.0, "a2o_msgs": 0.0, "a2a_bytes": 0.0,
                                                   "a2a_msgs": 0.0})
                current["ranks_reporting"] += 1
                expect = (b"O2A", b"A2O", b"A2A")
                continue
            what = m.group(3)
            if not expect or what != expect[0]:
                wanted = expect[0].decode() if expect else "a D header"
                raise self.error(m.start(), f"{what.decode()} line where {wanted} was expected")
            if int(m.group(4)) not in (rank, -1):  # -1: Open MPI could not resolve the rank yet
                raise self.error(m.start(), f"the file is rank {rank}'s, but this line is rank {int(m.group(4))}'s")
            key = what.decode().lower()
            current[f"{key}_bytes"] += float(m.group(5))
            current[f"{key}_msgs"] += float(m.group(6))
            expect = expect[1:]
        if expect:
            raise self._truncated(previous, expect)
        return totals

    def _truncated(self, rank: int, expect: tuple[bytes, ...]) -> FormatError:
        return FormatError(f"{self.files[rank]}: truncated: the last communicator section has no "
                           f"{expect[0].decode()} line")


def _check_every_line(path: str, data: bytes) -> None:
    for lineno, (_, raw) in enumerate(iter_lines(data), 1):
        if not _ANY_LINE.fullmatch(raw):
            text = check_text_line(path, lineno, raw)
            raise FormatError(f"{path}:{lineno}: not a pml_monitoring line: {text[:80]!r}")


def _check_procs(error, m: "re.Match[bytes]", name: str, n: int) -> None:
    procs = m.group(2)
    if procs in (b"", b"(null)"):  # Open MPI prints the list it could not build as "(null)"
        return
    if not _PROCS.fullmatch(procs):
        raise error(m.start(), f"procs list {procs[:60].decode(errors='replace')!r} of {name} is not "
                               "comma-separated ranks")
    members = np.fromstring(procs, dtype=np.int64, sep=",")
    if members.max() >= n:
        raise error(m.start(), f"{name} lists rank {members.max()}, but only {n} ranks have files (missing files?)")
    if name == "MPI_COMM_WORLD" and members.size != n:
        raise error(m.start(), f"MPI_COMM_WORLD has {members.size} ranks but {n} .prof files were found "
                               "(files of another run, or missing files?)")
