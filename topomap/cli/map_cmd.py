"""``topomap map``: run one mapper, write the mapping, compare it with block.

Method options come as ``--option NAME=VALUE`` and are typed from the
registered default (see ``topomap methods``): ``bool`` takes
true/false/yes/no/on/off/1/0, ``int`` an integer, ``float`` any number,
tuples a comma-separated list of the first default element's type, ``str``
the text as is; an option whose default is None or an empty tuple takes an
integer, else a number, else the text.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from typing import Any, Sequence

import numpy as np

from .. import io
from ..errors import MappingError
from ..io.atomic import atomic_write
from ..mapping import Mapping
from ..metrics import evaluate
from ..registry import MapperInfo, methods
from ..registry import map as run_mapper
from .common import add_placement_arguments, job, table

__all__ = ["parse_options", "METRIC_COLUMNS"]

#: (metric key, table header) of the metric table of ``map`` and ``compare``.
METRIC_COLUMNS = [("hop_bytes", "HB"), ("dilation", "dilation"), ("max_congestion", "MC"),
                  ("nz_congestion_avg", "NZCA"), ("nz_congestion_var", "NZCV"), ("qap", "qap"),
                  ("edge_cut", "edge cut"), ("seconds", "time s")]

_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _typed(text: str, default: Any, where: str) -> Any:
    if isinstance(default, bool):
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise MappingError(f"{where} expects true or false, got {text!r}")
    if isinstance(default, (int, np.integer)):
        try:
            return int(text)
        except ValueError:
            raise MappingError(f"{where} expects an integer, got {text!r}") from None
    if isinstance(default, (float, np.floating)):
        try:
            return float(text)
        except ValueError:
            raise MappingError(f"{where} expects a number, got {text!r}") from None
    if isinstance(default, (tuple, list)):
        items = [t.strip() for t in text.split(",")] if text.strip() else []
        return tuple(_typed(t, default[0] if default else None, f"{where} (item {i})") for i, t in enumerate(items))
    if default is None:
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
    return text


def parse_options(method: str, items: Sequence[str] | None, info: MapperInfo | None = None) -> dict[str, Any]:
    """``NAME=VALUE`` strings as typed options of a registered method.

    Examples
    --------
    >>> from topomap.cli.map_cmd import parse_options
    >>> parse_options("aphid", ["prune=0", "partitioner=kway", "ntries=2"])
    {'prune': 0.0, 'partitioner': 'kway', 'ntries': 2}
    """
    if info is None:
        reg = methods()
        if method not in reg:
            raise MappingError(f"unknown mapping method {method!r}; registered: {', '.join(reg)}")
        info = reg[method]
    out: dict[str, Any] = {}
    for item in items or ():
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise MappingError(f"--option expects NAME=VALUE, got {item!r}")
        if name not in info.options:
            raise MappingError(f"method {method!r} has no option {name!r}; its options: "
                               f"{', '.join(info.options) or 'none'}")
        if name in out:
            raise MappingError(f"option {name!r} of method {method!r} is given twice")
        out[name] = _typed(text.strip(), info.options[name][0], f"option {name!r} of method {method!r}")
    return out


def _row(name: str, met: Any, seconds: float) -> dict:
    return {"method": name, **met.to_dict(), "seconds": seconds}


def _map_mpi(args: argparse.Namespace, options: dict[str, Any]) -> tuple[Any, Any, Mapping] | None:
    """``--mpi``: the distributed PTRAM over MPI_COMM_WORLD; rank 0 reads the inputs and gets
    (pattern, allocation, mapping), the other ranks None."""
    if args.method != "ptram":
        raise MappingError(f"--mpi runs the distributed PTRAM only (--method ptram), got --method {args.method}")
    if args.capacity == "auto":
        raise MappingError("--mpi needs a number for --capacity (every rank passes it to the distributed PTRAM)")
    from ..mpi._collective import CollectiveError, from_root, mpi
    comm = mpi().COMM_WORLD
    kept: list = []

    def read() -> None:
        kept.extend(job(args))
    try:
        from_root(comm, read, "topomap map --mpi")
        t0 = time.perf_counter()
        from ..mpi.ptram import distributed_ptram
        res = distributed_ptram(comm, *(kept or (None, None)), seed=args.seed, capacity=args.capacity, **options)
    except CollectiveError:
        if comm.rank == 0:
            raise
        return None
    if comm.rank:
        return None
    return kept[0], kept[1], Mapping(res.pe_of, method="ptram", seed=args.seed,
                                     seconds=time.perf_counter() - t0, options=options, capacity=args.capacity)


def run(args: argparse.Namespace) -> int:
    options = parse_options(args.method, args.option)
    if getattr(args, "mpi", False):
        done = _map_mpi(args, options)
        if done is None:        # ranks other than 0 print nothing
            return 0
        pat, alloc, mp = done
    else:
        pat, alloc = job(args)
        mp = run_mapper(pat, alloc, method=args.method, seed=args.seed, capacity=args.capacity, **options)
    if args.output:
        if args.format == "pe":
            io.write_mapping(mp, args.output)
        else:
            with atomic_write(args.output) as fh:
                np.savetxt(fh, alloc.machine.node_of(mp.pe_of), fmt="%d")
    rows = [_row(args.method, evaluate(pat, alloc, mp), mp.seconds)]
    if args.method != "block":
        base: Mapping = run_mapper(pat, alloc, method="block", capacity=mp.capacity)
        rows.append(_row("block", evaluate(pat, alloc, base), base.seconds))
        rows.append({"method": f"{args.method}/block",
                     **{k: (rows[0][k] / rows[1][k] if rows[1][k] else (1.0 if rows[0][k] == 0 else math.inf))
                        for k, _ in METRIC_COLUMNS}})
    if args.json:
        print(json.dumps({"method": args.method, "seed": args.seed, "capacity": mp.capacity,
                          "options": mp.options, "output": args.output, "format": args.format,
                          "metrics": rows}, indent=2, default=float))
        return 0
    print(table([{"method": r["method"], **{h: r[k] for k, h in METRIC_COLUMNS}} for r in rows],
                [("method", "{}")] + [(h, "{:.4g}") for _, h in METRIC_COLUMNS]))
    if "winner" in mp.options:
        print(f"{args.method} chose {mp.options['winner']}: the lowest {mp.options['objective']} of "
              f"{', '.join(mp.options['scores'])}")
    if args.output:
        print(f"wrote {args.output} ({args.format}: one line per process)")
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("map", help="map a pattern onto a machine and write the mapping",
                       description="Run a mapper, write the mapping (one line per process) and print its "
                       "metrics next to the launcher's block placement.  Method options: --option NAME=VALUE, "
                       "typed from the defaults listed by `topomap methods`.")
    add_placement_arguments(p, with_json=True)
    p.add_argument("--method", default="auto",
                   help="registered mapper (default auto: the best of a portfolio on -O objective=..., never worse "
                        "than block; see `topomap methods`)")
    p.add_argument("--option", "-O", action="append", metavar="NAME=VALUE", help="a method option (repeatable)")
    p.add_argument("-o", "--output", help="mapping file to write")
    p.add_argument("--format", choices=["pe", "node"], default="pe",
                   help="pe: the PE id of each process (topomap eval --mapping reads it); node: its node id")
    p.add_argument("--mpi", action="store_true",
                   help="run the distributed PTRAM over the ranks of MPI_COMM_WORLD (under mpiexec; --method ptram; "
                   "needs mpi4py); rank 0 reads the inputs and writes the output")
    p.set_defaults(func=run)
