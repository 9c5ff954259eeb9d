"""Collective schedules and collective-aware reordering: speed.

``build``: construction of every log-depth schedule for 10^5 ranks (ring
allgather and pairwise alltoall hold n(n-1) unicasts, 10^10 here, and are
timed at 3,000 ranks): the C core alone (``topomap._core.coll_build``) and
:func:`topomap.collectives.build` (the stage Patterns included), best of
``--repeat``.

``reorder``: RDMH, RMH, BBMH and BGMH at 4,096 ranks on GPC-like nodes (2
sockets x 4 cores, 512 nodes of a 3-level fat tree of 16-port switches),
from the block-bunch and cyclic-bunch layouts (thesis: ~25 ms each, goal
<= 5 ms), best of ``--repeat`` calls of
:func:`topomap.collectives.reorder_more.reorder_collective`, and our
extension's BKMH (Bruck allgather and alltoall), ARMH (allreduce by
recursive doubling and Rabenseifner) and PWMH (pairwise alltoall, at 1,024
ranks at most: its pattern is complete); beside them, in the same run, the
``scotch`` mapper on the same collective's pattern (the schedule's total,
1 KB blocks), once, with the hop-bytes of the layout itself (the identity),
of the heuristic and of Scotch.  Without Scotch its rows say so.

    python benchmarks/bench_collectives.py            # writes results/collectives.json
    python benchmarks/bench_collectives.py --quick    # 10^4 ranks, reordering at 1,024
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import topomap as tm
from topomap import _core
from topomap.collectives import ALGORITHMS, build
from topomap.collectives.build import _ALGS, _OPS
from topomap.collectives.reorder import initial_layout
from topomap.collectives.reorder_more import COLLECTIVES, reorder_collective
from topomap.errors import NotApplicable

HERE = os.path.dirname(os.path.abspath(__file__))
QUADRATIC = ("ring", "pairwise")


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench_build(n: int, repeat: int) -> list[dict]:
    rows = []
    for op, algs in ALGORITHMS.items():
        for alg in algs:
            m = min(n, 3000) if alg in QUADRATIC else n
            ppn = 32 if alg == "hierarchical" else None
            args = (_OPS.index(op), _ALGS.index(alg), m, 0, ppn or 1, 0, 0, 0)
            s = build(op, alg, m, ppn=ppn)
            rows.append({"op": op, "algorithm": alg, "n": m, "stages": len(s), "unicasts": int(s.total.msgs.sum()),
                         "core_s": best(lambda: _core.coll_build(*args), repeat),
                         "build_s": best(lambda: build(op, alg, m, ppn=ppn), repeat)})
            r = rows[-1]
            print(f"{op:9s} {alg:18s} n={m:6d} {r['stages']:5d} stages {r['unicasts']:9d} unicasts  "
                  f"core {r['core_s'] * 1e3:8.2f} ms  build {r['build_s'] * 1e3:8.2f} ms", flush=True)
    return rows


GPC = "fattree:k=16,levels=3/package:2 core:4"
PAIRWISE_MAX = 1024


def bench_reorder(p_all: int, repeat: int) -> list[dict]:
    rows = []
    for (op, alg), h in COLLECTIVES.items():
        coll, p = f"{op}/{alg}", min(p_all, PAIRWISE_MAX) if alg == "pairwise" else p_all
        alloc = tm.machine(GPC).allocate(p)
        total = build(op, alg, p, 1024).total
        for layout in ("block-bunch", "cyclic-bunch"):
            pes = initial_layout(alloc, layout=layout)
            new = reorder_collective(coll, alloc, pes, seed=0)
            row = {"collective": coll, "heuristic": h, "layout": layout, "p": p,
                   "seconds": best(lambda: reorder_collective(coll, alloc, pes, seed=0), repeat),
                   "hop_bytes_before": tm.evaluate(total, alloc, pes).hop_bytes,
                   "hop_bytes_after": tm.evaluate(total, alloc, pes[new]).hop_bytes}
            try:
                t = time.perf_counter()
                mp = tm.map(total, alloc, method="scotch")
                row["scotch_seconds"] = time.perf_counter() - t
                row["scotch_hop_bytes"] = tm.evaluate(total, alloc, mp).hop_bytes
            except NotApplicable as exc:   # gmap not installed
                row["scotch"] = f"skipped: {exc}"
            rows.append(row)
            sc = (f"scotch {row['scotch_seconds'] * 1e3:8.1f} ms, hop-bytes {row['scotch_hop_bytes']:.3g}"
                  if "scotch_seconds" in row else row["scotch"])
            print(f"{coll:29s} {h:5s} {layout:12s} p={p}: {row['seconds'] * 1e3:6.2f} ms, hop-bytes "
                  f"{row['hop_bytes_before']:.3g} -> {row['hop_bytes_after']:.3g} | {sc}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "collectives.json"))
    a = ap.parse_args()
    out = {"machine": platform.processor() or platform.machine(), "python": platform.python_version(),
           "build": bench_build(10_000 if a.quick else 100_000, a.repeat),
           "reorder": bench_reorder(1024 if a.quick else 4096, a.repeat)}
    if not a.quick:
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
