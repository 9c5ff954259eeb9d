"""Distributed PTRAM (topomap.mpi.distributed_ptram) against the serial C mapper.

Workload: the SciNet GPC fat tree (``gpc/8``), the thesis's weighted 2-D
5-point stencil at 1024 and 4096 processes on nodes scattered over the fabric
(``policy="random"``), ``plateau=True`` so that the refinement does several
rounds.  The serial mapper runs in this process; the distributed one under
``mpiexec -n R --oversubscribe`` for R = 1, 2, 4, 8, each rank printing its
own times.  Columns per run: wall time of step 1 (rank 0's partitioner),
greedy and refinement, the share of the run's time spent in the leaders'
``Allgatherv`` (rank 0; waiting for slower leaders counts as
communication), the total as seen by ``distributed_ptram``, and whether
the mapping, greedy order and round-by-round MC equal the serial run.

Read the times honestly: the machine this was written on has 2 cores shared
with other jobs, so with R > 2 ranks are oversubscribed and time-share the
cores; a speed-up cannot show, only the overhead of the decomposition.

    python benchmarks/bench_ptram_mpi.py            # writes results/ptram_mpi.json
    python benchmarks/bench_ptram_mpi.py --quick    # 1024 processes, R = 1, 2, 4
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import topomap as tm  # noqa: E402
from topomap.mappers.ptram import run_ptram  # noqa: E402

SHAPES = {1024: (32, 32), 4096: (64, 64)}


def inputs(n: int):
    alloc = tm.machine("gpc/8").allocate(n, policy="random", seed=0)
    return tm.generators.stencil_2d(SHAPES[n], weights=(1, 3)), alloc


def worker(n: int) -> None:
    """One rank of the distributed run: print rank 0's times and result."""
    from mpi4py import MPI
    from topomap.mpi import distributed_ptram
    comm = MPI.COMM_WORLD
    pat, alloc = inputs(n)
    comm.Barrier()
    res = distributed_ptram(comm, pat, alloc, seed=0, plateau=True)
    if comm.rank == 0:
        print("@json " + json.dumps({"seconds": res.seconds, "pe_of": res.pe_of.tolist(),
                                     "order": res.order.tolist(), "round_mc": res.round_mc.tolist()}), flush=True)


def distributed(n: int, ranks: int) -> dict:
    from topomap.mpi import mpiexec_command
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "PYTHONPATH": str(ROOT)}
    cmd = [*mpiexec_command(ranks, True), sys.executable, str(Path(__file__).resolve()), "--worker", str(n)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1200, env=env, check=True)
    return json.loads(next(l for l in done.stdout.splitlines() if l.startswith("@json "))[6:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1024 processes, 1, 2 and 4 ranks")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker)
        return
    sizes, rank_counts = ([1024], [1, 2, 4]) if args.quick else ([1024, 4096], [1, 2, 4, 8])
    rows = []
    for n in sizes:
        pat, alloc = inputs(n)
        t = time.perf_counter()
        ref = run_ptram(pat, alloc, seed=0, plateau=True)
        total = time.perf_counter() - t
        rows.append({"n": n, "run": "serial C", "ranks": 1, **{k: ref.seconds[k] for k in ("partition", "greedy",
                     "refine")}, "comm_share": 0.0, "total": total, "equal": True, "rounds": ref.rounds_done})
        for r in rank_counts:
            out = distributed(n, r)
            s = out["seconds"]
            equal = (out["pe_of"] == ref.pe_of.tolist() and out["order"] == ref.order.tolist()
                     and out["round_mc"] == ref.round_mc.tolist())
            rows.append({"n": n, "run": "distributed", "ranks": r, "partition": s["partition"],
                         "greedy": s["greedy"], "refine": s["refine"], "comm_share": s["comm"] / s["total"],
                         "total": s["total"], "equal": equal, "rounds": len(out["round_mc"]) - 1})
    head = f"{'n':>5} {'run':<12} {'ranks':>5} {'step1 s':>8} {'greedy s':>9} {'refine s':>9} {'comm %':>7} " \
           f"{'total s':>8} {'/serial':>8} {'rounds':>6} {'equal':>6}"
    print(head)
    print("-" * len(head))
    for row in rows:
        base = next(r["total"] for r in rows if r["n"] == row["n"] and r["run"] == "serial C")
        print(f"{row['n']:>5} {row['run']:<12} {row['ranks']:>5} {row['partition']:>8.3f} {row['greedy']:>9.3f} "
              f"{row['refine']:>9.3f} {100 * row['comm_share']:>6.1f}% {row['total']:>8.3f} "
              f"{row['total'] / base:>8.2f} {row['rounds']:>6} {str(row['equal']):>6}")
    out = HERE / "results" / "ptram_mpi.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"machine": "gpc/8", "pattern": "stencil_2d weights (1, 3)", "policy": "random",
                               "cores": os.cpu_count(), "rows": rows}, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
