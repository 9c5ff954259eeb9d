"""Find the node tree of the machine this process runs on.

:func:`discover` (behind :meth:`topomap.NodeTree.discover`) tries, in order,
and records the winner as the ``source``:

1. ``"hwloc-library"``: the C core's ``hwloc_topology_xml()`` when it was built
   with libhwloc;
2. ``"lstopo"``: ``lstopo-no-graphics --of xml`` (or ``lstopo``) on ``PATH``;
3. ``"sysfs"``: Linux ``/sys/devices/system/{cpu,node}`` (:func:`read_sysfs`);
4. ``"cpu_count"``: a flat node of ``os.cpu_count()`` PEs.

A method that is available but fails emits a :class:`RuntimeWarning` naming the
reason and the next one is tried.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np

from ..errors import FormatError, MachineError, TopomapError
from .hwloc_xml import read_hwloc_xml
from . import levels as _levels
from .levels import Grouping

__all__ = ["discover", "read_sysfs", "current_binding"]

_LSTOPO_TIMEOUT_S = 30
_CPU_DIR = re.compile(r"cpu([0-9]+)")
_NODE_DIR = re.compile(r"node([0-9]+)")


def _xml_from_core() -> str | None:
    try:
        from .. import _core
    except ImportError:
        return None
    fn = getattr(_core, "hwloc_topology_xml", None)
    features = getattr(_core, "features", None)
    if fn is None or features is None or not features().get("hwloc"):
        return None
    return fn()


def _xml_from_lstopo() -> str | None:
    exe = shutil.which("lstopo-no-graphics") or shutil.which("lstopo")
    if exe is None:
        return None
    done = subprocess.run(
        [exe, "--no-io", "--of", "xml", "-"],
        capture_output=True, text=True, timeout=_LSTOPO_TIMEOUT_S, check=False,
    )
    if done.returncode != 0:
        raise OSError(f"{exe} exited with status {done.returncode}: {done.stderr.strip()[:200]}")
    return done.stdout


def _warn(method: str, err: BaseException) -> None:
    warnings.warn(f"topology discovery via {method} failed: {err}", RuntimeWarning, stacklevel=3)


def discover(pe: str = "pu") -> Grouping:
    """The PEs and levels of this machine, by the first method of the module docstring that
    works; ``pe`` as for :meth:`topomap.NodeTree.discover`, which builds the tree from this.

    Examples
    --------
    >>> discover().source in ("hwloc-library", "lstopo", "sysfs", "cpu_count")
    True
    """
    for label, fetch in (("hwloc-library", _xml_from_core), ("lstopo", _xml_from_lstopo)):
        try:
            xml = fetch()
            if xml is not None:
                return read_hwloc_xml(xml, pe=pe, label=label)
        except (OSError, RuntimeError, subprocess.SubprocessError, TopomapError) as err:
            _warn(label, err)
    if Path("/sys/devices/system/cpu").is_dir():
        try:
            return read_sysfs("/", pe=pe)
        except (OSError, TopomapError) as err:
            _warn("sysfs", err)
    npes = os.cpu_count() or 1
    return Grouping(np.zeros((1, npes), dtype=np.int64), ["Machine"], "PU", None, "cpu_count")


def current_binding() -> list[int]:
    """OS indices of the CPUs this process may run on, ascending.

    Uses ``os.sched_getaffinity(0)``; where that does not exist, every CPU
    ``0..os.cpu_count()-1`` (no binding information means unbound).

    Examples
    --------
    >>> len(current_binding()) >= 1
    True
    """
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def _parse_cpu_list(text: str, where: Path) -> list[int]:
    """Linux cpulist format: ``"0-3,8,10-11"``; empty means none."""
    out: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            raise FormatError(f"{where}: invalid CPU list {text.strip()!r}")
        first, last = int(lo), int(hi or lo)
        if last < first or last - first + len(out) > _levels.MAX_PES:
            raise FormatError(f"{where}: invalid or oversized CPU range {part!r}")
        out.extend(range(first, last + 1))
    return out


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _online_cpus(cpu_root: Path) -> list[int]:
    listed = _read(cpu_root / "online")
    if listed is not None:
        return _parse_cpu_list(listed, cpu_root / "online")
    # Without the summary file, cpuN/online holds "0" for offline CPUs (cpu0 often has none).
    cpus = []
    for entry in cpu_root.iterdir():
        m = _CPU_DIR.fullmatch(entry.name)
        if m and (_read(entry / "online") or "1").strip() != "0":
            cpus.append(int(m.group(1)))
    return sorted(cpus)


def _labels(values: list[object | None]) -> np.ndarray | None:
    """Dense ids of a level's per-CPU keys, or None if any CPU lacks the key."""
    if any(v is None for v in values):
        return None
    ids: dict[object, int] = {}
    return np.asarray([ids.setdefault(v, len(ids)) for v in values], dtype=np.int64)


