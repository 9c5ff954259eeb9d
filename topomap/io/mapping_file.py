"""Mapping files: one PE id per line, line i = PE of process i (VieM's
``permutation`` file and KaHIP's partition output have the same shape)."""

from __future__ import annotations

import os
import re

import numpy as np

from ..errors import FormatError
from ..mapping import Mapping
from ._format import write_rows
from ._text import check_text_line, iter_lines, read_bytes
from .atomic import atomic_write


def read_mapping(path: "str | os.PathLike[str]") -> Mapping:
    """Read ``pe_of`` from a text file, one non-negative integer per line.

    Examples
    --------
    >>> import topomap as tm, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "map.txt")
    >>> tm.io.write_mapping(tm.Mapping([3, 1, 2]), path)
    >>> tm.io.read_mapping(path).pe_of.tolist()
    [3, 1, 2]
    """
    path = os.fspath(path)
    pes: list[int] = []
    for lineno, (_, raw) in enumerate(iter_lines(read_bytes(path)), 1):
        text = check_text_line(path, lineno, raw).split("#", 1)[0].strip()
        if not text:
            continue
        if not re.fullmatch(r"[0-9]+", text):  # ASCII digits only (str.isdigit accepts others)
            raise FormatError(f"{path}:{lineno}: {text[:60]!r} is not a PE id (a non-negative integer)")
        if len(text) > 10 or int(text) >= 2**31:  # no int() of thousands of digits
            raise FormatError(f"{path}:{lineno}: PE id {text[:40]} is out of the int32 range")
        pes.append(int(text))
    if not pes:
        raise FormatError(f"{path}: no PE ids")
    return Mapping(np.array(pes, dtype=np.int32), method="file", options={"file": path})


def write_mapping(mapping: Mapping, path: "str | os.PathLike[str]") -> None:
    """Write ``pe_of``, one PE id per line, replacing ``path`` only once it is complete."""
    path = os.fspath(path)
    try:
        with atomic_write(path, encoding="ascii") as fh:
            write_rows(fh, "%d\n", [mapping.pe_of.astype(np.int64)])
    except OSError as exc:
        raise FormatError(f"{path}: cannot write ({exc.strerror})") from None
