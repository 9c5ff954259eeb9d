"""Load-balancing flow computation: Kumar's alias method beside the QWalk-like baseline, 10^3 to 10^7 processes.

Workload (notes 001 §8): every process holds 24 +- up to 4 tasks (seeded
uniform 20..28 walkers, as in Kumar's QWalk runs), so T is rarely a multiple
of P and the phantom rule runs too.  Timed: the C flow computation alone
(``topomap._core.lb_alias`` / ``lb_unit``, input checks included), best of
``--repeat``; the per-process time should stay flat (linear growth, thesis
§5.6: "linear in P; never dominant").  Also printed: the Table 5.4.1 metrics
of both flows (alias: one receive per process, about twice the tasks moved).

Then the migration itself (notes 001 §8): on Jaguar-like tori of 12-core
nodes (8x8x8 with 256 allocated nodes, 16x16x16 with 2048), a fragmented
allocation (6 runs of nodes, launcher order), 8 KB per task, the predicted
time (:func:`topomap.timemodel.predict`, max-min flow model, default time
model) of the alias flow in rank order and in Hilbert order (SFC variant),
each with Algorithm 1's deferred refill and with ``refill="next"``, and of
the baseline.

    python benchmarks/bench_loadbalance.py            # 10^3 .. 10^7, writes results/loadbalance.json
    python benchmarks/bench_loadbalance.py --quick    # 10^3 .. 10^5, the 8x8x8 torus only
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import _results  # benchmarks/_results.py, beside this script
import topomap as tm
from topomap import _core
from topomap.loadbalance import alias_flow, sfc_flow, unit_flow

HERE = os.path.dirname(os.path.abspath(__file__))


def best_time(fn, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def one_size(p: int, repeat: int) -> dict:
    counts = np.random.default_rng(p).integers(20, 29, size=p).astype(np.int64)
    row = {"processes": p, "tasks": int(counts.sum())}
    for name, core, flow in (("alias", _core.lb_alias, alias_flow), ("unit", _core.lb_unit, unit_flow)):
        seconds = best_time(lambda: core(counts), repeat)
        m = flow(counts).metrics()
        row[name] = {"seconds": seconds, "ns_per_process": seconds / p * 1e9, "max_receives": m.max_receives,
                     "max_sends": m.max_sends, "total_messages": m.total_messages,
                     "total_tasks_sent": m.total_tasks_sent, "max_tasks_sent": m.max_tasks_sent}
    return row


def migration(spec: str, nodes: int) -> dict:
    machine = tm.machine(spec)
    alloc = machine.allocate(nodes * machine.pes_per_node, policy="fragmented", seed=1, runs=6)
    counts = np.random.default_rng(nodes).integers(20, 29, size=alloc.pes.size)
    row = {"machine": spec, "nodes": nodes, "processes": int(alloc.pes.size)}
    flows = (alias_flow(counts), alias_flow(counts, refill="next"), sfc_flow(counts, alloc, refill="deferred"),
             sfc_flow(counts, alloc), unit_flow(counts))
    for flow in flows:
        t = flow.predict(alloc, alloc.pes, task_bytes=8192)
        hops = machine.hops(machine.node_of(alloc.pes[flow.src]), machine.node_of(alloc.pes[flow.dst]))
        row[flow.method] = {"makespan": t.makespan, "bottleneck": float(t.bottleneck_time.max()),
                            "messages": int(flow.src.size), "mean_hops": float(hops.mean())}
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10^3 to 10^5 processes only")
    ap.add_argument("--repeat", type=int, default=5, help="calls per size, the best is kept")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "loadbalance.json"))
    args = ap.parse_args()
    sizes = [10**e for e in range(3, 6 if args.quick else 8)]
    print(f"{'P':>9s} | {'alias s':>9s} {'ns/P':>6s} {'maxRecv':>7s} {'maxSend':>7s} {'msgs':>9s} {'sent':>10s} | "
          f"{'unit s':>9s} {'ns/P':>6s} {'maxRecv':>7s} {'maxSend':>7s} {'msgs':>9s} {'sent':>10s}")
    rows = []
    for p in sizes:
        r = one_size(p, args.repeat)
        rows.append(r)
        cols = [f"{r[k]['seconds']:9.5f} {r[k]['ns_per_process']:6.1f} {r[k]['max_receives']:7d} "
                f"{r[k]['max_sends']:7d} {r[k]['total_messages']:9d} {r[k]['total_tasks_sent']:10d}"
                for k in ("alias", "unit")]
        print(f"{p:9d} | {cols[0]} | {cols[1]}", flush=True)
    methods = ("alias", "alias-next", "alias-sfc", "alias-sfc-next", "unit")
    print(f"\n{'machine':18s} {'procs':>6s} | " + " | ".join(f"{m:>14s} us  hops" for m in methods))
    moves = []
    for spec, nodes in [("torus:8x8x8/12", 256)] + ([] if args.quick else [("torus:16x16x16/12", 2048)]):
        r = migration(spec, nodes)
        moves.append(r)
        cells = [f"{r[m]['makespan'] * 1e6:17.1f} {r[m]['mean_hops']:5.2f}" for m in methods]
        print(f"{spec:18s} {r['processes']:6d} | " + " | ".join(cells), flush=True)
    _results.write(args.out, "loadbalance", rows, quick=args.quick, migration=moves)


if __name__ == "__main__":
    main()
