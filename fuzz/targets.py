"""The fuzz targets: one function per input surface, taking the fuzzer's bytes.

A target hands its input to one reader or parser.  The rule it checks (issue
19): bad input may only raise :class:`topomap.TopomapError` or ``ValueError``
(a clear message); any other exception, ``MemoryError`` included, escapes
:func:`run_one` and is a finding.  Memory and time per input are bounded by
the fuzzer (``-rss_limit_mb``, ``-timeout``) in ``fuzz/run.py``, and by
RLIMIT_AS in the corpus replay test.

File readers get the bytes as a file with the extension that selects the
format, written to one scratch directory per process.  Spec strings that name
other files (``xml:PATH``, ``file:PATH``) or the host (``discover``) are not
passed on: a fuzzer must not read arbitrary files of the machine it runs on.

Building a machine within the documented limits can take many seconds
(:data:`topomap.networks.limits.MAX_ROUTE_WORK` admits ~25 s of table
building on one core).  :func:`lower_limits` therefore lowers the table limits so
that every input within them finishes far inside the per-input timeout: the
checks run the same code, and a slow input is then a finding, not a large
valid machine.

This module imports topomap only inside :func:`targets`, so that ``run.py``
can instrument topomap's bytecode before the first import.
"""

from __future__ import annotations

import os
import tempfile
from typing import Callable

Target = Callable[[bytes], object]

# Input size a target accepts; libFuzzer's -max_len is set to it too.
MAX_INPUT = 16384
_SCRATCH: list[str] = []


# The topomap modules (and their submodules) each target's input reaches.
# run.py instruments only these: instrumenting all of topomap takes ~9 s per
# process, more than a CI run fuzzes each target, and coverage of unrelated
# modules would not steer the fuzzer anyway.
_READERS = ("topomap.io", "topomap.pattern")
_MACHINES = ("topomap.machine", "topomap.networks", "topomap.node", "topomap.fabric", "topomap._rng")
SURFACES: dict[str, tuple[str, ...]] = {
    **{name: _READERS for name in ("pattern_csv", "pattern_matrixmarket", "pattern_metis", "pattern_scotch",
                                    "pattern_dense_text", "pattern_dense_npy", "pattern_tmprof", "pattern_ompi",
                                    "pattern_dumpi")},
    "mapping_file": ("topomap.io", "topomap.mapping"),
    "machine_spec": _MACHINES,
    **{name: _MACHINES for name in ("fabric_slurm", "fabric_ibnetdiscover", "fabric_json", "fabric_routes")},
    "node_hwloc_xml": ("topomap.node",),
    "node_synthetic": ("topomap.node",),
}


def in_surface(module: str, surface: tuple[str, ...]) -> bool:
    """Whether `module` is one of `surface`'s modules or inside one of its packages."""
    return any(module == s or module.startswith(s + ".") for s in surface)


def _scratch(name: str, data: bytes) -> str:
    if not _SCRATCH:
        base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        _SCRATCH.append(tempfile.mkdtemp(prefix="topomap-fuzz-", dir=base))
    path = os.path.join(_SCRATCH[0], name)
    with open(path, "wb") as fh:
        fh.write(data)
    return path


def _text(data: bytes) -> str:
    # Spec strings are str: undecodable bytes become U+FFFD rather than ending the run.
    return data.decode("utf-8", errors="replace")


def lower_limits() -> None:
    """The fuzzing process's table limits (see the module docstring); for a child process only."""
    from topomap.networks import limits

    limits.MAX_ROUTE_WORK = 2**26    # ~0.2 s of table building on one core, uninstrumented
    limits.MAX_TABLE_BYTES = 2**24   # so file: specs read at most 4096 nodes


def targets() -> dict[str, Target]:
    """Every target by name (see the module docstring)."""
    import topomap as tm
    from topomap import fabric, io
    from topomap.node.nodetree import NodeTree

    def pattern(ext: str) -> Target:
        return lambda data: io.read(_scratch("input" + ext, data))

    def machine_spec(data: bytes) -> object:
        spec = _text(data)
        kind = spec.strip().partition(":")[0].partition("/")[0].strip().lower()
        if kind in ("xml", "file", "discover"):
            return None
        return tm.machine(spec)

    def fabric_file(name: str, fmt: str) -> Target:
        # through the file: spec, as users give fabrics, so its size limits apply
        return lambda data: tm.machine(f"file:{_scratch(name, data)},format={fmt}")

    route_fabric = fabric.parse_slurm("SwitchName=s0 Nodes=n[0-3]\nSwitchName=s1 Nodes=n[4-7]\n"
                                      "SwitchName=top Switches=s[0-1]\n")

    return {
        "pattern_csv": pattern(".csv"),
        "pattern_matrixmarket": pattern(".mtx"),
        "pattern_metis": pattern(".graph"),
        "pattern_scotch": pattern(".grf"),
        "pattern_dense_text": pattern(".mat"),
        "pattern_dense_npy": pattern(".npy"),
        "pattern_tmprof": pattern(".tmprof"),
        "pattern_ompi": pattern(".prof"),
        "pattern_dumpi": pattern(".dumpi.txt"),
        "mapping_file": lambda data: io.read_mapping(_scratch("mapping.txt", data)),
        "machine_spec": machine_spec,
        "fabric_slurm": fabric_file("topology.conf", "slurm"),
        "fabric_ibnetdiscover": fabric_file("fabric.ibnd", "ibnetdiscover"),
        "fabric_json": fabric_file("fabric.json", "json"),
        "fabric_routes": lambda data: fabric.read_routes(_scratch("routes.txt", data), route_fabric),
        "node_hwloc_xml": lambda data: NodeTree.from_hwloc_xml(_scratch("topo.xml", data)),
        "node_synthetic": lambda data: NodeTree.from_synthetic(_text(data)),
    }


def run_one(target: Target, data: bytes) -> None:
    """Run one input; the exceptions bad input may raise are swallowed, any other escapes."""
    import topomap as tm

    if len(data) > MAX_INPUT:
        return
    try:
        target(data)
    except (tm.TopomapError, ValueError):
        pass
