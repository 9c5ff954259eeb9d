"""Shared by the programs of tests/mpi: fail the whole job on any error, print results."""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any, Callable

from mpi4py import MPI


def emit(obj: Any) -> None:
    """One result line for the pytest driver (tests/mpi/harness.py reads ``@json`` lines)."""
    print("@json " + json.dumps(obj), flush=True)


def check(cond: bool, message: str) -> None:
    if not cond:
        raise AssertionError(message)


def all_ok(comm: Any, ok: bool, what: str) -> None:
    """Every rank learns whether a check failed anywhere; the failing ranks are named."""
    bad = [r for r, v in enumerate(comm.allgather(bool(ok))) if not v]
    if bad:
        raise AssertionError(f"{what} failed on ranks {bad}")


def main(body: Callable[[Any, list[str]], None]) -> None:
    """Run ``body(MPI.COMM_WORLD, argv)``; an exception on any rank aborts the job (exit != 0)."""
    comm = MPI.COMM_WORLD
    try:
        body(comm, sys.argv[1:])
    except BaseException:  # noqa: BLE001 - a failing rank must take the job down, not hang it
        print(f"rank {comm.rank}: " + traceback.format_exc(), file=sys.stderr, flush=True)
        comm.Abort(1)
