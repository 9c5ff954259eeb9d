"""Reading and writing patterns and mappings.

``read(path)`` and ``write(pattern, path)`` pick the format from the file name
(or ``format=``):

============  ===============================  ==================================  =====
format        extensions                       what                                write
============  ===============================  ==================================  =====
dense         ``.mat .txt .dense .npy``        n x n matrix, row = sender          yes
ompi          ``.prof``                        Open MPI pml_monitoring, all ranks  no
matrixmarket  ``.mtx .mm``                     coordinate real/integer/pattern     yes
metis         ``.graph .metis``                METIS graph (undirected)            yes
scotch        ``.grf``                         Scotch source graph (undirected)    yes
csv           ``.csv``                         edge list ``src,dst,bytes[,msgs]``  yes
otf2          ``.otf2``                        OTF2 trace anchor (extra ``otf2``)  no
dumpi         ``.dumpi.txt``                   ``dumpi2ascii`` text, all ranks     no
============  ===============================  ==================================  =====

Every reader returns a :class:`~topomap.Pattern` whose provenance names the
file, the format and what was counted, and raises
:class:`~topomap.FormatError` naming the file and line of malformed input.

Limits (a file handed to a user must not be able to exhaust the machine):

* Sizes a header declares are checked against the file before anything is
  allocated: every vertex of a METIS or Scotch graph and every entry of a
  MatrixMarket file takes some bytes.  Processes that exchange nothing (CSV
  ``# n=``, MatrixMarket size line, ``.tmprof`` ``# ranks:``, or a large rank)
  may number at most :data:`MAX_PROCESSES` beyond the ``2 k`` that ``k``
  entries name; those readers take ``max_processes=`` to allow more.
* A file that is not a regular file (a pipe, a FIFO, ``/dev/zero``) is read
  up to ``MAX_STREAM_BYTES`` (1 GiB) and refused at its first NUL byte.
* Volumes that sum past the largest double are an error naming the lines.
* Writers replace their file atomically (:func:`topomap.io.atomic.atomic_write`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import FormatError
from ..pattern import Pattern
from ._limits import MAX_PROCESSES
from .csv_edges import read_csv_edges, write_csv_edges
from .dense import read_dense, write_dense
from .dumpi_ascii import read_dumpi_ascii
from .mapping_file import read_mapping, write_mapping
from .matrixmarket import read_matrix_market, write_matrix_market
from .metis import read_metis, write_metis
from .ompi_monitoring import read_ompi_monitoring
from .otf2_trace import read_otf2
from .scotch_grf import read_scotch_grf, write_scotch_grf
from .tmprof import read_tmprof, write_tmprof

__all__ = ["read", "write", "formats", "MAX_PROCESSES", "read_dense", "write_dense", "read_mapping", "write_mapping",
           "read_ompi_monitoring", "read_matrix_market", "write_matrix_market", "read_metis", "write_metis",
           "read_scotch_grf", "write_scotch_grf", "read_csv_edges", "write_csv_edges", "read_otf2",
           "read_dumpi_ascii"]


@dataclass(frozen=True)
class _Format:
    name: str
    extensions: tuple[str, ...]
    reader: Callable[..., Pattern]
    writer: Callable[..., None] | None
    what: str


_FORMATS = [
    _Format("dense", (".mat", ".txt", ".dense", ".npy"), read_dense, write_dense, "dense n x n matrix, row = sender"),
    _Format("ompi", (".prof",), read_ompi_monitoring, None, "Open MPI pml_monitoring files, one per rank"),
    _Format("matrixmarket", (".mtx", ".mm"), read_matrix_market, write_matrix_market, "MatrixMarket coordinate"),
    _Format("metis", (".graph", ".metis"), read_metis, write_metis, "METIS graph (undirected)"),
    _Format("scotch", (".grf",), read_scotch_grf, write_scotch_grf, "Scotch source graph (undirected)"),
    _Format("csv", (".csv",), read_csv_edges, write_csv_edges, "CSV edge list src,dst,bytes[,msgs]"),
    _Format("otf2", (".otf2",), read_otf2, None, "OTF2 trace (anchor file)"),
    _Format("dumpi", (".dumpi.txt",), read_dumpi_ascii, None, "dumpi2ascii text, one file per rank"),
]
_BY_NAME = {f.name: f for f in _FORMATS}
_READERS: dict[str, Callable[..., Pattern]] = {e: f.reader for f in _FORMATS for e in f.extensions}
_WRITERS: dict[str, Callable[..., None]] = {e: f.writer for f in _FORMATS for e in f.extensions if f.writer}
_READERS[".tmprof"], _WRITERS[".tmprof"] = read_tmprof, write_tmprof  # topomap profiler output
__all__ += ["read_tmprof", "write_tmprof"]


def formats() -> list[dict[str, Any]]:
    """The pattern formats: name, extensions, whether they can be written, what they hold.

    Examples
    --------
    >>> import topomap as tm
    >>> [f["name"] for f in tm.io.formats() if f["write"]]
    ['dense', 'matrixmarket', 'metis', 'scotch', 'csv']
    """
    return [{"name": f.name, "extensions": list(f.extensions), "write": f.writer is not None, "what": f.what}
            for f in _FORMATS]


def _ext(path: "str | os.PathLike[str]") -> str:
    """The format-defining suffix: the longest registered one the name ends with, else the last."""
    name = os.path.basename(os.fspath(path)).lower()
    compound = [e for e in _READERS if e.count(".") > 1 and name.endswith(e)]
    return max(compound, key=len) if compound else os.path.splitext(name)[1]


def _pick(path: "str | os.PathLike[str]", fmt: str | None, writing: bool) -> Callable:
    if fmt is not None:
        if fmt not in _BY_NAME:
            raise FormatError(f"unknown format {fmt!r}; known: {', '.join(_BY_NAME)}")
        func = _BY_NAME[fmt].writer if writing else _BY_NAME[fmt].reader
        if func is None:
            raise FormatError(f"{os.fspath(path)}: topomap cannot write {fmt} files")
        return func
    table, verb = (_WRITERS, "cannot write") if writing else (_READERS, "unknown pattern")
    ext = _ext(path)
    if ext not in table:
        raise FormatError(f"{os.fspath(path)}: {verb} format {ext!r}; known: {', '.join(sorted(table))}")
    return table[ext]


def read(path: "str | os.PathLike[str]", format: str | None = None, **options: Any) -> Pattern:
    """Read a pattern, choosing the format from the file name or ``format``.

    Parameters
    ----------
    path : str or path
        The file (for per-rank formats, any one rank's file).
    format : str, optional
        A name from :func:`formats` (``"dense"``, ``"ompi"``, ``"csv"``, ...),
        overriding the extension.
    **options
        Passed to the reader (e.g. ``kinds="E,I,C"`` for ``ompi``).

    Examples
    --------
    >>> import numpy as np, topomap as tm, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "c.mat")
    >>> tm.io.write(tm.Pattern.from_dense(np.array([[0, 2], [1, 0]])), path)
    >>> tm.io.read(path).total_bytes
    3.0
    """
    return _pick(path, format, writing=False)(path, **options)


def write(pattern: Pattern, path: "str | os.PathLike[str]", format: str | None = None, **options: Any) -> None:
    """Write a pattern, choosing the format from the file name or ``format``.

    Examples
    --------
    >>> import topomap as tm, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "c.csv")
    >>> tm.io.write(tm.Pattern.from_edges([0, 1], [1, 0], [5.0, 2.0]), path)
    >>> tm.io.read(path).to_dense().tolist()
    [[0.0, 5.0], [2.0, 0.0]]
    """
    _pick(path, format, writing=True)(pattern, path, **options)
