"""run_collective under mpiexec: usage: collective_exec.py SEED

Every operation and algorithm (the hierarchical allgather with L and NL node
phases, RD and ring leaders, 2 ranks per node; every output-order plan) runs
on the identity order and on a seeded random reordering; each result is
compared byte for byte with mpi4py's own comm.allgather / gather / bcast /
allreduce / alltoall on the original communicator.  Rank 0 prints one line
per case: {"op", "algorithm", "options", "order", "reordered", "equal"},
then {"errors": [...]}: the message every rank got for a wrong order plan
and for one rank's block of another size.
"""

from __future__ import annotations

import numpy as np
from mpiprog import all_ok, emit, main

from topomap.collectives import ALGORITHMS
from topomap.mpi import CollectiveError
from topomap.mpi.collective_exec import run_collective


def cases(size):
    for op, algs in ALGORITHMS.items():
        for alg in algs:
            variants = ([{"ppn": 2, "intra": i, "leaders": lead} for i in ("L", "NL") for lead in ("rd", "ring")]
                        if alg == "hierarchical" else [{}])
            if alg == "hierarchical" and size < 2:
                continue
            orders = (["ring"] if (op, alg) == ("allgather", "ring")
                      else ["initcomm", "endshfl"] if op in ("allgather", "gather") else [None])
            for opts in variants:
                for order in orders:
                    yield op, alg, opts, order


def same(a, b):
    if isinstance(a, list) or isinstance(b, list):
        return a is not None and b is not None and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if a is None or b is None:
        return a is None and b is None
    return np.asarray(a).dtype == np.asarray(b).dtype and np.asarray(a).tobytes() == np.asarray(b).tobytes()


def body(comm, argv):
    seed = int(argv[0])
    me, size = comm.rank, comm.size
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(size)
    root = size // 2
    block = (np.arange(5, dtype=np.int32) + 100 * me) * (me + 1)               # 20 bytes, rank-specific
    vector = np.arange(7 * size + 3, dtype=np.int64) * (me + 1) - 3 * me       # not a multiple of the pieces
    blocks = [np.full(3, 1000 * me + d, dtype=np.int16) for d in range(size)]
    want = {"allgather": comm.allgather(block), "gather": comm.gather(block, root=root),
            "bcast": comm.bcast(vector if me == root else None, root=root),
            "allreduce": comm.allreduce(vector), "alltoall": comm.alltoall(blocks)}
    data = {"allgather": block, "gather": block, "bcast": vector if me == root else None, "allreduce": vector,
            "alltoall": blocks}
    for op, alg, opts, order in cases(size):
        for reordered in (False, True):
            got = run_collective(comm, op, data[op], algorithm=alg, old_of_new=shuffled if reordered else None,
                                 order=order, root=root, **opts)
            ok = same(got, want[op])
            all_ok(comm, True, "sync")
            oks = comm.allgather(ok)
            if me == 0:
                emit({"op": op, "algorithm": alg, "options": opts, "order": order, "reordered": reordered,
                      "equal": all(oks), "size": size})
    errors = []
    for kwargs in ({"op": "allgather", "data": block, "algorithm": "ring", "order": "initcomm"},
                   {"op": "allgather", "data": block[:4] if me == 1 else block, "algorithm": "bruck"}):
        try:
            run_collective(comm, **kwargs)
            message = None
        except CollectiveError as exc:
            message = str(exc)
        messages = comm.allgather(message)
        errors.append(messages[0] if len(set(messages)) == 1 else messages)
    if me == 0:
        emit({"errors": errors})


if __name__ == "__main__":
    main(body)
