"""``topomap features``: what this build was compiled with."""

from __future__ import annotations

import argparse
import json


def run(args: argparse.Namespace) -> int:
    from ..features import features

    print(json.dumps(features(), indent=2))
    return 0


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("features", help="what this build was compiled with")
    p.set_defaults(func=run)
