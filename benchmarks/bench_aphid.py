"""APHiD placement quality and speed (notes 004 §7.1-§7.3), measured in one run.

The paper's DUMPI traces of DOE mini-apps are not available offline; these
topomap generators stand in for them (notes 004 §9):

=========  ===========================================================  =================
app        stand-in                                                     paper's app
=========  ===========================================================  =================
lulesh     27-point 3-D stencil                                         Lulesh
multigrid  NAS MG (3-D torus neighbours, V-cycle levels)                BoxLib Multigrid
minidft    NAS FT, 2-D layout (sub-communicator all-to-all of the FFT)  MiniDFT
gtc        2-D periodic neighbour exchange (toroidal x radial) plus a   GTC
           1 % sub-communicator all-to-all along the radial direction
           standing in for its sub-communicator allreduces
nekbone    NAS CG (row/transpose exchanges of CG solves)                Nekbone
lu         NAS LU (wavefront neighbours; no counterpart in the paper)   -
=========  ===========================================================  =================

Table 1 (§7.1, Fig. 6): bytes per level on a binary fat tree sized to the
job, for aphid (5 % pruning), linear (= block: rank i on node i), random
(the placement whose top-level bytes are the median of N random ones,
§2.5) and every other registered hierarchical or partitioning mapper
(``recursive``, ``hierarchy``, ``scotch`` when present).  Table 2 (§7.2,
Fig. 7): top-level bytes at 5 % and 10 % pruning relative to 0 %, and the
placement time.  Table 3: the 64-port APHiD trees (baseline taper, 2x and 4x
core taper; one rank per node, contiguous nodes): spine bytes and maximum
link congestion (bytes / capacity) of aphid and linear.  Placement time is
the wall time of ``tm.map`` (§7.3 reports minutes in MATLAB).

    python benchmarks/bench_aphid.py            # 4096 ranks, N = 101 random placements
    python benchmarks/bench_aphid.py --quick    # 256 / 1024 ranks, N = 11
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
from topomap import generators as gen  # noqa: E402
from topomap import generators_nas as nas  # noqa: E402
from topomap import patterns_util as pu  # noqa: E402

OTHERS = ("recursive", "hierarchy", "scotch")


def apps(n: int) -> dict[str, tm.Pattern]:
    """The stand-ins for n ranks (n a power of two >= 64)."""
    side = round(n ** (1 / 3))
    cube = (side, side, n // side // side) if side ** 3 == n else (n // 64, 8, 8)
    radial = 16
    toroidal = n // radial
    return {
        "lulesh": gen.stencil_3d(cube, points=27),
        "multigrid": nas.nas_mg(n),
        "minidft": nas.nas_ft(n),
        "gtc": pu.add(gen.stencil_2d((toroidal, radial), periodic=(True, False)),
                      gen.subcomm_alltoall((toroidal, radial), axes=1, bytes=0.01)),
        "nekbone": nas.nas_cg(n),
        "lu": nas.nas_lu(n),
    }


def level_row(pat: tm.Pattern, alloc: tm.Allocation, pe_of: np.ndarray, seconds: float) -> dict:
    met = tm.evaluate(pat, alloc, pe_of)
    names = alloc.machine.level_names
    return {"level_bytes": met.level_bytes, "top": met.level_bytes[names[-1]], "hop_bytes": met.hop_bytes,
            "max_congestion": met.max_congestion, "seconds": seconds}


def median_random(pat: tm.Pattern, alloc: tm.Allocation, count: int) -> dict:
    """§2.5: the random placement whose top-level bytes are the median of ``count``."""
    rows = []
    for seed in range(count):
        mp = tm.map(pat, alloc, method="random", seed=seed)
        rows.append(level_row(pat, alloc, mp.pe_of, mp.seconds))
    rows.sort(key=lambda r: r["top"])
    return {**rows[count // 2], "of": count}


def timed(pat: tm.Pattern, alloc: tm.Allocation, method: str, **options) -> dict:
    mp = tm.map(pat, alloc, method=method, **options)
    return level_row(pat, alloc, mp.pe_of, mp.seconds)


def binary_table(n: int, randoms: int) -> list[dict]:
    levels = int(np.log2(n))
    alloc = tm.machine(f"fattree:k=2,levels={levels}").allocate(n)
    names = alloc.machine.level_names
    others = [m for m in OTHERS if m in tm.methods()]
    print(f"\n1. bytes per level, binary fat tree of {n} nodes (top three levels; ratio = top-level bytes / linear's)")
    head = f"{'app':10s} {'method':10s} | " + " ".join(f"{nm:>10s}" for nm in names[:-4:-1]) + \
        f" | {'ratio':>6s} {'HB ratio':>8s} {'seconds':>8s}"
    print(head)
    print("-" * len(head))
    rows = []
    for app, pat in apps(n).items():
        cells = {"aphid": timed(pat, alloc, "aphid"), "linear": timed(pat, alloc, "block"),
                 "random": median_random(pat, alloc, randoms)}
        for m in others:
            cells[m] = timed(pat, alloc, m)
        lin = cells["linear"]
        for method, c in cells.items():
            c["top_ratio"] = c["top"] / lin["top"] if lin["top"] else float("nan")
            c["hop_bytes_ratio"] = c["hop_bytes"] / lin["hop_bytes"]
            print(f"{app:10s} {method:10s} | " + " ".join(f"{c['level_bytes'][nm]:10.4g}" for nm in names[:-4:-1])
                  + f" | {c['top_ratio']:6.3f} {c['hop_bytes_ratio']:8.3f} {c['seconds']:8.3f}", flush=True)
        rows.append({"app": app, "n": n, "machine": alloc.machine.spec, "methods": cells})
    return rows


def pruning_table(n: int) -> list[dict]:
    alloc = tm.machine(f"fattree:k=2,levels={int(np.log2(n))}").allocate(n)
    fractions = (0.0, 0.05, 0.10)
    print(f"\n2. pruning (§7.2), binary fat tree of {n} nodes: top-level bytes relative to 0 % (< 1 = better)")
    head = f"{'app':10s} | " + " ".join(f"{f'top {f:.0%}':>9s}" for f in fractions) + " | " + \
        " ".join(f"{f'ratio {f:.0%}':>9s}" for f in fractions[1:]) + " | " + \
        " ".join(f"{f's {f:.0%}':>7s}" for f in fractions)
    print(head)
    print("-" * len(head))
    rows = []
    for app, pat in apps(n).items():
        cells = {f: timed(pat, alloc, "aphid", prune=f) for f in fractions}
        base = cells[0.0]["top"]
        ratios = {f: (cells[f]["top"] / base if base else float("nan")) for f in fractions[1:]}
        print(f"{app:10s} | " + " ".join(f"{cells[f]['top']:9.4g}" for f in fractions) + " | "
              + " ".join(f"{ratios[f]:9.3f}" for f in fractions[1:]) + " | "
              + " ".join(f"{cells[f]['seconds']:7.3f}" for f in fractions), flush=True)
        rows.append({"app": app, "n": n, "prune": {str(f): cells[f] for f in fractions},
                     "top_ratio": {str(f): r for f, r in ratios.items()}})
    return rows


def tapered_table(n: int) -> list[dict]:
    print(f"\n3. APHiD's 64-port fat trees (§3), {n} ranks on contiguous nodes: spine bytes, max congestion "
          "(bytes / capacity), placement time")
    head = f"{'tree':10s} {'app':10s} | {'spine aphid':>11s} {'linear':>10s} {'ratio':>6s} | " \
           f"{'MC aphid':>9s} {'linear':>9s} {'ratio':>6s} | {'seconds':>7s}"
    print(head)
    print("-" * len(head))
    rows = []
    patterns = apps(n)
    for taper in ("1", "2", "4"):
        alloc = tm.machine(f"aphid:taper={taper}").allocate(n)
        for app, pat in patterns.items():
            a, lin = timed(pat, alloc, "aphid"), timed(pat, alloc, "block")
            print(f"{'taper=' + taper:10s} {app:10s} | {a['top']:11.4g} {lin['top']:10.4g} "
                  f"{a['top'] / lin['top'] if lin['top'] else float('nan'):6.3f} | {a['max_congestion']:9.4g} "
                  f"{lin['max_congestion']:9.4g} {a['max_congestion'] / lin['max_congestion']:6.3f} | "
                  f"{a['seconds']:7.3f}", flush=True)
            rows.append({"tree": f"aphid:taper={taper}", "app": app, "n": n, "aphid": a, "linear": lin})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="256 ranks (1024 on the APHiD trees), N = 11")
    ap.add_argument("--ranks", type=int, default=None, help="ranks per app, a power of two (default 4096)")
    ap.add_argument("--random", type=int, default=None, help="random placements for the median (default 101)")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "aphid.json"))
    args = ap.parse_args()
    n = args.ranks or (256 if args.quick else 4096)
    if n < 64 or n & (n - 1):
        ap.error(f"--ranks must be a power of two >= 64, got {n}")
    randoms = args.random or (11 if args.quick else 101)
    binary = binary_table(n, randoms)
    pruning = pruning_table(n)
    tapered = tapered_table(max(n, 1024) if args.quick else n)
    info = {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count(),
            "numpy": np.__version__, "topomap": tm.__version__, "time": time.strftime("%Y-%m-%d %H:%M:%S"),
            "ranks": n, "random_placements": randoms, "methods": sorted(tm.methods())}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump({"info": info, "binary": binary, "pruning": pruning, "tapered": tapered}, fh, indent=1,
                  default=float)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
