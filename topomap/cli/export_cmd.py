"""``topomap export``: a machine as a Scotch target or graph, a SimGrid platform or a Graphviz drawing."""

from __future__ import annotations

import argparse
import os
import sys

from ..errors import MappingError, TopomapError
from ..export import dot, scotch, simgrid
from ..metrics import evaluate
from ..registry import map as run_mapper
from ..networks.spec import machine as build_machine
from .common import add_job_arguments, allocation, load_pattern

FORMATS = ("tleaf", "torus", "grf", "simgrid", "dot")


def _write(path: str, text: str) -> None:
    if path == "-":
        print(text, end="")
        return
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise TopomapError(f"cannot write {path}: {exc.strerror}") from None
    print(f"wrote {path}", file=sys.stderr)


def _sibling(args: argparse.Namespace, given: str | None, suffix: str) -> str | None:
    """The companion file: as given, else next to -o with ``suffix``; none when -o is stdout."""
    path = given or (None if args.output == "-" else os.path.splitext(args.output)[0] + suffix)
    if path is not None and os.path.abspath(path) == os.path.abspath(args.output):
        raise TopomapError(f"the {suffix} companion file would overwrite {args.output}; name it explicitly")
    return path


def run(args: argparse.Namespace) -> int:
    fmt = args.format
    if args.pattern and fmt not in ("simgrid", "dot"):
        raise MappingError(f"--pattern places a job for the simgrid host file and the dot loads, not for {fmt}")
    if args.pattern:
        pat = load_pattern(args.pattern)
        alloc = allocation(args, pat.n)
        mach = alloc.machine
        mapping = run_mapper(pat, alloc, method=args.method, seed=args.seed)
    else:
        mach = build_machine(args.machine)
    if fmt == "tleaf":
        _write(args.output, scotch.tleaf(mach))
    elif fmt == "torus":
        _write(args.output, scotch.torus(mach))
    elif fmt == "grf":
        text, vlist = scotch.grf(mach), scotch.vertex_list(mach)
        extra = _sibling(args, args.list, ".vl")
        _write(args.output, text)
        if extra:
            _write(extra, vlist)
    elif fmt == "simgrid":
        text = simgrid.platform(mach, bandwidth=args.bandwidth, latency=args.latency, max_nodes=args.max_nodes)
        hosts = simgrid.hostfile(alloc, mapping) if args.pattern else simgrid.hostfile(mach)
        extra = _sibling(args, args.hostfile, ".hosts")
        _write(args.output, text)
        if extra:
            _write(extra, hosts)
    else:
        met = evaluate(pat, alloc, mapping, link_load=True) if args.pattern else None
        _write(args.output, dot.dot(mach, met))
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export", help="write a machine as a Scotch target/graph, SimGrid platform or Graphviz drawing",
        description="Write a machine for other tools. tleaf: Scotch tree-leaf target (hierarchy/tree machines, "
                    "differenced link costs); torus: Scotch torusXD/meshXD target; grf: the network as a Scotch "
                    "graph plus the vertex list of its compute nodes (amk_grf -l); simgrid: SimGrid platform "
                    "XML following topomap's routes plus an smpirun host file; dot: Graphviz drawing, with link "
                    "loads when a --pattern is mapped.")
    add_job_arguments(p, None)
    p.add_argument("--format", required=True, choices=FORMATS, help="what to write")
    p.add_argument("-o", "--output", required=True, help="output file ('-' for standard output)")
    p.add_argument("--pattern", help="pattern file or generator spec: map it (simgrid host file, dot loads)")
    p.add_argument("--method", default="block", help="mapper for --pattern (default block)")
    p.add_argument("--list", help="grf: vertex list file (default: next to -o, suffix .vl)")
    p.add_argument("--hostfile", help="simgrid: host file (default: next to -o, suffix .hosts)")
    p.add_argument("--bandwidth", type=float, default=1.25e10, help="simgrid: bytes/s per unit of capacity")
    p.add_argument("--latency", type=float, default=1e-7, help="simgrid: seconds per link")
    p.add_argument("--max-nodes", type=int, default=512, help="simgrid: refuse bigger machines (default 512)")
    p.set_defaults(func=run)
