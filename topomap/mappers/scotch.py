"""Scotch's static mapper as a topomap method: Debian's ``scotch_gmap``.

Scotch (Pellegrini; dual recursive bipartitioning, notes/anchors.md §1.5)
maps a source graph onto a target architecture.  This method writes the
pattern and the allocation's target to a temporary directory, runs
``scotch_gmap`` (``gmap`` where Scotch is installed under its own name) with
a timeout, and reads the mapping back.

* Source graph: ``C + C^T`` (Scotch graphs are undirected; the weight of
  ``{p, q}`` is the traffic of both directions, so Scotch's objective, the
  sum of edge weight x target distance, is J as :attr:`Metrics.qap` counts
  it).  Weights must be integers: integral weights summing below 2^31 go
  unchanged, others are scaled to sum to about 2^30 and rounded (at least 1).
* Target, from :mod:`topomap.export.scotch`: the differenced ``tleaf`` for
  hierarchy and node-tree machines (terminals = PEs), ``torus``/``mesh``
  targets for tori and meshes (terminals = nodes), otherwise the network as a
  ``deco`` graph target built by ``amk_grf`` over the allocation's nodes.
  An allocation that covers only part of a ``tleaf`` or torus is a ``sub``
  target listing its terminals (Scotch numbers the mapped terminals by their
  position in that list).
* Back to PEs: a process mapped to a node takes the node's allocated PEs in
  process order, ``capacity`` each.  Scotch balances load only within its
  imbalance, so a PE (or node) that ends up with more processes than its
  capacity gives its last processes, one at a time, to the free slot nearest
  to it (machine distance from the PE, or the node's first allocated PE;
  ties to the allocation's order).
* Determinism: ``-Cd`` (Scotch's deterministic mode with its fixed seed);
  the ``seed`` argument is not passed to Scotch.
"""

from __future__ import annotations

import math
import numbers
import os
import shutil
import subprocess
import tempfile
import time
from typing import Any, Callable

import numpy as np

from ..errors import Cancelled, MachineError, MappingError, NotApplicable
from ..export import scotch as export
from ..io.scotch_grf import write_scotch_grf
from ..machine import Allocation
from ..pattern import Pattern
from ..partition import _metis_ints
from ..registry import register

__all__ = ["scotch", "gmap_program", "target"]

_POLL = 0.02  # seconds between progress calls while gmap runs


def gmap_program() -> str | None:
    """Path of Scotch's mapping program (``scotch_gmap`` on Debian, else ``gmap``), or None."""
    return shutil.which("scotch_gmap") or shutil.which("gmap")


def _write_source_graph(pattern: Pattern, path: str) -> None:
    """The pattern as a Scotch ``.grf`` with integer edge loads of ``C + C^T``."""
    sym = pattern.symmetric()
    loads = _metis_ints(sym.bytes, 1).astype(np.float64) if sym.nnz else sym.bytes
    write_scotch_grf(Pattern.from_edges(sym.senders(), sym.indices, loads, n=sym.n), path)


def target(allocation: Allocation, workdir: str, amk_grf: str | None = None) -> tuple[str, np.ndarray, str]:
    """The Scotch target of an allocation: ``(target text, terminals, kind)``.

    ``terminals[j]`` is the PE (``kind == "pe"``) or node (``"node"``) that
    Scotch's terminal ``j`` stands for; on graph targets (``"node-label"``,
    built with ``amk_grf`` in ``workdir``) gmap names terminals by their
    vertex label, the node id itself, and ``terminals`` lists the nodes.

    Examples
    --------
    >>> import tempfile, topomap as tm
    >>> alloc = tm.machine("hierarchy:2:2/1:10").allocate(3)
    >>> text, terms, kind = target(alloc, tempfile.mkdtemp())
    >>> text, terms.tolist(), kind
    ('sub 3 0 1 2 tleaf 2 2 9 2 1\\n', [0, 1, 2], 'pe')
    """
    m = allocation.machine
    kind = m.network.kind
    text = None
    if kind in ("single", "tree"):
        try:
            text, terms, unit = export.tleaf(m), np.sort(allocation.pes), "pe"
            full = terms.size == m.npes
        except MachineError:
            text = None
    elif kind == "torus":
        try:
            text, terms, unit = export.torus(m), np.sort(allocation.nodes()), "node"
            full = terms.size == m.nnodes
        except MachineError:
            text = None
    if text is not None:
        if not full:
            text = f"sub {terms.size} {' '.join(map(str, terms.tolist()))} {text}"
        return text, terms, unit
    exe = amk_grf or shutil.which("amk_grf")
    if exe is None:
        raise NotApplicable(f"scotch: {m.spec!r} needs a graph target built by Scotch's amk_grf, which is not "
                           "installed (Debian/Ubuntu: apt-get install scotch)")
    nodes = np.sort(allocation.nodes())
    grf, lst, tgt = (os.path.join(workdir, f) for f in ("net.grf", "net.vl", "net.tgt"))
    with open(grf, "w") as fh:
        fh.write(export.grf(m))
    with open(lst, "w") as fh:
        fh.write(f"{nodes.size}\n{' '.join(map(str, nodes.tolist()))}\n")
    res = subprocess.run([exe, f"-l{lst}", grf, tgt], capture_output=True, text=True)
    if res.returncode:
        raise MappingError(f"scotch: amk_grf failed on {m.spec!r}: {res.stderr.strip()}")
    with open(tgt) as fh:
        return fh.read(), nodes, "node-label"


