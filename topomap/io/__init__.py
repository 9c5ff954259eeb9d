"""Reading and writing patterns and mappings.

``read(path)`` picks the reader from the file name: ``.npy`` (dense NumPy
matrix), ``.mat``/``.txt``/``.dense``/``.csv`` (dense text matrix, one row per
line, as TreeMatch and Open MPI's ``profile2mat`` write).
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import FormatError
from ..pattern import Pattern
from .dense import read_dense, write_dense
from .mapping_file import read_mapping, write_mapping

__all__ = ["read", "write", "read_dense", "write_dense", "read_mapping", "write_mapping"]

_READERS = {".npy": read_dense, ".mat": read_dense, ".txt": read_dense, ".dense": read_dense, ".csv": read_dense}
_WRITERS = {".npy": write_dense, ".mat": write_dense, ".txt": write_dense, ".dense": write_dense, ".csv": write_dense}


def _ext(path: "str | os.PathLike[str]") -> str:
    return os.path.splitext(os.fspath(path))[1].lower()


def read(path: "str | os.PathLike[str]", **options: Any) -> Pattern:
    """Read a pattern, choosing the format from the extension.

    Examples
    --------
    >>> import numpy as np, topomap as tm, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "c.mat")
    >>> tm.io.write(tm.Pattern.from_dense(np.array([[0, 2], [1, 0]])), path)
    >>> tm.io.read(path).total_bytes
    3.0
    """
    ext = _ext(path)
    if ext not in _READERS:
        raise FormatError(f"{os.fspath(path)}: unknown pattern format {ext!r}; known: {', '.join(sorted(_READERS))}")
    return _READERS[ext](path, **options)


def write(pattern: Pattern, path: "str | os.PathLike[str]", **options: Any) -> None:
    """Write a pattern, choosing the format from the extension."""
    ext = _ext(path)
    if ext not in _WRITERS:
        raise FormatError(f"{os.fspath(path)}: cannot write format {ext!r}; known: {', '.join(sorted(_WRITERS))}")
    _WRITERS[ext](pattern, path, **options)
