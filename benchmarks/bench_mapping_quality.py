"""Mapping quality on tori and fat trees at 10^4-10^6 processes, and on the
hierarchy QAP, against Scotch, KaHIP and the geometric embedding in the same
run (issue 20, "Done when").

Stencil part: 7-point 3-D stencils ``tm.generators.stencil_3d`` of 36x18x18,
72x36x36 and 160x80x80 processes (unit bytes, capacity 1) on the fully
allocated ``torus:K x K x K/16`` and ``fattree:k=K,levels=3/16`` with K = 9,
18, 40: a k-ary 3-tree has K^3 nodes, so both machines have 16 K^3 PEs, the
stencil's size (checked in every run).  Rows:

* every topomap method of ``--methods`` (default: block, greedy, recursive,
  hierarchy, scotch, and topdown, topdown-graph and auto when registered);
  ``topdown`` splits by the stencil's grid (its provenance, as a Cartesian
  application would give it; from the ranks alone, ``rank_grid``, it is the
  same grid), ``topdown-graph`` is topdown with ``coords=None``: the traffic
  graph partitioned, as Scotch partitions it; ``topdown-relabelled`` is
  topdown on the stencil with its ranks in a random order and no
  provenance, so that only its graph tells the grid (``graph_grid``);
* ``scotch_gmap (hand)``: Scotch run by hand, ``scotch_gmap -Cd -b0.03`` on
  ``torus3D K K K`` or ``tleaf 3 K 2 K 2 K 2`` (node terminals; the source
  graph ``C + C^T`` in Scotch format); process p on terminal t goes to PE
  ``16 t + (its rank among t's processes mod 16)``, which fixes hop-bytes and
  congestion (PEs of a node are at distance 0); more than 16 on a node is
  counted in ``overfull``;
* ``embedding`` (tori): blocks of (sx/K) x (sy/K) x (sz/K) processes per node,
  node (x, y, z) for block (x, y, z), when the extents divide and a block
  holds 16 processes.

Each run is a fresh child process: CPU = the child's user + system time of
the step, including its own children (gmap; its system time, most of it
futex waits between its two threads, is also shown apart); peak MB = the most the step
adds at one time: to the Python process alone (its VmHWM, reset first as in
benchmarks/_memory.py), or to the Python process while a child program runs
(sampled every 5 ms) plus that program's own peak, which GNU ``time``
reports (a child's ``ru_maxrss`` starts at the size of the Python it was
forked from).  For Scotch and KaHIP run by hand it is the program's peak.  Medians over
``--repeats`` seeds 0..r-1.  A method whose median CPU passes ``--cap`` at a
size is skipped at the larger ones; a run is killed at 3 x the cap.

QAP part: ``bench_hierarchy``'s 9 instances (3elt, rgg_n_2_15_s0,
delaunay_n15 on 4:16:16, 4:8:8, 16:4:2 at 1:10:100, 3 % imbalance) plus 4
chosen here (KaHIP's README example rgg on 4:3:3:3 at 1:10:100:200,
delaunay and 3elt on 8:8:8, rgg on 2:2:2:2:2:2:2:2 at 1:2:5:10:20:50:100:200).
``hierarchy`` effort=strong (and topdown when registered) against KaHIP
``global_multisection --preconfiguration=strong`` (the program the ``kahip``
wheel ships in ``site-packages/bin``) and Scotch on the tleaf; J of every
tool's partition is evaluated by ``tm.evaluate``.

    python benchmarks/bench_mapping_quality.py --quick          # 10^4 and 3 QAP instances, 1 repeat
    python benchmarks/bench_mapping_quality.py --sizes 1e4,1e5  # writes results/mapping_quality.json
    python benchmarks/bench_mapping_quality.py --sizes 1e6 --methods block,scotch --no-qap --repeats 1
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import bench_hierarchy as bh  # noqa: E402
from _memory import reset_peak, status_kb  # noqa: E402
from _results import cpu_model, write  # noqa: E402

import topomap as tm  # noqa: E402
from topomap.mappers import scotch as sm  # noqa: E402

SIZES = {"1e4": ((36, 18, 18), 9), "1e5": ((72, 36, 36), 18), "1e6": ((160, 80, 80), 40)}
MACHINES = {"torus": "torus:{k}x{k}x{k}/16", "fattree": "fattree:k={k},levels=3/16"}
DEFAULT_METHODS = ("block", "greedy", "recursive", "hierarchy", "scotch", "topdown", "topdown-graph",
                   "topdown-relabelled", "auto")
#: Methods run with options, and on the stencil relabelled or not: topdown without the stencil's grid (the
#: graph partitioned, as Scotch partitions it); topdown on the stencil with its ranks in a random order and no
#: provenance (its grid found from the graph alone, graph_grid).
VARIANTS = {"topdown-graph": ("topdown", {"coords": None}, False), "topdown-relabelled": ("topdown", {}, True)}
HAND, EMBED = "scotch_gmap (hand)", "embedding"
#: QAP instances beyond bench_hierarchy's: (graph, hierarchy, distances).
EXTRA_QAP = (("rgg_n_2_15_s0", "4:3:3:3", "1:10:100:200"), ("delaunay_n15", "8:8:8", "1:10:100"),
             ("3elt", "8:8:8", "1:10:100"), ("rgg_n_2_15_s0", "2:2:2:2:2:2:2:2", "1:2:5:10:20:50:100:200"))
TIME = shutil.which("time") or "/usr/bin/time"   # GNU time, for the peak RSS of child programs
_CHILD_ENV = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "65536"}


def children_cpu() -> float:
    """User + system seconds of this process's finished children."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def children_sys() -> float:
    """System seconds of this process's finished children (scotch_gmap's come from its threads' futex
    waits, about a third of its CPU on a 2-core KVM guest, so the hand row shows them apart)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime


def peak_logged(argv: list[str], log: str) -> list[str]:
    """``argv`` run under GNU time, which appends the program's own peak RSS (kB) to ``log``.

    Why: a child's ``ru_maxrss`` starts from the high-water mark of the process it was
    forked from, so gmap forked from a Python holding 10^6 processes reported Python's size.
    """
    return [TIME, "-a", "-o", log, "-f", "%M", *argv]


def logged_mb(log: str) -> float:
    with open(log) as fh:
        return max((int(x) for x in fh.read().split()), default=0) / 1024


def has_children() -> bool:
    """Whether a thread of this process has a running child process."""
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/children") as fh:
            if fh.read().strip():
                return True
    return False


def timed(fn):
    """(result, CPU seconds of this process and its children, peak MB) of ``fn()``.

    Peak: the most the step adds at one time to this process alone, or to this process
    (sampled every 5 ms while a child runs) plus its largest child program's peak.
    """
    with tempfile.TemporaryDirectory(prefix="bench-quality-") as d:
        log, wrapper = os.path.join(d, "rss"), os.path.join(d, "gmap")
        open(log, "w").close()
        with open(wrapper, "w") as fh:   # the scotch method runs gmap through this
            fh.write("#!/bin/sh\nexec " + " ".join(peak_logged([sm.gmap_program()], log)) + ' "$@"\n')
        os.chmod(wrapper, 0o755)
        sm.gmap_program = lambda: wrapper
        beside, done = [0], threading.Event()

        def sample() -> None:
            while not done.wait(0.005):
                if has_children():
                    beside[0] = max(beside[0], status_kb("VmRSS"))
        sampler = threading.Thread(target=sample, daemon=True)
        c0 = children_cpu()
        t0 = time.process_time()
        base = reset_peak()
        sampler.start()
        try:
            out = fn()
        finally:
            done.set()
            sampler.join()
        cpu = time.process_time() - t0 + children_cpu() - c0
        alone = (status_kb("VmHWM") - base) / 1024
        with_child = (max(beside[0] - base, 0) / 1024 + logged_mb(log)) if beside[0] else 0.0
        return out, cpu, max(alone, with_child)


def kahip_program() -> str | None:
    """KaHIP's global_multisection as the ``kahip`` wheel installs it, else on PATH."""
    path = os.path.join(sysconfig.get_paths()["purelib"], "bin", "global_multisection")
    return path if os.access(path, os.X_OK) else shutil.which("global_multisection")


