"""Print where each rank runs (host and CPU binding), for launcher-file tests."""

from __future__ import annotations

from mpiprog import emit, main
from topomap.mpi.job import local_place


def body(comm, argv):
    place = local_place()
    rows = comm.gather({"rank": comm.rank, "host": place.host, "cpus": list(place.cpus)}, root=0)
    if comm.rank == 0:
        for row in rows:
            emit(row)


if __name__ == "__main__":
    main(body)
