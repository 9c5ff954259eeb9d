"""One way every benchmark records its run: the rows plus what is needed to compare runs."""

from __future__ import annotations

import json
import os
import platform
from typing import Any

import numpy as np

import topomap as tm
from topomap.io.atomic import atomic_write


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo on Linux), else the platform's processor string.

    Why: a CPU-time ratio against another program (topdown against scotch_gmap) moves with
    the CPU, so each run names the one it was measured on.
    """
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def write(path: str, name: str, rows: list, **extra: Any) -> None:
    """Write ``rows`` with the machine, CPU model and count and versions as JSON to ``path``."""
    info = {"benchmark": name, "machine": platform.machine(), "cpu_model": cpu_model(), "cpus": os.cpu_count(),
            "python": platform.python_version(), "topomap": tm.__version__, "numpy": np.__version__,
            **extra, "rows": rows}
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with atomic_write(path) as fh:
        json.dump(info, fh, indent=2, default=str)
    print(f"wrote {path}")