# ---------------------------------------------------------------- children

def stencil_instance(kind: str, size: str) -> tuple[tm.Pattern, tm.Allocation, tuple, int]:
    shape, k = SIZES[size]
    pat = tm.generators.stencil_3d(shape, points=7)
    m = tm.machine(MACHINES[kind].format(k=k))
    if m.npes != pat.n:
        raise SystemExit(f"{m.spec} has {m.npes} PEs, the stencil {shape} {pat.n} processes")
    return pat, m.allocate(pat.n), shape, k


def scores(pat, alloc, pe_of, cpu, mb, **extra) -> dict:
    met = tm.evaluate(pat, alloc, pe_of)
    return {"hop_bytes": met.hop_bytes, "max_congestion": met.max_congestion, "J": met.qap, "cpu": cpu,
            "peak_mb": mb, **extra}


def child_method(kind: str, size: str, method: str, seed: int) -> dict:
    pat, alloc, _, _ = stencil_instance(kind, size)
    name, opts, relabel = VARIANTS.get(method, (method, {}, False))
    if relabel:   # rank r becomes perm[r]: the same traffic, hop-bytes and congestion of the same placement
        perm = np.random.default_rng(12345).permutation(pat.n)
        pat = tm.Pattern.from_edges(perm[pat.senders()], perm[pat.indices], pat.bytes, n=pat.n)
    try:
        mp, cpu, mb = timed(lambda: tm.map(pat, alloc, method=name, seed=seed, **opts))
    except tm.TopomapError as exc:
        return {"refused": f"{type(exc).__name__}: {exc}"}
    return scores(pat, alloc, mp.pe_of, cpu, mb)


