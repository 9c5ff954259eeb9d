"""One registry of mappers: ``topomap.map`` runs any of them by name."""

from __future__ import annotations

import html
import math
import textwrap
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .errors import MappingError
from .machine import Allocation
from .mapping import Mapping, check_mapping
from .metrics import as_pattern
from .pattern import Pattern

__all__ = ["register", "map", "methods", "MapperInfo", "MethodTable", "auto_capacity"]


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


class MethodTable(dict):
    """``{name: MapperInfo}`` that shows itself as a table (text, and HTML in Jupyter)."""

    def rows(self) -> list[tuple[str, str, str]]:
        """(method, options, summary) per mapper."""
        return [(name, ", ".join(info.options) or "-", info.summary) for name, info in self.items()]

    def __repr__(self) -> str:
        rows = self.rows()
        w0 = max(len("method"), *(len(r[0]) for r in rows)) if rows else 6
        w1 = min(40, max(len("options"), *(len(r[1]) for r in rows))) if rows else 7
        lines = [f"{'method'.ljust(w0)}  {'options'.ljust(w1)}  summary"]
        for name, opts, summary in rows:
            opt_lines = textwrap.wrap(opts, w1) or [""]
            text_lines = textwrap.wrap(summary, 72)
            for i in range(max(len(opt_lines), len(text_lines))):
                cells = (name if i == 0 else "", opt_lines[i] if i < len(opt_lines) else "",
                         text_lines[i] if i < len(text_lines) else "")
                lines.append(f"{cells[0].ljust(w0)}  {cells[1].ljust(w1)}  {cells[2]}".rstrip())
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        cells = "".join(f"<tr><td><code>{html.escape(n)}</code></td><td>{html.escape(o)}</td>"
                        f"<td style='text-align:left'>{html.escape(s)}</td></tr>" for n, o, s in self.rows())
        return f"<table><tr><th>method</th><th>options</th><th>summary</th></tr>{cells}</table>"


def methods() -> MethodTable:
    """The registered mappers by name: a dict of :class:`MapperInfo` that prints as a table.

    Examples
    --------
    >>> import topomap as tm
    >>> {"block", "cyclic", "random", "ptram"} <= set(tm.methods())
    True
    >>> repr(tm.methods()).splitlines()[0].split()       # one row per mapper below this header
    ['method', 'options', 'summary']
    """
    return MethodTable(sorted(_REGISTRY.items()))


def auto_capacity(n: int, npes: int, imbalance: float = 0.0) -> int:
    """The smallest capacity at which ``n`` processes fit on ``npes`` PEs, widened by ``imbalance``.

    ``max(k, floor((1 + imbalance) * k))`` with ``k = ceil(n / npes)``: the
    bound KaHIP's and CHSZLabLib's ``process_map`` put on a block for an
    epsilon, so a partition-style mapper may load a PE up to that much more
    than the average, and never less than what fits.

    Examples
    --------
    >>> auto_capacity(32768, 256), auto_capacity(32768, 256, imbalance=0.03), auto_capacity(100, 100, 0.03)
    (128, 131, 1)
    """
    if npes < 1:
        raise MappingError(f"no PE to place {n} processes on")
    if not math.isfinite(imbalance) or imbalance < 0:
        raise MappingError(f"imbalance = {imbalance!r} must be a finite number >= 0")
    k = max(1, -(-int(n) // int(npes)))
    return max(k, math.floor((1.0 + imbalance) * k))


def map(pattern: Any, allocation: Allocation, method: str = "auto", seed: int = 0, capacity: "int | str" = 1,
        progress: Callable[[float], Any] | None = None, **options: Any) -> Mapping:
    """Map the processes of ``pattern`` onto the PEs of ``allocation``.

    Parameters
    ----------
    pattern : Pattern or array-like
        The communication pattern (n processes).
    allocation : Allocation
        The PEs of the job, in launcher order.
    method : str
        A registered mapper (see :func:`methods`).  The default ``"auto"``
        runs a small portfolio chosen by machine kind and size, always with
        ``block`` (the allocation order), and keeps the best on its
        ``objective`` option (hop-bytes unless named): never worse than
        the launcher's order (:mod:`topomap.mappers.auto`).
    seed : int
        Seed for mappers that use randomness; same seed, same mapping.
    capacity : int or "auto"
        Most processes per PE (n-to-1 mapping when > 1).  ``"auto"`` is the
        smallest that fits, ``ceil(n / len(allocation))``, widened for a
        method with an ``imbalance`` option (hierarchy, scotch) to
        ``floor((1 + imbalance) * ceil(n / len(allocation)))`` so that its
        partitioner may use that tolerance (:func:`auto_capacity`); the
        value used is ``Mapping.capacity``.
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
    >>> tm.map(tm.generators.stencil_2d((32, 32)), alloc, capacity="auto").capacity       # 1024 on 64 PEs
    16
    >>> two_level = tm.machine("hierarchy:4:4/1:10").allocate(16)
    >>> tm.map(tm.generators.stencil_2d((32, 32)), two_level, method="hierarchy", capacity="auto").capacity
    65
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
    pat: Pattern = as_pattern(pattern)
    opts = {k: d for k, (d, _) in info.options.items()}
    opts.update(options)
    if isinstance(capacity, str) and capacity == "auto":
        eps = opts.get("imbalance", 0.0)
        capacity = auto_capacity(pat.n, len(allocation), float(eps) if isinstance(eps, (int, float)) else 0.0)
    if not isinstance(capacity, (int, np.integer)) or isinstance(capacity, bool) or capacity < 1:
        raise MappingError(f"capacity must be a positive integer or 'auto', got {capacity!r}")
    if pat.n > len(allocation) * capacity:
        raise MappingError(f"{pat.n} processes do not fit on {len(allocation)} PEs with capacity {capacity} "
                           f"(capacity='auto' takes the smallest that fits)")
    t0 = time.perf_counter()
    if progress is not None and not callable(progress):
        raise MappingError(f"progress must be callable or None, got {type(progress).__name__}")
    out = info.func(pat, allocation, seed=int(seed), capacity=int(capacity), progress=progress, **opts)
    if isinstance(out, Mapping):  # a portfolio (auto) also reports what it chose: kept with the options
        opts.update(out.options)
        out = out.pe_of
    pe_of = np.asarray(out)
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

