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
* Target, from :mod:`topomap.mappers.scotch_target`: the coded target that
  matches the machine (``tleaf`` for hierarchies, trees and fat trees,
  ``torus*``/``mesh*`` for tori and meshes, ``hcub`` for hypercubes; node
  terminals when all allocated nodes are alike, else PE terminals), restricted
  to the allocation by its box or a ``sub`` target, and a ``deco 2`` graph
  target built by ``amk_grf`` only where none fits.  Capacities: a node
  terminal stands for ``capacity`` x its allocated PEs, and Scotch balances
  the process count (unit vertex loads) over terminals of equal weight.
* Back to PEs: a process mapped to a node takes the node's allocated PEs in
  allocation order, ``capacity`` each, processes in process order (the PEs of
  a node whose terminals are nodes are all alike).  Scotch balances load only within its
  imbalance, so a PE (or node) that ends up with more processes than its
  capacity gives its last processes to the free slots nearest to it (machine
  distance from the PE, or the node's first allocated PE; ties to the
  allocation's order), home by home.
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
import warnings
from typing import Any, Callable

import numpy as np

from ..errors import Cancelled, MappingError, NotApplicable
from ..io._format import write_adjacency
from ..io._undirected import is_undirected
from ..machine import Allocation, Machine
from ..pattern import Pattern
from ..registry import register
from .scotch_target import choose

__all__ = ["scotch", "gmap_program", "target"]

_POLL = 0.02  # seconds between progress calls while gmap runs
_WRITE_BLOCK = 1 << 13  # CSR entries of the source graph formatted at a time


def gmap_program() -> str | None:
    """Path of Scotch's mapping program (``scotch_gmap`` on Debian, else ``gmap``), or None."""
    return shutil.which("scotch_gmap") or shutil.which("gmap")


def _integer_loads(w: np.ndarray, factor: float) -> Callable[[int, int], np.ndarray]:
    """Integer edge loads of ``w * factor`` for entries ``lo:hi``, by the rule of
    :func:`topomap.partition._metis_ints` with minimum 1 (integral loads summing below 2^31
    unchanged, others scaled to sum to about 2^30), decided over all entries but computed a
    block at a time, so that no copy of the whole edge list is made."""
    if not w.size:
        return lambda lo, hi: np.zeros(0, dtype=np.int64)
    top = float(w.max()) * factor
    integral, shares = True, 0.0
    for lo in range(0, w.size, _WRITE_BLOCK * 16):
        block = w[lo:lo + _WRITE_BLOCK * 16] * factor
        integral = integral and bool(np.array_equal(block, np.round(block)))
        shares += float((block / top).sum())
    if integral and top < 2**31 and shares * top < 2**31:
        return lambda lo, hi: (w[lo:hi] * factor).astype(np.int64)
    scale = 2**30 / shares
    return lambda lo, hi: np.maximum(np.round(w[lo:hi] * factor / top * scale), 1).astype(np.int64)


def _write_source_graph(pattern: Pattern, path: str) -> None:
    """The pattern as a Scotch ``.grf`` with integer edge loads of ``C + C^T``.

    Why not ``write_scotch_grf(pattern.symmetric())``: an undirected pattern's
    ``C + C^T`` is ``2 C`` on its own CSR, which spares the doubled edge list
    that ``symmetric`` sorts; and the rows go out a block of
    :data:`_WRITE_BLOCK` entries at a time, because the formatter holds a
    Python object per number, which for a whole chunk of 2^20 numbers weighed
    more than gmap itself needs at 10^4 processes.
    """
    undirected = is_undirected(pattern)
    sym = pattern if undirected else pattern.symmetric()
    indptr = sym.indptr.astype(np.int64)
    loads = _integer_loads(sym.bytes, 2.0 if undirected else 1.0)
    with open(path, "w", encoding="ascii") as fh:
        fh.write(f"0\n{sym.n}\t{sym.nnz}\n0\t010\n")
        row = 0
        while row < sym.n:
            stop = min(sym.n, max(row + 1, int(np.searchsorted(indptr, indptr[row] + _WRITE_BLOCK, "right")) - 1))
            lo, hi = indptr[row], indptr[stop]
            rows = indptr[row:stop + 1] - lo
            write_adjacency(fh, rows, [np.diff(rows)], "%d", [loads(lo, hi), sym.indices[lo:hi]], "%d %d", sep="\t")
            row = stop


def target(allocation: Allocation, workdir: str, amk_grf: str | None = None) -> tuple[str, np.ndarray, str]:
    """The Scotch target of an allocation: ``(target text, terminals, unit)``.

    ``terminals[j]`` is the PE (``unit == "pe"``) or node (``"node"``) that
    Scotch's terminal ``j`` stands for; :func:`topomap.mappers.scotch_target.choose`
    says which target each machine gets.

    Examples
    --------
    >>> import tempfile, topomap as tm
    >>> alloc = tm.machine("hierarchy:2:2/1:10").allocate(3)
    >>> text, terms, unit = target(alloc, tempfile.mkdtemp())
    >>> text, terms.tolist(), unit
    ('sub 3 0 1 2 tleaf 2 2 9 2 1\\n', [0, 1, 2], 'pe')
    """
    found = choose(allocation, workdir, amk_grf or shutil.which("amk_grf"))
    return found.text, found.terms, found.unit


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


def _read_map(path: str, n: int, nterms: int, labels: np.ndarray | None = None) -> np.ndarray:
    """Terminal of every process in gmap's output (a count, then ``process terminal`` pairs);
    with ``labels`` (increasing), gmap wrote the terminal's label, translated back to its index."""
    try:
        with warnings.catch_warnings():   # numpy warns, and stops, at a token that is not a number
            warnings.simplefilter("ignore", DeprecationWarning)
            fields = np.fromfile(path, dtype=np.int64, sep=" ")
    except (OSError, ValueError) as exc:
        raise MappingError(f"scotch: cannot read gmap's mapping file: {exc}") from None
    if fields.size != 1 + 2 * n or fields[0] != n:
        raise MappingError(f"scotch: gmap's mapping file holds {fields.size} numbers starting {fields[:1].tolist()}, "
                           f"expected the count {n} and {n} pairs")
    pairs = fields[1:].reshape(n, 2)
    if pairs[:, 0].min() < 0 or pairs[:, 0].max() >= n or np.unique(pairs[:, 0]).size != n:
        raise MappingError(f"scotch: gmap's mapping file does not list each of the {n} processes once")
    term = np.empty(n, dtype=np.int64)
    term[pairs[:, 0]] = pairs[:, 1]
    if labels is not None:
        at = np.searchsorted(labels, term).clip(0, labels.size - 1)
        term = np.where(labels[at] == term, at, -1)
    if term.min() < 0 or term.max() >= nterms:
        raise MappingError(f"scotch: gmap mapped a process outside the {nterms} terminals")
    return term


def _to_pes(allocation: Allocation, term: np.ndarray, terms: np.ndarray, unit: str, capacity: int) -> np.ndarray:
    """PE of every process from its terminal, within the capacities (see the module docstring)."""
    m = allocation.machine
    pes = allocation.pes.astype(np.int64)
    n, npes = term.size, pes.size
    if unit == "pe":
        sorter = np.argsort(pes, kind="stable")
        group = sorter[np.searchsorted(pes, terms, sorter=sorter)][term]   # allocation index of the PE
        slots = np.full(npes, capacity, dtype=np.int64)
    else:
        node_of = pes // m.pes_per_node
        by_node = np.lexsort((np.arange(npes), node_of))     # allocation indices, node by node
        sorted_nodes = node_of[by_node]
        first = np.searchsorted(sorted_nodes, terms)         # where terminal j's node starts in by_node
        group = term
        slots = capacity * (np.searchsorted(sorted_nodes, terms, side="right") - first)
    # the first `slots` processes of each group (in process order) stay
    order = np.lexsort((np.arange(n), group))
    start = np.searchsorted(group[order], group[order], side="left")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - start
    keep = rank < slots[group]
    idx = np.full(n, -1, dtype=np.int64)
    if unit == "pe":
        idx[keep] = group[keep]
        home = pes[group]
    else:
        idx[keep] = by_node[first[group[keep]] + rank[keep] // capacity]
        home = pes[by_node[first[group]]]
    load = np.bincount(idx[keep], minlength=npes)
    _repair(m, pes, idx, home, load, capacity)
    return pes[idx].astype(np.int32)


def _repair(m: Machine, pes: np.ndarray, idx: np.ndarray, home: np.ndarray, load: np.ndarray, capacity: int) -> None:
    """Give the processes without a slot (``idx == -1``) the free slots nearest to their ``home``,
    home by home in the order of each home's first such process, a home's processes in process
    order (ties to the allocation's order).  One distance array at a time: keeping one per home
    weighed 150 MB for the 4,748 processes Scotch left over at 10^6."""
    over = np.flatnonzero(idx < 0)
    if not over.size:
        return
    cand = np.flatnonzero(load < capacity)
    homes, first = np.unique(home[over], return_index=True)
    for h in homes[np.argsort(first)].tolist():
        procs = over[home[over] == h]
        left = capacity - load[cand]
        free, room = cand[left > 0], left[left > 0]
        order = np.lexsort((free, m.distance(np.full(free.size, h), pes[free])))
        slots = np.repeat(free[order], room[order])[:procs.size]
        idx[procs] = slots
        np.add.at(load, slots, 1)


def _check(strategy: Any, imbalance: Any, timeout: Any) -> None:
    if not isinstance(strategy, str) or any(ch.isspace() for ch in strategy):
        raise MappingError(f"scotch option strategy = {strategy!r} must be a Scotch strategy string without spaces "
                           "('' = Scotch's default)")
    for name, value, low in (("imbalance", imbalance, 0.0), ("timeout", timeout, None)):
        if (not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)) or not math.isfinite(value)
                or (value < 0 if low is not None else value <= 0)):
            raise MappingError(f"scotch option {name} = {value!r} must be a finite number "
                               f"{'>= 0' if low is not None else '> 0'}")


@register("scotch", "Scotch's static mapping (Debian scotch_gmap) onto the allocation's tleaf, torus, hcub or graph "
                   "target",
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
        Any machine: a ``tleaf`` for trees and fat trees, a torus/mesh or
        hypercube target, or the network graph through ``amk_grf``.
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
        found = choose(allocation, d, shutil.which("amk_grf"))
        if found.terms.size == 1:   # one terminal: nothing for Scotch to choose
            term = np.zeros(pattern.n, dtype=np.int64)
        else:
            src, tgt, out = (os.path.join(d, f) for f in ("pattern.grf", "target.tgt", "out.map"))
            _write_source_graph(pattern, src)
            with open(tgt, "w") as fh:
                fh.write(found.text)
            # gmap refuses -b next to -m: a strategy string carries its own balance
            argv = [exe, "-Cd", f"-m{strategy}" if strategy else f"-b{float(imbalance):g}", src, tgt, out]
            _run(argv, float(timeout), progress)
            term = _read_map(out, pattern.n, found.terms.size, found.terms if found.labelled else None)
    return _to_pes(allocation, term, found.terms, found.unit, capacity)
