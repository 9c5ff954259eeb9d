"""Helpers shared by the command modules."""

from __future__ import annotations

import argparse
import json
import os

from .. import io
from ..errors import FormatError, MappingError
from ..machine import Allocation
from ..networks.spec import machine as build_machine
from ..pattern import Pattern
from ..patterns import generators
from ..registry import auto_capacity


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


def add_job_arguments(p: argparse.ArgumentParser, machine_default: str | None,
                      allocation_default: str = "contiguous") -> None:
    """Machine, allocation and seed options shared by commands that place a job."""
    if machine_default is None:
        p.add_argument("machine", help="machine spec, e.g. torus:8x8x8/8 or hierarchy:4:8:8/1:10:100")
    else:
        p.add_argument("--machine", default=machine_default, help=f"machine spec (default {machine_default})")
    p.add_argument("--allocation", default=allocation_default, choices=["contiguous", "random", "fragmented"],
                   help=f"which nodes the job gets (default {allocation_default})")
    p.add_argument("--alloc-seed", type=int, default=0, help="seed of random/fragmented allocations")
    p.add_argument("--runs", type=int, default=4, help="runs of a fragmented allocation (default 4)")
    p.add_argument("--seed", type=int, default=0, help="mapper seed (default 0)")


def allocation(args: argparse.Namespace, n: int) -> Allocation:
    """The allocation described by :func:`add_job_arguments` options."""
    mach = build_machine(args.machine)
    return mach.allocate(n, policy=args.allocation, seed=args.alloc_seed, runs=args.runs)


def capacity(value: "int | str") -> "int | str":
    """``--capacity``: a positive integer or ``auto`` (MappingError otherwise, one line on the command line)."""
    if isinstance(value, int) or str(value).strip().lower() != "auto":
        try:
            number = int(value)
        except ValueError:
            raise MappingError(f"--capacity expects a positive integer or 'auto', got {value!r}") from None
        if number < 1:
            raise MappingError(f"--capacity must be >= 1 or 'auto', got {number}")
        return number
    return "auto"


def add_placement_arguments(p: argparse.ArgumentParser, with_json: bool = False) -> None:
    """Pattern, machine, allocation size and capacity of commands that map a job (:func:`job`)."""
    p.add_argument("pattern", help="pattern file (.mat, .mtx, ...) or generator spec (e.g. stencil3d:16x16x16)")
    add_job_arguments(p, None)
    p.add_argument("--policy", dest="allocation", choices=["contiguous", "random", "fragmented"],
                   default=argparse.SUPPRESS, help="same as --allocation")
    p.add_argument("--alloc", type=int, metavar="N", help="PEs to allocate (default: just enough at --capacity)")
    p.add_argument("--capacity", default=1,
                   help="processes per PE (default 1); 'auto': the fewest that fit on the machine (or on --alloc), "
                        "widened by the imbalance option of a method that has one")
    if with_json:
        p.add_argument("--json", action="store_true", help="print JSON")


def job(args: argparse.Namespace) -> tuple[Pattern, Allocation]:
    """The pattern and the allocation of a command line of :func:`add_placement_arguments`.

    The allocation has ``--alloc`` PEs, or just enough for the pattern at
    ``--capacity`` (with ``auto``: at the fewest processes per PE that fit
    on the machine); the mapper then gets ``args.capacity`` as it is.
    """
    args.capacity = capacity(args.capacity)
    pat = load_pattern(args.pattern)
    mach = build_machine(args.machine)
    room = args.alloc if args.alloc is not None else mach.npes
    per_pe = auto_capacity(pat.n, room) if args.capacity == "auto" else args.capacity
    need = -(-pat.n // per_pe)
    count = need if args.alloc is None else args.alloc
    if count < need or count > mach.npes:
        hint = "; --capacity auto takes the fewest processes per PE that fit" if args.capacity != "auto" else ""
        raise MappingError(f"{pat.n} processes at capacity {per_pe} need {need} PEs; "
                           f"{'--alloc gives ' + str(count) if count < need else 'the machine has ' + str(mach.npes)}"
                           f" ({args.machine}){hint}")
    return pat, mach.allocate(count, policy=args.allocation, seed=args.alloc_seed, runs=args.runs)
