"""Distributed graph topologies as MPI-3 neighbourhood collectives see them.

Each rank ``p`` has an ordered list of destinations (outgoing neighbours, the order of its
send blocks) and an ordered list of sources (incoming neighbours, the order of its receive
blocks), as ``MPI_Dist_graph_create_adjacent`` takes them and ``Get_dist_neighbors`` returns
them.  Self-loops are allowed; a rank listing the same neighbour twice is refused (its two
blocks could not be told apart by origin).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import TopomapError

__all__ = ["NeighborhoodError", "NeighborGraph", "random_graph", "moore_graph"]


class NeighborhoodError(TopomapError, ValueError):
    """A neighbourhood topology, combining pattern, schedule or buffer is inconsistent."""


def _csr(lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(x) for x in lists])
    idx = np.concatenate([np.asarray(x, dtype=np.int64) for x in lists]) if lists else np.zeros(0, np.int64)
    return ptr, idx.astype(np.int64)


@dataclass(frozen=True, eq=False)
class NeighborGraph:
    """The destinations and sources of every rank, checked to describe the same edges.

    Parameters
    ----------
    destinations : sequence of sequences of int
        ``destinations[p]``: the outgoing neighbours of ``p`` in send-block order.
    sources : sequence of sequences of int, optional
        ``sources[q]``: the incoming neighbours of ``q`` in receive-block order; default:
        ascending rank.

    Examples
    --------
    >>> g = NeighborGraph.from_lists([[1, 2], [2], [0]])
    >>> g.n, g.sources(2).tolist(), g.edges
    (3, [0, 1], 4)
    """

    n: int
    out_ptr: np.ndarray
    out_idx: np.ndarray
    in_ptr: np.ndarray
    in_idx: np.ndarray

    @classmethod
    def from_lists(cls, destinations: Sequence[Sequence[int]],
                   sources: Sequence[Sequence[int]] | None = None) -> "NeighborGraph":
        """Build and check a graph from per-rank lists (see the class docstring)."""
        n = len(destinations)
        if n < 1:
            raise NeighborhoodError("a neighbourhood topology needs at least one rank")
        out_ptr, out_idx = _csr(destinations)
        _check_lists(out_ptr, out_idx, n, "destination")
        src = np.repeat(np.arange(n), np.diff(out_ptr))
        if sources is None:
            order = np.lexsort((src, out_idx))
            in_ptr = np.zeros(n + 1, dtype=np.int64)
            in_ptr[1:] = np.cumsum(np.bincount(out_idx, minlength=n))
            in_idx = src[order]
        else:
            if len(sources) != n:
                raise NeighborhoodError(f"sources has {len(sources)} lists for {n} ranks")
            in_ptr, in_idx = _csr(sources)
            _check_lists(in_ptr, in_idx, n, "source")
            dst = np.repeat(np.arange(n), np.diff(in_ptr))
            a = np.sort(src * n + out_idx)
            b = np.sort(in_idx * n + dst)
            if a.size != b.size or not np.array_equal(a, b):
                extra = np.setdiff1d(a, b)
                edge = extra[0] if extra.size else np.setdiff1d(b, a)[0]
                p, q = divmod(int(edge), n)
                side = "destinations" if extra.size else "sources"
                raise NeighborhoodError(f"edge {p} -> {q} appears in the {side} only: rank {p} and rank {q} "
                                        "disagree about their neighbourhood")
        return cls(n, out_ptr, out_idx.astype(np.int32), in_ptr, in_idx.astype(np.int32))

    @property
    def edges(self) -> int:
        """The number of directed edges (self-loops included)."""
        return int(self.out_ptr[-1])

    def destinations(self, p: int) -> np.ndarray:
        """The outgoing neighbours of rank ``p`` in send-block order."""
        return self.out_idx[self.out_ptr[p]:self.out_ptr[p + 1]]

    def sources(self, q: int) -> np.ndarray:
        """The incoming neighbours of rank ``q`` in receive-block order."""
        return self.in_idx[self.in_ptr[q]:self.in_ptr[q + 1]]

    def degrees(self) -> tuple[np.ndarray, np.ndarray]:
        """Out-degree and in-degree of every rank."""
        return np.diff(self.out_ptr), np.diff(self.in_ptr)


def _check_lists(ptr: np.ndarray, idx: np.ndarray, n: int, what: str) -> None:
    bad = np.flatnonzero((idx < 0) | (idx >= n))
    if bad.size:
        p = int(np.searchsorted(ptr, bad[0], side="right") - 1)
        raise NeighborhoodError(f"{what} {int(idx[bad[0]])} of rank {p} is not a rank of 0..{n - 1}")
    owner = np.repeat(np.arange(n), np.diff(ptr))
    key = np.sort(owner * n + idx)
    dup = np.flatnonzero(key[1:] == key[:-1])
    if dup.size:
        p, q = divmod(int(key[dup[0]]), n)
        raise NeighborhoodError(f"rank {p} lists {what} {q} twice")


def random_graph(n: int, delta: float, seed: int = 0, *, self_loops: bool = False) -> NeighborGraph:
    """Erdos-Renyi digraph G(n, delta): each edge p -> q (q != p) present with probability delta.

    The random sparse graphs of note 002 s5 (after Hoefler and Schneider).

    Examples
    --------
    >>> g = random_graph(8, 0.5, seed=1)
    >>> g.n, 0 < g.edges < 56
    (8, True)
    """
    if n < 1 or not 0.0 <= delta <= 1.0:
        raise NeighborhoodError(f"random_graph needs n >= 1 and 0 <= delta <= 1, got n={n}, delta={delta}")
    rng = np.random.default_rng(seed)
    lists = []
    for p in range(n):
        hit = rng.random(n) < delta
        if not self_loops:
            hit[p] = False
        lists.append(np.flatnonzero(hit))
    return NeighborGraph.from_lists(lists)


def moore_graph(dims: Sequence[int], radius: int) -> NeighborGraph:
    """Periodic D-dimensional Moore neighbourhood: all ranks within Chebyshev distance ``radius``.

    Ranks are numbered row-major over ``dims``; each has ``(2 radius + 1)^D - 1`` neighbours,
    symmetric.  Note 002 s4: the paper's "Manhattan" is an erratum for Chebyshev; an extent
    below ``2 radius + 1`` would wrap onto duplicate neighbours and is refused.

    Examples
    --------
    >>> g = moore_graph((5, 5), 1)
    >>> int(g.degrees()[0][0]), g.destinations(0).tolist()[:4]
    (8, [1, 4, 5, 6])
    """
    dims = [int(d) for d in dims]
    if radius < 1 or not dims or min(dims) < 2 * radius + 1:
        raise NeighborhoodError(f"moore_graph needs radius >= 1 and every extent >= 2 radius + 1 = "
                                f"{2 * radius + 1}, got dims={dims}, radius={radius}")
    n = int(np.prod(dims))
    coords = np.array(np.unravel_index(np.arange(n), dims)).T
    axes = np.meshgrid(*[np.arange(-radius, radius + 1)] * len(dims), indexing="ij")
    offsets = np.array(axes).reshape(len(dims), -1).T
    offsets = offsets[np.any(offsets != 0, axis=1)]
    lists = []
    for p in range(n):
        nb = np.ravel_multi_index(tuple(((coords[p] + offsets) % dims).T), dims)
        lists.append(np.sort(nb))
    return NeighborGraph.from_lists(lists)
