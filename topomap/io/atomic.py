"""Atomic file output: write beside the target, then rename into place.

A writer killed half-way (a full disk, ``ulimit -f``, Ctrl-C, a crash) must
leave the previous file as it was, never a truncated one.  Every file topomap
writes therefore goes to a temporary file in the target's own directory (so
that the final :func:`os.replace` stays on one file system and is atomic on
POSIX), is flushed and ``fsync``-ed, and only then replaces the target.  The
temporary file is removed when anything fails.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import IO, Iterator

__all__ = ["atomic_write"]


@contextlib.contextmanager
def atomic_write(path: "str | os.PathLike[str]", mode: str = "w", encoding: str | None = "utf-8",
                 newline: str | None = None) -> Iterator[IO]:
    """Open a temporary file that replaces ``path`` when the block succeeds.

    Parameters
    ----------
    path : str or os.PathLike
        The file to (re)write.
    mode : {"w", "wb"}
        Text or binary output.
    encoding, newline
        As for :func:`open` (text mode only).

    Examples
    --------
    >>> import os, tempfile
    >>> from topomap.io.atomic import atomic_write
    >>> path = os.path.join(tempfile.mkdtemp(), "m.txt")
    >>> with atomic_write(path) as fh:
    ...     _ = fh.write("0\\n1\\n")
    >>> open(path).read()
    '0\\n1\\n'
    >>> try:
    ...     with atomic_write(path) as fh:
    ...         _ = fh.write("half")
    ...         raise RuntimeError("killed")
    ... except RuntimeError:
    ...     pass
    >>> open(path).read()
    '0\\n1\\n'
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write mode must be 'w' or 'wb', not {mode!r}")
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=directory)
    try:
        if mode == "wb":
            fh = os.fdopen(fd, "wb")
        else:
            fh = os.fdopen(fd, "w", encoding=encoding, newline=newline)
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        _keep_mode(target, tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _keep_mode(target: str, tmp: str) -> None:
    """Give the new file the old one's permissions, or the umask default
    (mkstemp creates 0600, which a plain ``open`` would not)."""
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(tmp, mode)