def run_gmap(pat: tm.Pattern, target: str, d: str) -> tuple[np.ndarray, float, float, float]:
    """(terminal of every process, gmap's CPU seconds, its peak MB, its system seconds) from
    ``scotch_gmap -Cd -b0.03`` on the source graph C + C^T."""
    src, tgt, out = (os.path.join(d, f) for f in ("g.grf", "t.tgt", "o.map"))
    sm._write_source_graph(pat, src)
    with open(tgt, "w") as fh:
        fh.write(target)
    log = os.path.join(d, "rss")
    c0, s0 = children_cpu(), children_sys()
    subprocess.run(peak_logged([sm.gmap_program(), "-Cd", "-b0.03", src, tgt, out], log), check=True,
                   capture_output=True)
    cpu, gmap_mb = children_cpu() - c0, logged_mb(log)
    fields = np.loadtxt(out, dtype=np.int64, skiprows=1, ndmin=2)
    term = np.empty(pat.n, dtype=np.int64)
    term[fields[:, 0]] = fields[:, 1]
    return term, cpu, gmap_mb, children_sys() - s0


def child_hand(kind: str, size: str) -> dict:
    pat, alloc, _, k = stencil_instance(kind, size)
    target = f"torus3D {k} {k} {k}\n" if kind == "torus" else f"tleaf 3 {k} 2 {k} 2 {k} 2\n"
    with tempfile.TemporaryDirectory(prefix="bench-quality-") as d:
        term, cpu, mb, sys_s = run_gmap(pat, target, d)
    order = np.lexsort((np.arange(pat.n), term))
    rank = np.empty(pat.n, dtype=np.int64)
    rank[order] = np.arange(pat.n) - np.searchsorted(term[order], term[order])
    pe_of = 16 * term + rank % 16
    return scores(pat, alloc, pe_of, cpu, mb, overfull=int((rank >= 16).sum()), target=target.strip(),
                  sys=sys_s)


