"""Two-opt rank placement speed (Cui 2024 §3.3.2, notes 003 §3.6, issue 15).

The thesis reports "4.32 seconds for 256 nodes" (Fig 3.18, one thread of a
3.2 GHz Xeon E5-2667 v4, 5,000 swaps on degree-8 random topologies; which
collective is not said).  Goal: 200,000 iterations at 512 ranks in <= 0.2 s.

Workload: the random shortcut network ``shortcut:n=2P,d=2 log2(2P)-1,seed=0``
(N = 1,024, d = 19 at P = 512, the thesis's Tables 3.4-3.6 setting), P ranks
on ``allocate(P, policy="random", seed=0)`` in draw order; binomial
broadcast, recursive-doubling allreduce and Bruck alltoall; objective hops
(and contention).  Each time is the median of ``--repeat`` runs of
``topomap.collectives.placement.two_opt`` (the Python call included).
Beside it, "full" is what re-evaluating the whole schedule at every
iteration would cost (the thesis's code, the notes suspect): one vectorised
NumPy evaluation ``D[pe[src], pe[dst]].sum()`` over a precomputed hop
matrix, timed and multiplied by the iterations.

    python benchmarks/bench_twoopt.py            # P = 256..2048, writes results/twoopt.json
    python benchmarks/bench_twoopt.py --quick    # P = 512 only, hops only
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import _results  # noqa: E402  (benchmarks/_results.py, beside this script)
import topomap as tm  # noqa: E402
from topomap.collectives import placement as pl  # noqa: E402
from topomap.collectives.schedules import binomial_bcast, bruck, recursive_doubling  # noqa: E402

OPS = {"bcast": binomial_bcast, "allreduce": recursive_doubling, "alltoall": bruck}


def median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


def run(ranks: int, iterations: int, repeat: int, objectives: tuple[str, ...]) -> list[dict]:
    n = 2 * ranks
    machine = tm.machine(f"shortcut:n={n},d={2 * int(math.log2(n)) - 1},seed=0")
    full = machine.allocate(n)
    start = machine.allocate(ranks, policy="random", seed=0).pes
    hops = machine.hops(np.arange(n)[:, None], np.arange(n)[None, :])
    rows = []
    for op, make in OPS.items():
        s = make(ranks)
        u = pl.unicasts(s)
        for objective in objectives:
            result = pl.two_opt(s, full, start, iterations=iterations, objective=objective, seed=0)
            secs = median_seconds(lambda: pl.two_opt(s, full, start, iterations=iterations, objective=objective,
                                                     seed=0), repeat)
            one = median_seconds(lambda: hops[start[u.src], start[u.dst]].sum(), 20) if objective == "hops" else None
            rows.append({"ranks": ranks, "nodes": n, "op": op, "objective": objective, "iterations": iterations,
                         "seconds": secs, "full_seconds_estimate": one and one * iterations,
                         "initial": result.initial_cost, "final": result.cost})
            full_text = f"(full re-evaluation ~{one * iterations:7.2f} s)" if one else " " * 31
            print(f"P={ranks:5d} {op:9s} {objective:10s} {iterations} its: {secs * 1e3:8.1f} ms {full_text}  "
                  f"{result.initial_cost} -> {result.cost}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="P = 512 only, hops only")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "twoopt.json"))
    args = ap.parse_args()
    if args.quick:
        rows = run(512, 200_000, args.repeat, ("hops",))
    else:
        rows = [r for p in (256, 512, 1024, 2048)
                for r in run(p, 200_000, args.repeat, ("hops", "contention") if p == 512 else ("hops",))]
    goal = [r for r in rows if r["ranks"] == 512 and r["objective"] == "hops"]
    print(f"slowest collective at P = 512, 200,000 iterations: {max(r['seconds'] for r in goal):.3f} s "
          f"(goal <= 0.2 s; thesis ~4.3 s at 256 nodes)")
    if not args.quick:
        _results.write(args.out, "twoopt", rows)


if __name__ == "__main__":
    main()
