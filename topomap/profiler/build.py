"""Compile the PMPI profiler library with the MPI compiler wrapper, once per MPI.

The C sources ship inside the package (``topomap/profiler/csrc``, a link to
the repository's ``csrc/profiler``).  ``build()`` compiles them with the
MPI compiler wrapper (``$MPICC``, else ``mpicc`` on ``PATH``) into
``<cache>/profiler/<key>/libtopomap_pmpi.so``, where the cache is
``$TOPOMAP_CACHE_DIR``, else ``$XDG_CACHE_HOME/topomap``, else
``~/.cache/topomap``, and ``key`` hashes the sources, the wrapper's path and
the command line it expands to (``-showme`` for Open MPI, ``-show`` for
MPICH): a different MPI gets its own library, an unchanged one is never
rebuilt.  The library is written under a temporary name and renamed, so
concurrent builds never leave a half-written file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .errors import ProfilerError

__all__ = ["build", "find_mpicc", "source_dir", "cache_dir", "LIBRARY_NAME"]

LIBRARY_NAME = "libtopomap_pmpi.so"
_FLAGS = ["-std=c11", "-O2", "-Wall", "-fPIC", "-shared"]
_LIBS = ["-lpthread", "-ldl"]


def source_dir() -> Path:
    """Directory holding the profiler's C sources (``topomap_pmpi*.c``)."""
    return Path(__file__).resolve().parent / "csrc"


def _sources() -> list[Path]:
    files = sorted(source_dir().glob("topomap_pmpi*.[ch]"))
    if not any(f.suffix == ".c" for f in files):
        raise ProfilerError(f"the profiler sources are missing from {source_dir()} (broken installation?)")
    return files


def cache_dir() -> Path:
    """Where built profiler libraries are kept (see the module notes)."""
    if os.environ.get("TOPOMAP_CACHE_DIR"):
        return Path(os.environ["TOPOMAP_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "topomap"


def find_mpicc(mpicc: str | None = None) -> str:
    """Absolute path of the MPI compiler wrapper: ``mpicc``, else ``$MPICC``, else ``mpicc`` on PATH.

    Raises
    ------
    ProfilerError
        When no wrapper is found, naming what was tried.

    Examples
    --------
    >>> from topomap.profiler import find_mpicc, ProfilerError
    >>> try:
    ...     find_mpicc("/no/such/mpicc")
    ... except ProfilerError as exc:
    ...     print(exc)
    MPI compiler wrapper '/no/such/mpicc' not found
    """
    name = mpicc or os.environ.get("MPICC") or "mpicc"
    path = shutil.which(name)
    if path is None:
        hint = "" if mpicc or os.environ.get("MPICC") else \
            " (install an MPI, e.g. Debian's openmpi-bin and libopenmpi-dev, or set MPICC)"
        raise ProfilerError(f"MPI compiler wrapper {name!r} not found{hint}")
    return os.path.abspath(path)


def _wrapper_identity(mpicc: str) -> str:
    """The command line the wrapper expands to: what makes two MPIs differ."""
    for flag in ("-showme", "-show"):
        try:
            out = subprocess.run([mpicc, flag], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    return ""


def build(mpicc: str | None = None, *, force: bool = False) -> Path:
    """Compile the profiler for the MPI behind ``mpicc`` (cached) and return the library path.

    Parameters
    ----------
    mpicc : str, optional
        MPI compiler wrapper; default ``$MPICC``, else ``mpicc`` on PATH.
    force : bool
        Rebuild even if a library for the same sources and MPI exists.

    Returns
    -------
    pathlib.Path
        ``.../libtopomap_pmpi.so``, to be loaded with ``LD_PRELOAD``.

    Raises
    ------
    ProfilerError
        No wrapper, or the compilation failed (its output is in the message).
    """
    cc = find_mpicc(mpicc)
    sources = _sources()
    h = hashlib.sha256()
    for f in sources:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    h.update(cc.encode() + b"\0" + _wrapper_identity(cc).encode() + b"\0" + " ".join(_FLAGS + _LIBS).encode())
    out_dir = cache_dir() / "profiler" / h.hexdigest()[:16]
    lib = out_dir / LIBRARY_NAME
    if lib.exists() and not force:
        return lib
    out_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=out_dir)
    os.close(fd)
    cmd = [cc, *_FLAGS, "-o", tmp, *[str(f) for f in sources if f.suffix == ".c"], *_LIBS]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if res.returncode != 0:
            raise ProfilerError(f"compiling the profiler failed ({' '.join(cmd)}):\n{res.stdout}{res.stderr}".rstrip())
        os.replace(tmp, lib)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return lib
