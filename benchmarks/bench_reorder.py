"""Overhead of topomap.mpi.reorder: gather + discover + map + split.

Two measurements (issue 6, closing note):

1. **8 ranks under mpiexec** (the MPI mpi4py loads, oversubscribed, two fake
   hosts of four ranks): ``reorder`` of a periodic 2x2x2 7-point stencil,
   given as each rank's row, repeated; rank 0's per-phase wall-clock
   seconds (``ReorderInfo.seconds``), median over repetitions.
2. **A simulated 4096-rank job mapped on one rank**: what the root does for
   a 16x16x16 periodic 7-point stencil on 256 hosts of 16 ranks: assemble the
   Pattern from 4096 gathered rows, build the job allocation from 4096 rank
   places, map, turn the mapping into ``new_rank`` (``plan_reorder``, which
   also evaluates both orders); the MPI collectives themselves cannot be
   simulated and are measured in part 1.

Methods: ``block`` and ``random`` always, and ``greedy``/``ptram`` when registered.

    python benchmarks/bench_reorder.py            # both parts, writes results/reorder.json
    python benchmarks/bench_reorder.py --reps 3   # fewer repetitions
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import topomap as tm  # noqa: E402
from topomap.mpi.job import RankPlace, job_allocation  # noqa: E402
from topomap.mpi.reorder import pattern_from_rows, plan_reorder  # noqa: E402

PHASES = ("pattern", "discover", "map", "split", "total")


def methods() -> list[str]:
    return [m for m in ("block", "random", "greedy", "ptram") if m in tm.methods()]


def child(reps: int, names: list[str]) -> None:
    """Runs on every rank under mpiexec; rank 0 prints one JSON line."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    pat = tm.generators.stencil_3d(MPI.Compute_dims(comm.size, 3), points=7, periodic=True)
    row = pat.to_dense()[comm.rank]
    out = {}
    for method in names:
        secs = []
        for rep in range(reps + 1):
            comm.Barrier()
            newcomm, info = tm.mpi.reorder(comm, row, method=method, seed=rep)
            newcomm.Free()
            if rep:                        # the first call pays for imports and first-touch
                secs.append(info.seconds)
        out[method] = {k: float(np.median([s[k] for s in secs])) for k in PHASES}
    if comm.rank == 0:
        print(json.dumps(out))


def under_mpiexec(n: int, reps: int, names: list[str]) -> dict:
    cmd = [*tm.mpi.mpiexec_command(n), sys.executable, os.path.abspath(__file__), "--child", "--reps", str(reps),
           "--methods", ",".join(names)]
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "TOPOMAP_MPI_HOSTS": f"a*{n // 2},b*{n - n // 2}"}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def simulated(n_side: int, per_host: int, reps: int, names: list[str]) -> dict:
    pat = tm.generators.stencil_3d((n_side,) * 3, points=7, periodic=True)
    n = pat.n
    rows = [(pat.indices[pat.indptr[p]:pat.indptr[p + 1]], pat.bytes[pat.indptr[p]:pat.indptr[p + 1]], None)
            for p in range(n)]
    places = [RankPlace(f"n{r // per_host:04d}", (0, 1), 2) for r in range(n)]
    out: dict = {"ranks": n, "hosts": n // per_host}
    for method in names:
        t = {"assemble": [], "allocation": [], "plan": []}
        for rep in range(reps):
            t0 = time.perf_counter()
            gathered = pattern_from_rows(rows, n)
            t1 = time.perf_counter()
            job = job_allocation(places)
            t2 = time.perf_counter()
            plan = plan_reorder(gathered, job.allocation, method, seed=rep)
            t3 = time.perf_counter()
            t["assemble"].append(t1 - t0)
            t["allocation"].append(t2 - t1)
            t["plan"].append(t3 - t2)
        out[method] = {k: float(np.median(v)) for k, v in t.items()}
        out[method]["map"] = float(plan.mapping.seconds)
        out[method]["total"] = sum(out[method][k] for k in ("assemble", "allocation", "plan"))
        out[method]["hop_bytes_ratio"] = plan.after.hop_bytes / plan.before.hop_bytes
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--methods", default=None, help="comma-separated (default: block, random, greedy, ptram if any)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    names = args.methods.split(",") if args.methods else methods()
    if args.child:
        child(args.reps, names)
        return
    lib = tm.mpi.mpi_library()
    real = under_mpiexec(args.ranks, args.reps, names)
    print(f"reorder under mpiexec: {args.ranks} ranks on 2 fake hosts, {lib.version}")
    print(f"{'method':8s} " + " ".join(f"{p:>9s}" for p in PHASES) + "   (ms, median)")
    for m, row in real.items():
        print(f"{m:8s} " + " ".join(f"{1e3 * row[p]:9.2f}" for p in PHASES))
    sim = simulated(16, 16, args.reps, names)
    print(f"\nsimulated {sim['ranks']}-rank job ({sim['hosts']} hosts x 16), root's work on one process")
    cols = ("assemble", "allocation", "plan", "map", "total")
    print(f"{'method':8s} " + " ".join(f"{c:>10s}" for c in cols) + "  hop-bytes new/old   (ms, median)")
    for m in names:
        row = sim[m]
        print(f"{m:8s} " + " ".join(f"{1e3 * row[c]:10.2f}" for c in cols) + f"  {row['hop_bytes_ratio']:.3f}")
    result = {"mpiexec": {"ranks": args.ranks, "library": lib.version, "seconds": real},
              "simulated": sim, "reps": args.reps, "machine": platform.machine(), "cpus": os.cpu_count(),
              "python": platform.python_version()}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "reorder.json"), "w") as fh:
        json.dump(result, fh, indent=2)


if __name__ == "__main__":
    main()
