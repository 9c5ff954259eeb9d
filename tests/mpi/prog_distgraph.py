"""A neighbour exchange on the translated dist-graph reaches the right processes.

usage: prog_distgraph.py SEED   (runs a random and a stencil graph, then ask_mpi on the stencil)

Each process builds its adjacency in *old* rank numbers (as the application did before reordering),
reorder() permutes the ranks (method random, so they really move), dist_graph() translates.  Then
Neighbor_alltoallv sends, to each destination, `weight` int64 words saying (old sender, old receiver,
position): every receiver checks each block against its sources in old numbering.  The same again
with Neighbor_alltoall and the pickle-based neighbor_alltoall, and handover() moves per-role data.
"""

from __future__ import annotations

import numpy as np

import topomap as tm
from mpiprog import all_ok, emit, main
from topomap.mpi import ask_mpi, dist_graph, handover, reorder, to_new, to_old


def graph(kind: str, size: int, seed: int) -> tm.Pattern:
    if kind == "stencil":
        from mpi4py import MPI
        return tm.generators.stencil_3d(MPI.Compute_dims(size, 3), points=7, weights=(3, 2, 1), periodic=True)
    rng = np.random.default_rng(seed)
    dense = rng.integers(1, 6, (size, size)) * (rng.random((size, size)) < 0.5)
    np.fill_diagonal(dense, 0)
    return tm.Pattern.from_dense(dense)


def body(comm, argv):
    seed = int(argv[0])
    for kind in ("random", "stencil"):
        exchange(comm, kind, seed)
    ask(comm, graph("stencil", comm.size, seed))


def exchange(comm, kind, seed):
    pat = graph(kind, comm.size, seed)
    dense = pat.to_dense().astype(np.int64)
    me = comm.rank                                   # old rank: this process's identity throughout
    dst = np.flatnonzero(dense[me])
    src = np.flatnonzero(dense[:, me])
    dw, sw = dense[me, dst], dense[src, me]
    newcomm, info = reorder(comm, pat, method="random", seed=seed)
    g = dist_graph(newcomm, info, src.tolist(), dst.tolist(), sw.tolist(), dw.tolist())
    s_new, d_new, weights = g.Get_dist_neighbors()
    all_ok(comm, s_new == to_new(src, info).tolist() and d_new == to_new(dst, info).tolist(), "translated lists")
    all_ok(comm, weights is not None and list(weights[0]) == sw.tolist() and list(weights[1]) == dw.tolist(),
           "weights preserved")
    all_ok(comm, to_old(s_new, info).tolist() == src.tolist(), "to_old inverts to_new")

    # alltoallv: to each destination `weight` words (sender, receiver, position) in old numbering
    send = np.concatenate([np.stack([np.full(w, me), np.full(w, q), np.arange(w)], 1).ravel()
                           for q, w in zip(dst, dw)]) if dst.size else np.zeros(0, np.int64)
    recv = np.full(3 * int(sw.sum()), -1, dtype=np.int64)
    g.Neighbor_alltoallv([send, 3 * dw], [recv, 3 * sw])
    expect = np.concatenate([np.stack([np.full(w, p), np.full(w, me), np.arange(w)], 1).ravel()
                             for p, w in zip(src, sw)]) if src.size else np.zeros(0, np.int64)
    all_ok(comm, np.array_equal(recv, expect), "Neighbor_alltoallv delivered to the right neighbours")

    block = np.array([[me, q] for q in dst], dtype=np.int64).reshape(-1, 2)
    got = np.full((src.size, 2), -1, dtype=np.int64)
    g.Neighbor_alltoall(block, got)
    all_ok(comm, np.array_equal(got, np.array([[p, me] for p in src], dtype=np.int64).reshape(-1, 2)),
           "Neighbor_alltoall")
    objs = g.neighbor_alltoall([("from", me, "to", int(q)) for q in dst])
    all_ok(comm, objs == [("from", int(p), "to", me) for p in src], "neighbor_alltoall (pickled)")

    role_data = handover(newcomm, info, {"role": me})
    all_ok(comm, role_data == {"role": newcomm.rank}, "handover gives each process its new role's data")
    if comm.rank == 0:
        emit({"graph": kind, "new_rank": info.new_rank.tolist(), "edges": int(pat.nnz), "identity": info.identity})
    g.Free()
    newcomm.Free()


def ask(comm, pat):
    """ask_mpi(): the dist-graph MPI builds with reorder=True, and an honest report of it."""
    g, res = ask_mpi(comm, pat)
    all_ok(comm, int(res.new_rank[comm.rank]) == g.rank, "ask_mpi: new_rank is what the graph says")
    all_ok(comm, sorted(res.new_rank.tolist()) == list(range(comm.size)), "ask_mpi: MPI's order is a permutation")
    all_ok(comm, res.identity == (res.new_rank.tolist() == list(range(comm.size))), "ask_mpi: identity flag")
    dense = pat.to_dense()
    s, d, _ = g.Get_dist_neighbors()
    if res.identity:   # nothing moved: MPI must hand back exactly the lists it was given
        all_ok(comm, sorted(d) == np.flatnonzero(dense[comm.rank]).tolist()
               and sorted(s) == np.flatnonzero(dense[:, comm.rank]).tolist(), "ask_mpi: neighbours kept")
    if comm.rank == 0:
        emit({"ask_mpi": res.to_dict()})
    g.Free()


if __name__ == "__main__":
    main(body)
