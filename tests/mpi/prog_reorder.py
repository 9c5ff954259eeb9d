"""reorder() under mpiexec: usage: prog_reorder.py JSON  (a list of {"kind", "method", "seed", "machine"})

kind: stencil (a 3-D stencil Pattern given on every rank), root (the Pattern on rank 0 only),
dense (the whole n x n array on every rank), rows (each rank's own row as an array), dict (as a
dict), profile (a Profile of a halo exchange), cart (the stencil without its grid, given on a Cartesian
communicator, whose grid reorder passes on).  A case without "method" takes reorder's default.
Checks on every rank that the new communicator numbers the processes as info.new_rank says (through
MPI groups, independently of Split's return value) and that each role reaches its partners, then
prints what the driver recomputes.
"""

from __future__ import annotations

import json

import numpy as np
from mpi4py import MPI

import topomap as tm
from mpiprog import all_ok, emit, main
from topomap.mpi import profile, reorder


def stencil_for(size: int) -> tm.Pattern:
    dims = MPI.Compute_dims(size, 3)
    return tm.generators.stencil_3d(dims, points=7, weights=(4, 2, 1), periodic=True)


def body(comm, argv):
    for case in json.loads(argv[0]):
        one(comm, case["kind"], case.get("method"), int(case["seed"]), case.get("machine"))


def one(comm, kind, method, seed, machine):
    pat = stencil_for(comm.size)
    dense = pat.to_dense()
    base = comm
    if kind == "stencil":
        given = pat
    elif kind == "cart":
        base = comm.Create_cart(MPI.Compute_dims(comm.size, 3), periods=[True] * 3, reorder=False)
        given = tm.Pattern.from_edges(pat.senders(), pat.indices, pat.bytes, n=pat.n)
    elif kind == "root":
        given = pat if comm.rank == 0 else None
    elif kind == "dense":
        given = dense
    elif kind == "rows":
        given = dense[comm.rank]
    elif kind == "dict":
        given = {int(j): float(v) for j, v in enumerate(dense[comm.rank]) if v}
    elif kind == "profile":
        with profile(comm) as prof:
            row = dense[comm.rank]
            reqs = [prof.comm.Isend(np.zeros(int(row[j]), dtype=np.uint8), j, tag=5) for j in np.flatnonzero(row)]
            for j in np.flatnonzero(dense[:, comm.rank]):
                comm.Recv(np.zeros(int(dense[j, comm.rank]), dtype=np.uint8), source=j, tag=5)
            MPI.Request.Waitall(reqs)
        given = prof
    else:
        raise ValueError(kind)
    chosen = {} if method is None else {"method": method}
    newcomm, info = reorder(base, given, seed=seed, machine=machine, **chosen)
    mine = int(info.new_rank[comm.rank])
    all_ok(comm, newcomm.rank == mine, "newcomm.rank == new_rank[rank]")
    translated = MPI.Group.Translate_ranks(comm.Get_group(), list(range(comm.size)), newcomm.Get_group())
    all_ok(comm, list(translated) == info.new_rank.tolist(), "group translation == new_rank")
    same = comm.allgather(info.new_rank.tolist())
    all_ok(comm, all(s == same[0] for s in same), "every rank got the same new_rank")
    # the role of new rank p is pattern process p: its messages must reach the roles it talks to
    sent = [newcomm.isend(("role", newcomm.rank), dest=int(q), tag=9)
            for q in np.flatnonzero(dense[newcomm.rank])]
    got = sorted(newcomm.recv(source=int(q), tag=9)[1] for q in np.flatnonzero(dense[:, newcomm.rank]))
    MPI.Request.waitall(sent)
    all_ok(comm, got == sorted(np.flatnonzero(dense[:, newcomm.rank]).tolist()), "role messages")
    if comm.rank == 0:
        emit({"kind": kind, "method": info.method, "seed": seed, "new_rank": info.new_rank.tolist(), "pe_of": info.mapping.pe_of.tolist(),
              "pes": info.job.allocation.pes.tolist(), "machine": info.job.machine.spec,
              "node_hosts": list(info.job.node_hosts), "placement": info.job.placement,
              "before": info.before.to_dict(), "after": info.after.to_dict(), "seconds": info.seconds,
              "identity": info.identity})
    newcomm.Free()
    if base is not comm:
        base.Free()


if __name__ == "__main__":
    main(body)
