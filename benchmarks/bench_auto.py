"""``method="auto"`` against block and each member of its portfolio (issue 20, part 4).

Instances: 7-point 3-D stencils on fully or partly allocated machines of 16-PE nodes (8 at 10^3),
launcher (contiguous) order, 10^3 to 10^5 processes: tori, a fat tree, a dragonfly and a
three-level hierarchy.  Every member of the portfolio of either objective (hop-bytes, max
congestion) runs once and is scored on both; then ``auto`` runs per objective.  Values are
relative to block; CPU is user + system seconds of this process and its children (Scotch's
``gmap`` is a child), so members' and auto's costs compare.

    python benchmarks/bench_auto.py              # 10^3 - 10^5, writes results/auto.json
    python benchmarks/bench_auto.py --quick      # the 10^3 instances only
"""

from __future__ import annotations

import argparse
import os
import resource
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import _results  # noqa: E402  (benchmarks/_results.py, beside this script)
import topomap as tm  # noqa: E402
from topomap.mappers.auto import portfolio  # noqa: E402

OBJECTIVES = ("hop_bytes", "max_congestion")
# (stencil extents, machine): n = product of the extents
INSTANCES = [
    ((10, 10, 10), "torus:5x5x5/8"),
    ((10, 10, 10), "fattree:k=4,levels=3/16"),
    ((24, 24, 24), "torus:12x12x6/16"),
    ((24, 24, 24), "fattree:k=12,levels=3/16"),
    ((24, 24, 24), "dragonfly:g=17,a=8,h=2,p=8/16"),
    ((24, 24, 24), "hierarchy:16:16:8:8/1:10:100:1000"),
    ((48, 48, 48), "torus:24x12x24/16"),
]


def cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def instance(dims: tuple[int, int, int], spec: str) -> list[dict]:
    pat = tm.generators.stencil_3d(dims, points=7)
    alloc = tm.machine(spec).allocate(pat.n)
    seen: dict[str, dict] = {}
    for obj in OBJECTIVES:
        for name, opts in portfolio(alloc, pat.n, obj):
            seen.setdefault(name, opts)
    members = list(seen.items())
    rows, base = [], None
    for name, opts in members:
        t = cpu()
        try:
            mp = tm.map(pat, alloc, method=name, **opts)
        except tm.MappingError as exc:
            print(f"  {spec} {name}: refused ({str(exc)[:70]})", flush=True)
            continue
        seconds = cpu() - t
        met = tm.evaluate(pat, alloc, mp)
        base = base or met
        rows.append({"n": pat.n, "machine": spec, "method": name, "cpu": seconds,
                     **{obj: getattr(met, obj) / getattr(base, obj) for obj in OBJECTIVES}})
        print(f"  {spec} n={pat.n} {name:15s} cpu {seconds:7.2f}  hb {rows[-1]['hop_bytes']:.3f}  "
              f"mc {rows[-1]['max_congestion']:.3f}", flush=True)
    for obj in OBJECTIVES:
        t = cpu()
        mp = tm.map(pat, alloc, objective=obj)
        seconds = cpu() - t
        met = tm.evaluate(pat, alloc, mp)
        rows.append({"n": pat.n, "machine": spec, "method": f"auto[{obj}]", "winner": mp.options["winner"],
                     "cpu": seconds, **{o: getattr(met, o) / getattr(base, o) for o in OBJECTIVES}})
        print(f"  {spec} n={pat.n} auto[{obj}] -> {mp.options['winner']:10s} cpu {seconds:7.2f}  "
              f"hb {rows[-1]['hop_bytes']:.3f}  mc {rows[-1]['max_congestion']:.3f}", flush=True)
    return rows


def table(rows: list[dict]) -> str:
    lines = [f"{'n':>7}  {'machine':34}  {'method':36}  {'HB/block':>8}  {'MC/block':>8}  {'CPU s':>7}"]
    for r in rows:
        name = r["method"] + (f" -> {r['winner']}" if "winner" in r else "")
        lines.append(f"{r['n']:>7}  {r['machine']:34}  {name:36}  {r['hop_bytes']:8.3f}  {r['max_congestion']:8.3f}  "
                     f"{r['cpu']:7.2f}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the 10^3 instances only")
    ap.add_argument("-o", "--output", default=os.path.join(HERE, "results", "auto.json"))
    args = ap.parse_args()
    rows = []
    for dims, spec in INSTANCES:
        if args.quick and dims[0] * dims[1] * dims[2] > 1000:
            continue
        rows += instance(dims, spec)
    print(table(rows))
    if not args.quick:
        _results.write(args.output, "auto", rows, methods=sorted(tm.methods()))


if __name__ == "__main__":
    main()
