"""The mpi4py in-process profiler under mpiexec (tests/mpi/prog_profile.py checks the counts on every rank)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "mpi"))
from harness import results, run  # noqa: E402


def test_profile_counts_every_intercepted_call():
    out = results(run(4, "prog_profile.py"))[0]
    assert out["calls"] == {"Send": 3, "Isend": 1, "send": 1, "sendrecv": 1, "Sendrecv": 1, "Neighbor_alltoall": 1,
                            "Neighbor_alltoallv": 1, "Ineighbor_allgather": 1, "neighbor_allgather": 1,
                            "Neighbor_alltoallw": 1}
    assert len(out["row"]) == 4 and out["pattern_nnz"] > 0   # counts and Pattern are compared in the program
