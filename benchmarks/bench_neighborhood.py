"""Message combining for neighbour collectives (notes 002 s6.3, 000 s7.8): Phase 1 and Phase 2
times of the serial simulation beside the papers' Tables I and II, and the structure found.

Phase 1 is :func:`topomap.neighborhood.combine` (the C simulator of all ranks, one core);
the papers ran Alg. 1 + 2 on 4K / 8K real processes of an InfiniBand cluster.  Phase 2 is
:func:`topomap.neighborhood.build_schedule` for one rank (allgather, 4 B), the mean over
``--sample`` ranks, as the papers time it per process.  Also printed: Alg. 1 iterations t,
mean friends F at the first iteration, mean sends per rank (combined) against the mean
out-degree (naive), and whether every pair of ranks is friends (the papers' "all-pairs
friendship from delta = 0.1").

Then the options beyond the papers against the paper's algorithm (issue 16 part 5): for random
and Moore graphs mapped block-wise and randomly onto a torus, mean messages sent per process,
stages of the combined allgather, mean hops between friends, and the predicted latency
reduction against naive (:func:`topomap.neighborhood.latency.predict_latency`, LogGP) at 4 B,
1 KB and 64 KB, for the paper's choice, ``node=`` and ``node=`` + ``distance=`` (path cost).

Last, cumulative combining (``combine(cumulative=True)``, issue 16 part 5) against the paper's
algorithm at 1K ranks, random G(p, delta) for delta in {0.05, 0.2, 0.8} and Moore (2,1), (2,2)
on a 32 x 32 grid, block-mapped onto a torus:8x8x4/4: Alg. 1 iterations, mean messages sent
per process, stages of the allgather, the largest message (blocks) and the predicted LogGP
latency at 4 B and 64 KB with its reduction against naive.

    python benchmarks/bench_neighborhood.py                # 1K-8K ranks (minutes)
    python benchmarks/bench_neighborhood.py --quick        # 1K ranks only
    python benchmarks/bench_neighborhood.py --cumulative   # the cumulative table only (~20 s)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import topomap as tm  # noqa: E402
import topomap.neighborhood as nb  # noqa: E402
from topomap.neighborhood.latency import allgather_stages, predict_latency  # noqa: E402
from topomap.neighborhood.pathcost import path_costs  # noqa: E402

PAPER_RANDOM = {0.05: (13.54, 0.0005), 0.1: (17.36, 0.001), 0.2: (21.58, 0.005), 0.4: (24.71, 0.019),
                0.8: (30.56, 0.07)}          # Table I, 4K processes: Phase 1, Phase 2 (s)
PAPER_MOORE = {(2, 2): (0.31, 0.000008), (2, 3): (0.62, 0.000017), (2, 4): (0.96, 0.000047)}  # Table II, 8K


def moore_dims(n: int, d: int) -> tuple[int, ...]:
    """Balanced power-of-two extents of n ranks in d dimensions (as MPI_Dims_create)."""
    dims = [1] * d
    k = 0
    while int(np.prod(dims)) < n:
        dims[k % d] *= 2
        k += 1
    return tuple(sorted(dims, reverse=True))


def measure(g: nb.NeighborGraph, sample: int) -> dict:
    t = nb.combine(g)
    rng = np.random.default_rng(0)
    ranks = rng.choice(g.n, size=min(sample, g.n), replace=False)
    t0 = time.perf_counter()
    for p in ranks:
        d, s = g.destinations(int(p)), g.sources(int(p))
        lay = nb.Layout(np.zeros(d.size, np.int64), np.full(d.size, 4, np.int64), np.arange(s.size) * 4,
                        np.full(s.size, 4, np.int64))
        nb.build_schedule(t.rank_view(int(p)), d, s, lay, "allgather", lambda f, q: 4)
    phase2 = (time.perf_counter() - t0) / len(ranks)
    st = t.stats()
    outdeg = g.degrees()[0]
    return {"n": g.n, "edges": g.edges, "phase1_s": round(t.seconds, 3), "phase2_s": round(phase2, 6),
            "t": int(t.iterations["active"].size), "F_mean": round(float(st["friends"].mean()), 1),
            "all_pairs_friends": bool((st["friends"] == g.n - 1).all()),
            "sends_mean": round(float(st["sends"].mean()), 1), "outdeg_mean": round(float(outdeg.mean()), 1),
            "rounds_max": int(t.iterations["rounds"].max(initial=0))}


def compare_options(n: int) -> list[dict]:
    """The paper's friend choice against node= and the path cost, on n ranks of a torus."""
    machine = tm.machine("torus:4x4x4/8" if n <= 512 else "torus:8x8x8/8")
    graphs = {"random 0.05": nb.random_graph(n, 0.05, seed=1), "random 0.2": nb.random_graph(n, 0.2, seed=1),
              "moore (2,2)": nb.moore_graph(moore_dims(n, 2), 2), "moore (3,1)": nb.moore_graph(moore_dims(n, 3), 1)}
    rows = []
    print(f"\n{'graph':<13}{'mapping':<8}{'option':<10}{'sends':>7}{'stages':>7}{'friend hops':>12}"
          f"{'4 B':>8}{'1 KB':>8}{'64 KB':>8}")
    for name, g in graphs.items():
        for mapname, mp in [("block", np.arange(n)), ("random", np.random.default_rng(0).permutation(n))]:
            node, dist = path_costs(machine, mp)
            for opt, kw in [("paper", {}), ("node", {"node": node}), ("pathcost", {"node": node, "distance": dist})]:
                t = nb.combine(g, **kw)
                owner = np.repeat(np.arange(n), np.diff(t.step_ptr))
                red = predict_latency(g, t, machine, mp, sizes=[4, 1024, 65536])["reduction"]
                r = {"graph": name, "n": n, "mapping": mapname, "option": opt,
                     "sends_mean": round(float(t.stats()["sends"].mean()), 1),
                     "stages": len(allgather_stages(g, t, 4)),
                     "friend_hops": round(float(dist[node[owner], node[t.step_friend]].mean()), 2)
                     if owner.size else 0.0, "reduction": [round(float(x), 3) for x in red]}
                rows.append(r)
                print(f"{name:<13}{mapname:<8}{opt:<10}{r['sends_mean']:>7}{r['stages']:>7}{r['friend_hops']:>12}"
                      + "".join(f"{x:>+8.3f}" for x in red), flush=True)
    return rows


