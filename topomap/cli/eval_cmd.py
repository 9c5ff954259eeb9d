"""``topomap eval``: the metrics of one placement."""

from __future__ import annotations

import argparse

from .. import io
from ..metrics import evaluate
from ..networks.spec import machine as build_machine
from ..registry import map as run_mapper
from ..timemodel import predict
from .common import add_placement_arguments, job, load_pattern, print_mapping
from .time_args import add_time_arguments, time_model


def run(args: argparse.Namespace) -> int:
    model = time_model(args)
    if args.mapping:       # PEs anywhere on the machine: no allocation to make
        pat, where, mp = load_pattern(args.pattern), build_machine(args.machine), io.read_mapping(args.mapping)
    else:
        pat, where = job(args)
        mp = run_mapper(pat, where, method=args.method, seed=args.seed, capacity=args.capacity)
    values = evaluate(pat, where, mp).to_dict()
    if model is not None:
        t = predict(pat, where, mp, model, sync=args.sync, iterations=args.iterations, method=args.time_method,
                    bytes_scale=args.bytes_scale)
        values.update(predicted_time=t.makespan, predicted_bottleneck_link=int(t.bottleneck[0]),
                      predicted_bottleneck_time=float(t.bottleneck_time[0]))
    print_mapping(values, args.json)
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="metrics of a mapping", description="Evaluate a placement: pattern "
                       "(file or generator spec) on a machine, mapped by a method or read from a mapping file.")
    add_placement_arguments(p, with_json=True)
    p.add_argument("--method", default="block", help="mapper to run when no --mapping is given (default block)")
    p.add_argument("--mapping", help="mapping file: one PE id per line (the allocation options are then unused)")
    add_time_arguments(p)
    p.set_defaults(func=run)
