"""``topomap convert``: a communication pattern from one file format to another."""

from __future__ import annotations

import argparse
import os

from .. import io
from ..errors import FormatError
from ..pattern import Pattern
from .common import load_pattern


def _read(args: argparse.Namespace) -> Pattern:
    if args.kinds is None:
        if args.source_format is None and not os.path.exists(args.input):
            return load_pattern(args.input)  # a generator spec, or a clear "no such pattern file"
        return io.read(args.input, format=args.source_format)
    # --kinds implies Open MPI input; the input may be the bare pml_monitoring_filename prefix
    if (args.source_format or "ompi") != "ompi" or (os.path.exists(args.input) and io._ext(args.input) != ".prof"):
        raise FormatError(f"{args.input}: --kinds applies to Open MPI .prof input only")
    return io.read(args.input, format="ompi", kinds=args.kinds)


def run(args: argparse.Namespace) -> int:
    pat = _read(args)
    if args.symmetrize:
        pat = pat.symmetric()
    io.write(pat, args.output, format=args.target_format)
    source = pat.provenance.get("source") or pat.provenance.get("generator", "?")
    note = ", symmetrised (C + C^T)" if args.symmetrize else ""
    print(f"{args.input} ({source}) -> {args.output}: {pat.n} processes, {pat.nnz} pairs, "
          f"{pat.total_bytes:g} bytes{note}")
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    names = ", ".join(f"{f['name']} ({' '.join(f['extensions'])})" for f in io.formats())
    writable = ", ".join(f["name"] for f in io.formats() if f["write"])
    p = sub.add_parser("convert", help="convert a pattern between file formats",
                       description="Convert a communication pattern between file formats; formats come from the "
                                   f"extensions unless given. Formats: {names}. Writable: {writable}.")
    p.add_argument("input", help="pattern file (any rank's file for per-rank formats) or generator spec")
    p.add_argument("output", help="file to write")
    p.add_argument("--from", dest="source_format", choices=[f["name"] for f in io.formats()],
                   help="input format (default: from the extension)")
    p.add_argument("--to", dest="target_format", choices=[f["name"] for f in io.formats() if f["write"]],
                   help="output format (default: from the extension)")
    p.add_argument("--symmetrize", action="store_true",
                   help="write C + C^T (each pair carries the traffic of both directions); METIS and Scotch "
                        "files need a symmetric pattern")
    p.add_argument("--kinds", help="Open MPI monitoring line kinds to count, e.g. E,I (default) or E,I,S,R,C")
    p.set_defaults(func=run)