def child_embedding(kind: str, size: str) -> dict:
    pat, alloc, shape, k = stencil_instance(kind, size)
    if any(s % k for s in shape) or math.prod(s // k for s in shape) != alloc.machine.pes_per_node:
        return {"refused": f"extents {shape} do not split into 16-process blocks over {k}^3 nodes"}
    t0 = time.process_time()
    b = [s // k for s in shape]
    x, y, z = np.unravel_index(np.arange(pat.n), shape, order="F")   # stencil_3d numbers x fastest
    node = (x // b[0]) + k * ((y // b[1]) + k * (z // b[2]))  # topomap's torus nodes: x fastest
    local = (x % b[0]) * b[1] * b[2] + (y % b[1]) * b[2] + z % b[2]
    return scores(pat, alloc, 16 * node + local, time.process_time() - t0, 0.0, block=b)


def qap_instance(graph: str, hier: str, dists: str) -> tuple[tm.Pattern, tm.Allocation, int]:
    pat = tm.io.read(os.path.join(bh.GRAPHS, f"{graph}.graph"))
    alloc = tm.machine(f"hierarchy:{hier}/{dists}").allocate(math.prod(map(int, hier.split(":"))))
    return pat, alloc, math.ceil((1 + bh.IMBALANCE) * pat.n / len(alloc))


def child_qap(tool: str, graph: str, hier: str, dists: str, seed: int) -> dict:
    pat, alloc, capacity = qap_instance(graph, hier, dists)
    if tool in ("hierarchy", "topdown"):
        opts = {"effort": "strong", "imbalance": bh.IMBALANCE} if tool == "hierarchy" else {}
        try:
            mp, cpu, mb = timed(lambda: tm.map(pat, alloc, method=tool, seed=seed, capacity=capacity, **opts))
        except tm.TopomapError as exc:
            return {"refused": f"{type(exc).__name__}: {exc}"}
        pe_of = mp.pe_of
    elif tool == "scotch":
        with tempfile.TemporaryDirectory(prefix="bench-quality-") as d:
            text = sm.target(alloc, d)[0]
            pe_of, cpu, mb, _ = run_gmap(pat, text, d)   # a full tleaf: terminals are the PEs
    else:
        exe = kahip_program()
        with tempfile.TemporaryDirectory(prefix="bench-quality-") as d:
            part = os.path.join(d, "part")
            log = os.path.join(d, "rss")
            c0 = children_cpu()
            subprocess.run(peak_logged([exe, os.path.join(bh.GRAPHS, f"{graph}.graph"), f"--seed={seed}",
                                        "--preconfiguration=strong", f"--hierarchy_parameter_string={hier}",
                                        f"--distance_parameter_string={dists}",
                                        f"--imbalance={100 * bh.IMBALANCE:g}", f"--output_filename={part}"], log),
                           check=True, capture_output=True)
            pe_of, cpu, mb = np.loadtxt(part, dtype=np.int64), children_cpu() - c0, logged_mb(log)
    return scores(pat, alloc, pe_of, cpu, mb, max_load=int(np.bincount(pe_of).max()), capacity=capacity)


CHILDREN = {"method": child_method, "hand": child_hand, "embedding": child_embedding, "qap": child_qap}


def run_child(args: list, kill: float) -> dict:
    try:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", *map(str, args)],
                             capture_output=True, text=True, timeout=kill, env=_CHILD_ENV)
    except subprocess.TimeoutExpired:
        return {"failed": f"killed after {kill:g} s"}
    if out.returncode:
        return {"failed": (out.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_of(runs: list[dict]) -> dict:
    done = [r for r in runs if "cpu" in r]
    if not done:
        return runs[0]
    keys = ("hop_bytes", "max_congestion", "J", "cpu", "peak_mb", *(("sys",) if "sys" in done[0] else ()))
    cell = {key: statistics.median(r[key] for r in done) for key in keys}
    cell.update({k: v for k, v in done[0].items() if k not in cell})
    cell["runs"] = len(done)
    return cell


# ---------------------------------------------------------------- the two parts

def fmt(x, spec: str) -> str:
    return "-".rjust(len(format(0.0, spec))) if x is None else format(x, spec)


def ratio(a, b):
    return None if a is None or not b else a / b


def stencil_part(sizes: list[str], methods: list[str], repeats: int, cap: float) -> list[dict]:
    rows, slow = [], set()
    head = f"{'instance':28s} {'method':20s} {'HB/block':>8s} {'MC/block':>8s} {'CPU s':>8s} {'peak MB':>8s}"
    for size in sizes:
        for kind in MACHINES:
            shape, k = SIZES[size]
            spec = MACHINES[kind].format(k=k)
            label = f"{'x'.join(map(str, shape))} {spec}"
            print(f"\n{head}\n{'-' * len(head)}", flush=True)
            cells: dict[str, dict] = {}
            jobs = [(m, [["method", kind, size, m, s] for s in range(repeats)]) for m in methods]
            jobs.append((HAND, [["hand", kind, size]] * repeats))
            if kind == "torus":
                jobs.append((EMBED, [["embedding", kind, size]]))
            # Scotch by hand runs right after each run of the scotch method: CPU times on a shared
            # machine drift with its load, and their ratio should compare like with like
            hand_runs = []
            for name, argv in jobs:
                if name in slow:
                    cells[name] = {"skipped": f"over the {cap:g} s cap at a smaller size"}
                elif name == HAND and hand_runs:
                    cells[name] = median_of(hand_runs)
                else:
                    runs = []
                    for a in argv:
                        runs.append(run_child(a, 3 * cap))
                        if name == "scotch":
                            hand_runs.append(run_child(["hand", kind, size], 3 * cap))
                    cells[name] = median_of(runs)
                    if cells[name].get("cpu", 0) > cap and name not in (HAND, EMBED):
                        slow.add(name)
                c = cells[name]
                blk = cells.get("block", {})
                c["hb_over_block"] = ratio(c.get("hop_bytes"), blk.get("hop_bytes"))
                c["mc_over_block"] = ratio(c.get("max_congestion"), blk.get("max_congestion"))
                note = c.get("refused") or c.get("failed") or c.get("skipped") or \
                    (f"of which system {c['sys']:.2f} s" if "sys" in c else "")
                print(f"{label:28s} {name:20s} {fmt(c['hb_over_block'], '8.3f')} {fmt(c['mc_over_block'], '8.3f')} "
                      f"{fmt(c.get('cpu'), '8.2f')} {fmt(c.get('peak_mb'), '8.1f')} {note[:70]}", flush=True)
            rows.append({"size": size, "machine": spec, "stencil": shape, "cells": cells, **summary(cells, label)})
    return rows


def summary(cells: dict, label: str) -> dict:
    ours = {m: c for m, c in cells.items() if m not in (HAND, EMBED, "scotch", "block") and "hop_bytes" in c}
    hand, emb, sc = cells.get(HAND, {}), cells.get(EMBED, {}), cells.get("scotch", {})
    out: dict = {}
    if ours:
        best = min(ours, key=lambda m: ours[m]["hop_bytes"])
        best_mc = min(ours, key=lambda m: ours[m]["max_congestion"])
        out = {"best": best, "best_hb_over_scotch": ratio(ours[best]["hop_bytes"], hand.get("hop_bytes")),
               "best_hb_over_embedding": ratio(ours[best]["hop_bytes"], emb.get("hop_bytes")),
               "best_mc_over_scotch": ratio(ours[best]["max_congestion"], hand.get("max_congestion")),
               "best_mc": best_mc, "lowest_mc_over_scotch": ratio(ours[best_mc]["max_congestion"],
                                                                 hand.get("max_congestion"))}
    out["scotch_method_cpu_over_hand"] = ratio(sc.get("cpu"), hand.get("cpu"))
    out["scotch_method_mb_over_hand"] = ratio(sc.get("peak_mb"), hand.get("peak_mb"))
    print(f"{label}: best topomap by hop-bytes {out.get('best', '-')}: HB / Scotch "
          f"{fmt(out.get('best_hb_over_scotch'), '.3f')}, HB / embedding {fmt(out.get('best_hb_over_embedding'), '.3f')}, "
          f"MC / Scotch {fmt(out.get('best_mc_over_scotch'), '.3f')} (lowest MC: {out.get('best_mc', '-')}, "
          f"{fmt(out.get('lowest_mc_over_scotch'), '.3f')}); scotch method / by hand: CPU "
          f"{fmt(out['scotch_method_cpu_over_hand'], '.2f')}, memory {fmt(out['scotch_method_mb_over_hand'], '.2f')}",
          flush=True)
    return out


def geomean(values: list) -> float | None:
    vals = [v for v in values if v]
    return math.exp(sum(map(math.log, vals)) / len(vals)) if vals else None


def qap_part(instances: list[tuple], repeats: int, kill: float) -> tuple[list[dict], dict]:
    tools = ["hierarchy"] + (["topdown"] if "topdown" in tm.methods() else []) + ["kahip", "scotch"]
    have_kahip = kahip_program() is not None
    if not have_kahip:
        print("KaHIP's global_multisection not found (pip install kahip): KaHIP rows skipped", file=sys.stderr)
    head = (f"{'graph':14s} {'hierarchy':16s} {'tool':10s} {'J':>10s} {'load':>5s} {'CPU s':>7s} {'J/best other':>12s} "
            f"{'CPU/KaHIP':>9s}")
    print(f"\n{head}\n{'-' * len(head)}", flush=True)
    rows = []
    for graph, hier, dists in instances:
        cells = {}
        for tool in tools:
            if tool == "kahip" and not have_kahip:
                continue
            runs = 1 if tool == "scotch" else repeats   # Scotch -Cd is deterministic
            cells[tool] = median_of([run_child(["qap", tool, graph, hier, dists, s], kill) for s in range(runs)])
        # a topomap method against the other tools; a tool against everything else
        best_other = {t: min((c["J"] for u, c in cells.items() if u != t and "J" in c
                              and (u in ("kahip", "scotch") or t in ("kahip", "scotch"))), default=None)
                      for t in cells}
        for tool, c in cells.items():
            c["J_over_best_other"] = ratio(c.get("J"), best_other[tool])
            c["cpu_over_kahip"] = ratio(c.get("cpu"), cells.get("kahip", {}).get("cpu"))
            print(f"{graph:14s} {hier:16s} {tool:10s} {fmt(c.get('J'), '10.0f')} {c.get('max_load', 0):5d} "
                  f"{fmt(c.get('cpu'), '7.2f')} {fmt(c['J_over_best_other'], '12.3f')} "
                  f"{fmt(c['cpu_over_kahip'], '9.3f')} {(c.get('refused') or c.get('failed') or '')[:60]}", flush=True)
        rows.append({"graph": graph, "hierarchy": hier, "distances": dists, "cells": cells})
    means = {}
    for tool in tools:
        cs = [r["cells"].get(tool, {}) for r in rows]
        means[tool] = {"J_over_best_other": geomean([c.get("J_over_best_other") for c in cs]),
                       "cpu_over_kahip": geomean([c.get("cpu_over_kahip") for c in cs])}
        print(f"{tool}: geo-mean J / best other tool {fmt(means[tool]['J_over_best_other'], '.3f')}, "
              f"CPU / KaHIP strong {fmt(means[tool]['cpu_over_kahip'], '.3f')} over {len(rows)} instances")
    return rows, means


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10^4 only, 3 QAP instances, 1 repeat")
    ap.add_argument("--sizes", help=f"comma-separated of {', '.join(SIZES)} (default 1e4,1e5,1e6; none: QAP only)")
    ap.add_argument("--methods", help="comma-separated topomap methods (default: block, greedy, recursive, "
                                      "hierarchy, scotch, topdown, topdown-graph and auto when registered)")
    ap.add_argument("--repeats", type=int, help="seeds 0..r-1 per method (default 3, 1 with --quick)")
    ap.add_argument("--cap", type=float, default=300.0, help="CPU seconds after which a method skips larger sizes")
    ap.add_argument("--no-qap", action="store_true", help="skip the hierarchy QAP part")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "mapping_quality.json"))
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        fn = CHILDREN[args.child[0]]
        rest = [int(a) if a.isdigit() and fn in (child_method, child_qap) and i == len(args.child) - 2 else a
                for i, a in enumerate(args.child[1:])]
        print(json.dumps(fn(*rest)))
        return
    if sm.gmap_program() is None:
        sys.exit("Scotch's scotch_gmap is not installed (apt-get install scotch)")
    if not os.access(TIME, os.X_OK):
        sys.exit("GNU time (apt-get install time) measures the peak memory of gmap and KaHIP")
    sizes = [s for s in args.sizes.split(",") if s != "none"] if args.sizes else (["1e4"] if args.quick else list(SIZES))
    if any(s not in SIZES for s in sizes):
        ap.error(f"--sizes takes {', '.join(SIZES)}")
    known = [*tm.methods(), *(v for v, (base, *_) in VARIANTS.items() if base in tm.methods())]
    methods = args.methods.split(",") if args.methods else [m for m in DEFAULT_METHODS if m in known]
    if any(m not in known for m in methods):
        ap.error(f"unknown method(s) {', '.join(m for m in methods if m not in known)}")
    methods = ["block"] + [m for m in methods if m != "block"]    # the ratios' denominator runs first
    repeats = args.repeats or (1 if args.quick else 3)
    print(f"methods: {', '.join(methods)}; {repeats} repeat(s); cap {args.cap:g} s; capacity 1, 16 PEs per node; "
          f"CPU {cpu_model()}")
    rows = stencil_part(sizes, methods, repeats, args.cap)
    qap_rows, means = [], {}
    if not args.no_qap:
        instances = [(g, h, bh.DISTANCES) for g in bh.NAMES for h in bh.HIERARCHIES] + list(EXTRA_QAP)
        qap_rows, means = qap_part(instances[:3] if args.quick else instances, repeats, 3 * args.cap)
    write(args.out, "mapping_quality", rows, qap=qap_rows, qap_means=means, methods=methods, repeats=repeats,
          cap_seconds=args.cap, scotch=sm.gmap_program(), kahip=kahip_program())


if __name__ == "__main__":
    main()
