"""Graph partitioning: topomap's builtin partitioner vs METIS (pymetis).

Workload (issue 5, item 1): the reference graphs of /work/shared/data/graphs
(3elt, rgg_n_2_15_s0, delaunay_n15; undirected, each edge once) and 3-D
7-point stencils of about 10^4, 10^5 and 10^6 processes (directed unit
traffic, partitioned as C + C^T), k = 8, 64, 512, default imbalance 3%.
Each cell runs seeds 0..r-1 through ``topomap.partition`` (the same graph
arrays reach both partitioners) and reports the mean cut and the fastest
time of the partitioner itself.  ``builtin-rb`` is recursive bisection
(``recursive=True``), skipped on the 10^6 stencil unless --rb-all.  A second
table runs the PTRAM case, processes into nodes of 8 cores with every node
exactly full (``capacities``), where METIS's answer goes through topomap's
balancing + FM pass.

    python benchmarks/bench_partition.py            # everything, writes results/partition.json
    python benchmarks/bench_partition.py --quick    # no 10^6 stencil, one seed
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import topomap as tm  # noqa: E402

GRAPHS = os.environ.get("TOPOMAP_GRAPHS", "/work/shared/data/graphs")
REFERENCE = ("3elt", "rgg_n_2_15_s0", "delaunay_n15")
STENCILS = (22, 46, 100)  # 10648, 97336, 10^6 processes
KS = (8, 64, 512)


def have_pymetis() -> bool:
    try:
        import pymetis  # noqa: F401
    except ImportError:
        return False
    return True


def cell(pat: tm.Pattern, k: int, method: str, seeds: int, **kw) -> dict:
    cuts, secs, imb = [], [], []
    for seed in range(seeds):
        res = tm.partition(pat, k, method=method, seed=seed, **kw)
        cuts.append(res.edge_cut)
        secs.append(res.seconds)
        imb.append(res.imbalance)
    return {"cut": float(np.mean(cuts)), "cut_min": float(min(cuts)), "seconds": float(min(secs)),
            "imbalance": float(max(imb)), "seeds": seeds}


def workloads(quick: bool):
    for name in REFERENCE:
        path = os.path.join(GRAPHS, f"{name}.graph")
        if os.path.exists(path):
            yield name, tm.io.read_metis(path), {"undirected": True}
        else:
            print(f"skipping {name}: {path} not found", file=sys.stderr)
    for d in STENCILS[:2] if quick else STENCILS:
        yield f"stencil3d {d}^3", tm.generators.stencil_3d((d, d, d), points=7), {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="skip the 10^6 stencil, one seed")
    ap.add_argument("--seeds", type=int, default=None, help="seeds per cell (default 3, 1 for 10^6)")
    ap.add_argument("--rb-all", action="store_true", help="recursive bisection on the 10^6 stencil too")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "partition.json"))
    args = ap.parse_args()
    metis = have_pymetis()
    if not metis:
        print("pymetis is not installed (pip install 'topomap-hpc[metis]'): builtin only", file=sys.stderr)
    rows = []
    head = f"{'graph':18s} {'n':>8s} {'k':>4s} | {'builtin cut':>12s} {'s':>7s} | {'builtin-rb cut':>14s} {'s':>7s} | " \
           f"{'metis cut':>10s} {'s':>7s} | {'cut ratio':>9s} {'rb ratio':>8s}"
    print(head)
    print("-" * len(head))
    for name, pat, kw in workloads(args.quick):
        big = pat.n >= 10**6
        seeds = args.seeds or (1 if args.quick or big else 3)
        for k in KS:
            row = {"graph": name, "n": pat.n, "k": k, **kw}
            row["builtin"] = cell(pat, k, "builtin", seeds, recursive=False, **kw)
            if not big or args.rb_all:
                row["builtin_rb"] = cell(pat, k, "builtin", seeds, recursive=True, **kw)
            if metis:
                row["metis"] = cell(pat, k, "metis", seeds, **kw)
                row["cut_ratio"] = row["builtin"]["cut"] / row["metis"]["cut"]
                if "builtin_rb" in row:
                    row["rb_cut_ratio"] = row["builtin_rb"]["cut"] / row["metis"]["cut"]
            rows.append(row)
            b, r, m = row["builtin"], row.get("builtin_rb"), row.get("metis")
            print(f"{name:18s} {pat.n:8d} {k:4d} | {b['cut']:12.1f} {b['seconds']:7.3f} | "
                  + (f"{r['cut']:14.1f} {r['seconds']:7.3f} | " if r else f"{'-':>14s} {'-':>7s} | ")
                  + (f"{m['cut']:10.1f} {m['seconds']:7.3f} | {row['cut_ratio']:9.3f} " if m else f"{'-':>10s} {'-':>7s} | {'-':>9s} ")
                  + (f"{row['rb_cut_ratio']:8.3f}" if "rb_cut_ratio" in row else f"{'-':>8s}"), flush=True)

    print("\nprocesses into nodes of 8 cores, every node full (capacities; builtin: recursive bisection, "
          "METIS: k-way with ufactor 1, then topomap's balancing + FM pass)")
    cap_rows = []
    head = f"{'graph':18s} {'n':>8s} {'nodes':>6s} | {'builtin cut':>12s} {'s':>7s} | {'metis+repair cut':>16s} {'s':>7s} | {'ratio':>6s}"
    print(head)
    print("-" * len(head))
    for d in (16, 22, 32):
        pat = tm.generators.stencil_3d((d, d, d), points=7)
        nodes = -(-pat.n // 8)
        caps = [8] * nodes
        seeds = args.seeds or (1 if args.quick else 3)
        row = {"graph": f"stencil3d {d}^3", "n": pat.n, "nodes": nodes,
               "builtin": cell(pat, nodes, "builtin", seeds, capacities=caps)}
        if metis:
            row["metis_repaired"] = cell(pat, nodes, "metis", seeds, capacities=caps)
            row["cut_ratio"] = row["builtin"]["cut"] / row["metis_repaired"]["cut"]
        cap_rows.append(row)
        b, m = row["builtin"], row.get("metis_repaired")
        print(f"{row['graph']:18s} {pat.n:8d} {nodes:6d} | {b['cut']:12.1f} {b['seconds']:7.3f} | "
              + (f"{m['cut']:16.1f} {m['seconds']:7.3f} | {row['cut_ratio']:6.3f}" if m else "-"), flush=True)

    info = {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(),
            "numpy": np.__version__, "topomap": tm.__version__, "time": time.strftime("%Y-%m-%d %H:%M:%S")}
    if metis:
        from importlib.metadata import version
        info["pymetis"] = version("pymetis")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump({"info": info, "soft": rows, "capacities": cap_rows}, fh, indent=1)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