def compare_cumulative(n: int = 1024) -> list[dict]:
    """Cumulative combining against the paper's algorithm (and naive) on n ranks."""
    machine, mapping = tm.machine("torus:8x8x4/4"), np.arange(n)
    side = int(round(n ** 0.5))
    graphs = {f"random {d}": nb.random_graph(n, d, seed=1) for d in (0.05, 0.2, 0.8)}
    graphs.update({f"moore (2,{r})": nb.moore_graph((side, side), r) for r in (1, 2)})
    rows = []
    print(f"\n{'graph':<13}{'algorithm':<11}{'t':>4}{'sends':>8}{'stages':>7}{'widest':>7}"
          f"{'4 B us':>9}{'red':>8}{'64 KB us':>10}{'red':>8}")
    for name, g in graphs.items():
        deg = float(g.degrees()[0].mean())
        for alg in ("paper", "cumulative"):
            t = nb.combine(g, cumulative=alg == "cumulative")
            lat = predict_latency(g, t, machine, mapping, sizes=[4, 65536])
            stages = allgather_stages(g, t, 4)
            widest = int(max(float(s.bytes.max(initial=0)) for s in stages) // 4)  # 4 B per block
            r = {"graph": name, "n": n, "algorithm": alg, "t": int(t.iterations["active"].size),
                 "sends_mean": round(float(t.stats()["sends"].mean()), 1), "outdeg_mean": round(deg, 1),
                 "stages": len(stages), "widest_blocks": widest,
                 "naive_s": [float(x) for x in lat["naive"]], "combined_s": [float(x) for x in lat["combined"]],
                 "reduction": [round(float(x), 3) for x in lat["reduction"]]}
            rows.append(r)
            if alg == "paper":
                print(f"{name:<13}{'naive':<11}{'':>4}{deg:>8.1f}{1:>7}{1:>7}{1e6 * lat['naive'][0]:>9.1f}{'':>8}"
                      f"{1e6 * lat['naive'][1]:>10.1f}")
            print(f"{'':<13}{alg:<11}{r['t']:>4}{r['sends_mean']:>8}{r['stages']:>7}{widest:>7}"
                  f"{1e6 * lat['combined'][0]:>9.1f}{r['reduction'][0]:>+8.3f}{1e6 * lat['combined'][1]:>10.1f}"
                  f"{r['reduction'][1]:>+8.3f}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1K ranks only")
    ap.add_argument("--sample", type=int, default=64, help="ranks whose Phase 2 is timed")
    ap.add_argument("--cumulative", action="store_true", help="only cumulative combining against the paper's")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    if args.cumulative:
        cumulative = compare_cumulative()
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"cumulative": cumulative}, fh, indent=1)
        return
    sizes = [1024] if args.quick else [1024, 2048, 4096, 8192]
    rows = []
    print(f"{'graph':<16}{'n':>6}{'phase1 s':>10}{'paper':>8}{'phase2 s':>11}{'paper':>10}{'t':>5}{'F':>8}"
          f"{'sends':>8}{'deg':>8}  all-pairs")
    for n in sizes:
        for delta in PAPER_RANDOM:
            if n == 8192 and delta < 0.8:
                continue
            r = {"graph": f"random {delta}", **measure(nb.random_graph(n, delta, seed=1), args.sample)}
            paper = PAPER_RANDOM[delta] if n == 4096 else (None, None)
            rows.append({**r, "paper_phase1_s": paper[0], "paper_phase2_s": paper[1]})
        for d, radius in [(2, 2), (2, 3), (2, 4), (3, 1), (3, 2), (4, 1)]:
            dims = moore_dims(n, d)
            if min(dims) < 2 * radius + 1:
                continue
            r = {"graph": f"moore ({d},{radius})", **measure(nb.moore_graph(dims, radius), args.sample)}
            paper = PAPER_MOORE.get((d, radius), (None, None)) if n == 8192 else (None, None)
            rows.append({**r, "paper_phase1_s": paper[0], "paper_phase2_s": paper[1]})
        for r in (x for x in rows if x["n"] == n):
            p1 = "-" if r["paper_phase1_s"] is None else f"{r['paper_phase1_s']:.2f}"
            p2 = "-" if r["paper_phase2_s"] is None else f"{r['paper_phase2_s']:.6f}"
            print(f"{r['graph']:<16}{r['n']:>6}{r['phase1_s']:>10.3f}{p1:>8}{r['phase2_s']:>11.6f}{p2:>10}"
                  f"{r['t']:>5}{r['F_mean']:>8}{r['sends_mean']:>8}{r['outdeg_mean']:>8}  {r['all_pairs_friends']}",
                  flush=True)
    options = compare_options(512 if args.quick else 4096)
    cumulative = compare_cumulative()
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"phases": rows, "options": options, "cumulative": cumulative}, fh, indent=1)


if __name__ == "__main__":
    main()
