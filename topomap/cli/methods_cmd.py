"""``topomap methods``: the registered mappers and their options."""

from __future__ import annotations

import argparse
import json

from ..registry import describe, methods


def run(args: argparse.Namespace) -> int:
    reg = methods()
    if args.json:
        print(json.dumps({k: v.to_dict() for k, v in reg.items()}, indent=2))
    else:
        print("\n\n".join(describe(info) for info in reg.values()))
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("methods", help="list the registered mappers and their options")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)
