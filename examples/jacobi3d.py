"""3-D heat equation by Jacobi iterations on a Cartesian process grid, with mpi4py.

An ordinary mpi4py code: a global ``n x n x n`` grid with zero (Dirichlet)
boundaries is split into blocks over ``MPI.Compute_dims(size, 3)`` processes;
each step exchanges one-cell halos with the six face neighbours
(``Sendrecv`` on a ``Cartcomm``) and averages the neighbours.  At the end
rank 0 prints the residual ``||6u - sum of neighbours||`` and a SHA-256 of
the assembled grid.

The block marked "topomap" is all it takes to run on a better rank order:
record one halo exchange with the in-process profiler, reorder, and go on
with the new communicator.  Every number is computed by the same block
owner with the same arithmetic whatever process runs it, so the result is
bit-identical with and without reordering.

Run::

    mpiexec -n 8 python examples/jacobi3d.py --n 32 --iters 100
    mpiexec -n 8 python examples/jacobi3d.py --n 32 --iters 100 --topomap greedy --machine file:topology.conf/16
"""

from __future__ import annotations

import argparse
import hashlib
import math

import numpy as np
from mpi4py import MPI


class Jacobi:
    """One process's block of the grid, with a ghost layer on every side."""

    def __init__(self, comm: MPI.Intracomm, n: int):
        dims = MPI.Compute_dims(comm.size, 3)
        self.cart = comm.Create_cart(dims, periods=[False] * 3, reorder=False)
        coords = self.cart.Get_coords(self.cart.rank)
        self.lo, self.hi = [], []
        for d in range(3):
            cuts = np.linspace(0, n, dims[d] + 1).round().astype(int)
            self.lo.append(int(cuts[coords[d]]))
            self.hi.append(int(cuts[coords[d] + 1]))
        x, y, z = (np.arange(a, b) + 1.0 for a, b in zip(self.lo, self.hi))
        shape = [b - a + 2 for a, b in zip(self.lo, self.hi)]
        self.u = np.zeros(shape)
        self.u[1:-1, 1:-1, 1:-1] = (np.sin(np.pi * x / (n + 1))[:, None, None] * np.sin(2 * np.pi * y / (n + 1))
                                    [None, :, None] * (z / (n + 1))[None, None, :] + 0.1 * ((x[:, None, None] * 7 +
                                    y[None, :, None] * 3 + z[None, None, :]) % 5))

    def exchange(self) -> None:
        """Fill the ghost layers from the six face neighbours (zero at the domain boundary)."""
        u = self.u
        for d in range(3):
            lower, upper = self.cart.Shift(d, 1)
            inner = [slice(1, -1)] * 3
            for send_at, recv_at, dest, source in ((-2, 0, upper, lower), (1, -1, lower, upper)):
                send_sl, recv_sl = list(inner), list(inner)
                send_sl[d], recv_sl[d] = send_at, recv_at
                sendbuf = np.ascontiguousarray(u[tuple(send_sl)])
                recvbuf = np.zeros_like(sendbuf)
                self.cart.Sendrecv(sendbuf, dest=dest, sendtag=d, recvbuf=recvbuf, source=source, recvtag=d)
                u[tuple(recv_sl)] = recvbuf     # stays zero where source is MPI.PROC_NULL

    def neighbours(self) -> np.ndarray:
        u = self.u
        return (u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1] + u[1:-1, :-2, 1:-1] + u[1:-1, 2:, 1:-1]
                + u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:])

    def step(self) -> None:
        self.exchange()
        self.u[1:-1, 1:-1, 1:-1] = self.neighbours() / 6.0

    def report(self, n: int) -> tuple[float, str] | None:
        """Residual and SHA-256 of the whole grid, assembled on rank 0 in block order."""
        self.exchange()
        local_res = float(np.sum((6.0 * self.u[1:-1, 1:-1, 1:-1] - self.neighbours()) ** 2))
        parts = self.cart.gather((self.lo, self.hi, self.u[1:-1, 1:-1, 1:-1].copy(), local_res), root=0)
        if self.cart.rank != 0:
            return None
        grid = np.zeros((n, n, n))
        for lo, hi, block, _ in parts:
            grid[lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]] = block
        residual = math.sqrt(math.fsum(p[3] for p in parts))
        return residual, hashlib.sha256(grid.tobytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=24, help="grid points per dimension")
    parser.add_argument("--iters", type=int, default=50, help="Jacobi iterations")
    parser.add_argument("--topomap", metavar="METHOD", help="reorder the ranks with this topomap mapper first")
    parser.add_argument("--machine", help="topomap machine spec of the job's hosts (default: one switch)")
    parser.add_argument("--seed", type=int, default=0, help="topomap mapper seed")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD

    # ---- topomap: record one halo exchange, reorder, continue on the new communicator ----
    if args.topomap:
        import topomap.mpi
        with topomap.mpi.profile(comm) as prof:
            Jacobi(prof.comm, args.n).exchange()
        comm, info = topomap.mpi.reorder(comm, prof, method=args.topomap, machine=args.machine, seed=args.seed)
        if comm.rank == 0:
            print(f"topomap {args.topomap}: new_rank {info.new_rank.tolist()}, hop-bytes "
                  f"{info.before.hop_bytes:g} -> {info.after.hop_bytes:g}")
    # ---------------------------------------------------------------------------------------

    solver = Jacobi(comm, args.n)
    t0 = MPI.Wtime()
    for _ in range(args.iters):
        solver.step()
    seconds = MPI.Wtime() - t0
    out = solver.report(args.n)
    if out is not None:
        residual, digest = out
        print(f"residual {residual!r} sha256 {digest} ({args.iters} iterations in {seconds:.3f} s)")


if __name__ == "__main__":
    main()
