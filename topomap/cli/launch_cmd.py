"""``topomap launch-file``: write an Open MPI rankfile, MPICH_RANK_ORDER or a host list for a mapping."""

from __future__ import annotations

import argparse
import sys

from .. import io
from ..fabric.slurm import expand_hostlist
from ..registry import map as run_mapper
from .common import add_job_arguments, allocation, load_pattern


def _hosts(text: str | None) -> object:
    """``--hosts``: a format string with {node}, else a Slurm hostlist giving node 0, 1, ... in order."""
    if text is None or "{" in text:
        return text
    from ..errors import MachineError
    try:
        return expand_hostlist(text)
    except ValueError as exc:
        raise MachineError(f"--hosts {text!r}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    from ..mpi.launch import launcher_file, usage

    pat = load_pattern(args.pattern)
    alloc = allocation(args, pat.n)
    mp = io.read_mapping(args.mapping) if args.mapping else run_mapper(pat, alloc, method=args.method,
                                                                       seed=args.seed, capacity=args.capacity)
    text = launcher_file(args.format, mp, alloc, hosts=_hosts(args.hosts), capacity=args.capacity)
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(usage(args.format, args.output, mp.n), file=sys.stderr)
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("launch-file", help="launcher file placing ranks by a mapping",
                       description="Map a pattern onto a machine (or read a mapping) and write a launcher file: "
                       "an Open MPI rankfile, a Cray MPICH_RANK_ORDER file, a SLURM_HOSTFILE for "
                       "srun --distribution=arbitrary, or a plain host list in rank order.")
    p.add_argument("format", choices=["rankfile", "mpich", "slurm", "hostfile"], help="file format")
    p.add_argument("pattern", help="pattern file or generator spec (e.g. stencil3d:8x8x8)")
    add_job_arguments(p, None)
    p.add_argument("--method", default="block", help="mapper (default block)")
    p.add_argument("--mapping", help="mapping file (one PE id per rank) instead of running a mapper")
    p.add_argument("--capacity", type=int, default=1, help="most ranks per PE (default 1)")
    p.add_argument("--hosts", help="host names of nodes: a format string such as 'nid{node:05d}' or a Slurm "
                   "hostlist naming node 0, 1, ... (default: the machine's node names, else node<id>)")
    p.add_argument("-o", "--output", help="file to write (default stdout); the launch command goes to stderr")
    p.set_defaults(func=run)
