"""calibrate() under mpiexec; usage: calibrate_job.py REPEATS

Rank 0 prints the model every rank got, the job's placement and, for ranks 0 and 1,
one-way times it measured itself (a ping-pong of its own, timed separately from calibrate's) next
to what topomap.timemodel.predict says for one such message with the calibrated model.
"""

from __future__ import annotations

import time

import numpy as np
from mpi4py import MPI

import topomap as tm
from mpiprog import emit, main
from topomap.mpi import discover_job
from topomap.timemodel import predict
from topomap.timemodel.calibrate import calibrate

SIZES = (8, 4096, 262144)


def one_way(comm, size, repeats=30):
    """Median one-way time between ranks 0 and 1, while the other ranks sleep in a barrier."""
    buf = np.zeros(size, dtype=np.uint8)
    times = []
    if comm.rank in (0, 1):
        peer = 1 - comm.rank
        for _ in range(repeats + 3):
            t0 = MPI.Wtime()
            if comm.rank == 0:
                comm.Send(buf, dest=peer)
                comm.Recv(buf, source=peer)
            else:
                comm.Recv(buf, source=peer)
                comm.Send(buf, dest=peer)
            times.append((MPI.Wtime() - t0) / 2)
    req = comm.Ibarrier()
    while not req.Test():
        time.sleep(2e-4)
    return float(np.median(times[3:])) if comm.rank == 0 else None


def body(comm, argv):
    model = calibrate(comm, repeats=int(argv[0]))
    models = comm.gather(model.to_dict(), root=0)        # one printing rank: lines of several would interleave
    job = discover_job(comm)
    measured = {s: one_way(comm, s) for s in SIZES}
    if comm.rank == 0:
        pes = job.allocation.pes
        rows = []
        for s in SIZES:
            pat = tm.Pattern.from_edges([0], [1], [s], n=comm.size)
            rows.append({"bytes": s, "measured": measured[s],
                         "predicted": predict(pat, job.allocation, pes, model).makespan})
        emit({"models": models, "placement": job.placement, "hosts": [p.host for p in job.places],
              "level_names": job.machine.level_names,
              "level01": int(job.machine.level_of(pes[:1], pes[1:2])[0]), "pingpong": rows})


if __name__ == "__main__":
    main(body)
