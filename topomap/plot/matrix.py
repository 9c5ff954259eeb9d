"""Communication-matrix heatmaps: who sends how much to whom, grouped by node under a mapping."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MappingError
from ..machine import Allocation, Machine
from ..mapping import Mapping
from ..metrics import as_pattern
from ._common import axes, pyplot

__all__ = ["comm_matrix", "comm_matrix_pair"]


def _order(pe_of: np.ndarray, machine: Machine, allocation: Allocation | None) -> tuple[np.ndarray, np.ndarray]:
    """Processes sorted by node (in allocation order when known), then PE, then id;
    and the positions in that order where a new node starts."""
    node = pe_of.astype(np.int64) // machine.pes_per_node
    if allocation is not None:
        rank = np.full(machine.nnodes, machine.nnodes, dtype=np.int64)
        nodes = allocation.nodes()
        rank[nodes] = np.arange(nodes.size)
        node_key = rank[node]
    else:
        node_key = node
    order = np.lexsort((np.arange(pe_of.size), pe_of, node_key))
    sorted_nodes = node_key[order]
    starts = np.flatnonzero(np.diff(sorted_nodes)) + 1
    return order, starts


def _dense(pattern: Any, order: np.ndarray, max_size: int) -> tuple[np.ndarray, int]:
    """The matrix in ``order``, summed over blocks of ``f`` processes when n > max_size."""
    n = pattern.n
    f = -(-n // max_size)
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(pattern.indptr))
    size = -(-n // f)
    m = np.zeros((size, size))
    np.add.at(m, (pos[rows] // f, pos[pattern.indices] // f), pattern.bytes)
    return m, f


def _mapping_of(mapping: Any, pattern: Any, machine: Machine) -> tuple[np.ndarray, str]:
    if isinstance(mapping, Mapping):
        pe_of, name = mapping.pe_of, mapping.method
    else:
        pe_of, name = Mapping(np.asarray(mapping)).pe_of, "mapping"
    if pe_of.shape != (pattern.n,):
        raise MappingError(f"the mapping has {pe_of.size} entries but the pattern has {pattern.n} processes")
    if pe_of.max() >= machine.npes:
        raise MappingError(f"the mapping uses PE {pe_of.max()}, outside the machine's {machine.npes} PEs")
    return pe_of, name


def _draw(ax: Any, m: np.ndarray, n: int, starts: np.ndarray, norm: Any, cmap: str, title: str) -> Any:
    shown = np.ma.masked_less_equal(m, 0)  # a log scale has no place for 0: no traffic stays blank
    image = ax.imshow(shown, norm=norm, cmap=cmap, extent=(0, n, n, 0), interpolation="nearest")
    if starts.size:
        ax.hlines(starts, 0, n, colors="0.3", linewidths=0.6)
        ax.vlines(starts, 0, n, colors="0.3", linewidths=0.6)
    ax.set_xlim(0, n)
    ax.set_ylim(n, 0)
    ax.set_xlabel("receiver")
    ax.set_ylabel("sender")
    ax.set_title(title)
    return image


def _norm(*matrices: np.ndarray) -> Any:
    from matplotlib.colors import LogNorm

    positive = np.concatenate([m[m > 0] for m in matrices])
    if positive.size == 0:
        raise MappingError("the pattern has no messages to draw")
    return LogNorm(vmin=float(positive.min()), vmax=float(positive.max()))


def comm_matrix(pattern: Any, mapping: Any = None, allocation: "Allocation | Machine | None" = None, *,
                ax: Any = None, max_size: int = 1024, cmap: str = "viridis", colorbar: bool = True,
                title: str | None = None) -> Any:
    """Heatmap of the bytes each process sends to each other one, log colour scale.

    Without a mapping, processes are in rank order.  With a mapping (and the
    allocation or machine it is on), processes are sorted by node (in
    allocation order), then PE, and lines mark where a node starts: traffic
    inside the diagonal blocks stays inside a node.

    Parameters
    ----------
    pattern : Pattern or array-like
        Row = sender, column = receiver.
    mapping : Mapping or array of PE ids, optional
        Groups the processes by node.
    allocation : Allocation or Machine, optional
        Required with a mapping: which PEs form a node.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    max_size : int
        Above this many processes, blocks of ``ceil(n / max_size)`` processes
        are summed into one pixel (node lines stay exact).
    cmap : str
        Colour map.
    colorbar : bool
        Add a colour bar labelled in bytes.
    title : str, optional
        Default: the mapping's method, or "rank order".

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import topomap as tm, topomap.plot as tp
    >>> pat = tm.generators.stencil_2d((8, 8), weights=(3, 1))
    >>> alloc = tm.machine("torus:4x4/4").allocate(64)
    >>> ax = tp.comm_matrix(pat, tm.map(pat, alloc, "cyclic"), alloc)
    >>> ax.images[0].norm.vmin, ax.images[0].norm.vmax
    (1.0, 3.0)
    """
    pyplot()  # fail early, naming the extra, when matplotlib is missing
    pat = as_pattern(pattern)
    order, starts, name = _layout(pat, mapping, allocation)
    m, _ = _dense(pat, order, max_size)
    ax = axes(ax)
    image = _draw(ax, m, pat.n, starts, _norm(m), cmap, title if title is not None else name)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, label="bytes")
    return ax


def _layout(pat: Any, mapping: Any, allocation: "Allocation | Machine | None") -> tuple[np.ndarray, np.ndarray, str]:
    if mapping is None:
        return np.arange(pat.n), np.empty(0, dtype=np.int64), "rank order"
    if allocation is None:
        raise MappingError("drawing a mapping needs the allocation (or machine) it maps onto")
    alloc = allocation if isinstance(allocation, Allocation) else None
    machine = allocation.machine if isinstance(allocation, Allocation) else allocation
    pe_of, name = _mapping_of(mapping, pat, machine)
    order, starts = _order(pe_of, machine, alloc)
    return order, starts, name


def comm_matrix_pair(pattern: Any, allocation: Allocation, after: Any, before: Any = None, *, ax: Any = None,
                     max_size: int = 1024, cmap: str = "viridis") -> Any:
    """Two heatmaps side by side, one colour scale: the pattern grouped by node
    before a mapping (default: the launcher's block order) and after it.

    Parameters
    ----------
    pattern : Pattern or array-like
        The communication pattern.
    allocation : Allocation
        The PEs of the job.
    after : Mapping or array of PE ids
        The new placement.
    before : Mapping or array of PE ids, optional
        The old placement (default: ``tm.map(pattern, allocation, "block")``).
    ax : pair of Axes, optional
        Where to draw (default: a new figure with two panels).
    max_size, cmap
        As in :func:`comm_matrix`.

    Returns
    -------
    numpy.ndarray of two Axes

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import topomap as tm, topomap.plot as tp
    >>> pat = tm.generators.stencil_2d((8, 8))
    >>> alloc = tm.machine("torus:4x4/4").allocate(64)
    >>> left, right = tp.comm_matrix_pair(pat, alloc, tm.map(pat, alloc, "random"))
    >>> left.get_title(), right.get_title()
    ('block', 'random')
    """
    from ..registry import map as run_mapper

    plt = pyplot()
    pat = as_pattern(pattern)
    if before is None:
        before = run_mapper(pat, allocation, method="block")
    if ax is None:
        _, ax = plt.subplots(1, 2, figsize=(10, 4.5), constrained_layout=True)
    if len(ax) != 2:
        raise ValueError(f"comm_matrix_pair draws on two axes, got {len(ax)}")
    panels = [_layout(pat, mp, allocation) for mp in (before, after)]
    mats = [_dense(pat, order, max_size)[0] for order, _, _ in panels]
    norm = _norm(*mats)
    image = None
    for a, m, (_, starts, name) in zip(ax, mats, panels):
        image = _draw(a, m, pat.n, starts, norm, cmap, name)
    ax[0].figure.colorbar(image, ax=list(ax), label="bytes")
    return np.asarray(ax)
