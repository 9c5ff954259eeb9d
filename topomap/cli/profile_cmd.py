"""``topomap profile`` and ``topomap profiler``: record the pattern of an MPI run."""

from __future__ import annotations

import argparse
import sys

from .. import profiler
from .common import print_mapping


def run_profile(args: argparse.Namespace) -> int:
    command = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    try:
        pat = profiler.profile(command, args.output, collectives=args.collectives, launcher=args.launcher,
                               mpicc=args.mpicc, what=args.what)
    except profiler.ProfilerError as exc:
        code = getattr(exc, "returncode", None)
        if code is None:
            raise
        print(f"topomap profile: error: {exc}", file=sys.stderr)
        return code
    prov = pat.provenance
    print_mapping({"output": args.output, "ranks": pat.n, "pairs": pat.nnz, "bytes": pat.total_bytes,
                   "messages": float(pat.msgs.sum()) if pat.msgs is not None else 0.0,
                   "self_bytes": prov.get("dropped_self_bytes", 0.0), "collectives": prov["collectives"],
                   "mpi": prov["mpi"]}, args.json)
    return 0


def run_profiler(args: argparse.Namespace) -> int:
    if args.action == "build":
        print(profiler.build(args.mpicc, force=args.force))
    else:
        print(profiler.source_dir())
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "profile", help="run an MPI command under the PMPI profiler and write its pattern",
        description="Run COMMAND with the topomap PMPI profiler preloaded in every rank; at MPI_Finalize rank 0 "
                    "writes bytes and message counts per (sender, receiver) world-rank pair.  Example: "
                    "topomap profile -o app.tmprof -- mpiexec -n 16 ./app")
    p.add_argument("-o", "--output", required=True,
                   help="result file: .tmprof (the profiler's own format) or any pattern format (.mat, .npy, ...)")
    p.add_argument("--collectives", action="store_true",
                   help="also count collectives, expanded by the profiler's algorithm models")
    p.add_argument("--launcher", default="auto", choices=["auto", "openmpi", "mpich", "env"],
                   help="how the library reaches the ranks (default: ask the launcher)")
    p.add_argument("--mpicc", help="MPI compiler wrapper to build the profiler with (default $MPICC or mpicc)")
    p.add_argument("--what", default="all", choices=["all", "p2p", "collectives"],
                   help="traffic written to a non-.tmprof output (default all)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="the MPI command to run")
    p.set_defaults(func=run_profile)

    q = sub.add_parser("profiler", help="build the PMPI profiler library (or show its sources)",
                       description="build: compile the profiler with the MPI compiler wrapper into the user "
                                   "cache and print the library path; source: print the source directory.")
    q.add_argument("action", choices=["build", "source"])
    q.add_argument("--mpicc", help="MPI compiler wrapper (default $MPICC or mpicc on PATH)")
    q.add_argument("--force", action="store_true", help="rebuild even if cached")
    q.set_defaults(func=run_profiler)



