"""Helpers shared by the command modules."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from .. import io
from ..patterns import generators
from ..errors import FormatError
from ..machine import Allocation
from ..pattern import Pattern
from ..networks.spec import machine as build_machine


def load_pattern(text: str) -> Pattern:
    """A pattern from a file path, else from a generator spec."""
    if os.path.exists(text):
        return io.read(text)
    if os.path.splitext(text)[1].lower() in io._READERS:  # meant as a file: say so, not "bad spec"
        raise FormatError(f"{text}: no such pattern file")
    return generators.from_spec(text)


def table(rows: list[dict], columns: list[tuple[str, str]]) -> str:
    """Rows as an aligned text table; ``columns`` are (key, format) pairs."""
    cells = [[c for c, _ in columns]] + [[fmt.format(r[c]) for c, fmt in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = ["  ".join(v.rjust(w) if i else v.ljust(w) for i, (v, w) in enumerate(zip(row, widths))) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def print_mapping(values: dict, as_json: bool) -> None:
    """A flat dict as JSON or as aligned ``key  value`` lines."""
    if as_json:
        print(json.dumps(values, indent=2))
        return
    width = max(map(len, values))
    for k, v in values.items():
        print(f"{k.ljust(width)}  {v:.6g}" if isinstance(v, float) else f"{k.ljust(width)}  {v}")


def add_job_arguments(p: argparse.ArgumentParser, machine_default: str | None) -> None:
    """Machine, allocation and seed options shared by commands that place a job."""
    if machine_default is None:
        p.add_argument("machine", help="machine spec, e.g. torus:8x8x8/8 or hierarchy:4:8:8/1:10:100")
    else:
        p.add_argument("--machine", default=machine_default, help=f"machine spec (default {machine_default})")
    p.add_argument("--allocation", default="contiguous", choices=["contiguous", "random", "fragmented"],
                   help="which nodes the job gets (default contiguous)")
    p.add_argument("--alloc-seed", type=int, default=0, help="seed of random/fragmented allocations")
    p.add_argument("--runs", type=int, default=4, help="runs of a fragmented allocation (default 4)")
    p.add_argument("--seed", type=int, default=0, help="mapper seed (default 0)")


def allocation(args: argparse.Namespace, n: int) -> Allocation:
    """The allocation described by :func:`add_job_arguments` options."""
    mach = build_machine(args.machine)
    return mach.allocate(n, policy=args.allocation, seed=args.alloc_seed, runs=args.runs)


def rows_of(result: Any) -> list[dict]:
    """compare() output (DataFrame or list of dicts) as a list of dicts."""
    return result.to_dict("records") if hasattr(result, "to_dict") else list(result)
