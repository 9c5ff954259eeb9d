"""``topomap launch-file``: write an Open MPI rankfile, MPICH_RANK_ORDER or a host list for a mapping."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .. import io
from ..errors import MappingError
from ..fabric.slurm import expand_hostlist
from ..io.atomic import atomic_write
from ..networks.spec import machine as build_machine
from ..registry import map as run_mapper
from .common import add_placement_arguments, capacity, job, load_pattern


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

    if args.mapping:
        pat, mp = load_pattern(args.pattern), io.read_mapping(args.mapping)
        if mp.n != pat.n:
            raise MappingError(f"{args.mapping} maps {mp.n} processes but the pattern has {pat.n}")
        # the job runs on the PEs the mapping uses, in PE order; as many ranks per PE as it puts there
        pes, per_pe = np.unique(mp.pe_of, return_counts=True)
        alloc = build_machine(args.machine).allocation(pes)
        given = None if args.capacity is None else capacity(args.capacity)
        ranks_per_pe = given if isinstance(given, int) else int(per_pe.max())
    else:
        args.capacity = 1 if args.capacity is None else args.capacity
        pat, alloc = job(args)
        mp = run_mapper(pat, alloc, method=args.method, seed=args.seed, capacity=args.capacity)
        ranks_per_pe = mp.capacity
    text = launcher_file(args.format, mp, alloc, hosts=_hosts(args.hosts), capacity=ranks_per_pe)
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        with atomic_write(args.output) as fh:
            fh.write(text)
        print(usage(args.format, args.output, mp.n), file=sys.stderr)
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("launch-file", help="launcher file placing ranks by a mapping",
                       description="Map a pattern onto a machine (or read a mapping) and write a launcher file: "
                       "an Open MPI rankfile, a Cray MPICH_RANK_ORDER file, a SLURM_HOSTFILE for "
                       "srun --distribution=arbitrary, or a plain host list in rank order.")
    p.add_argument("format", choices=["rankfile", "mpich", "slurm", "hostfile"], help="file format")
    add_placement_arguments(p)
    p.add_argument("--method", default="auto", help="mapper (default auto: the best of a portfolio on hop-bytes, "
                                                    "never worse than block)")
    p.add_argument("--mapping", help="mapping file (one PE id per rank) instead of running a mapper; the job then "
                   "runs on the PEs it names, as many ranks per PE as it places there (or --capacity)")
    p.add_argument("--hosts", help="host names of nodes: a format string such as 'nid{node:05d}' or a Slurm "
                   "hostlist naming node 0, 1, ... (default: the machine's node names, else node<id>)")
    p.add_argument("-o", "--output", help="file to write (default stdout); the launch command goes to stderr")
    p.set_defaults(func=run, capacity=None)   # None: 1, or with --mapping the most it places on a PE
