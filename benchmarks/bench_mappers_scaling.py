"""How the registered mappers scale: mapping time and peak memory from 10^3 to
10^6 processes.

Workload: a 3-D 7-point stencil (10^3, 22^3, 46^3, 100^3 processes, unit
bytes), capacity 1, on contiguous PEs of two machines of 16 PEs per node:
the torus ``torus:40x40x40/16`` and the 3-level fat tree
``fattree:k=40,levels=3/16`` (1,024,000 PEs each).  Methods: the command
line's, by default every registered mapper except those documented as
small-n only (GRASP, EMAHD: their summaries or this list say so), with
``block`` and ``random`` as the floor.  A method that refuses a machine
(e.g. aphid on a torus) is reported as such.  Sizes grow until one run of a
method exceeds the time cap (default 60 s); larger sizes print "skipped
above N".  Each run is a fresh process (killed at 3x the cap), so its peak
memory is its own: the peak resident set the ``tm.map`` call adds
(benchmarks/_memory.py); its CPU time (``time.process_time``, all threads)
is printed beside the wall-clock time.  The growth exponent is
log(t2 / t1) / log(n2 / n1) between the two largest sizes a method ran.
Hop-bytes and max congestion relative to block are printed for context.

    python benchmarks/bench_mappers_scaling.py                      # everything, writes results/mappers_scaling.json
    python benchmarks/bench_mappers_scaling.py --quick              # 10^3 and 10^4, cap 10 s
    python benchmarks/bench_mappers_scaling.py --methods aphid,ptram --sizes 10,22
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from _memory import measure  # noqa: E402

import topomap as tm  # noqa: E402

MACHINES = {"torus": "torus:40x40x40/16", "fattree": "fattree:k=40,levels=3/16"}
SIDES = (10, 22, 46, 100)
#: Mappers documented as small-n only (exact or O(n^2)-and-worse searches).
SMALL_N = ("grasp", "emahd")
FLOOR = ("block", "random")
# as in bench_networks.py: keep freed buffers from staying resident and hiding later peaks
_CHILD_ENV = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "65536", "MALLOC_TRIM_THRESHOLD_": "65536"}


def default_methods() -> list[str]:
    small = [name for name, info in tm.methods().items()
             if name in SMALL_N or "small n" in info.summary.lower() or "small-n" in info.summary.lower()]
    return [*FLOOR, *(m for m in tm.methods() if m not in FLOOR and m not in small)]


def child(method: str, spec: str, side: int) -> dict:
    """One measurement, in this (fresh) process."""
    pat = tm.generators.stencil_3d((side, side, side), points=7)
    alloc = tm.machine(spec).allocate(pat.n)
    cpu0 = time.process_time()
    try:
        mp, seconds, peak_mb = measure(lambda: tm.map(pat, alloc, method=method, seed=0))
    except tm.TopomapError as exc:
        return {"refused": str(exc)}
    cpu = time.process_time() - cpu0
    met = tm.evaluate(pat, alloc, mp)
    blk = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block"))
    return {"seconds": seconds, "cpu_seconds": cpu, "peak_mb": peak_mb, "hop_bytes_ratio": met.hop_bytes / blk.hop_bytes,
            "mc_ratio": met.max_congestion / blk.max_congestion}


def run_child(method: str, spec: str, side: int, hard_limit: float) -> dict:
    try:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", method, spec, str(side)],
                             capture_output=True, text=True, timeout=hard_limit, env=_CHILD_ENV)
    except subprocess.TimeoutExpired:
        return {"timeout": hard_limit}
    if out.returncode:
        return {"failed": (out.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def exponent(cells: list[dict]) -> float | None:
    done = [c for c in cells if "seconds" in c]
    if len(done) < 2:
        return None
    a, b = done[-2], done[-1]
    return math.log(b["seconds"] / a["seconds"]) / math.log(b["n"] / a["n"]) if a["seconds"] > 0 else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--methods", help="comma-separated mappers (default: all registered except small-n ones)")
    ap.add_argument("--machines", default=",".join(MACHINES), help=f"of {', '.join(MACHINES)} (default both)")
    ap.add_argument("--sizes", help="stencil sides, comma-separated (default 10,22,46,100)")
    ap.add_argument("--cap", type=float, default=None, help="time cap per run in seconds (default 60; 10 quick)")
    ap.add_argument("--kill", type=float, default=3.0, help="kill a run at this many times the cap (default 3)")
    ap.add_argument("--quick", action="store_true", help="sides 10 and 22, cap 10 s")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "mappers_scaling.json"))
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        method, spec, side = args.child
        print(json.dumps(child(method, spec, int(side))))
        return
    methods = [m.strip() for m in args.methods.split(",")] if args.methods else default_methods()
    unknown = [m for m in methods if m not in tm.methods()]
    if unknown:
        ap.error(f"unknown method(s) {', '.join(unknown)}; registered: {', '.join(tm.methods())}")
    machines = [k.strip() for k in args.machines.split(",")]
    if any(k not in MACHINES for k in machines):
        ap.error(f"--machines takes {', '.join(MACHINES)}")
    sides = [int(s) for s in args.sizes.split(",")] if args.sizes else list(SIDES[:2] if args.quick else SIDES)
    cap = args.cap or (10.0 if args.quick else 60.0)
    print(f"methods: {', '.join(methods)}; cap {cap:g} s per run; capacity 1; 16 PEs per node")
    head = f"{'machine':8s} {'method':12s} " + " ".join(f"{f'n={s ** 3:,}':>31s}" for s in sides) + \
        f" | {'exponent':>8s} | {'HB/block':>8s} {'MC/block':>8s}"
    print(head)
    print(" " * 22 + " ".join(f"{'seconds':>10s} {'CPU s':>8s} {'peak MB':>11s}" for _ in sides))
    print("-" * len(head))
    rows = []
    for mk in machines:
        spec = MACHINES[mk]
        for method in methods:
            cells: list[dict] = []
            stop: str | None = None
            for side in sides:
                n = side ** 3
                if stop:
                    cells.append({"n": n, "skipped": stop})
                    continue
                cell = {"n": n, **run_child(method, spec, side, args.kill * cap)}
                cells.append(cell)
                if "seconds" in cell and cell["seconds"] > cap:
                    stop = f"skipped above {n:,}"
                elif "seconds" not in cell:
                    stop = "refused" if "refused" in cell else f"skipped above {n:,}"
            exp = exponent(cells)
            last = next((c for c in reversed(cells) if "seconds" in c), None)
            rows.append({"machine": spec, "method": method, "cells": cells, "exponent": exp})
            text = []
            for c in cells:
                if "seconds" in c:
                    text.append(f"{c['seconds']:10.3f} {c['cpu_seconds']:8.2f} {c['peak_mb']:11.1f}")
                elif "timeout" in c:
                    text.append(f"> {c['timeout']:g} s, killed".rjust(31))
                elif "refused" in c or "failed" in c:
                    text.append(("refused" if "refused" in c else "failed").rjust(31))
                else:
                    text.append(c["skipped"].rjust(31))
            quality = f"{last['hop_bytes_ratio']:8.3f} {last['mc_ratio']:8.3f}" if last else f"{'-':>8s} {'-':>8s}"
            print(f"{mk:8s} {method:12s} " + " ".join(text) + " | "
                  + (f"{exp:8.2f}" if exp is not None else f"{'-':>8s}") + " | " + quality, flush=True)
            for c in cells:
                if "refused" in c or "failed" in c:
                    print(f"    {method} on {spec}: {c.get('refused') or c.get('failed')}")
                    break
    info = {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(),
            "topomap": tm.__version__, "time": time.strftime("%Y-%m-%d %H:%M:%S"), "cap_seconds": cap, "kill_seconds": args.kill * cap,
            "registered": sorted(tm.methods())}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump({"info": info, "rows": rows}, fh, indent=1)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
