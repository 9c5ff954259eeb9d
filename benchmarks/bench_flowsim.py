"""Flow-level simulation speed: one phase of a 3-D stencil, 10^3 to 10^5 flows.

Workload (issue 14, benchmark item): the 7-point periodic stencil
(``generators.stencil_3d``) of 180, 1728 and 16900 processes (1080, 10368 and
101400 flows of 1 MB), every flow released at once (1 stage, BARRIER, one
iteration, max-min sharing), on

* a 3-D torus with one PE per node shaped like the process grid (6x6x5,
  12x12x12, 26x26x25), so the block mapping gives 1-hop flows;
* a 3-level fat tree of 16-port switches (1024 nodes) with as many PEs per
  node as it takes to hold the processes, so block keeps neighbours in a
  node or a leaf;

with the block (launcher order) and a seeded random mapping.  Links run at
12.5 GB/s, every flow has a 1 us latency and a 50 GB/s cap (what a node's
memory moves; it is the only limit of flows inside a node).

The time is the best of ``--repeat`` calls of ``topomap._core.flowsim``
(route building and validation included); events are the distinct event
times, recomputes the max-min allocations it ran.

    python benchmarks/bench_flowsim.py            # all sizes, writes results/flowsim.json
    python benchmarks/bench_flowsim.py --quick    # 10^3 and 10^4 flows
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import _results  # benchmarks/_results.py, beside this script
import topomap as tm

HERE = os.path.dirname(os.path.abspath(__file__))
GRIDS = {1080: (6, 6, 5), 10368: (12, 12, 12), 101400: (26, 26, 25)}
LINK_BW, CAP, LATENCY, MSG = 12.5e9, 50e9, 1e-6, 1e6


def machines_for(grid: tuple[int, int, int]) -> list[str]:
    n = int(np.prod(grid))
    return [f"torus:{grid[0]}x{grid[1]}x{grid[2]}/1", f"fattree:k=16,levels=3/{-(-n // 1024)}"]


def one_case(spec: str, grid: tuple[int, int, int], mapping: str, repeat: int) -> dict:
    machine = tm.machine(spec)
    pat = tm.generators.stencil_3d(grid, points=7, periodic=True, bytes=MSG)
    n = pat.n
    if mapping == "block":
        pe_of = np.arange(n, dtype=np.int32)
    else:
        pe_of = np.random.default_rng(n).permutation(machine.npes)[:n].astype(np.int32)
    src = np.repeat(np.arange(n, dtype=np.int32), np.diff(pat.indptr))
    dst = np.asarray(pat.indices, np.int32)
    nf = src.size
    args = (machine._core, pe_of[src], pe_of[dst], np.asarray(pat.bytes, float), np.full(nf, LATENCY),
            np.full(nf, CAP), np.zeros(nf, np.int32), src, dst, np.full(machine.nlinks, LINK_BW), 1, n, 0, 1, True)
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        res = tm._core.flowsim(*args)
        best = min(best, time.perf_counter() - t0)
    hops = machine._core.route_counts(pe_of[src] // machine.pes_per_node, pe_of[dst] // machine.pes_per_node)
    return {"machine": spec, "mapping": mapping, "flows": int(nf), "mean_hops": float(np.mean(hops)),
            "seconds": best, "events": res["events"], "recomputes": res["recomputes"],
            "makespan": res["makespan"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10^3 and 10^4 flows only")
    ap.add_argument("--repeat", type=int, default=3, help="calls per case, the best is kept")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "flowsim.json"))
    args = ap.parse_args()
    sizes = [1080, 10368] if args.quick else list(GRIDS)
    rows = []
    print(f"{'machine':28s} {'mapping':7s} {'flows':>7s} {'hops':>5s} {'seconds':>9s} {'events':>7s} "
          f"{'recomp':>6s} {'makespan s':>11s}")
    for nf in sizes:
        for spec in machines_for(GRIDS[nf]):
            for mapping in ("block", "random"):
                r = one_case(spec, GRIDS[nf], mapping, args.repeat)
                rows.append(r)
                print(f"{r['machine']:28s} {r['mapping']:7s} {r['flows']:7d} {r['mean_hops']:5.2f} "
                      f"{r['seconds']:9.4f} {r['events']:7d} {r['recomputes']:6d} {r['makespan']:11.4g}", flush=True)
    _results.write(args.out, "flowsim", rows, quick=args.quick)


if __name__ == "__main__":
    main()
