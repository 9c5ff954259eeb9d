"""``topomap compare``: several mappers on one job, one table (``topomap.compare``)."""

from __future__ import annotations

import argparse
import csv
import json

import sys

from ..compare import compare_rows
from ..errors import MappingError
from ..io.atomic import atomic_write
from ..registry import methods
from .common import add_placement_arguments, job, table
from .map_cmd import METRIC_COLUMNS
from .time_args import add_time_arguments, time_model


def _seeds(text: str) -> list[int]:
    try:
        seeds = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise MappingError(f"--seeds expects comma-separated integers, got {text!r}") from None
    if not seeds or any(s < 0 for s in seeds):
        raise MappingError(f"--seeds expects non-negative integers, got {text!r}")
    return seeds


def run(args: argparse.Namespace) -> int:
    names = [t.strip() for t in args.methods.split(",") if t.strip()] if args.methods else None
    unknown = [name for name in names or () if name not in methods()]
    if unknown or names == []:
        raise MappingError(f"unknown mapping method {unknown[0]!r}; registered: {', '.join(methods())}"
                           if unknown else "--methods names no method")
    normalize = None if args.normalize.lower() == "none" else args.normalize
    seeds = _seeds(args.seeds) if args.seeds else [args.seed]
    model = time_model(args)
    if model is not None and (args.time_method, args.sync, args.iterations) != ("flow", "barrier", 1):
        raise MappingError("compare --time predicts one phase with the flow model; "
                           "use topomap eval for --time-method, --sync and --iterations")
    pat, alloc = job(args)
    rows, skipped = [], {}
    for seed in seeds:
        done, skipped = compare_rows(pat, alloc, names, normalize=normalize, seed=seed, capacity=args.capacity,
                                     time=model or False, bytes_scale=args.bytes_scale)
        for r in done:
            rows.append({"method": r["method"], "seed": seed, **{k: v for k, v in r.items() if k != "method"}})
    for name, why in skipped.items():
        print(f"skipped {name}, which does not apply here: {why}", file=sys.stderr)
    if args.csv:
        with atomic_write(args.csv, newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    if args.json:
        print(json.dumps(rows, indent=2, default=float))
        return 0
    suffix = "_norm" if normalize else ""
    cols = [(k if k == "seconds" else k + suffix, h if k == "seconds" or not normalize else f"{h}/{normalize}")
            for k, h in METRIC_COLUMNS + ([("predicted_time", "predicted")] if model is not None else [])]
    shown = [("method", "method")] + ([("seed", "seed")] if len(seeds) > 1 else []) + cols
    print(table([{h: r[k] for k, h in shown} for r in rows],
                [("method", "{}")] + [(h, "{}" if h == "seed" else "{:.4g}") for k, h in shown[1:]]))
    if args.csv:
        print(f"wrote {args.csv} ({len(rows)} rows, raw and normalised metrics)")
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="run several mappers on one job and tabulate their metrics",
                       description="Map a pattern onto a machine with several methods (their default options) and "
                       "print every metric, normalised to one method unless --normalize none.")
    add_placement_arguments(p, with_json=True)
    p.add_argument("--methods", help="comma-separated mappers (default: those of topomap.compare that apply to the "
                                     "machine; the others are listed on stderr)")
    p.add_argument("--normalize", default="block", help="divide the metrics by this method's (default block; none)")
    p.add_argument("--seeds", help="comma-separated mapper seeds, one row per method and seed (default --seed)")
    p.add_argument("--csv", help="also write every row (raw and normalised metrics) to this CSV file")
    add_time_arguments(p)
    p.set_defaults(func=run)
