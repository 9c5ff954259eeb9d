"""``topomap pattern``: statistics of a pattern, optionally transformed and written."""

from __future__ import annotations

import argparse

from .. import io
from ..patterns import util as patterns_util
from .common import load_pattern, print_mapping


def run(args: argparse.Namespace) -> int:
    pat = load_pattern(args.pattern)
    if args.subset is not None:
        pat, _ = patterns_util.restrict(pat, [int(t) for t in args.subset.split(",") if t.strip()])
    if args.symmetrize:
        pat = patterns_util.symmetrize(pat, args.symmetrize)
    if args.prune is not None:
        pat = patterns_util.prune(pat, args.prune)
    if args.scale is not None:
        pat = patterns_util.scale(pat, args.scale)
    info = patterns_util.summary(pat).to_dict()
    hist = info.pop("degree_histogram")
    if not args.json:
        info["degree_histogram"] = " ".join(f"{d}:{c}" for d, c in hist.items())
    else:
        info["degree_histogram"] = hist
    print_mapping(info, args.json)
    if args.output:
        io.write(pat, args.output)
    return 0


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not a fraction in [0, 1]")
    return value


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pattern", help="statistics of a pattern: size, volume, degrees, symmetry",
                       description="Print n, nnz, total bytes, degree distribution and symmetry of a pattern "
                                   "(file or generator spec), after the optional transforms in the order "
                                   "--subset, --symmetrize, --prune, --scale; -o writes the result.")
    p.add_argument("pattern", help="pattern file (.tmprof, .mat, .npy, ...) or generator spec")
    p.add_argument("--subset", help="comma-separated ranks to keep, renumbered in that order")
    p.add_argument("--symmetrize", choices=["sum", "max", "mean"], help="undirected view of the pattern")
    p.add_argument("--prune", type=_fraction, metavar="FRACTION",
                   help="drop edges below FRACTION x the heaviest (APHiD uses 0.05)")
    p.add_argument("--scale", type=float, help="multiply all bytes by this factor")
    p.add_argument("-o", "--output", help="write the (transformed) pattern to this file")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)
