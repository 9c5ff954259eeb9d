"""Time to simulate one phase of 10^3, 10^4 and 10^5 flows: topomap's flow model against SimGrid.

The case: a periodic 3-D 7-point stencil (``topomap.generators.stencil_3d``,
1 MB per message) with one process per node, on a 3-D torus and on a k-ary
3-tree fat tree (D-mod-k routes), block and random mappings.  Both
simulators get the same flows, routes, link bandwidths, per-flow latencies
(alpha + hops x hop latency) and per-flow rate limits (the default
:class:`topomap.timemodel.TimeModel`).

* topomap: wall time of :func:`topomap.timemodel.predict` (flows, routes,
  the C simulator), best of ``--repeat``;
* SimGrid: wall time of the SimGrid process that replays the case
  (:func:`topomap.export.simgrid.replay`: reading the platform and flows,
  simulating, printing), once, stopped after ``--simgrid-limit`` seconds;
  writing its files is not counted.  Larger cases are not tried on a
  machine and mapping where SimGrid ran out of time or failed on a smaller
  one ("failed": SimGrid's process died; its stderr is in the JSON).

The ratio is SimGrid's time over topomap's; "rel diff" is the largest
relative difference of the two makespans.

    python benchmarks/bench_timemodel_simgrid.py
    python benchmarks/bench_timemodel_simgrid.py --quick     # 10^3 flows, torus, block
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# stencil grid (periodic, so 6 flows per process) and the machines that hold it, one PE per node
SIZES = {
    "1e3": ((6, 6, 5), "torus:6x6x5/1", "fattree:k=6,levels=3/1"),
    "1e4": ((12, 12, 12), "torus:12x12x12/1", "fattree:k=12,levels=3/1"),
    "1e5": ((26, 26, 25), "torus:26x26x25/1", "fattree:k=26,levels=3/1"),
}


def _write(info: dict, name: str) -> None:
    path = os.path.join(HERE, "results", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(info, fh, indent=2)
    print(f"\nwrote {path}")


def _simgrid_python(exe: str) -> bool:
    import subprocess

    return os.path.exists(exe) and subprocess.run([exe, "-c", "import simgrid"], capture_output=True).returncode == 0


def run_case(size: str, kind: str, mapping: str, args: argparse.Namespace, simgrid_ok: bool) -> dict:
    import topomap as tm
    from topomap.export import simgrid
    from topomap.timemodel import TimeModel, predict

    dims, torus, fattree = SIZES[size]
    spec = torus if kind == "torus" else fattree
    pat = tm.generators.stencil_3d(dims, points=7, periodic=True, bytes=1e6)
    mach = tm.machine(spec)
    alloc = mach.allocate(pat.n)
    pe = alloc.pes if mapping == "block" else np.random.default_rng(1).permutation(alloc.pes)
    model = TimeModel.default()
    best = float("inf")
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        pred = predict(pat, alloc, pe, model)
        best = min(best, time.perf_counter() - t0)
    row = {"flows": pat.nnz, "machine": spec, "mapping": mapping, "topomap_seconds": best,
           "topomap_makespan": pred.makespan, "events": pred.events, "simgrid_seconds": None,
           "simgrid_makespan": None, "ratio": None, "rel_diff": None}
    if simgrid_ok:
        net = model.classes["network"]
        try:
            sg = simgrid.replay(pat, alloc, pe, bandwidth=model.link_bandwidth, latency=model.hop_latency,
                                alpha=net.alpha, rate=net.bandwidth, python=args.python,
                                timeout=args.simgrid_limit)
        except tm.TopomapError as exc:
            # out of time, or SimGrid itself failed (its message says how): no time to compare
            row["simgrid_seconds"] = f"> {args.simgrid_limit:g}" if "ran past" in str(exc) else "failed"
            row["simgrid_error"] = str(exc)[-300:]
        else:
            row.update(simgrid_seconds=sg.seconds, simgrid_makespan=sg.makespan, ratio=sg.seconds / best,
                       rel_diff=abs(pred.makespan / sg.makespan - 1))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10^3 flows on the torus, block mapping only")
    ap.add_argument("--repeat", type=int, default=3, help="topomap repetitions (best is kept)")
    ap.add_argument("--simgrid-limit", type=float, default=300.0, help="seconds before SimGrid is stopped")
    ap.add_argument("--python", default="/usr/bin/python3", help="an interpreter that can import simgrid")
    ap.add_argument("--sizes", nargs="+", choices=list(SIZES), default=list(SIZES), help="flow counts to run")
    args = ap.parse_args()
    import topomap as tm

    simgrid_ok = _simgrid_python(args.python)
    if not simgrid_ok:
        print(f"{args.python} cannot import simgrid (Debian: apt-get install python3-simgrid): topomap only")
    sizes = ["1e3"] if args.quick else args.sizes
    kinds = ["torus"] if args.quick else ["torus", "fattree"]
    mappings = ["block"] if args.quick else ["block", "random"]
    header = (f"{'machine':>26} {'mapping':>7} {'flows':>7} {'topomap s':>10} {'events':>7} {'SimGrid s':>10} "
              f"{'ratio':>7} {'rel diff':>9}")
    print("one phase of a periodic 7-point stencil, 1 MB messages, one process per node")
    print(header)
    print("-" * len(header))
    rows, gave_up = [], set()
    for size in sizes:
        for kind in kinds:
            for mapping in mappings:
                row = run_case(size, kind, mapping, args, simgrid_ok and (kind, mapping) not in gave_up)
                rows.append(row)
                sg = row["simgrid_seconds"]
                if isinstance(sg, str):
                    gave_up.add((kind, mapping))
                sg_text = f"{sg:>10.3f}" if isinstance(sg, float) else f"{sg or '-':>10}"
                ratio = f"{row['ratio']:>7.1f}" if row["ratio"] else f"{'-':>7}"
                diff = f"{row['rel_diff']:>9.1e}" if row["rel_diff"] is not None else f"{'-':>9}"
                print(f"{row['machine']:>26} {mapping:>7} {row['flows']:>7} {row['topomap_seconds']:>10.4f} "
                      f"{row['events']:>7} {sg_text} {ratio} {diff}", flush=True)
    _write({"benchmark": "timemodel_simgrid", "machine": platform.machine(), "cpus": os.cpu_count(),
            "topomap": tm.__version__, "numpy": np.__version__, "simgrid_limit_s": args.simgrid_limit,
            "rows": rows}, "timemodel_simgrid.json")


if __name__ == "__main__":
    main()
