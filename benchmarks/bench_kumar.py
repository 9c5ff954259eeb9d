"""Kumar's hop-byte and maximum-contention tables, recomputed in simulation.

Workload (issue 5, items 4 and 7a; Kumar 2012 ch. 6-7, notes 001 §6.3-6.4, §8):

* Machine: a Cray-XT5-like 3-D torus of 14 x 14 x 24 nodes with
  dimension-order routing (x, then y, then z, the shorter way; ties +), one
  task per node as in the thesis's experiments.  The thesis gives neither
  the torus dimensions nor its real Kraken allocations, so allocations are
  simulated: ``allocate(n, policy="fragmented", seed=n, runs=1 + n // 25)``,
  runs of consecutive node ids at random offsets, i.e. lines along x that
  wrap into planes, several components per job, as Kumar observed (his
  lines were long in z; only the axis name differs).  The launcher order on
  those nodes is the "Default" mapping (``block``).
* "Mesh" pattern: the thesis's 2-D unstructured mesh from Charm++ ParFUM is
  not available.  Stand-in: ``delaunay_n15`` (the Delaunay triangulation of
  2^15 random points, a 2-D unstructured mesh; /work/shared/data/graphs, from
  KaHIP's examples) cut into n parts by topomap's multilevel partitioner
  (seed 0); task i is part i and sends to each neighbouring part as many
  bytes as the mesh edges they share, which is how a partitioned mesh
  application communicates.  Without the file, the same construction runs
  on a seeded scipy Delaunay triangulation of 2^15 points.  The
  partitioner's part ids are spatially coherent (nearby parts get nearby
  ids), which makes the launcher order a good mapping already; the thesis's
  Default was 1.2-2x worse than GRASP, so every table is also run on
  "Mesh-shuffled", the same task graph with ids permuted at random (seed n).
* Collectives (the thesis's RD, Bruck and binomial patterns): the stage sums
  of ``generators_collective.recursive_doubling(n, op="allgather")`` (powers
  of two only), ``bruck(n, op="allgather")`` and ``binomial_bcast(n)``.
* Methods: default (block), gge, mahd, emahd (by hop-bytes for the hop-byte
  table, by max congestion for the contention table, as ch. 7 implies),
  grasp (32 iterations), max-contention (EMAHD + LocalOpt), hilbert (SFC
  rank order) and kumar-hybrid (p = 125) where n > 125.

Tables: hops per byte (= hop-bytes / bytes, Table 6.3.1) and the load of
the most loaded directed link (= max_congestion with unit capacities,
Table 7.2.1) for the Mesh pattern, the thesis's values beside; then each
collective's hop-bytes and max load divided by default's; then mapping times.
Absolute values cannot match (different allocations, mesh and torus); the
ratios to default and the order of the methods are what to compare.

``--deltas`` adds the measurement behind map_qap.c's distance-only swap
delta: ns per swap evaluation of the evaluator's try_swap (every metric),
of its distance-only mode when the build has it, and of the hop-table delta,
on the n = 300 Mesh case, with the same random pairs (a small C program
compiled against csrc/core; needs a C compiler).

    python benchmarks/bench_kumar.py            # everything, writes results/kumar.json
    python benchmarks/bench_kumar.py --quick    # sizes 4..64, collectives at 16 and 32
    python benchmarks/bench_kumar.py --deltas   # also the swap-delta micro-benchmark
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import topomap as tm  # noqa: E402
from topomap import generators_collective as coll  # noqa: E402

MACHINE = "torus:14x14x24"
GRAPH = os.path.join(os.environ.get("TOPOMAP_GRAPHS", "/work/shared/data/graphs"), "delaunay_n15.graph")
SIZES = (4, 8, 16, 32, 64, 100, 128, 144, 192, 200, 216, 250, 300)
QUICK_SIZES = (4, 8, 16, 32, 64)
COLL_SIZES = (16, 32, 64, 128, 256)
QUICK_COLL_SIZES = (16, 32)

# Table 6.3.1, hops per byte, Mesh pattern.
THESIS_HPB = {
    8: dict(grasp=1.43, emahd=1.48, default=2.22, gge=2.18, mahd=1.83),
    16: dict(grasp=2.98, emahd=3.76, default=5.36, gge=3.88, mahd=4.02),
    32: dict(grasp=2.94, emahd=4.05, default=5.88, gge=5.19, mahd=4.30),
    64: dict(grasp=4.34, emahd=4.72, default=8.19, gge=6.04, mahd=5.43),
    100: dict(grasp=2.56, emahd=2.74, default=3.84, gge=3.86, mahd=3.16),
    128: dict(grasp=2.92, emahd=2.91, default=3.49, gge=4.21, mahd=3.51),
    144: dict(grasp=2.73, emahd=2.61, default=4.25, gge=4.16, mahd=3.22),
    192: dict(grasp=3.73, emahd=3.56, default=5.12, gge=5.37, mahd=4.06),
    200: dict(grasp=3.14, emahd=2.77, default=4.30, gge=4.05, mahd=2.83),
    216: dict(grasp=1.84, emahd=1.73, default=2.99, gge=2.83, mahd=1.90),
    250: dict(grasp=3.66, emahd=3.39, default=5.50, gge=5.37, mahd=3.45),
    300: dict(grasp=3.42, emahd=3.29, default=5.66, gge=5.16, mahd=3.73),
}
# Table 7.2.1, load on the most congested link, Mesh pattern (units unstated).
THESIS_LOAD = {
    4: dict(default=97, gge=73, mahd=62, grasp=73, emahd=62, localopt=62),
    8: dict(default=144, gge=104, mahd=162, grasp=151, emahd=113, localopt=87),
    16: dict(default=168, gge=233, mahd=144, grasp=170, emahd=128, localopt=115),
    32: dict(default=307, gge=267, mahd=285, grasp=338, emahd=228, localopt=149),
    64: dict(default=576, gge=413, mahd=634, grasp=484, emahd=396, localopt=193),
    100: dict(default=473, gge=679, mahd=501, grasp=514, emahd=376, localopt=181),
    128: dict(default=481, gge=457, mahd=455, grasp=522, emahd=406, localopt=227),
    144: dict(default=481, gge=449, mahd=510, grasp=481, emahd=377, localopt=221),
    192: dict(default=567, gge=565, mahd=538, grasp=560, emahd=449, localopt=277),
    200: dict(default=622, gge=576, mahd=457, grasp=416, emahd=300, localopt=201),
    216: dict(default=567, gge=575, mahd=632, grasp=632, emahd=464, localopt=256),
}

# (label, registered method, options)
METHODS = [
    ("default", "block", {}),
    ("gge", "gge", {}),
    ("mahd", "mahd", {}),
    ("emahd", "emahd", {"objective": "hop_bytes"}),
    ("emahd-mc", "emahd", {"objective": "max_congestion"}),
    ("grasp", "grasp", {}),
    ("localopt", "max-contention", {}),
    ("hilbert", "hilbert", {}),
    ("hybrid", "kumar-hybrid", {}),
]


def delaunay_graph() -> tm.Pattern:
    if os.path.exists(GRAPH):
        return tm.io.read_metis(GRAPH)
    from scipy.spatial import Delaunay  # the fallback only

    pts = np.random.default_rng(15).random((2**15, 2))
    tri = Delaunay(pts).simplices
    e = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]])
    e = np.unique(np.sort(e, axis=1), axis=0)
    src, dst = np.concatenate([e[:, 0], e[:, 1]]), np.concatenate([e[:, 1], e[:, 0]])
    return tm.Pattern.from_edges(src, dst, np.ones(len(src)), n=len(pts))


def mesh_pattern(graph: tm.Pattern, n: int, shuffle: bool = False) -> tm.Pattern:
    """n mesh partitions; bytes between two = the mesh edges they share (each way)."""
    parts = tm.partition(graph, n, seed=0, undirected=True, method="builtin").parts  # same with or without pymetis
    if shuffle:
        parts = np.random.default_rng(n).permutation(n)[parts]
    return graph.quotient(parts, n)


def allocation(machine: tm.Machine, n: int) -> tm.Allocation:
    return machine.allocate(n, policy="fragmented", seed=n, runs=1 + n // 25)


def run_methods(pat: tm.Pattern, alloc: tm.Allocation) -> dict:
    out = {}
    for label, method, opts in METHODS:
        if method == "kumar-hybrid" and pat.n <= 125:
            continue
        if method == "hilbert" and not isinstance(alloc.machine.network, tm.Torus):
            continue
        t0 = time.perf_counter()
        mp = tm.map(pat, alloc, method=method, seed=0, **opts)
        secs = time.perf_counter() - t0
        met = tm.evaluate(pat, alloc, mp)
        out[label] = {"hops_per_byte": met.hop_bytes / met.total_bytes, "hop_bytes": met.hop_bytes,
                      "max_load": met.max_congestion, "seconds": secs}
    return out


def fmt(x: float | None, spec: str = "6.2f") -> str:
    return "-".rjust(int(spec.split(".")[0])) if x is None else format(x, spec)


def print_mesh(rows: list[dict], name: str) -> None:
    hb = ["grasp", "emahd", "default", "gge", "mahd", "hilbert", "hybrid"]
    print(f"\nTable 6.3.1, hops per byte, {name} (ours | thesis Mesh); ratios to default (ours / thesis)")
    print(f"{'n':>4} | " + " ".join(f"{m:>7}" for m in hb) + " | " + " ".join(f"{m:>7}" for m in hb[:5])
          + " | grasp/def    emahd/def")
    for r in rows:
        n, res, th = r["n"], r["methods"], THESIS_HPB.get(r["n"])
        ours = " ".join(fmt(res[m]["hops_per_byte"] if m in res else None, "7.2f") for m in hb)
        theirs = " ".join(fmt(th[m] if th else None, "7.2f") for m in hb[:5])
        d = res["default"]["hops_per_byte"]
        rat = "  ".join(f"{res[m]['hops_per_byte'] / d:4.2f}/{fmt(th[m] / th['default'] if th else None, '4.2f')}"
                        for m in ("grasp", "emahd"))
        print(f"{n:>4} | {ours} | {theirs} | {rat}")
    lo = ["default", "gge", "mahd", "grasp", "emahd-mc", "localopt", "hilbert", "hybrid"]
    print(f"\nTable 7.2.1, load on the most loaded link, {name} (ours | thesis Mesh, emahd = EMAHD by max load); "
          "default / LocalOpt (ours / thesis)")
    print(f"{'n':>4} | " + " ".join(f"{m:>8}" for m in lo) + " | "
          + " ".join(f"{m:>8}" for m in ("default", "gge", "mahd", "grasp", "emahd", "localopt")) + " | def/LO")
    for r in rows:
        n, res, th = r["n"], r["methods"], THESIS_LOAD.get(r["n"])
        ours = " ".join(fmt(res[m]["max_load"] if m in res else None, "8.0f") for m in lo)
        theirs = " ".join(fmt(th[m] if th else None, "8.0f")
                          for m in ("default", "gge", "mahd", "grasp", "emahd", "localopt"))
        rat = f"{res['default']['max_load'] / res['localopt']['max_load']:4.2f}/" \
              f"{fmt(th['default'] / th['localopt'] if th else None, '4.2f')}"
        print(f"{n:>4} | {ours} | {theirs} | {rat}")


def print_times(rows: list[dict], title: str) -> None:
    labels = [lab for lab, _, _ in METHODS]
    print(f"\nMapping time in seconds, {title}")
    print(f"{'case':>21} | " + " ".join(f"{m:>8}" for m in labels))
    for r in rows:
        res = r["methods"]
        print(f"{r['case']:>21} | " + " ".join(fmt(res[m]["seconds"] if m in res else None, "8.3f") for m in labels))


def print_collectives(rows: list[dict]) -> None:
    labels = ["gge", "mahd", "emahd", "emahd-mc", "grasp", "localopt", "hilbert", "hybrid"]
    for key, title in (("hop_bytes", "hop-bytes"), ("max_load", "max link load")):
        print(f"\nCollectives: {title} / default's")
        print(f"{'case':>16} | " + " ".join(f"{m:>8}" for m in labels))
        for r in rows:
            res = r["methods"]
            d = res["default"][key]
            print(f"{r['case']:>16} | " + " ".join(fmt(res[m][key] / d if m in res and d else None, "8.2f")
                                                   for m in labels))


DELTA_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "topomap/topomap.h"
#include "map_qap.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv)
{
    FILE *f = fopen(argv[1], "rb");
    int64_t h[4];
    if (!f || fread(h, sizeof h, 1, f) != 1) return 2;
    int32_t n = (int32_t)h[0], na = (int32_t)h[2], npairs = (int32_t)h[3];
    int64_t nnz = h[1], *ip = malloc((n + 1) * sizeof *ip);
    int32_t *ix = malloc(nnz * sizeof *ix), *alloc = malloc(na * sizeof *alloc), *pairs = malloc(2 * npairs * sizeof *pairs);
    double *by = malloc(nnz * sizeof *by);
    if (fread(ip, sizeof *ip, n + 1, f) != (size_t)n + 1 || fread(ix, sizeof *ix, nnz, f) != (size_t)nnz ||
        fread(by, sizeof *by, nnz, f) != (size_t)nnz || fread(alloc, sizeof *alloc, na, f) != (size_t)na ||
        fread(pairs, sizeof *pairs, 2 * npairs, f) != 2 * (size_t)npairs) return 2;
    fclose(f);
    int32_t dims[3] = {atoi(argv[2]), atoi(argv[3]), atoi(argv[4])}, g = 0;
    uint8_t wrap[3] = {1, 1, 1};
    double cost = 0;
    topomap_node_tree tree = {1, 1, &g, &cost};
    topomap_machine *m;
    if (topomap_machine_create_torus(&tree, 3, dims, wrap, &m)) return 3;
    topomap_pattern p = {n, ip, ix, by};
    topomap_i_qap q = {0};
    q.n = q.m = n;
    q.xadj = malloc((n + 1) * sizeof *q.xadj);
    q.adj = malloc(2 * nnz * sizeof *q.adj);
    q.w = malloc(2 * nnz * sizeof *q.w);
    q.d = malloc((size_t)n * n * sizeof *q.d);
    topomap_ugraph_from_pattern(&p, q.xadj, q.adj, q.w);
    for (int32_t a = 0; a < n; a++)
        for (int32_t b = 0; b < n; b++) q.d[(int64_t)a * n + b] = topomap_machine_route_count(m, alloc[a], alloc[b]);
    int32_t *loc = malloc(n * sizeof *loc);
    for (int32_t i = 0; i < n; i++) loc[i] = i;
    topomap_eval *full, *donly = NULL;
    if (topomap_eval_create(m, &p, alloc, NULL, &full)) return 4;
#ifdef HAVE_DISTANCE_ONLY
    if (topomap_eval_create_flags(m, &p, alloc, NULL, TOPOMAP_EVAL_DISTANCE_ONLY, &donly)) return 4;
#endif
    topomap_metrics base, mt;
    topomap_eval_metrics(full, &base);
    double sink = 0, worst = 0, t0 = now();
    for (int32_t k = 0; k < npairs; k++) {
        topomap_eval_try_swap(full, pairs[2 * k], pairs[2 * k + 1], &mt);
        sink += mt.hop_bytes;
    }
    double t_full = (now() - t0) / npairs;
    double t_donly = -1;
    if (donly) {
        t0 = now();
        for (int32_t k = 0; k < npairs; k++) {
            topomap_eval_try_swap(donly, pairs[2 * k], pairs[2 * k + 1], &mt);
            sink += mt.qap;
        }
        t_donly = (now() - t0) / npairs;
    }
    t0 = now();
    for (int32_t k = 0; k < npairs; k++) sink += topomap_i_qap_swap_delta(&q, loc, pairs[2 * k], pairs[2 * k + 1]);
    double t_table = (now() - t0) / npairs;
    for (int32_t k = 0; k < npairs && k < 2000; k++) {
        topomap_eval_try_swap(full, pairs[2 * k], pairs[2 * k + 1], &mt);
        double d = (mt.hop_bytes - base.hop_bytes) - topomap_i_qap_swap_delta(&q, loc, pairs[2 * k], pairs[2 * k + 1]);
        if (d < 0) d = -d;
        if (d > worst) worst = d;
    }
    printf("{\"full_ns\": %.1f, \"distance_only_ns\": %.1f, \"table_ns\": %.1f, \"max_abs_diff\": %g, \"sink\": %g}\n",
           1e9 * t_full, t_donly < 0 ? -1.0 : 1e9 * t_donly, 1e9 * t_table, worst, sink);
    return 0;
}
"""


