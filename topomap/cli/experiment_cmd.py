"""``topomap experiment``: run a grid file and print the normalised metrics per method."""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings

from ..experiments import GridInterrupted, GridRunsFailed, read_grid, run_grid, summarize
from .common import table

_SHOWN = ("hop_bytes_norm", "max_congestion_norm", "nz_congestion_avg_norm", "nz_congestion_var_norm",
          "hybrid_norm", "seconds")


def run(args: argparse.Namespace) -> int:
    grid = read_grid(args.grid)
    if args.output is not None:
        grid["out"] = args.output
    if args.fail_fast:
        grid["fail_fast"] = True
    try:
        with warnings.catch_warnings():   # the failed runs are printed below, with the exit status 1
            warnings.simplefilter("ignore", GridRunsFailed)
            df = run_grid(**grid, resume=not args.no_resume, progress=not args.no_progress)
    except GridInterrupted as exc:
        where = f"; saved to {exc.saved_to}, run the same command to resume" if exc.saved_to else ""
        print(f"topomap experiment: interrupted after {len(exc.results)} runs{where}", file=sys.stderr)
        return 130
    metrics = [m for m in _SHOWN if m in df.columns]
    summary = summarize(df, metrics=metrics, agg=args.agg).reset_index()
    rows = summary.to_dict("records")
    if args.json:
        clean = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in rows]
        print(json.dumps({"runs": len(df), "out": grid.get("out"), "summary": clean}, indent=2))
    else:
        columns = [("method", "{}"), *[(m, "{:.4g}") for m in metrics], ("runs", "{}"), ("errors", "{}")]
        print(table(rows, columns))
        if grid.get("out"):
            print(f"\n{len(df)} runs in {grid['out']}")
    failed = df[df["status"] != "ok"]
    for _, row in failed.head(args.show_errors).iterrows():
        print(f"error: {row['pattern']} {row['machine']} {row['allocation']} {row['method']} "
              f"seed={row['seed']}: {row['error']}", file=sys.stderr)
    return 1 if len(failed) else 0


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("experiment", help="run a grid of patterns x machines x methods x seeds",
                       description="Run the experiment grid described by a YAML or JSON file (keys: patterns, "
                       "machines, methods, seeds, allocations, baseline, capacity, weights, out, fail_fast) and "
                       "print each method's metrics normalised by the baseline. With an output file a second run "
                       "skips the runs already in it. Exit status 1 when some runs failed.")
    p.add_argument("grid", help="grid file (.yaml/.yml needs PyYAML, .json always works)")
    p.add_argument("-o", "--output", help="results file, .csv or .parquet (overrides the grid's out)")
    p.add_argument("--no-resume", action="store_true", help="run everything again and overwrite the output file")
    p.add_argument("--fail-fast", action="store_true", help="stop at the first failed run")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--agg", default="gmean", choices=["gmean", "mean", "median", "min", "max"],
                   help="how runs of one method are combined in the table (default gmean)")
    p.add_argument("--show-errors", type=int, default=5, metavar="N",
                   help="print the first N failed runs on stderr (default 5)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)
