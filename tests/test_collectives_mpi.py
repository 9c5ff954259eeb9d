"""topomap's own collective schedules in real MPI jobs (tests/mpi/collective_exec.py under mpiexec
--oversubscribe): every operation, algorithm and output-order plan, on the identity order and on a
random reordering, equals mpi4py's comm.allgather / gather / bcast / allreduce / alltoall byte for
byte.  Sizes: 2, 3, 5, 8, 12 and 16 ranks (powers of two and not; every size from 2 to 16 passes
too, in 3 minutes on a 2-core machine: TOPOMAP_COLL_ALL_SIZES=1)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from topomap.collectives import ALGORITHMS

sys.path.insert(0, str(Path(__file__).parent / "mpi"))
from harness import results, run  # noqa: E402

SIZES = range(2, 17) if os.environ.get("TOPOMAP_COLL_ALL_SIZES") else [2, 3, 5, 8, 12, 16]


@pytest.mark.parametrize("size", SIZES)
def test_equal_to_mpi_byte_for_byte(size):
    out = results(run(size, "collective_exec.py", str(size), timeout=300))
    rows = [r for r in out if "op" in r]
    # 13 (op, algorithm, variant) combinations with their plans, each plain and reordered
    expected = sum((4 if alg == "hierarchical" else 1) * (2 if op in ("allgather", "gather") and alg != "ring" else 1)
                   for op, algs in ALGORITHMS.items() for alg in algs)
    assert len(rows) == 2 * expected
    wrong = [r for r in rows if not r["equal"]]
    assert not wrong, wrong
    errors = next(r for r in out if "errors" in r)["errors"]
    assert isinstance(errors[0], str) and "the ring allgather uses 'ring'" in errors[0]
    assert isinstance(errors[1], str) and "rank 1's data" in errors[1]
