"""The ``topomap`` command line.

Each command is a module here with ``add(subparsers)``, which creates its
parser and sets ``func``; :data:`COMMANDS` lists them in help order.  Every
command accepts patterns as files (see ``topomap.io``) or generator specs (see
``topomap.patterns.generators``) and machines as spec strings (see ``topomap.networks.spec``).
The rule at this boundary: an error the user can cause (a malformed file, a
bad spec, a pattern too large for a metric) is a :class:`~topomap.TopomapError`
raised where it arises, naming the file and line; it exits with status 2 and
one line on stderr.  Any other exception is a bug in topomap and keeps its
traceback (so that fuzzing finds it).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from ..errors import TopomapError
from . import demo, eval_cmd, export_cmd, features_cmd, machine_cmd, methods_cmd

COMMANDS = [demo, eval_cmd, methods_cmd, machine_cmd, export_cmd, features_cmd]
from . import pattern_cmd, profile_cmd  # noqa: E402
COMMANDS += [pattern_cmd, profile_cmd]
from . import convert_cmd  # noqa: E402
COMMANDS += [convert_cmd]
from . import experiment_cmd  # noqa: E402
COMMANDS += [experiment_cmd]
from . import compare_cmd, map_cmd  # noqa: E402
COMMANDS += [map_cmd, compare_cmd]
from . import launch_cmd  # noqa: E402
COMMANDS += [launch_cmd]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="topomap", description="Topology-aware process mapping for HPC.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        module.add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except TopomapError as exc:
        one_line = " ".join(part.strip() for part in str(exc).splitlines())
        print(f"topomap {args.command}: error: {one_line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"topomap {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader (e.g. `| head`) went away: stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
