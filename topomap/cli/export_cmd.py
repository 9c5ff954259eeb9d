"""``topomap export``: a machine as a Scotch target or graph, a SimGrid platform or a Graphviz drawing;
``topomap export goal``: a pattern or a collective schedule as LogGOPSim GOAL text."""

from __future__ import annotations

import argparse
import os
import sys

from ..collectives import schedules
from ..errors import MappingError, PatternError, TopomapError
from ..export import dot, scotch, simgrid
from ..export.goal import goal
from ..io.atomic import atomic_write
from ..metrics import evaluate
from ..registry import map as run_mapper
from ..networks.spec import machine as build_machine
from .common import add_job_arguments, allocation, load_pattern

FORMATS = ("tleaf", "torus", "grf", "simgrid", "dot")
COLLECTIVES = ("binomial_bcast", "binomial_gather", "recursive_doubling", "ring_allgather", "bruck")


def _write(path: str, text: str) -> None:
    if path == "-":
        print(text, end="")
        return
    try:
        with atomic_write(path) as fh:
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


def _collective(spec: str) -> schedules.Schedule:
    """A schedule from ``NAME:N[:key=value,...]``, e.g. ``ring_allgather:8:bytes=1024``.

    ``NAME`` is a function of :mod:`topomap.collectives.schedules`, ``N`` its
    number of ranks, the keys its keyword arguments (``bytes``, ``root``, ``op``).
    """
    name, _, rest = spec.partition(":")
    size, _, options = rest.partition(":")
    if not size.strip().isdigit():
        raise PatternError(f"collective {spec!r}: expected {name}:N[:key=value,...] with N the number of ranks")
    kwargs: dict[str, object] = {}
    for item in filter(None, (o.strip() for o in options.split(","))):
        key, eq, value = item.partition("=")
        if not eq or key not in ("bytes", "root", "op"):
            raise PatternError(f"collective {spec!r}: option {item!r} is not bytes=, root= or op=")
        try:
            kwargs[key] = value if key == "op" else float(value) if key == "bytes" else int(value)
        except ValueError:
            raise PatternError(f"collective {spec!r}: {key} = {value!r} is not a number") from None
    try:
        return getattr(schedules, name)(int(size), **kwargs)
    except TypeError:
        raise PatternError(f"collective {spec!r}: {name} takes no {', '.join(kwargs)} option") from None


def _goal(args: argparse.Namespace) -> int:
    if args.format is not None or args.pattern:
        raise MappingError("export goal takes the pattern or collective as its argument; no --format or --pattern")
    if args.work is None:
        raise PatternError("export goal needs a pattern file, a generator spec or a collective (e.g. ring_allgather:8)")
    is_collective = not os.path.exists(args.work) and args.work.partition(":")[0] in COLLECTIVES
    work = _collective(args.work) if is_collective else load_pattern(args.work)
    _write(args.output, goal(work, iterations=args.iterations, split=not args.merge_messages))
    return 0


def run(args: argparse.Namespace) -> int:
    if args.machine == "goal":
        return _goal(args)
    if args.work is not None:
        raise MappingError(f"unexpected argument {args.work!r}: only 'export goal' takes a second one")
    if args.iterations != 1 or args.merge_messages:
        raise MappingError("--iterations and --merge-messages are options of 'export goal', not of a machine export")
    fmt = args.format
    if fmt is None:
        raise MappingError(f"export of a machine needs --format ({', '.join(FORMATS)})")
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
        "export", help="write a machine as a Scotch target/graph, SimGrid platform or Graphviz drawing, "
                       "or a pattern/collective as LogGOPSim GOAL",
        usage="topomap export MACHINE --format FORMAT -o OUT [options]\n"
              "       topomap export goal PATTERN|COLLECTIVE -o OUT [--iterations N] [--merge-messages]",
        description="Write a machine for other tools. tleaf: Scotch tree-leaf target (hierarchy/tree machines, "
                    "differenced link costs); torus: Scotch torusXD/meshXD target; grf: the network as a Scotch "
                    "graph plus the vertex list of its compute nodes (amk_grf -l); simgrid: SimGrid platform "
                    "XML following topomap's routes plus an smpirun host file; dot: Graphviz drawing, with link "
                    "loads when a --pattern is mapped. 'export goal' writes a pattern (file or generator spec, "
                    "one stage) or a collective schedule (NAME:N[:bytes=B,root=R,op=OP] with NAME one of "
                    f"{', '.join(COLLECTIVES)}) as a LogGOPSim GOAL schedule, stages chained per rank as in "
                    "the time model's RANKS mode.")
    add_job_arguments(p, None)
    p.add_argument("work", nargs="?", help="export goal: the pattern file, generator spec or collective")
    p.add_argument("--format", choices=FORMATS, help="what to write (a machine; required unless 'export goal')")
    p.add_argument("-o", "--output", required=True, help="output file ('-' for standard output)")
    p.add_argument("--pattern", help="pattern file or generator spec: map it (simgrid host file, dot loads)")
    p.add_argument("--method", default="auto", help="mapper for --pattern (default auto, as tm.map)")
    p.add_argument("--list", help="grf: vertex list file (default: next to -o, suffix .vl)")
    p.add_argument("--hostfile", help="simgrid: host file (default: next to -o, suffix .hosts)")
    p.add_argument("--bandwidth", type=float, default=1.25e10, help="simgrid: bytes/s per unit of capacity")
    p.add_argument("--latency", type=float, default=1e-7, help="simgrid: seconds per link")
    p.add_argument("--max-nodes", type=int, default=512, help="simgrid: refuse bigger machines (default 512)")
    p.add_argument("--iterations", type=int, default=1, help="goal: repetitions of the stages (default 1)")
    p.add_argument("--merge-messages", action="store_true",
                   help="goal: one message per pattern entry, even where the pattern counts several")
    p.set_defaults(func=run)
