"""MAGC at scale: mapping time and maximum congestion against the thesis's baselines.

Workload (issue 17 item 5; Mirsadeghi 2017 ch. 5, notes 000 §4, §6.3, §7.7):

* Machine: a two-level k-ary fat tree (``fattree:k=K,levels=2``, K^2 nodes) of 8-GPU nodes,
  000's cluster B node by default (``gpu:clusterB``: 2 x 10 cores, 8 K20 on a PCIe tree;
  ``--node dgx`` for the NVSwitch node), all nodes allocated whole; each process gets one
  core and one GPU, so P processes fill P / 8 nodes.
* Patterns (000 §6.2): 3-D 7-point stencil ("3D"), 2-D 5-point ("2D") and COL (an
  all-to-all inside each line along the grid's slowest axis, the thesis's "first dimension"
  in row-major order); pairs CPU-GPU "COL-COL", "3D-COL", "COL-3D", "2D-COL"; 1 MB messages.
  Grids: 4x4x4 / 8x8 at P = 64, 16x8x8 / 32x32 at 1,024, 32x16x16 / 128x64 at 8,192.
* Methods: ``default`` (block, GPU = local rank), ``strategy1``, ``strategy2``, ``magc``
  (Alg. 5.1 inside nodes, phase 1 = ``ptram``).

Reported per case: mapping seconds (the whole three phases, Python included), the network's
maximum congestion (bytes on the most loaded link, C_cpu + C_gpu) and the intra-node maximum
congestion (seconds of the busiest PCIe/QPI channel at its bandwidth), each also divided by
default's.

    python benchmarks/bench_magc.py            # P = 64, 1024, 8192; writes results/magc.json
    python benchmarks/bench_magc.py --quick    # P = 64 and 1024 only
"""

from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import _results  # noqa: E402  (benchmarks/_results.py, beside this script)
import topomap as tm  # noqa: E402
from topomap.mappers.magc import STRATEGIES, evaluate_gpu, magc  # noqa: E402

MB = 1 << 20
GRIDS = {64: ((4, 4, 4), (8, 8)), 1024: ((16, 8, 8), (32, 32)), 8192: ((32, 16, 16), (128, 64))}
PAIRS = ("COL-COL", "3D-COL", "COL-3D", "2D-COL")


def patterns(n: int) -> dict[str, tm.Pattern]:
    g3, g2 = GRIDS[n]
    gen = tm.generators
    return {"3D": gen.stencil_3d(g3, bytes=MB), "2D": gen.stencil_2d(g2, bytes=MB),
            "COL": gen.subcomm_alltoall(g3, axes=2, bytes=MB)}


def run(n: int, node: str) -> list[dict]:
    k = 2
    while k * k * 8 < n:
        k += 2
    machine = tm.machine(f"fattree:k={k},levels=2/gpu:{node}")
    nodes = n // 8
    alloc = machine.allocate(nodes * machine.pes_per_node)
    pats = patterns(n)
    rows = []
    for pair in PAIRS:
        cpu_name, gpu_name = pair.split("-")
        cpu, gpu = pats[cpu_name], pats[gpu_name]
        base = None
        for strategy in STRATEGIES[::-1]:  # default first
            t = time.perf_counter()
            mp = magc(cpu, gpu, alloc, strategy=strategy)
            seconds = time.perf_counter() - t
            res = evaluate_gpu(cpu, gpu, alloc, mp)
            row = {"n": n, "node": node, "pair": pair, "strategy": strategy, "seconds": seconds,
                   "network_mc": res.network.max_congestion, "node_mc": res.node.max_congestion}
            base = base or row
            row["network_mc_vs_default"] = row["network_mc"] / base["network_mc"] if base["network_mc"] else 1.0
            row["node_mc_vs_default"] = row["node_mc"] / base["node_mc"] if base["node_mc"] else 1.0
            rows.append(row)
            print(f"{n:5d} {pair:8s} {strategy:10s} {seconds * 1e3:9.1f} ms  network MC "
                  f"{row['network_mc_vs_default']:5.2f}  node MC {row['node_mc_vs_default']:5.2f} (x default)",
                  flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="P = 64 and 1024 only")
    ap.add_argument("--node", default="clusterB", help="GPU node preset with 8 GPUs (clusterB or dgx)")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "magc.json"))
    args = ap.parse_args()
    rows = []
    for n in (64, 1024) if args.quick else (64, 1024, 8192):
        rows += run(n, args.node)
    _results.write(args.out, "magc", rows, quick=args.quick, node=args.node)


if __name__ == "__main__":
    main()
