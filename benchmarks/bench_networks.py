"""Routing-oracle and evaluation cost of the structured network kinds.

Dragonfly (``--kind dragonfly``): a ~100k-node dragonfly
(default ``dragonfly:g=196,a=32,h=16,p=16``: 100,352 nodes, 6,272 routers,
2-3 parallel global links per group pair) under each global-link
arrangement, with a 56x56x32 27-point stencil of one process per node
(block and random mappings).  Measured: machine construction, route
enumeration of every message of the stencil (hop counts through the
vectorised C call, and every full route through ``Machine.route``), and the
full congestion evaluation.  Each (arrangement, mapping) runs in a fresh process.  Memory is
the peak resident set a step adds: the kernel's peak (VmHWM) is reset
through /proc/self/clear_refs just before the step and compared with the
resident set at that moment (as in bench_eval.py).

    python benchmarks/bench_networks.py --kind dragonfly
    python benchmarks/bench_networks.py --kind dragonfly --quick     # one arrangement

Fat tree (``--kind fattree``): the k-ary 3-tree with k = 46 (97,336 nodes,
6,348 switches, 584,016 directed links), D-mod-k and lowest-port
("shortest") routing, with one PE per node and a 46^3 27-point stencil, and
with 8 PEs per node and a 92^3 stencil (778,688 processes).  Measured:
construction, route enumeration of every message of the stencil (hop counts
through the vectorised C call; with one PE per node also every full route
through ``Machine.route``), and the full congestion evaluation (block and
random mappings), each (spec, mapping) in a fresh process, memory as above.

    python benchmarks/bench_networks.py --kind fattree
    python benchmarks/bench_networks.py --kind fattree --quick       # D-mod-k, 1 PE per node, block
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _memory import measure as _measure  # noqa: E402


def _write(info: dict, name: str) -> None:
    path = os.path.join(HERE, "results", name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(info, fh, indent=2)
    print(f"\nwrote {path}")


# glibc would otherwise raise its mmap threshold after the first large free and
# serve later buffers from heap memory that stays resident, hiding their peak.
_CHILD_ENV = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "65536"}


def bench_dragonfly(args: argparse.Namespace) -> None:
    import topomap as tm

    arrangements = ["absolute"] if args.quick else ["absolute", "relative", "circulant"]
    rows = []
    header = (f"{'arrangement':>11} {'mapping':>7} {'messages':>9} {'build s':>8} {'build MB':>8} {'hops s':>7} "
              f"{'routes s':>8} {'eval s':>7} {'Mmsg/s':>7} {'eval MB':>7} {'max cong':>8} {'avg hops':>8}")
    print(f"dragonfly:{args.dragonfly}, 27-point stencil {args.stencil}, one process per node")
    print(header)
    print("-" * len(header))
    for arrangement in arrangements:
        spec = f"dragonfly:{args.dragonfly},arrangement={arrangement}"
        for method in ("block", "random"):
            out = subprocess.run([sys.executable, __file__, "--child", spec, args.stencil, method,
                                  str(args.repeat)], check=True, capture_output=True, text=True, env=_CHILD_ENV)
            row = {"arrangement": arrangement, **json.loads(out.stdout.strip().splitlines()[-1])}
            rows.append(row)
            print(f"{arrangement:>11} {method:>7} {row['messages']:>9} {row['build_seconds']:>8.4f} "
                  f"{row['build_extra_peak_mb']:>8.1f} {row['hop_count_seconds']:>7.3f} "
                  f"{row['all_routes_seconds']:>8.2f} {row['eval_seconds']:>7.3f} "
                  f"{row['eval_messages_per_second'] / 1e6:>7.1f} {row['eval_extra_peak_mb']:>7.1f} "
                  f"{row['max_congestion']:>8.0f} {row['avg_dilation']:>8.3f}", flush=True)
    _write({"benchmark": "dragonfly", "shape": args.dragonfly, "stencil": args.stencil,
            "machine": platform.machine(), "cpus": os.cpu_count(),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "default"), "topomap": tm.__version__,
            "numpy": np.__version__, "rows": rows}, "networks_dragonfly.json")



def _child(spec: str, stencil: str, method: str, repeat: int) -> dict:
    """One (machine, mapping) measurement in a fresh process, so that memory freed
    by an earlier step cannot hide this step's peak."""
    import topomap as tm

    pat = tm.generators.stencil_3d(tuple(int(x) for x in stencil.split("x")), points=27)
    mach, build_s, build_mb = _measure(lambda: tm.machine(spec))
    if pat.n > mach.npes:
        raise SystemExit(f"the stencil has {pat.n} processes but {spec} only {mach.npes} PEs")
    alloc = mach.allocate(pat.n)
    mp = tm.map(pat, alloc, method=method, seed=1)
    # evaluation first: the freed heap of the route lists below would hide its peak
    met, eval_s, eval_mb = _measure(lambda: tm.evaluate(pat, alloc, mp), repeat=repeat)
    P = mach.pes_per_node
    src, dst = mp.pe_of[pat.senders()] // P, mp.pe_of[pat.indices] // P
    hops, hops_s, _ = _measure(lambda: mach.hops(src, dst), repeat=3)
    routes_s = None
    if P == 1:   # every message is a node pair: enumerate all their routes
        pairs = list(zip(src.tolist(), dst.tolist()))
        _, routes_s, _ = _measure(lambda: [mach.route(a, b) for a, b in pairs])
    top = mach.level_names[-1]
    return {"spec": spec, "nodes": mach.nnodes, "pes": mach.npes, "links": mach.nlinks,
            "build_seconds": build_s, "build_extra_peak_mb": build_mb, "mapping": method, "processes": pat.n,
            "messages": pat.nnz, "route_hops": int(hops.sum()), "hop_count_seconds": hops_s,
            "all_routes_seconds": routes_s, "eval_seconds": eval_s, "eval_messages_per_second": pat.nnz / eval_s,
            "eval_extra_peak_mb": eval_mb, "max_congestion": met.max_congestion,
            "avg_dilation": met.avg_dilation, "hop_bytes": met.hop_bytes, "nz_links": met.nz_links,
            "top_level_bytes_share": met.level_bytes[top] / met.total_bytes}


