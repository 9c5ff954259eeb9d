"""Record the communication pattern of any MPI program with a PMPI profiler.

``csrc/profiler/`` holds a small C library that interposes the MPI
point-to-point send calls (and, on request, collectives expanded by stated
algorithm models), counts bytes and messages per destination
``MPI_COMM_WORLD`` rank, and writes one ``.tmprof`` file at
``MPI_Finalize`` (read by :func:`topomap.io.read`).  This package builds it
with the MPI compiler wrapper and runs programs under it::

    topomap profiler build
    topomap profile -o app.tmprof -- mpiexec -n 16 ./app

What reaches the profiler: C and C++ programs and mpi4py (Python) through
``LD_PRELOAD``; Fortran programs using ``mpif.h`` or ``use mpi`` through
the Fortran entry points the library also defines.  Not covered: ``use
mpi_f08`` with Open MPI, and statically linked MPI programs (``LD_PRELOAD``
cannot reach them).

Examples
--------
>>> from topomap.profiler import prepare
>>> prepare(["./app"], "/lib/p.so", "/tmp/x.tmprof", launcher="env").command
['./app']
"""

from .build import LIBRARY_NAME, build, cache_dir, find_mpicc, source_dir
from .errors import ProfilerError
from .launch import ProfileRun, launcher_of, prepare, profile

__all__ = ["build", "find_mpicc", "source_dir", "cache_dir", "LIBRARY_NAME", "ProfilerError", "ProfileRun",
           "launcher_of", "prepare", "profile"]
