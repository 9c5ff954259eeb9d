"""discover_job() under mpiexec: prints what rank 0 built; usage: prog_discover.py [MACHINE] [NODE]"""

from __future__ import annotations

from mpiprog import all_ok, emit, main
from topomap.mpi import discover_job


def body(comm, argv):
    machine = argv[0] if argv and argv[0] != "-" else None
    node = argv[1] if len(argv) > 1 else "auto"
    job = discover_job(comm, machine=machine, node=node)
    all_ok(comm, job is not None and len(job.allocation) == comm.size, "allocation on every rank")
    same = comm.allgather(job.allocation.pes.tolist())
    all_ok(comm, all(s == same[0] for s in same), "every rank built the same allocation")
    if comm.rank == 0:
        emit({**job.to_dict(), "cpus": [list(p.cpus) for p in job.places], "pes_per_node": job.machine.pes_per_node,
              "nnodes": job.machine.nnodes})


if __name__ == "__main__":
    main(body)
