"""Per-call overhead of the topomap PMPI profiler.

One MPI rank (compiled here with mpicc) times a loop of small (8-byte)
messages to itself, so that no second process, scheduler or network adds
noise to what is measured: the cost of the send call itself.

    send        MPI_Irecv + MPI_Send + MPI_Wait
    isend       MPI_Irecv + MPI_Isend + MPI_Waitall
    isend_sub   the same over a communicator from MPI_Comm_split (the cached
                rank translation instead of the MPI_COMM_WORLD shortcut)
    start       persistent MPI_Send_init / MPI_Recv_init, MPI_Startall + MPI_Waitall
                (the persistent-request table lookup)

Each form runs with and without the profiler (LD_PRELOAD) in the same
benchmark run, alternating, several repetitions.  The table reports the
fastest repetition of each (interference from other processes only ever
adds time, so the minimum is the estimate least disturbed by it; the
medians are in the JSON) and their difference: the profiler's overhead per
send call.

    python benchmarks/bench_profiler.py              # writes results/profiler_overhead.json
    python benchmarks/bench_profiler.py --quick
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from topomap import profiler  # noqa: E402

PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    int r, iters = atoi(argv[2]);
    const char *mode = argv[1];
    char out[8] = {0}, in[8];
    MPI_Request q[2];
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    if (strcmp(mode, "isend_sub") == 0) MPI_Comm_split(MPI_COMM_WORLD, 0, -r, &comm);
    MPI_Comm_rank(comm, &r);
    if (strcmp(mode, "start") == 0) {
        MPI_Recv_init(in, 8, MPI_BYTE, r, 0, comm, &q[0]);
        MPI_Send_init(out, 8, MPI_BYTE, r, 0, comm, &q[1]);
    }
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        if (mode[0] == 's' && mode[1] == 't') {
            MPI_Startall(2, q);
        } else {
            MPI_Irecv(in, 8, MPI_BYTE, r, 0, comm, &q[0]);
            if (strcmp(mode, "send") == 0) {
                MPI_Send(out, 8, MPI_BYTE, r, 0, comm);
                MPI_Wait(&q[0], MPI_STATUS_IGNORE);
                continue;
            }
            MPI_Isend(out, 8, MPI_BYTE, r, 0, comm, &q[1]);
        }
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    }
    double t = MPI_Wtime() - t0;
    printf("%.3f\n", 1e9 * t / iters);
    if (strcmp(mode, "start") == 0) MPI_Request_free(&q[0]), MPI_Request_free(&q[1]);
    if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
"""
MODES = ["send", "isend", "isend_sub", "start"]


def run(exe: str, mode: str, iters: int, lib: str | None, out: str) -> float:
    cmd = ["mpiexec", "-n", "1"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if lib is not None:
        cmd = profiler.prepare(cmd, lib, out).command
    res = subprocess.run([*cmd, exe, mode, str(iters)], capture_output=True, text=True, env=env, check=True)
    return float(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer iterations and repetitions")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "profiler_overhead.json"))
    args = ap.parse_args()
    iters, reps = (20_000, 3) if args.quick else (200_000, 7)
    lib = str(profiler.build())
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "overhead")
        src = exe + ".c"
        with open(src, "w") as fh:
            fh.write(PROGRAM)
        subprocess.run([profiler.find_mpicc(), "-O2", "-o", exe, src], check=True)
        rows = []
        for mode in MODES:
            plain, prof = [], []
            for _ in range(reps):  # alternate so that drifts hit both alike
                plain.append(run(exe, mode, iters, None, ""))
                prof.append(run(exe, mode, iters, lib, os.path.join(tmp, "p.tmprof")))
            a, b = min(plain), min(prof)
            rows.append({"mode": mode, "iterations": iters, "ns_plain": a, "ns_profiled": b,
                         "overhead_ns": b - a, "overhead_pct": 100 * (b - a) / a,
                         "median_plain": statistics.median(plain), "median_profiled": statistics.median(prof),
                         "plain_all": plain, "profiled_all": prof})
    print(f"{'mode':<10} {'iterations':>10} {'ns/it plain':>12} {'ns/it profiled':>15} {'overhead ns':>12} {'%':>6}")
    for r in rows:
        print(f"{r['mode']:<10} {r['iterations']:>10} {r['ns_plain']:>12.1f} {r['ns_profiled']:>15.1f} "
              f"{r['overhead_ns']:>12.1f} {r['overhead_pct']:>6.1f}")
    mpi = subprocess.run(["mpiexec", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump({"benchmark": "profiler_overhead", "repetitions": reps, "mpi": mpi,
                   "load_average": os.getloadavg(),
                   "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
                   "rows": rows}, fh, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
