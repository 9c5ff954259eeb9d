"""The in-process profiler counts what the calls send, per destination rank of the profiled comm.

Each call below adds its bytes to `expect` by hand (sizes from the buffers' definitions), then the
counts are compared, the gathered Pattern checked, and the Profile fed to reorder().
"""

from __future__ import annotations

import numpy as np
from mpi4py import MPI

import topomap as tm
from mpiprog import all_ok, check, emit, main
from topomap.mpi import profile, reorder


def body(comm, argv):
    size, me = comm.size, comm.rank
    nxt, prv = (me + 1) % size, (me - 1) % size
    expect = np.zeros(size)
    msgs = np.zeros(size)

    def add(dest, nbytes):
        expect[dest] += nbytes
        msgs[dest] += 1

    obj = {"rank": me, "payload": list(range(me + 3))}
    pickled = len(MPI.pickle.dumps(obj))
    with profile(comm) as prof:
        c = prof.comm
        check(isinstance(c, MPI.Intracomm) and c == comm, "the counting communicator is the same communicator")
        c.Send(np.zeros(10), nxt, tag=1)
        add(nxt, 80)
        comm.Recv(np.zeros(10), prv, tag=1)
        req = c.Isend([np.zeros(8, dtype=np.int32), 3, MPI.INT], (me + 2) % size, tag=2)
        comm.Recv([np.zeros(3, dtype=np.int32), MPI.INT], (me - 2) % size, tag=2)
        req.Wait()
        add((me + 2) % size, 12)
        c.send(obj, dest=nxt, tag=3)
        add(nxt, pickled)
        comm.recv(source=prv, tag=3)
        c.sendrecv(obj, dest=prv, sendtag=4, source=nxt, recvtag=4)
        add(prv, pickled)
        c.Sendrecv(np.zeros(5, dtype=np.int32), dest=nxt, sendtag=5, recvbuf=np.zeros(5, dtype=np.int32),
                   source=prv, recvtag=5)
        add(nxt, 20)
        c.Send(np.zeros(4), MPI.PROC_NULL)                    # goes nowhere: not counted
        cart = c.Create_cart([size], periods=[True])
        sendbuf = np.zeros((2, 4))                            # one 32-byte block per neighbour
        cart.Neighbor_alltoall(sendbuf, np.zeros((2, 4)))
        for q in (prv, nxt):
            add(q, 32)
        sub = c.Split(me % 2, key=-me)                        # reversed numbering inside each half
        members = sub.allgather(me)                           # comm rank of each sub rank
        sub.Send(np.zeros(7, dtype=np.uint8), (sub.rank + 1) % sub.size, tag=6)
        add(members[(sub.rank + 1) % sub.size], 7)
        sub.Recv(np.zeros(7, dtype=np.uint8), (sub.rank - 1) % sub.size, tag=6)
        dests = [nxt, (me + 3) % size]
        srcs = [prv, (me - 3) % size]
        g = c.Create_dist_graph_adjacent(srcs, dests)
        counts = [2, 5]
        g.Neighbor_alltoallv([np.zeros(7), (counts, [0, 2]), MPI.DOUBLE], [np.zeros(7), (counts, [0, 2]), MPI.DOUBLE])
        add(dests[0], 16)
        add(dests[1], 40)
        req = g.Ineighbor_allgather(np.zeros(3, dtype=np.int16), np.zeros(6, dtype=np.int16))
        req.Wait()
        for q in dests:
            add(q, 6)
        g.neighbor_allgather(obj)
        for q in dests:
            add(q, pickled)
        g.Neighbor_alltoallw([np.zeros(16, dtype=np.uint8), ([1, 2], [0, 8]), [MPI.INT, MPI.DOUBLE]],
                             [np.zeros(16, dtype=np.uint8), ([1, 2], [0, 8]), [MPI.INT, MPI.DOUBLE]])
        add(dests[0], 4)
        add(dests[1], 16)
        g.Free()
        sub.Free()
        cart.Free()
    all_ok(comm, np.array_equal(prof.row, expect), f"bytes per destination {prof.row} != {expect}")
    all_ok(comm, np.array_equal(prof.msgs, msgs), f"messages per destination {prof.msgs} != {msgs}")
    c.Send(np.zeros(100), nxt, tag=7)                         # after the block: not counted
    comm.Recv(np.zeros(100), prv, tag=7)
    all_ok(comm, np.array_equal(prof.row, expect), "nothing is counted after the block")

    pat = prof.pattern()
    rows = comm.allgather(expect)
    full = np.array(rows)
    np.fill_diagonal(full, 0)
    all_ok(comm, np.array_equal(pat.to_dense(), full), "gathered pattern")
    newcomm, info = reorder(comm, prof, method="random", seed=2)
    all_ok(comm, newcomm.rank == int(info.new_rank[comm.rank]), "reorder from a Profile")
    newcomm.Free()

    world = MPI.COMM_WORLD
    with profile(world, patch_world=True) as p2:
        MPI.COMM_WORLD.send("x" * 100, dest=nxt, tag=8)      # code that fetches COMM_WORLD itself
        world.recv(source=prv, tag=8)
    all_ok(comm, MPI.COMM_WORLD is world, "COMM_WORLD restored")
    all_ok(comm, p2.row[nxt] == len(MPI.pickle.dumps("x" * 100)), "patch_world counts COMM_WORLD sends")
    if me == 0:
        emit({"calls": prof.calls, "row": prof.row.tolist(), "pattern_nnz": int(pat.nnz)})


if __name__ == "__main__":
    main(body)