def _run(argv: list[str], timeout: float, progress: Callable[[float], Any] | None) -> None:
    """Run gmap; progress gets the fraction of the timeout used, True cancels."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    start = time.monotonic()
    try:
        while True:
            try:
                _, err = proc.communicate(timeout=_POLL)
                break
            except subprocess.TimeoutExpired:
                used = time.monotonic() - start
                if used > timeout:
                    raise MappingError(f"scotch: {os.path.basename(argv[0])} did not finish within the timeout "
                                       f"of {timeout:g} s") from None
                fraction = min(used / timeout, 1.0)
                if progress is not None and progress(fraction):
                    raise Cancelled.by_progress("scotch", fraction)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    # gmap 7.0.3 reports a bad strategy string on stderr but exits with 0
    if proc.returncode or "ERROR" in err:
        raise MappingError(f"scotch: {os.path.basename(argv[0])} failed (exit {proc.returncode}): {err.strip()}")


def _read_map(path: str, n: int, terms: np.ndarray, labelled: bool) -> np.ndarray:
    """Index into ``terms`` of every process's terminal in gmap's output."""
    try:
        with open(path) as fh:
            fields = np.array(fh.read().split(), dtype=np.int64)
    except (OSError, ValueError) as exc:
        raise MappingError(f"scotch: cannot read gmap's mapping file: {exc}") from None
    if fields.size != 1 + 2 * n or fields[0] != n:
        raise MappingError(f"scotch: gmap's mapping file has {fields[:1].tolist()} entries, expected {n}")
    pairs = fields[1:].reshape(n, 2)
    term = np.full(n, -1, dtype=np.int64)
    term[pairs[:, 0]] = pairs[:, 1]
    if labelled:   # vertex labels: node ids, in increasing order in terms
        at = np.searchsorted(terms, term).clip(0, terms.size - 1)
        term = np.where(terms[at] == term, at, -1)
    if term.min() < 0 or term.max() >= terms.size:
        raise MappingError(f"scotch: gmap mapped a process outside the {terms.size} terminals")
    return term


def _to_pes(allocation: Allocation, term: np.ndarray, terms: np.ndarray, unit: str, capacity: int) -> np.ndarray:
    """PE of every process from its terminal, within the capacities."""
    m = allocation.machine
    pes = allocation.pes.astype(np.int64)
    n = term.size
    if unit == "pe":
        want = home = terms[term]
    else:  # a node's processes take its allocated PEs in allocation order, `capacity` each
        want = np.full(n, -1, dtype=np.int64)
        home = np.empty(n, dtype=np.int64)
        node_of = pes // m.pes_per_node
        wanted = terms[term]
        for node in np.unique(wanted):
            procs = np.flatnonzero(wanted == node)
            slots = np.repeat(pes[node_of == node], capacity)
            take = min(procs.size, slots.size)
            want[procs[:take]] = slots[:take]
            home[procs] = slots[0]
    sorter = np.argsort(pes, kind="stable")
    at = np.searchsorted(pes, want, sorter=sorter).clip(0, pes.size - 1)
    idx = np.where(want >= 0, sorter[at], -1)
    # the first `capacity` processes of each PE (in process order) stay
    order = np.lexsort((np.arange(n), idx))
    first = np.searchsorted(idx[order], idx[order], side="left")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - first
    keep = (idx >= 0) & (rank < capacity)
    load = np.bincount(idx[keep], minlength=pes.size)
    pe_of = np.where(keep, want, -1)
    for i in np.flatnonzero(~keep).tolist():   # the rest: to the free slot nearest to where Scotch put them
        free = np.flatnonzero(load < capacity)
        j = int(free[np.argmin(m.distance(np.full(free.size, home[i]), pes[free]))])
        pe_of[i] = pes[j]
        load[j] += 1
    return pe_of.astype(np.int32)


def _check(strategy: Any, imbalance: Any, timeout: Any) -> None:
    if not isinstance(strategy, str) or any(ch.isspace() for ch in strategy):
        raise MappingError(f"scotch option strategy = {strategy!r} must be a Scotch strategy string without spaces "
                           "('' = Scotch's default)")
    for name, value, low in (("imbalance", imbalance, 0.0), ("timeout", timeout, None)):
        if (not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)) or not math.isfinite(value)
                or (value < 0 if low is not None else value <= 0)):
            raise MappingError(f"scotch option {name} = {value!r} must be a finite number "
                               f"{'>= 0' if low is not None else '> 0'}")


@register("scotch", "Scotch's static mapping (Debian scotch_gmap) onto the allocation's tleaf, torus or graph target",
          options={
              "strategy": ("", "Scotch mapping strategy string (gmap -m); '' = Scotch's default"),
              "imbalance": (0.03, "load imbalance tolerance (gmap -b; unused with a strategy, which sets its own)"),
              "timeout": (600.0, "seconds before gmap is stopped and the call fails"),
          },
          source="Scotch 7 (Pellegrini), dual recursive bipartitioning; notes/anchors.md §1.5", c_file="")
def scotch(pattern: Pattern, allocation: Allocation, *, seed: int, capacity: int,
           progress: Callable[[float], Any] | None, strategy: str, imbalance: float, timeout: float) -> np.ndarray:
    """Scotch's mapping: ``pe_of`` for ``pattern`` on ``allocation``.

    Parameters
    ----------
    pattern : Pattern
    allocation : Allocation
        Any machine: a ``tleaf`` for hierarchies, a torus/mesh target, or
        the network graph through ``amk_grf``.
    seed, capacity, progress
        As for :func:`topomap.map`; Scotch runs in its deterministic mode
        (``seed`` is not passed on).  ``progress`` is called with the share
        of the timeout used; returning True stops gmap (:class:`~topomap.Cancelled`).
    strategy : str
        A Scotch strategy string (``gmap -m``), ``''`` for the default.
    imbalance : float
        Scotch's load imbalance tolerance (``gmap -b``); a ``strategy``
        sets its own (gmap takes only one of the two).
    timeout : float
        Seconds gmap may run.

    Returns
    -------
    numpy.ndarray
        int32 PE of every process.

    Raises
    ------
    NotApplicable
        When Scotch is not installed (the message names the Debian package).
    MappingError
        When Scotch fails or runs out of time; on an option out of range.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.mappers.scotch import gmap_program
    >>> alloc = tm.machine("hierarchy:4:2:2/1:10:100").allocate(16)
    >>> pat = tm.generators.stencil_2d((4, 4))
    >>> if gmap_program():
    ...     pe_of = tm.map(pat, alloc, method="scotch").pe_of
    ...     assert sorted(pe_of.tolist()) == list(range(16))
    """
    _check(strategy, imbalance, timeout)
    exe = gmap_program()
    if exe is None:
        raise NotApplicable("method 'scotch' runs Scotch's gmap program, which is not installed "
                           "(Debian/Ubuntu: apt-get install scotch)")
    with tempfile.TemporaryDirectory(prefix="topomap-scotch-") as d:
        text, terms, unit = target(allocation, d)
        src, tgt, out = (os.path.join(d, f) for f in ("pattern.grf", "target.tgt", "out.map"))
        _write_source_graph(pattern, src)
        with open(tgt, "w") as fh:
            fh.write(text)
        # gmap refuses -b next to -m: a strategy string carries its own balance
        argv = [exe, "-Cd", f"-m{strategy}" if strategy else f"-b{float(imbalance):g}", src, tgt, out]
        _run(argv, float(timeout), progress)
        term = _read_map(out, pattern.n, terms, unit == "node-label")
    return _to_pes(allocation, term, terms, "pe" if unit == "pe" else "node", capacity)