def bench_fattree(args: argparse.Namespace) -> None:
    import topomap as tm

    k = args.fattree_k
    runs = [(f"fattree:k={k},levels=3/1", f"{k}x{k}x{k}"),
            (f"fattree:k={k},levels=3,routing=shortest/1", f"{k}x{k}x{k}"),
            (f"fattree:k={k},levels=3/8", f"{2 * k}x{2 * k}x{2 * k}")]
    methods = ("block", "random")
    if args.quick:
        runs, methods = runs[:1], ("block",)
    rows = []
    header = (f"{'spec':>36} {'mapping':>7} {'messages':>9} {'build s':>8} {'hops s':>7} {'routes s':>8} "
              f"{'eval s':>7} {'Mmsg/s':>7} {'eval MB':>7} {'max cong':>8} {'avg hops':>8} {'spine %':>7}")
    print(f"k-ary 3-tree, k = {k}, 27-point stencils")
    print(header)
    print("-" * len(header))
    for spec, stencil in runs:
        for method in methods:
            out = subprocess.run([sys.executable, __file__, "--child", spec, stencil, method,
                                  str(args.repeat)], check=True, capture_output=True, text=True, env=_CHILD_ENV)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(row)
            routes = f"{row['all_routes_seconds']:>8.2f}" if row["all_routes_seconds"] is not None else f"{'-':>8}"
            print(f"{spec:>36} {method:>7} {row['messages']:>9} {row['build_seconds']:>8.4f} "
                  f"{row['hop_count_seconds']:>7.3f} {routes} {row['eval_seconds']:>7.3f} "
                  f"{row['eval_messages_per_second'] / 1e6:>7.1f} {row['eval_extra_peak_mb']:>7.1f} "
                  f"{row['max_congestion']:>8.0f} {row['avg_dilation']:>8.3f} "
                  f"{100 * row['top_level_bytes_share']:>7.1f}", flush=True)
    _write({"benchmark": "fattree", "k": k, "machine": platform.machine(), "cpus": os.cpu_count(),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "default"), "topomap": tm.__version__,
            "numpy": np.__version__, "rows": rows}, "networks_fattree.json")


BENCHES = {"dragonfly": bench_dragonfly, "fattree": bench_fattree}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", choices=[*BENCHES, "all"], default="all")
    ap.add_argument("--quick", action="store_true", help="fewer variants")
    ap.add_argument("--repeat", type=int, default=3, help="evaluation repetitions (best is kept)")
    ap.add_argument("--dragonfly", default="g=196,a=32,h=16,p=16", help="dragonfly shape g=,a=,h=,p=")
    ap.add_argument("--stencil", default="56x56x32", help="stencil grid for the dragonfly evaluation")
    ap.add_argument("--fattree-k", type=int, default=46, help="k of the k-ary 3-tree (k^3 nodes)")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        spec, stencil, method, repeat = args.child
        print(json.dumps(_child(spec, stencil, method, int(repeat))))
        return
    for kind, bench in BENCHES.items():
        if args.kind in (kind, "all"):
            bench(args)


if __name__ == "__main__":
    main()
