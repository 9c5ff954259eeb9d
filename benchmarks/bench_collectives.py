"""Collective schedules and collective-aware reordering: speed.

``build``: construction of every log-depth schedule for 10^5 ranks (ring
allgather and pairwise alltoall hold n(n-1) unicasts, 10^10 here, and are
timed at 3,000 ranks): the C core alone (``topomap._core.coll_build``) and
:func:`topomap.collectives.build` (the stage Patterns included), best of
``--repeat``.

    python benchmarks/bench_collectives.py            # writes results/collectives.json
    python benchmarks/bench_collectives.py --quick    # 10^4 ranks
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

from topomap import _core
from topomap.collectives import ALGORITHMS, build
from topomap.collectives.build import _ALGS, _OPS

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "collectives.json"))
    a = ap.parse_args()
    out = {"machine": platform.processor() or platform.machine(), "python": platform.python_version(),
           "build": bench_build(10_000 if a.quick else 100_000, a.repeat)}
    if not a.quick:
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
