"""Every misuse raises CollectiveError on every rank, and the communicator stays usable.

usage: prog_errors.py TOPOLOGY_CONF  (a Slurm topology.conf naming hosts a0..a3 only; run with
TOPOMAP_MPI_HOSTS putting the last ranks on other hosts)
Rank 0 prints one @json line per rank and case: {"case", "rank", "error", "fault_rank"}.
"""

from __future__ import annotations

import numpy as np

import topomap as tm
from mpiprog import all_ok, emit, main
from topomap.mpi import CollectiveError, apply_order, reorder


def cases(comm, conf):
    size, rank = comm.size, comm.rank
    ring = tm.generators.stencil_2d((size, 1), periodic=(True, False))
    row = ring.to_dense()[rank]
    yield "sizes", lambda: reorder(comm, tm.generators.stencil_2d((size + (rank == size - 1), 1)), method="block")
    other = tm.generators.stencil_2d((size, 1), bytes=2.0)
    yield "mismatch", lambda: reorder(comm, other if rank == 1 else ring, method="block")
    yield "row_length", lambda: reorder(comm, row[:-1] if rank == 2 else row, method="block")
    bad = row.copy()
    bad[0] = -1.0
    yield "row_value", lambda: reorder(comm, bad if rank == 1 else row, method="block")
    yield "row_dest", lambda: reorder(comm, {size + 3: 1.0} if rank == 3 else {0: 1.0}, method="block")
    yield "mixed", lambda: reorder(comm, ring if rank == 0 else row, method="block")
    yield "none", lambda: reorder(comm, None, method="block")
    yield "missing_row", lambda: reorder(comm, None if rank == size - 1 else row, method="block")
    yield "method", lambda: reorder(comm, row, method="no-such-mapper")
    yield "unknown_host", lambda: reorder(comm, row, method="block", machine=f"file:{conf}/4")
    yield "not_permutation", lambda: apply_order(comm, [0] * size)
    yield "out_of_range", lambda: apply_order(comm, list(range(1, size + 1)))
    perm = list(range(size))[::-1]
    yield "differ", lambda: apply_order(comm, perm if rank != 3 else list(range(size)))


def body(comm, argv):
    for name, call in cases(comm, argv[0]):
        try:
            call()
        except CollectiveError as exc:
            mine = {"case": name, "rank": comm.rank, "error": str(exc), "fault_rank": exc.rank}
        else:
            mine = {"case": name, "rank": comm.rank, "error": None, "fault_rank": None}
        rows = comm.gather(mine, root=0)       # one writer: lines of several ranks could interleave
        if comm.rank == 0:
            for row in rows:
                emit(row)
        # the failed call left nothing behind: a correct reorder still works
        row = np.ones(comm.size)
        newcomm, info = reorder(comm, row, method="random", seed=7)
        all_ok(comm, newcomm.rank == int(info.new_rank[comm.rank]), f"reorder after {name}")
        newcomm.Free()


if __name__ == "__main__":
    main(body)
