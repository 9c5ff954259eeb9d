"""The time model's command-line options, shared by ``eval`` and ``compare``."""

from __future__ import annotations

import argparse
import math

from ..errors import TimeModelError
from ..timemodel import METHODS, SYNCS, TimeModel


def add_time_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("predicted time (topomap.timemodel)")
    g.add_argument("--time", action="store_true",
                   help="also predict the communication time in seconds (max-min fair flow simulation)")
    g.add_argument("--bytes-scale", type=float, default=1.0, metavar="X",
                   help="multiply every message's bytes by X for the prediction (default 1)")
    g.add_argument("--time-model", metavar="JSON",
                   help="time model file (TimeModel.to_json() layout; default: the documented defaults)")
    g.add_argument("--time-method", choices=METHODS, default="flow",
                   help="flow (max-min sharing, default), hockney (no congestion) or loggp")
    g.add_argument("--sync", choices=SYNCS, default="barrier", help="how iterations follow each other")
    g.add_argument("--iterations", type=int, default=1, help="repeat the pattern this many times (default 1)")


def time_model(args: argparse.Namespace) -> TimeModel | None:
    """The model the options ask for, or None without ``--time``."""
    if not args.time:
        if args.time_model or args.bytes_scale != 1.0:
            raise TimeModelError("--time-model and --bytes-scale need --time")
        return None
    if not math.isfinite(args.bytes_scale) or args.bytes_scale <= 0:
        raise TimeModelError(f"--bytes-scale must be a positive finite number, got {args.bytes_scale}")
    return TimeModel.from_json(args.time_model) if args.time_model else TimeModel.default()
