"""The ``topomap`` command line.

Every command accepts patterns as files (see ``topomap.io``) or generator
specs (see ``topomap.generators``) and machines as spec strings (see
``topomap.spec``).  Bad input exits with status 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

from . import generators, io
from .compare import compare
from .errors import FormatError, TopomapError
from .machine import Allocation
from .metrics import evaluate
from .pattern import Pattern
from .registry import describe, map as run_mapper, methods
from .spec import machine as build_machine

DEMO_PATTERN = "stencil3d:16x16x16:7,weights=3x1x1"
DEMO_MACHINE = "torus:16x16x8/8"
TABLE_COLUMNS = [("method", "{}"), ("hop_bytes_norm", "{:.3f}"), ("avg_dilation", "{:.3f}"),
                 ("max_dilation", "{}"), ("max_congestion_norm", "{:.3f}"), ("nz_congestion_avg_norm", "{:.3f}"),
                 ("nz_congestion_var_norm", "{:.3f}"), ("edge_cut_norm", "{:.3f}"), ("seconds", "{:.4f}")]


def load_pattern(text: str) -> Pattern:
    """A pattern from a file path, else from a generator spec."""
    if os.path.exists(text):
        return io.read(text)
    if os.path.splitext(text)[1].lower() in io._READERS:  # meant as a file: say so, not "bad spec"
        raise FormatError(f"{text}: no such pattern file")
    return generators.from_spec(text)


def _table(rows: list[dict], columns: list[tuple[str, str]]) -> str:
    cells = [[c for c, _ in columns]] + [[fmt.format(r[c]) for c, fmt in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = ["  ".join(v.rjust(w) if i else v.ljust(w) for i, (v, w) in enumerate(zip(row, widths))) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _allocation(args: argparse.Namespace, n: int) -> Allocation:
    mach = build_machine(args.machine)
    return mach.allocate(n, policy=args.allocation, seed=args.alloc_seed, runs=args.runs)


def _rows(result: Any) -> list[dict]:
    return result.to_dict("records") if hasattr(result, "to_dict") else list(result)


def cmd_demo(args: argparse.Namespace) -> int:
    pat = generators.from_spec(args.pattern)
    alloc = _allocation(args, pat.n)
    print(f"pattern:    {pat}")
    print(f"machine:    {alloc.machine}")
    print(f"allocation: {alloc}")
    print("metrics normalised by the block (launcher default) mapping; lower is better\n")
    rows = _rows(compare(pat, alloc, methods=None, normalize="block", seed=args.seed))
    print(_table(rows, TABLE_COLUMNS))
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    pat = load_pattern(args.pattern)
    alloc = _allocation(args, pat.n)
    mp = io.read_mapping(args.mapping) if args.mapping else run_mapper(pat, alloc, method=args.method, seed=args.seed)
    met = evaluate(pat, alloc if args.mapping is None else alloc.machine, mp)
    out = met.to_dict()
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        width = max(map(len, out))
        for k, v in out.items():
            print(f"{k.ljust(width)}  {v:.6g}" if isinstance(v, float) else f"{k.ljust(width)}  {v}")
    return 0


def cmd_methods(args: argparse.Namespace) -> int:
    reg = methods()
    if args.json:
        print(json.dumps({k: v.to_dict() for k, v in reg.items()}, indent=2))
    else:
        print("\n\n".join(describe(info) for info in reg.values()))
    return 0


def cmd_machine(args: argparse.Namespace) -> int:
    summary = build_machine(args.spec).summary()
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        width = max(map(len, summary))
        for k, v in summary.items():
            print(f"{k.ljust(width)}  {v}")
    return 0


def cmd_features(args: argparse.Namespace) -> int:
    from .features import features

    print(json.dumps(features(), indent=2))
    return 0


def _add_job(p: argparse.ArgumentParser, machine_default: str | None) -> None:
    if machine_default is None:
        p.add_argument("machine", help="machine spec, e.g. torus:8x8x8/8 or hierarchy:4:8:8/1:10:100")
    else:
        p.add_argument("--machine", default=machine_default, help=f"machine spec (default {machine_default})")
    p.add_argument("--allocation", default="contiguous", choices=["contiguous", "random", "fragmented"],
                   help="which nodes the job gets (default contiguous)")
    p.add_argument("--alloc-seed", type=int, default=0, help="seed of random/fragmented allocations")
    p.add_argument("--runs", type=int, default=4, help="runs of a fragmented allocation (default 4)")
    p.add_argument("--seed", type=int, default=0, help="mapper seed (default 0)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="topomap", description="Topology-aware process mapping for HPC.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("demo", help="map a built-in pattern onto a built-in machine with every method",
                       description="Map a built-in pattern onto a built-in machine with every registered "
                                   "method and print the metric table.")
    p.add_argument("--pattern", default=DEMO_PATTERN, help=f"generator spec (default {DEMO_PATTERN})")
    _add_job(p, DEMO_MACHINE)
    p.set_defaults(func=cmd_demo, allocation="fragmented")

    p = sub.add_parser("eval", help="metrics of a mapping", description="Evaluate a placement: pattern "
                       "(file or generator spec) on a machine, mapped by a method or read from a mapping file.")
    p.add_argument("pattern", help="pattern file (.mat, .npy, ...) or generator spec (e.g. stencil2d:64x64)")
    _add_job(p, None)
    p.add_argument("--method", default="block", help="mapper to run when no --mapping is given (default block)")
    p.add_argument("--mapping", help="mapping file: one PE id per line")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("methods", help="list the registered mappers and their options")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_methods)

    p = sub.add_parser("machine", help="summary of a machine spec (nodes, PEs, links, diameter, ASPL)")
    p.add_argument("spec", help="machine spec, e.g. torus:8x8x8/8")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_machine)

    p = sub.add_parser("features", help="what this build was compiled with")
    p.set_defaults(func=cmd_features)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except TopomapError as exc:
        print(f"topomap {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"topomap {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader (e.g. `| head`) went away: stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
