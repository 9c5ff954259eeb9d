"""Link-class parameters from OSU Micro-Benchmarks output (osu_latency, osu_bw, osu_bibw, osu_mbw_mr).

The OSU Micro-Benchmarks (OMB, mvapich.cse.ohio-state.edu/benchmarks) print a
header and one ``size value [more columns]`` row per message size.  Read here
(layouts of OMB 5.x, 6.x and 7.x; tests/data/osu/SOURCES.md names the
published runs the test fixtures copy)::

    # OSU MPI Latency Test v7.5            benchmark and version (also "MPI-CUDA", ...)
    # Datatype: MPI_CHAR.                  7.x, before or after the column header
    # [ pairs: 4 ] [ window size: 64 ]     osu_mbw_mr
    # Size       Avg Latency(us)  ...      column header
    1                       3.00  Pass     size, value, optional columns (validation, tail latencies)

Units, from OMB's sources (``c/mpi/pt2pt/standard/osu_latency.c``,
``osu_bw.c``, ``osu_bibw.c``, ``osu_mbw_mr.c``; e.g. github.com/yqin/osu-micro-benchmarks):

* osu_latency prints ``(t_end - t_start) * 1e6 / (2.0 * iterations)``: the
  one-way time of a ping-pong, in microseconds;
* osu_bw prints ``size / 1e6 * iterations * window_size / t``: MB/s are
  10^6 bytes per second;
* osu_bibw multiplies that by 2 (both directions together), so one
  direction gets half;
* osu_mbw_mr prints the aggregate of all ``pairs``, so one pair gets
  ``1/pairs`` of it.

Fitting rule
------------
* ``alpha`` = the median of the latencies of messages of at most
  ``small`` bytes (default 64).  At those sizes ``m / bandwidth`` is below
  a nanosecond on any network of 64 GB/s or slower, so the latency is the
  start-up cost; the median ignores one-off outliers.
* ``bandwidth`` = the median of the per-direction, per-pair bandwidths of
  messages of at least ``large`` bytes (default 1 MiB), where start-up
  costs are amortised.  Without a bandwidth file it is taken from the
  latency file instead: ``1 / slope`` of the least-squares line through
  the latencies of those large messages.

Lines before the OMB header (launcher warnings, job banners) are skipped;
after it, every line must be a comment or a data row.

Examples
--------
>>> import os, tempfile
>>> import topomap as tm
>>> from topomap.timemodel.osu import read_osu
>>> d = tempfile.mkdtemp()
>>> with open(os.path.join(d, "lat.txt"), "w") as fh:
...     _ = fh.write("# OSU MPI Latency Test v7.3\\n# Size          Latency (us)\\n# Datatype: MPI_CHAR.\\n"
...                  "0 1.50\\n8 1.52\\n64 1.60\\n1048576 85.0\\n2097152 168.0\\n")
>>> with open(os.path.join(d, "bw.txt"), "w") as fh:
...     _ = fh.write("# OSU MPI Bandwidth Test v7.3\\n# Size      Bandwidth (MB/s)\\n# Datatype: MPI_CHAR.\\n"
...                  "1 3.10\\n1048576 12100.00\\n2097152 12300.00\\n4194304 12350.00\\n")
>>> network = read_osu(os.path.join(d, "lat.txt"), os.path.join(d, "bw.txt"))
>>> network
LinkClass(alpha=1.52e-06, bandwidth=12300000000.0)
>>> model = tm.timemodel.TimeModel.default().merged({"network": network})
>>> model.classes["network"] == network
True
>>> round(read_osu(os.path.join(d, "lat.txt")).bandwidth / 1e9, 2)     # from the latencies alone
12.63
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

import numpy as np

from ..errors import FormatError, TimeModelError
from .model import LinkClass

__all__ = ["OsuTable", "read_osu_table", "read_osu"]

KINDS = ("latency", "bw", "bibw", "mbw_mr")

_HEADER = re.compile(r"^#\s*OSU\s+MPI(?:-\S+)?\s+(?P<name>.+?)\s+Test\b\s*(?:v(?P<version>\S+)|\(Version (?P<old>[^)]+)\))?")
_NAMES = {"latency": "latency", "bandwidth": "bw", "bi-directional bandwidth": "bibw",
          "multiple bandwidth / message rate": "mbw_mr"}
_PAIRS = re.compile(r"\[\s*pairs:\s*(\d+)\s*\]")


@dataclass(frozen=True, eq=False)
class OsuTable:
    """One OMB point-to-point output file, as printed.

    Attributes
    ----------
    path : str
        The file read.
    kind : {"latency", "bw", "bibw", "mbw_mr"}
        Which benchmark wrote it.
    version : str
        OMB version from the header (``""`` if it names none).
    sizes : numpy.ndarray
        Message sizes in bytes, increasing.
    values : numpy.ndarray
        The benchmark's value per size: microseconds (latency) or MB/s
        (10^6 bytes/s) as OMB prints them.
    pairs : int
        Pairs of processes (osu_mbw_mr), else 1.
    """

    path: str
    kind: str
    version: str
    sizes: np.ndarray
    values: np.ndarray
    pairs: int

    def bandwidth(self) -> np.ndarray:
        """Bytes per second of one direction of one pair, per size (bandwidth kinds only)."""
        if self.kind == "latency":
            raise TimeModelError(f"{self.path}: an osu_latency output holds no bandwidths")
        per = 2.0 if self.kind == "bibw" else float(self.pairs)
        return self.values * 1e6 / per


def read_osu_table(path: "str | os.PathLike[str]") -> OsuTable:
    """Parse an osu_latency / osu_bw / osu_bibw / osu_mbw_mr output file.

    Raises
    ------
    FormatError
        Naming the file and line: no OMB header, a benchmark this reader
        does not know, a row that is truncated, not numeric, negative or
        zero, sizes that do not increase, a second benchmark in the file.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "mbw_mr.txt")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("# OSU MPI Multiple Bandwidth / Message Rate Test v7.5.2\\n"
    ...                  "# [ pairs: 4 ] [ window size: 64 ]\\n# Datatype: MPI_CHAR.\\n"
    ...                  "# Size                  MB/s        Messages/s\\n"
    ...                  "1                       5.71        5711864.23\\n"
    ...                  "4194304            193713.41          46184.88\\n")
    >>> t = read_osu_table(path)
    >>> t.kind, t.version, t.pairs, t.sizes.tolist(), float(t.bandwidth()[-1])     # one pair's bytes/s
    ('mbw_mr', '7.5.2', 4, [1, 4194304], 48428352500.0)
    """
    where = os.fspath(path)
    try:
        with open(where, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise FormatError(f"cannot read OSU output {where}: {exc.strerror or exc}") from None
    start = next((i for i, line in enumerate(lines) if _HEADER.match(line.strip())), None)
    if start is None:
        raise FormatError(f"{where}: no OSU Micro-Benchmarks header ('# OSU MPI ... Test vX.Y') in the file")
    m = _HEADER.match(lines[start].strip())
    assert m is not None
    name = m.group("name").lower()
    if name not in _NAMES:
        raise FormatError(f"{where}: line {start + 1}: {lines[start].strip()!r} is not osu_latency, osu_bw, "
                          f"osu_bibw or osu_mbw_mr output")
    kind = _NAMES[name]
    version = m.group("version") or m.group("old") or ""
    pairs, columns = 1, None
    sizes: list[int] = []
    values: list[float] = []
    for number, raw in enumerate(lines[start + 1:], start=start + 2):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if sizes and _HEADER.match(line):
                raise FormatError(f"{where}: line {number}: a second benchmark starts after the data")
            if p := _PAIRS.search(line):
                pairs = int(p.group(1))
            if line[1:].split()[:1] == ["Size"]:
                columns = line
            continue
        if columns is None:
            raise FormatError(f"{where}: line {number}: data before the '# Size ...' column header")
        fields = line.split()
        if len(fields) < 2:
            raise FormatError(f"{where}: line {number}: truncated row {line!r} (expected a size and a value)")
        if not re.fullmatch(r"[0-9]+", fields[0]):
            raise FormatError(f"{where}: line {number}: size {fields[0]!r} is not a non-negative integer")
        try:
            value = float(fields[1])
        except ValueError:
            raise FormatError(f"{where}: line {number}: value {fields[1]!r} is not a number") from None
        if not math.isfinite(value) or value <= 0:
            raise FormatError(f"{where}: line {number}: value {fields[1]} must be positive and finite")
        if sizes and int(fields[0]) <= sizes[-1]:
            raise FormatError(f"{where}: line {number}: size {fields[0]} does not follow {sizes[-1]}")
        sizes.append(int(fields[0]))
        values.append(value)
    if not sizes:
        raise FormatError(f"{where}: the OSU output has a header but no data rows (the run stopped early?)")
    return OsuTable(where, kind, version, np.array(sizes, dtype=np.int64), np.array(values), pairs)


def _expect(table: OsuTable, kinds: tuple[str, ...], role: str) -> None:
    if table.kind not in kinds:
        raise FormatError(f"{table.path}: an osu_{table.kind} output given as {role} "
                          f"(expected {' or '.join('osu_' + k for k in kinds)})")


def _median_of(table: OsuTable, keep: np.ndarray, values: np.ndarray, rule: str) -> float:
    if not keep.any():
        raise TimeModelError(f"{table.path}: no message sizes {rule} (sizes {int(table.sizes[0])}.."
                             f"{int(table.sizes[-1])}); pass another bound")
    return float(np.median(values[keep]))


def read_osu(latency: "str | os.PathLike[str]", bandwidth: "str | os.PathLike[str] | None" = None,
             small: int = 64, large: int = 1 << 20) -> LinkClass:
    """Hockney parameters of one link class from OMB output files (module docstring rule).

    Parameters
    ----------
    latency : path
        osu_latency output (gives ``alpha``).
    bandwidth : path, optional
        osu_bw, osu_bibw or osu_mbw_mr output (gives ``bandwidth``);
        without it the latency file's large messages give it.
    small, large : int
        Largest size (bytes) of the "small" messages and smallest size of
        the "large" ones.

    Returns
    -------
    LinkClass
        Put it into a model with
        ``TimeModel.default().merged({"network": link})`` (or any class name).

    Raises
    ------
    FormatError
        A malformed file, or a file of the wrong benchmark (a bandwidth
        file given as ``latency``), named with its line.
    TimeModelError
        No message sizes inside the ``small`` / ``large`` bounds.

    Examples
    --------
    See the module docstring.
    """
    lat = read_osu_table(latency)
    _expect(lat, ("latency",), "latency")
    seconds = lat.values / 1e6
    alpha = _median_of(lat, lat.sizes <= small, seconds, f"<= {small} bytes")
    if bandwidth is not None:
        bw = read_osu_table(bandwidth)
        _expect(bw, ("bw", "bibw", "mbw_mr"), "bandwidth")
        beta = _median_of(bw, bw.sizes >= large, bw.bandwidth(), f">= {large} bytes")
    else:
        keep = lat.sizes >= large
        if keep.sum() < 2:
            raise TimeModelError(f"{lat.path}: fitting a bandwidth from latencies needs two sizes >= {large} "
                                 f"bytes, the file has {int(keep.sum())}; give an osu_bw file or a smaller large=")
        slope = float(np.polyfit(lat.sizes[keep].astype(np.float64), seconds[keep], 1)[0])
        if not slope > 0:
            raise TimeModelError(f"{lat.path}: the latencies of messages >= {large} bytes do not grow with the "
                                 f"size; no bandwidth can be fitted")
        beta = 1.0 / slope
    return LinkClass(alpha, beta)