def read_sysfs(root: str | os.PathLike[str] = "/", pe: str = "pu") -> Grouping:
    """The PEs and levels Linux sysfs describes, restricted to online CPUs.

    Parameters
    ----------
    root : path-like
        Directory holding ``sys/devices/system/cpu`` (``"/"`` for this machine;
        tests point it at a fake tree).
    pe : {"pu", "core"}
        Leaves are logical CPUs or cores (then ``os_index`` is each core's first
        CPU).

    Returns
    -------
    Grouping
        Candidate levels Core, L2Cache, L3Cache, NUMANode, Die and Package are
        taken from ``cpuN/topology/{core_id,die_id,physical_package_id}``,
        ``cpuN/cache/indexM/{level,type,shared_cpu_list}`` (data and unified
        caches) and ``node/nodeN/cpulist``.  A level some online CPU lacks is
        skipped.  Levels are stacked finest first; one that does not nest in the
        level below (e.g. a NUMA node splitting an L3) is skipped.  PEs are
        ordered as hwloc would (by first CPU of each ancestor, top-down), and
        :meth:`~topomap.NodeTree.from_groups` merges redundant levels.  ``source`` is ``"sysfs"``.

    Raises
    ------
    FormatError
        No online CPU, or a malformed CPU list or id file.

    Examples
    --------
    >>> import sys
    >>> sys.platform != "linux" or read_sysfs().groups.shape[1] >= 1
    True
    """
    kind = pe.lower() if isinstance(pe, str) else None
    if kind not in ("pu", "core"):
        raise MachineError(f"pe must be 'pu' or 'core' for sysfs discovery, got {pe!r}")
    base = Path(root) / "sys" / "devices" / "system"
    cpu_root = base / "cpu"
    cpus = _online_cpus(cpu_root)
    if not cpus:
        raise FormatError(f"{cpu_root}: no online CPU found")

    def topo_id(cpu: int, name: str) -> int | None:
        path = cpu_root / f"cpu{cpu}" / "topology" / name
        text = _read(path)
        if text is None:
            return None
        try:
            return int(text.strip())
        except ValueError:
            raise FormatError(f"{path}: expected an integer, got {text.strip()!r}") from None

    def cache_key(cpu: int, level: int) -> object | None:
        cache_dir = cpu_root / f"cpu{cpu}" / "cache"
        for index in sorted(cache_dir.glob("index*")):
            if (_read(index / "level") or "").strip() == str(level) and (
                _read(index / "type") or ""
            ).strip() in ("Data", "Unified"):
                shared = _read(index / "shared_cpu_list")
                if shared is not None:
                    return min(_parse_cpu_list(shared, index / "shared_cpu_list"), default=None)
        return None

    numa_of: dict[int, int] = {}
    node_root = base / "node"
    if node_root.is_dir():
        for entry in node_root.iterdir():
            m = _NODE_DIR.fullmatch(entry.name)
            listed = _read(entry / "cpulist") if m else None
            if listed is not None:
                for cpu in _parse_cpu_list(listed, entry / "cpulist"):
                    numa_of[cpu] = int(m.group(1))

    package = [topo_id(c, "physical_package_id") for c in cpus]
    die = [topo_id(c, "die_id") for c in cpus]
    core_id = [topo_id(c, "core_id") for c in cpus]
    # Most CPUs report die_id 0 everywhere; a Die level only helps when it splits a package.
    split = None not in die + package and len(set(zip(package, die))) > len(set(package))
    dies = die if split else None
    candidates = [
        ("Core", [None if None in (p, k) else (p, d, k) for p, d, k in zip(package, die, core_id)]),
        ("L2Cache", [cache_key(c, 2) for c in cpus]),
        ("L3Cache", [cache_key(c, 3) for c in cpus]),
        ("NUMANode", [numa_of.get(c) for c in cpus]),
        ("Die", [None] if dies is None else list(zip(package, dies))),
        ("Package", package),
    ]
    found = [(name, rows) for name, keys in candidates if (rows := _labels(keys)) is not None]
    # Finest first; a stable sort keeps the usual order among equal sizes.
    found.sort(key=lambda item: -(int(item[1].max()) + 1))
    names: list[str] = []
    rows: list[np.ndarray] = []
    for name, row in found:
        if rows and not _coarsens(row, rows[-1]):
            continue
        names.append(name)
        rows.append(row)
    names.append("Machine")
    rows.append(np.zeros(len(cpus), dtype=np.int64))

    os_index = np.asarray(cpus, dtype=np.int64)
    order = np.lexsort([os_index] + [_first_cpu(r, os_index) for r in rows])
    groups = np.stack(rows)[:, order]
    os_index = os_index[order]
    pe_type = "PU"
    if kind == "core":
        if names[0] != "Core":
            raise FormatError(f"{cpu_root}: core ids are unavailable, cannot use pe='core'")
        _, first = np.unique(groups[0], return_index=True)
        first.sort()
        groups, os_index, names, pe_type = groups[1:, first], os_index[first], names[1:], "Core"
    return Grouping(groups, names, pe_type, os_index, "sysfs")


def _coarsens(upper: np.ndarray, lower: np.ndarray) -> bool:
    parent = np.full(int(lower.max()) + 1, -1, dtype=np.int64)
    parent[lower] = upper
    return bool(np.array_equal(parent[lower], upper))


def _first_cpu(row: np.ndarray, os_index: np.ndarray) -> np.ndarray:
    """Per CPU, the smallest OS index in its group: hwloc orders siblings by cpuset."""
    first = np.full(int(row.max()) + 1, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, row, os_index)
    return first[row]
