"""One registry of mappers: ``topomap.map`` runs any of them by name."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .errors import MappingError
from .machine import Allocation
from .mapping import Mapping, check_mapping
from .metrics import as_pattern
from .pattern import Pattern

__all__ = ["register", "map", "methods", "MapperInfo"]


@dataclass(frozen=True)
class MapperInfo:
    """A registered mapper: its function, what it does and its options."""

    name: str
    func: Callable[..., np.ndarray]
    summary: str
    options: dict = field(default_factory=dict)  # name -> (default, description)
    source: str = ""
    c_file: str = ""  # the csrc/core file that implements it; "" for a mapper without C code

    def to_dict(self) -> dict:
        return {"name": self.name, "summary": self.summary, "source": self.source,
                "options": {k: {"default": d, "doc": doc} for k, (d, doc) in self.options.items()}}


_REGISTRY: dict[str, MapperInfo] = {}


def register(name: str, summary: str, options: dict | None = None, source: str = "",
             c_file: str | None = None) -> Callable:
    """Decorator: register ``func(pattern, allocation, *, seed, capacity, progress, **options) -> pe_of``.

    ``c_file`` names the file of ``csrc/core`` that implements the mapper
    (its header comment, the choices the paper leaves open, goes on the
    mapper's documentation page); by default ``map_<name>.c`` with dashes
    as underscores, ``""`` for a mapper without C code.

    ``progress`` is None or a callable of the fraction done (0..1) that a
    long-running mapper calls now and then (from C with the GIL taken back).
    Every mapper follows one rule: when it returns something true the mapper
    stops with :class:`~topomap.Cancelled`; when it raises, its exception
    propagates unchanged; Ctrl-C stops C mappers with KeyboardInterrupt.
    Passing ``progress`` on to a ``topomap._core`` mapper gives all three;
    a mapper that loops in Python raises ``Cancelled.by_progress(name,
    fraction)`` itself.
    """
    def deco(func: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
        if name in _REGISTRY:
            raise ValueError(f"mapper {name!r} is registered twice")
        c = f"map_{name.replace('-', '_')}.c" if c_file is None else c_file
        _REGISTRY[name] = MapperInfo(name, func, summary, dict(options or {}), source, c)
        return func
    return deco


def methods() -> dict[str, MapperInfo]:
    """The registered mappers by name.

    Examples
    --------
    >>> import topomap as tm
    >>> {"block", "cyclic", "random", "ptram"} <= set(tm.methods())
    True
    """
    return dict(sorted(_REGISTRY.items()))


def map(pattern: Any, allocation: Allocation, method: str = "block", seed: int = 0, capacity: int = 1,
        progress: Callable[[float], Any] | None = None, **options: Any) -> Mapping:
    """Map the processes of ``pattern`` onto the PEs of ``allocation``.

    Parameters
    ----------
    pattern : Pattern or array-like
        The communication pattern (n processes).
    allocation : Allocation
        The PEs of the job, in launcher order.
    method : str
        A registered mapper (see :func:`methods`).
    seed : int
        Seed for mappers that use randomness; same seed, same mapping.
    capacity : int
        Most processes per PE (n-to-1 mapping when > 1).
    progress : callable, optional
        Called with the fraction done (0..1) by mappers that run long.  If
        it returns something true, the mapping stops and :class:`Cancelled`
        is raised ("ptram cancelled by the progress callback at 42%"); an
        exception it raises propagates unchanged; Ctrl-C raises
        KeyboardInterrupt.  Either way nothing is left behind: the next
        call gives the same mapping.
    **options
        Mapper options (see ``methods()[method].options``).

    Raises
    ------
    Cancelled
        When ``progress`` asked to stop.
    MappingError
        On an unknown method or option, or processes that do not fit.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("torus:4x4/4").allocate(64)
    >>> tm.map(tm.generators.stencil_2d((8, 8)), alloc, method="random", seed=3).n
    64
    >>> tm.map(tm.generators.stencil_2d((8, 8)), alloc, method="greedy", progress=lambda f: f >= 0.5)
    Traceback (most recent call last):
    ...
    topomap.errors.Cancelled: greedy cancelled by the progress callback at 50%
    """
    if method not in _REGISTRY:
        raise MappingError(f"unknown mapping method {method!r}; registered: {', '.join(sorted(_REGISTRY))}")
    info = _REGISTRY[method]
    unknown = set(options) - set(info.options)
    if unknown:
        raise MappingError(f"method {method!r} has no option {sorted(unknown)[0]!r}; "
                           f"its options: {', '.join(info.options) or 'none'}")
    if not isinstance(allocation, Allocation):
        raise MappingError(f"map needs an Allocation (machine.allocate(...)), got {type(allocation).__name__}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or not 0 <= seed < 2**64:
        raise MappingError(f"seed must be an integer in [0, 2**64), got {seed!r}")
    if not isinstance(capacity, (int, np.integer)) or isinstance(capacity, bool) or capacity < 1:
        raise MappingError(f"capacity must be a positive integer, got {capacity!r}")
    pat: Pattern = as_pattern(pattern)
    if pat.n > len(allocation) * capacity:
        raise MappingError(f"{pat.n} processes do not fit on {len(allocation)} PEs with capacity {capacity}")
    opts = {k: d for k, (d, _) in info.options.items()}
    opts.update(options)
    t0 = time.perf_counter()
    if progress is not None and not callable(progress):
        raise MappingError(f"progress must be callable or None, got {type(progress).__name__}")
    pe_of = np.asarray(info.func(pat, allocation, seed=int(seed), capacity=int(capacity), progress=progress, **opts))
    seconds = time.perf_counter() - t0
    check_mapping(pe_of, pat.n, allocation, capacity)
    return Mapping(pe_of, method=method, seed=int(seed), seconds=seconds, options=opts, capacity=int(capacity))


def describe(info: MapperInfo) -> str:
    """One paragraph of help for ``topomap methods``."""
    lines = [f"{info.name}: {info.summary}"]
    if info.source:
        lines.append(f"  source: {info.source}")
    for k, (d, doc) in info.options.items():
        lines.append(f"  {k} (default {d!r}): {doc}")
    if not info.options:
        lines.append("  no options")
    return "\n".join(lines)

