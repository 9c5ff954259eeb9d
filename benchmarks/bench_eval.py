"""Metric evaluation throughput: topomap's C evaluator vs a NumPy implementation.

Workload (issue "foundation", item 10): a 3-D 27-point stencil of (2k)^3
processes on a k x k x k torus of 8-core nodes, block (launcher order) and
random mappings, k = 5, 11, 23, 50 (10^3 to 10^6 processes).  Each measurement
runs in a fresh process that loads the pattern from .npy files.  Memory is the
peak resident set the evaluation adds: the kernel's peak (VmHWM) is reset
through /proc/self/clear_refs just before the call and compared with the
resident set at that moment.

    python benchmarks/bench_eval.py            # full table, writes results/eval_throughput.json
    python benchmarks/bench_eval.py --quick    # k = 5, 11 only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _memory import reset_peak, status_kb  # noqa: E402


def measure(workdir: str, k: int, method: str, impl: str, repeat: int) -> dict:
    """Runs inside the child process."""
    import topomap as tm
    from numpy_eval import numpy_evaluate

    arr = {name: np.load(os.path.join(workdir, f"{name}.npy")) for name in ("indptr", "indices", "bytes")}
    n = arr["indptr"].size - 1
    pat = tm.Pattern(n, arr["indptr"], arr["indices"], arr["bytes"])
    mach = tm.machine(f"torus:{k}x{k}x{k}/8")
    alloc = mach.allocate(n)
    pe_of = tm.map(pat, alloc, method=method, seed=1).pe_of
    src = pat.senders()
    best, extra_kb = float("inf"), 0
    for _ in range(repeat):
        before = reset_peak()
        t0 = time.perf_counter()
        if impl == "c":
            met = tm.evaluate(pat, alloc, pe_of).to_dict()
        else:
            met = numpy_evaluate(src, pat.indices, pat.bytes, pe_of, (k, k, k), (True,) * 3, 8)
        best = min(best, time.perf_counter() - t0)
        extra_kb = max(extra_kb, status_kb("VmHWM") - before)
    keys = ("hop_bytes", "dilation", "max_dilation", "edge_cut", "max_congestion", "nz_links",
            "nz_congestion_avg", "nz_congestion_var")
    return {"seconds": best, "extra_peak_mb": extra_kb / 1024, "metrics": {key: met[key] for key in keys}}


def run_child(workdir: str, k: int, method: str, impl: str, repeat: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", workdir, str(k), method, impl, str(repeat)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "eval_throughput.json"))
    args = ap.parse_args()
    if args.child:
        workdir, k, method, impl, repeat = args.child
        print(json.dumps(measure(workdir, int(k), method, impl, int(repeat))))
        return

    import topomap as tm

    ks = [5, 11] if args.quick else [5, 11, 23, 50]
    rows = []
    header = f"{'n':>8} {'mapping':>7} {'messages':>10} {'route hops':>11} {'C s':>7} {'NumPy s':>8} " \
             f"{'speedup':>7} {'C Mmsg/s':>8} {'C Ghop/s':>8} {'C MB':>6} {'NumPy MB':>8}"
    print(header)
    print("-" * len(header))
    for k in ks:
        pat = tm.generators.stencil_3d((2 * k,) * 3, points=27)
        with tempfile.TemporaryDirectory() as workdir:
            for name in ("indptr", "indices", "bytes"):
                np.save(os.path.join(workdir, f"{name}.npy"), getattr(pat, name))
            for method in ("block", "random"):
                repeat = 3 if k < 50 else 1
                c = run_child(workdir, k, method, "c", repeat)
                npy = run_child(workdir, k, method, "numpy", repeat)
                for key, val in c["metrics"].items():
                    ref = npy["metrics"][key]
                    if not np.isclose(val, ref, rtol=1e-9, atol=1e-9):
                        raise SystemExit(f"C and NumPy disagree on {key}: {val} vs {ref} (k={k}, {method})")
                hops = c["metrics"]["dilation"]
                row = {"n": pat.n, "k": k, "mapping": method, "messages": pat.nnz, "route_hops": hops,
                       "c_seconds": c["seconds"], "numpy_seconds": npy["seconds"],
                       "speedup": npy["seconds"] / c["seconds"],
                       "c_messages_per_s": pat.nnz / c["seconds"], "c_route_hops_per_s": hops / c["seconds"],
                       "c_extra_peak_mb": c["extra_peak_mb"], "numpy_extra_peak_mb": npy["extra_peak_mb"]}
                rows.append(row)
                print(f"{pat.n:>8} {method:>7} {pat.nnz:>10} {int(hops):>11} {c['seconds']:>7.3f} "
                      f"{npy['seconds']:>8.2f} {row['speedup']:>6.0f}x {row['c_messages_per_s'] / 1e6:>8.1f} "
                      f"{row['c_route_hops_per_s'] / 1e9:>8.2f} {c['extra_peak_mb']:>6.1f} "
                      f"{npy['extra_peak_mb']:>8.0f}", flush=True)
    info = {"benchmark": "eval_throughput", "machine": platform.machine(), "cpus": os.cpu_count(),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "default"), "topomap": tm.__version__,
            "numpy": np.__version__, "rows": rows}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(info, fh, indent=2)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