def delta_benchmark(graph: tm.Pattern, n: int = 300, npairs: int = 200_000) -> dict | None:
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc:
        print("--deltas: no C compiler found, skipped", file=sys.stderr)
        return None
    m = tm.machine(MACHINE)
    pat, alloc = mesh_pattern(graph, n), allocation(m, n)
    rng = np.random.default_rng(0)
    a = rng.integers(0, n, npairs)
    b = (a + rng.integers(1, n, npairs)) % n
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "case.bin")
        with open(data, "wb") as fh:
            np.array([n, pat.nnz, len(alloc), npairs], dtype=np.int64).tofile(fh)
            np.asarray(pat.indptr, dtype=np.int64).tofile(fh)
            np.asarray(pat.indices, dtype=np.int32).tofile(fh)
            np.asarray(pat.bytes, dtype=np.float64).tofile(fh)
            np.asarray(alloc.pes, dtype=np.int32).tofile(fh)
            np.stack([a, b], axis=1).astype(np.int32).tofile(fh)
        src = os.path.join(tmp, "delta.c")
        with open(src, "w") as fh:
            fh.write(DELTA_C)
        exe = os.path.join(tmp, "delta")
        eval_h = open(os.path.join(ROOT, "csrc", "include", "topomap", "eval.h")).read()
        defs = ["-DHAVE_DISTANCE_ONLY"] if "topomap_eval_create_flags" in eval_h else []
        core = sorted(os.path.join(ROOT, "csrc", "core", f) for f in os.listdir(os.path.join(ROOT, "csrc", "core"))
                      if f.endswith(".c"))
        cmd = [cc, "-O2", "-std=c11", "-fopenmp", *defs, "-I" + os.path.join(ROOT, "csrc", "include"),
               "-I" + os.path.join(ROOT, "csrc", "core"), "-o", exe, src, *core, "-lm"]
        build = subprocess.run(cmd, capture_output=True, text=True)
        if build.returncode:
            print(f"--deltas: the C core did not compile, skipped:\n{build.stderr[-2000:]}", file=sys.stderr)
            return None
        dims = MACHINE.split(":")[1].split("x")
        out = subprocess.run([exe, data, *dims], capture_output=True, text=True, env={**os.environ,
                                                                                     "OMP_NUM_THREADS": "1"})
        if out.returncode:
            print(f"--deltas: the benchmark failed ({out.returncode})", file=sys.stderr)
            return None
    res = json.loads(out.stdout)
    res.pop("sink")
    res.update(n=n, pairs=npairs, pattern=f"Mesh n={n}", nnz=int(pat.nnz))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="sizes 4..64, collectives at 16 and 32")
    ap.add_argument("--deltas", action="store_true", help="also time the swap deltas (compiles a C program)")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "kumar.json"))
    args = ap.parse_args()
    machine = tm.machine(MACHINE)
    graph = delaunay_graph()
    mesh_rows, shuffled_rows, coll_rows = [], [], []
    for n in QUICK_SIZES if args.quick else SIZES:
        for name, rows, shuffle in (("Mesh", mesh_rows, False), ("Mesh-shuffled", shuffled_rows, True)):
            res = run_methods(mesh_pattern(graph, n, shuffle), allocation(machine, n))
            rows.append({"n": n, "case": f"{name} n={n}", "methods": res})
            print(f"{name} n={n}: " + ", ".join(f"{k} {v['seconds']:.2f}s" for k, v in res.items()), file=sys.stderr)
    for n in QUICK_COLL_SIZES if args.quick else COLL_SIZES:
        cases = [("RD", coll.recursive_doubling(n, op="allgather").total) if n & (n - 1) == 0 else None,
                 ("Bruck", coll.bruck(n, op="allgather").total), ("Binomial", coll.binomial_bcast(n).total)]
        for name, pat in filter(None, cases):
            res = run_methods(pat, allocation(machine, n))
            coll_rows.append({"n": n, "case": f"{name} n={n}", "pattern": name, "methods": res})
            print(f"{name} n={n} done", file=sys.stderr)
    print(f"machine {MACHINE}, DOR, fragmented allocations (seed = n, runs = 1 + n // 25), one task per node")
    print_mesh(mesh_rows, "Mesh")
    print_mesh(shuffled_rows, "Mesh-shuffled")
    print_collectives(coll_rows)
    print_times(mesh_rows + shuffled_rows + coll_rows, "same run")
    deltas = delta_benchmark(graph) if args.deltas else None
    if deltas:
        print(f"\nSwap evaluation on the Mesh n=300 case, {deltas['pairs']} random pairs, one thread: evaluator "
              f"try_swap {deltas['full_ns']:.0f} ns, distance-only evaluator "
              f"{fmt(deltas['distance_only_ns'] if deltas['distance_only_ns'] >= 0 else None, '.0f')} ns, hop-table "
              f"delta {deltas['table_ns']:.0f} ns (x{deltas['full_ns'] / deltas['table_ns']:.0f} vs the evaluator); "
              f"largest |evaluator hop-bytes change - delta| = {deltas['max_abs_diff']:g}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump({"machine": MACHINE, "routing": "dimension order, shorter way, ties +",
                   "allocation": "fragmented, seed = n, runs = 1 + n // 25",
                   "mesh": f"{os.path.basename(GRAPH)} cut into n parts (topomap.partition, seed 0), bytes = shared edges",
                   "mesh_shuffled": "the same task graph, ids permuted by numpy default_rng(n).permutation(n)",
                   "quick": args.quick, "mesh_rows": mesh_rows, "mesh_shuffled_rows": shuffled_rows,
                   "collective_rows": coll_rows, "deltas": deltas,
                   "thesis_hops_per_byte": THESIS_HPB, "thesis_max_load": THESIS_LOAD,
                   "python": platform.python_version(), "cpu_count": os.cpu_count()}, fh, indent=1)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
