"""``topomap eval``: the metrics of one placement."""

from __future__ import annotations

import argparse

from .. import io
from ..metrics import evaluate
from ..registry import map as run_mapper
from .common import add_job_arguments, allocation, load_pattern, print_mapping


def run(args: argparse.Namespace) -> int:
    pat = load_pattern(args.pattern)
    alloc = allocation(args, pat.n)
    mp = io.read_mapping(args.mapping) if args.mapping else run_mapper(pat, alloc, method=args.method, seed=args.seed)
    met = evaluate(pat, alloc if args.mapping is None else alloc.machine, mp)
    print_mapping(met.to_dict(), args.json)
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="metrics of a mapping", description="Evaluate a placement: pattern "
                       "(file or generator spec) on a machine, mapped by a method or read from a mapping file.")
    p.add_argument("pattern", help="pattern file (.mat, .npy, ...) or generator spec (e.g. stencil2d:64x64)")
    add_job_arguments(p, None)
    p.add_argument("--method", default="block", help="mapper to run when no --mapping is given (default block)")
    p.add_argument("--mapping", help="mapping file: one PE id per line")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)
