"""Distributed Phase 1 (topomap.mpi.distributed_phase1) against the C simulator: every rank's
steps, final sends, receives and Alg. 2 rounds equal its share of topomap.neighborhood.combine's
T, on seeded random graphs (with and without self-loops, an iteration cap and node preference)
and a periodic Moore grid; then a combined collective built on the distributed T.

usage: neighborhood_phase1.py SEED
"""

import numpy as np
from mpiprog import all_ok, emit, main

import topomap.neighborhood as nb
from topomap.mpi import NeighborCombiner
from topomap.mpi.neighborhood import distributed_phase1


def cases(n: int, seed: int):
    for i, delta in enumerate((0.3, 0.5, 0.7, 0.9)):
        yield f"random{delta}", nb.random_graph(n, delta, seed=seed + i, self_loops=i % 2 == 1), {}
    yield "capped", nb.random_graph(n, 0.9, seed=seed), {"max_iterations": 1, "theta": 2}
    yield "nodes", nb.random_graph(n, 0.8, seed=seed + 9), {"node": (np.arange(n) // 2).tolist(), "theta": 2}
    dims = {9: (3, 3), 12: (4, 3), 16: (4, 4)}.get(n)
    if dims:
        yield "moore", nb.moore_graph(dims, 1), {}
        yield "cumulative moore", nb.moore_graph(dims, 1), {"cumulative": True, "theta": 2}
    for i, delta in enumerate((0.5, 0.9)):
        yield f"cumulative{delta}", nb.random_graph(n, delta, seed=seed + i, self_loops=i == 1), \
            {"cumulative": True, "theta": 2}
    yield "cumulative capped", nb.random_graph(n, 0.9, seed=seed), {"max_iterations": 2, "theta": 2,
                                                                     "cumulative": True}


def body(comm, argv):
    seed = int(argv[0])
    r = comm.rank
    out = {}
    for name, g, kw in cases(comm.size, seed):
        sim = nb.combine(g, **kw)
        view, stats = distributed_phase1(comm, g.sources(r).tolist(), g.destinations(r).tolist(), **kw)
        ref = sim.rank_view(r)
        same = (view.steps == ref.steps and view.final == ref.final and view.receives == ref.receives
                and view.carried == ref.carried
                and stats["done_iter"] == int(sim.done_iter[r]) and stats["rounds"] == int(sim.alg2_rounds[r])
                and stats["friends"] == int(sim.friends0[r]))
        all_ok(comm, same, f"distributed phase 1 equals the simulator on {name}")
        out[name] = comm.allreduce(len(view.steps))
    g = nb.random_graph(comm.size, 0.8, seed=seed)
    dist = comm.Create_dist_graph_adjacent(g.sources(r).tolist(), g.destinations(r).tolist(), reorder=False)
    for cumulative in (False, True):
        nc = NeighborCombiner(dist, pattern="distributed", theta=2, cumulative=cumulative)
        send = np.full(2, r, np.int64)
        got = np.zeros(2 * g.sources(r).size, np.int64)
        nc.Neighbor_allgather(send, got)
        all_ok(comm, got.tolist() == [o for o in g.sources(r).tolist() for _ in range(2)],
               f"allgather on distributed T (cumulative={cumulative})")
        nc.Free()
    dist.Free()
    if r == 0:
        emit(out)


if __name__ == "__main__":
    main(body)
