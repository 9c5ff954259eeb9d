"""``topomap machine``: the summary of a machine spec."""

from __future__ import annotations

import argparse

from ..networks.analysis import analyze
from ..networks.spec import machine as build_machine
from .common import print_mapping


def run(args: argparse.Namespace) -> int:
    mach = build_machine(args.spec)
    # analysis is O(N^2) in nodes, so only on request
    print_mapping({**mach.summary(), **analyze(mach)} if args.analysis else mach.summary(), args.json)
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("machine", help="summary of a machine spec (nodes, PEs, links, diameter, ASPL)")
    p.add_argument("spec", help="machine spec, e.g. torus:8x8x8/8")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--analysis", action="store_true",
                   help="add exact distances (routed and graph), link classes, bisection cuts and degrees")
    p.set_defaults(func=run)
