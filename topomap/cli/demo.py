"""``topomap demo``: the main mappers and ``auto``, the default, on a built-in pattern and machine."""

from __future__ import annotations

import argparse

from ..compare import DEFAULT_METHODS, NORMALIZED, compare_rows
from ..metrics import evaluate
from ..patterns import generators
from ..registry import map as run_mapper
from .common import add_job_arguments, allocation, table

PATTERN = "stencil3d:16x16x16:7,weights=3x1x1"
MACHINE = "torus:16x16x8/8"
ALLOCATION = "fragmented"
COLUMNS = [("method", "{}"), ("hop_bytes_norm", "{:.3f}"), ("avg_dilation", "{:.3f}"),
           ("max_dilation", "{}"), ("max_congestion_norm", "{:.3f}"), ("nz_congestion_avg_norm", "{:.3f}"),
           ("nz_congestion_var_norm", "{:.3f}"), ("edge_cut_norm", "{:.3f}"), ("seconds", "{:.4f}")]


def run(args: argparse.Namespace) -> int:
    pat = generators.from_spec(args.pattern)
    alloc = allocation(args, pat.n)
    print(f"pattern:    {pat}")
    print(f"machine:    {alloc.machine}")
    print(f"allocation: {alloc}")
    print("metrics normalised by the block (launcher default) mapping; lower is better\n")
    methods = [m.strip() for m in args.methods.split(",") if m.strip()] if args.methods else None
    rows, skipped = compare_rows(pat, alloc, methods=methods, normalize="block", seed=args.seed)
    chosen = None
    if methods is None:         # the default method last: the best of its portfolio on hop-bytes
        chosen = run_mapper(pat, alloc, method="auto", seed=args.seed)
        row = {"method": "auto", "seconds": chosen.seconds, **evaluate(pat, alloc, chosen).to_dict()}
        block = rows[0]
        rows.append({**row, **{f"{k}_norm": (row[k] / block[k]) if block[k] else (1.0 if row[k] == 0 else float("inf"))
                               for k in NORMALIZED}})
    print(table(rows, COLUMNS))
    if chosen is not None:
        print(f"\nauto (the default of tm.map, `topomap map` and topomap.mpi.reorder) ran "
              f"{', '.join(chosen.options['scores'])} and kept {chosen.options['winner']}, the lowest hop-bytes")
    if skipped:
        print(f"\nnot run, as they do not apply to {alloc.machine.spec}: {', '.join(skipped)} "
              "(`topomap compare` says why)")
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="map a built-in pattern onto a built-in machine with the main mappers",
                       description="Map a built-in pattern onto a built-in machine with the main mappers "
                                   "and print the metric table.")
    p.add_argument("--pattern", default=PATTERN, help=f"generator spec (default {PATTERN})")
    p.add_argument("--methods", help=f"comma-separated mappers (default: those of {', '.join(DEFAULT_METHODS)} "
                                     "that apply to the machine, then auto; see `topomap methods`)")
    add_job_arguments(p, MACHINE, ALLOCATION)
    p.set_defaults(func=run)
