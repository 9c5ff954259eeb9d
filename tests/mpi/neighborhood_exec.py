"""Combined and naive neighbour collectives (topomap.mpi.NeighborCombiner) against mpi4py's own
neighbor_allgather / Neighbor_alltoallv, byte for byte, persistent and not, on seeded random
graphs and a periodic Moore grid; then bad input raising on every rank.

Open MPI 4.1's Neighbor_allgather and Neighbor_alltoall hang when a rank has no destination
(seen here with 5 ranks), so the references are mpi4py's pickled neighbor_allgather (point to
point inside) and Neighbor_alltoallv with equal counts.

With the argument ``cumulative`` only the combined collectives of cumulative combining
(topomap.neighborhood.combine(cumulative=True)) are compared, on the same graphs.

usage: neighborhood_exec.py SEED [cumulative]
"""

import numpy as np
from mpi4py import MPI
from mpiprog import check, emit, main

import topomap.neighborhood as nb
from topomap.mpi import CollectiveError, NeighborCombiner


def graphs(n: int, seed: int):
    for delta in (0.3, 0.6, 0.9):
        yield f"random{delta}", nb.random_graph(n, delta, seed=seed + int(10 * delta), self_loops=seed % 2 == 1)
    dims = {9: (3, 3), 12: (4, 3), 15: (5, 3), 16: (4, 4)}.get(n)
    if dims:
        yield "moore", nb.moore_graph(dims, 1)


def compare(comm, dist, g, seed: int, combine: bool, cumulative: bool = False) -> dict:
    r = comm.rank
    nd, ns = g.destinations(r).size, g.sources(r).size
    nc = NeighborCombiner(dist, combine=combine, cumulative=cumulative)
    rng = np.random.default_rng(seed * 1000 + r)
    # allgather, 3 int32 per block
    send = rng.integers(-2**31, 2**31, size=3, dtype=np.int32)
    ref, got = np.zeros(3 * ns, np.int32), np.full(3 * ns, -1, np.int32)
    ref[:] = np.frombuffer(b"".join(dist.neighbor_allgather(send.tobytes())), np.int32)
    nc.Neighbor_allgather(send, got)
    check(got.tobytes() == ref.tobytes(), f"allgather differs on rank {r}")
    pers = nc.Neighbor_allgather_init(send, got)
    for _ in range(3):
        send[:] = rng.integers(-2**31, 2**31, size=3, dtype=np.int32)
        got[:] = -1
        pers.Start()
        pers.Wait()
        check(got.tobytes() == b"".join(dist.neighbor_allgather(send.tobytes())),
              f"persistent allgather differs on rank {r}")
    pers.Free()
    # alltoall, 2 float64 per block
    send = rng.random(2 * nd)
    ref, got = np.zeros(2 * ns), np.zeros(2 * ns)
    dist.Neighbor_alltoallv([send, [2] * nd], [ref, [2] * ns])
    nc.Neighbor_alltoall(send, got)
    check(got.tobytes() == ref.tobytes(), f"alltoall differs on rank {r}")
    # alltoallv: counts of edge p -> q drawn from a generator all ranks share
    crng = np.random.default_rng(seed)
    counts = {(p, int(q)): int(c) for p in range(g.n) for q, c in
              zip(g.destinations(p), crng.integers(0, 4, size=g.destinations(p).size))}
    sc = np.array([counts[(r, int(q))] for q in g.destinations(r)], dtype=np.int64)
    rc = np.array([counts[(int(o), r)] for o in g.sources(r)], dtype=np.int64)
    send = rng.integers(0, 1000, size=int(sc.sum()), dtype=np.int16)
    ref, got = np.zeros(int(rc.sum()), np.int16), np.full(int(rc.sum()), -1, np.int16)
    dist.Neighbor_alltoallv([send, sc], [ref, rc])
    nc.Neighbor_alltoallv([send, sc], [got, rc])
    check(got.tobytes() == ref.tobytes(), f"alltoallv differs on rank {r}")
    pers = nc.Neighbor_alltoallv_init([send, sc], [got, rc])
    send[:] = rng.integers(0, 1000, size=send.size, dtype=np.int16)
    got[:] = -1
    pers.Start()
    pers.Wait()
    dist.Neighbor_alltoallv([send, sc], [ref, rc])
    check(got.tobytes() == ref.tobytes(), f"persistent alltoallv differs on rank {r}")
    pers.Free()
    sends = comm.allreduce(int(sum(1 for o in nc.view.steps) if combine else 0))
    widest = comm.allreduce(max((len(o) for _, _, o in nc.view.receives), default=0) if combine else 0, op=MPI.MAX)
    nc.Free()
    return {"friend_steps": sends, "most_origins": widest}


def errors(comm, dist) -> list[str]:
    seen = []
    nc = NeighborCombiner(dist)
    ns = len(dist.Get_dist_neighbors()[0])
    # the last rank alone passes a strided receive buffer; the others must not wait for it
    recv = np.zeros(2 * ns, np.int32) if comm.rank < comm.size - 1 else np.zeros(4 * ns + 2, np.int32)[::2]
    try:
        nc.Neighbor_allgather(np.zeros(2, np.int32), recv)
        seen.append("recvbuf: no error")
    except CollectiveError as exc:
        seen.append(f"recvbuf:{'C-contiguous' in str(exc)}")
    try:
        NeighborCombiner(dist, theta=0)
    except CollectiveError as exc:
        seen.append(f"theta:{'theta' in str(exc)}")
    r, n = comm.rank, comm.size
    dests = [(r + 1) % n]
    srcs = [(r - 1) % n] if r != 0 else []      # rank 0 forgets its source
    try:
        NeighborCombiner(comm, sources=srcs, destinations=dests)
    except CollectiveError as exc:
        seen.append(f"lists:{'disagree' in str(exc)}")
    nc.Free()
    return seen


def body(comm, argv):
    seed = int(argv[0])
    cumulative = argv[1:] == ["cumulative"]
    out = {}
    for name, g in graphs(comm.size, seed):
        r = comm.rank
        dist = comm.Create_dist_graph_adjacent(g.sources(r).tolist(), g.destinations(r).tolist(), reorder=False)
        if cumulative:
            out[f"{name}/cumulative"] = compare(comm, dist, g, seed, True, cumulative=True)
            dist.Free()
            continue
        for combine in (True, False):
            out[f"{name}/{'combined' if combine else 'naive'}"] = compare(comm, dist, g, seed, combine)
        if name == "random0.9":
            out["errors"] = errors(comm, dist)
        dist.Free()
    if comm.rank == 0:
        emit(out)


if __name__ == "__main__":
    main(body)
