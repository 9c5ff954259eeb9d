"""Mapping files: one PE id per line, line i = PE of process i (VieM's
``permutation`` file and KaHIP's partition output have the same shape)."""

from __future__ import annotations

import os
import re

import numpy as np

from ..errors import FormatError
from ..mapping import Mapping
from .dense import _lines


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
    try:
        fh = open(path, encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise FormatError(f"{path}: cannot open ({exc.strerror})") from None
    with fh:
        for lineno, line in _lines(fh, path):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            if not re.fullmatch(r"[0-9]+", text):  # ASCII digits only (str.isdigit accepts others)
                raise FormatError(f"{path}:{lineno}: {text!r} is not a PE id (a non-negative integer)")
            value = int(text)
            if value >= 2**31:
                raise FormatError(f"{path}:{lineno}: PE id {value} is out of the int32 range")
            pes.append(value)
    if not pes:
        raise FormatError(f"{path}: no PE ids")
    return Mapping(np.array(pes, dtype=np.int32), method="file", options={"file": path})


def write_mapping(mapping: Mapping, path: "str | os.PathLike[str]") -> None:
    """Write ``pe_of``, one PE id per line."""
    np.savetxt(os.fspath(path), mapping.pe_of, fmt="%d")
