"""Peak memory a step adds, for the benchmarks: the kernel's peak resident set
(VmHWM) is reset through /proc/self/clear_refs just before the step and
compared with the resident set at that moment."""

from __future__ import annotations

import time
from typing import Any, Callable


def status_kb(field: str) -> int:
    """A ``/proc/self/status`` field in kB."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def reset_peak() -> int:
    """Reset VmHWM to the current resident set; returns that resident set in kB."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    return status_kb("VmRSS")


def measure(fn: Callable[[], Any], repeat: int = 1) -> tuple[Any, float, float]:
    """(result, best seconds, extra peak MB) of ``fn()`` over ``repeat`` runs."""
    best, extra_kb, out = float("inf"), 0, None
    for _ in range(repeat):
        out = None  # the previous result must not stay alive during the next run
        before = reset_peak()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
        extra_kb = max(extra_kb, status_kb("VmHWM") - before)
    return out, best, extra_kb / 1024
