"""Shortcut topologies of Cui's thesis (seed 003, notes §1.1-1.2): a ring of
switches plus shortcut links, one compute node per switch, built as graph
networks with minimum-hop routing (ties to the lowest link id).

Circulant ``C(n; c1, ..., ck)`` (§1.2, thesis §4.2): vertex ``a`` is joined to
``a +- c_i mod n``.  Default jumps ``1, 2, 4, ...`` up to ``n/2`` (the class
G(n, log2 n) when n is a power of two).  The thesis's definition has
``c1 = 1 < c2 < ... <= n/2``; other jump sets are accepted, and a disconnected
one (gcd of n and the jumps > 1) fails at construction naming a pair.

Random shortcut (§1.1, thesis §2.1.3 after Koibuchi et al. ISCA 2012): "add
links randomly by picking two nodes among the possible nodes that have lower
links than the network degree.  We enforce that all the vertices have the same
degree as possible."  Choices the thesis leaves open, made here:

* the ring ``(i, i+1 mod n)`` comes first and is never removed;
* each step draws two distinct vertices uniformly among those of degree below
  ``d`` and joins them unless already adjacent (no loops, no parallel links);
  after 64 misses in a row the joinable pairs are listed and one is drawn
  uniformly, which is the same distribution without endless retries; the
  phase ends when no two under-degree vertices can be joined;
* ``repair=True`` (default) then evens out the leftovers by edge switching, as
  the notes suggest: a vertex ``u`` short by 2 takes a random shortcut
  ``(x, y)`` with ``x, y`` not adjacent to ``u``, drops it and adds ``(u, x)``,
  ``(u, y)``; two vertices ``u``, ``v`` short by 1 take ``(x, y)`` and add
  ``(u, x)``, ``(v, y)``.  With ``n*d`` even the result is ``d``-regular
  whenever a switch exists; ``repair=False`` gives the plain process (the
  notes' reference table used it);
* random numbers: the counter-based SplitMix64 stream of :mod:`topomap._rng`
  seeded with ``stream_seed(seed, "shortcut", n, d)``, so a seed gives the same
  graph on every platform; the thesis gives no seeds, so its instances cannot
  be matched exactly, only their statistics (diameter, ASPL within ~2%).

Link ids: circulant vertex ``a`` owns the links to ``a + c1, a - c1, a + c2,
...`` in that order (one link for the jump ``n/2``); the random shortcut
network lists the ring cables first (``i -> i+1`` then back), then the
shortcuts in the order they were made.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .._rng import splitmix64, stream_seed
from ..errors import MachineError
from .spec import parse_node, register_spec, spec_int
from .base import Network
from .graph import GraphNetwork
from .limits import check_links, check_tables

__all__ = ["Circulant", "RandomShortcut", "random_shortcut_edges"]

_MASK64 = (1 << 64) - 1


def default_jumps(n: int) -> tuple[int, ...]:
    """``1, 2, 4, ...`` up to ``n // 2``."""
    return tuple(1 << i for i in range(max(0, (n // 2).bit_length())))


@dataclass(frozen=True)
class Circulant(Network):
    """Circulant graph ``C(n; jumps)`` with one compute node per switch.

    Examples
    --------
    >>> import topomap as tm
    >>> m = tm.machine("circulant:16")           # G(16, 4) = C(16; 1, 2, 4, 8)
    >>> s = m.summary()
    >>> s["degree"], s["diameter"], round(s["aspl"], 3)
    (7, 2, 1.533)
    """

    n: int
    jumps: tuple[int, ...] | None = None
    kind = "graph"

    def __post_init__(self) -> None:
        n = self.n
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
            raise MachineError(f"a circulant needs n >= 2 vertices, got {n!r}")
        jumps = default_jumps(int(n)) if self.jumps is None else tuple(int(c) for c in self.jumps)
        bad = [c for c in jumps if not 1 <= c <= n // 2]
        if bad or not jumps:
            raise MachineError(f"circulant jumps must lie in 1..{n // 2} (n/2), got {jumps}")
        if len(set(jumps)) != len(jumps):
            raise MachineError(f"circulant jumps {jumps} repeat a value")
        object.__setattr__(self, "n", int(n))
        object.__setattr__(self, "jumps", tuple(sorted(jumps)))
        check_links(self.n * self.degree, self.spec_head())
        check_tables(self.n, self.n, self.n * self.degree, self.degree, self.spec_head())

    @cached_property
    def graph(self) -> GraphNetwork:
        """The circulant as a :class:`GraphNetwork`."""
        n, a = self.n, np.arange(self.n, dtype=np.int64)
        src, dst = [], []
        for c in self.jumps:
            for step in ((c,) if 2 * c == n else (c, -c)):
                src.append(a)
                dst.append((a + step) % n)
        order = np.argsort(np.concatenate(src), kind="stable")  # group by vertex, jump order within
        return GraphNetwork(n, 0, np.concatenate(src)[order], np.concatenate(dst)[order])

    @property
    def degree(self) -> int:
        """Neighbours of every vertex: 2 per jump, 1 for the jump n/2."""
        return sum(1 if 2 * c == self.n else 2 for c in self.jumps)

    def core_params(self) -> dict[str, np.ndarray]:
        return self.graph.core_params()

    def level_names(self) -> list[str]:
        return ["network"]

    def spec_head(self) -> str:
        return f"circulant:{self.n}:{','.join(map(str, self.jumps))}"

    def summary(self) -> dict[str, Any]:
        return {"jumps": list(self.jumps), "degree": self.degree, "routing": "shortest"}


class _Draws:
    """Exactly uniform integers from the SplitMix64 stream of :mod:`topomap._rng`."""

    def __init__(self, seed: int):
        self.seed, self.counter, self.buf = seed, 0, []

    def _next(self) -> int:
        if not self.buf:
            block = splitmix64(self.seed, np.arange(self.counter, self.counter + 4096, dtype=np.uint64))
            self.buf = block.tolist()[::-1]
            self.counter += 4096
        return self.buf.pop()

    def below(self, bound: int) -> int:
        """Uniform in ``[0, bound)`` (Lemire's multiply-and-reject, no modulo bias)."""
        m = self._next() * bound
        if (m & _MASK64) < bound:
            floor = ((1 << 64) - bound) % bound
            while (m & _MASK64) < floor:
                m = self._next() * bound
        return m >> 64


class _Graph:
    """Adjacency sets, degrees and the shortcut list of a random shortcut network."""

    def __init__(self, n: int):
        self.adj: list[set[int]] = [set() for _ in range(n)]
        self.shortcuts: list[tuple[int, int]] = []

    def join(self, u: int, v: int, shortcut: bool = True) -> None:
        self.adj[u].add(v)
        self.adj[v].add(u)
        if shortcut:
            self.shortcuts.append((u, v))

    def drop(self, k: int) -> tuple[int, int]:
        """Remove shortcut number k (the last one takes its place)."""
        x, y = self.shortcuts[k]
        self.shortcuts[k] = self.shortcuts[-1]
        self.shortcuts.pop()
        self.adj[x].discard(y)
        self.adj[y].discard(x)
        return x, y


def _fill(g: _Graph, d: int, draws: _Draws) -> None:
    """The thesis's process: join random under-degree pairs until none can be joined."""
    free = [v for v in range(len(g.adj)) if len(g.adj[v]) < d]
    pos = {v: i for i, v in enumerate(free)}
    misses = 0
    while len(free) >= 2:
        if misses < 64:
            i = draws.below(len(free))
            j = draws.below(len(free) - 1)
            j += j >= i
            u, v = free[i], free[j]
            if v in g.adj[u]:
                misses += 1
                continue
        else:
            pairs = [(u, v) for k, u in enumerate(free) for v in free[k + 1:] if v not in g.adj[u]]
            if not pairs:
                return
            u, v = pairs[draws.below(len(pairs))]
        misses = 0
        g.join(u, v)
        for w in (u, v):
            if len(g.adj[w]) == d:  # leaves the draw: the last vertex takes its place
                i, last = pos.pop(w), free.pop()
                if last != w:
                    free[i] = last
                    pos[last] = i


def _switch(g: _Graph, u: int, v: int, draws: _Draws) -> bool:
    """Edge switching: drop a shortcut (x, y), add (u, x) and (v, y) (v == u: both to u)."""
    def fits(x: int, y: int) -> bool:
        return (x not in (u, v) and y not in (u, v) and x not in g.adj[u] and y not in g.adj[v]
                and (u != v or x != y))
    for _ in range(64):
        k = draws.below(len(g.shortcuts))
        x, y = g.shortcuts[k] if draws.below(2) == 0 else g.shortcuts[k][::-1]
        if fits(x, y):
            break
    else:
        options = [(k, x, y) for k, (a, b) in enumerate(g.shortcuts) for x, y in ((a, b), (b, a)) if fits(x, y)]
        if not options:
            return False
        k, x, y = options[draws.below(len(options))]
    g.drop(k)
    g.join(u, x)
    g.join(v, y)
    return True


def _repair(g: _Graph, d: int, draws: _Draws) -> None:
    while g.shortcuts:
        short = [v for v in range(len(g.adj)) if len(g.adj[v]) < d]
        if not short:
            return
        u = short[0]
        v = u if d - len(g.adj[u]) >= 2 else (short[1] if len(short) > 1 else -1)
        if v < 0 or not _switch(g, u, v, draws):
            return


def random_shortcut_edges(n: int, d: int, seed: int = 0, repair: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Undirected edges ``(u[i], v[i])`` of the ring plus random shortcuts (ring first).

    Examples
    --------
    >>> from topomap.networks.shortcut import random_shortcut_edges
    >>> u, v = random_shortcut_edges(64, 11, seed=0)
    >>> len(u), sorted(set(np.bincount(np.concatenate([u, v])).tolist()))
    (352, [11])
    """
    g = _Graph(n)
    for i in range(n):
        g.join(i, (i + 1) % n, shortcut=False)
    draws = _Draws(stream_seed(seed, "shortcut", n, d))
    _fill(g, d, draws)
    if repair:
        _repair(g, d, draws)
    edges = [(i, (i + 1) % n) for i in range(n)] + g.shortcuts
    u, v = np.array(edges, dtype=np.int64).T
    return u, v


@dataclass(frozen=True)
class RandomShortcut(Network):
    """Ring of ``n`` switches plus random shortcuts up to degree ``degree`` (seeded).

    Examples
    --------
    >>> import topomap as tm
    >>> m = tm.machine("shortcut:n=64,d=11,seed=0")
    >>> s = m.summary()
    >>> s["degree"], s["diameter"], round(s["aspl"], 2)
    ([11, 11], 3, 1.93)
    """

    n: int
    degree: int
    seed: int = 0
    repair: bool = True
    kind = "graph"

    def __post_init__(self) -> None:
        for name in ("n", "degree", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise MachineError(f"random shortcut {name} must be a non-negative integer, got {value!r}")
        if self.n < 3 or not 2 <= self.degree < self.n:
            raise MachineError(f"a random shortcut network needs n >= 3 and 2 <= degree < n, "
                               f"got n={self.n}, degree={self.degree}")
        if self.seed >= 2**64:
            raise MachineError(f"seed must lie in [0, 2**64), got {self.seed}")
        check_links(self.n * self.degree, self.spec_head())
        check_tables(self.n, self.n, self.n * self.degree, self.degree, self.spec_head())

    @cached_property
    def graph(self) -> GraphNetwork:
        """The network as a :class:`GraphNetwork`."""
        u, v = random_shortcut_edges(self.n, self.degree, self.seed, self.repair)
        return GraphNetwork(self.n, 0, np.column_stack([u, v]).ravel(), np.column_stack([v, u]).ravel())

    def core_params(self) -> dict[str, np.ndarray]:
        return self.graph.core_params()

    def level_names(self) -> list[str]:
        return ["network"]

    def spec_head(self) -> str:
        return f"shortcut:n={self.n},d={self.degree},seed={self.seed}" + ("" if self.repair else ",repair=0")

    def summary(self) -> dict[str, Any]:
        deg = np.bincount(self.graph.src, minlength=self.n)
        return {"degree": [int(deg.min()), int(deg.max())], "shortcuts": self.graph.nlinks // 2 - self.n,
                "seed": self.seed, "routing": "shortest"}


def _split_node(body: str, spec: str) -> tuple[str, Any]:
    head, slash, node_text = body.partition("/")
    if slash and not node_text.strip():
        raise MachineError(f"machine spec {spec!r} ends in '/' without a node description (e.g. /8)")
    return head, parse_node(node_text or "1", spec)


@register_spec("circulant")
def _circulant(kind: str, body: str, spec: str):
    head, node = _split_node(body, spec)
    n_text, colon, jump_text = head.partition(":")
    n = spec_int(n_text, "circulant size", spec)
    jumps = [spec_int(t, "circulant jump", spec) for t in jump_text.split(",")] if colon else None
    return Circulant(n, None if jumps is None else tuple(jumps)), node


@register_spec("shortcut")
def _shortcut(kind: str, body: str, spec: str):
    head, node = _split_node(body, spec)
    opts: dict[str, int] = {}
    for item in head.split(","):
        key, eq, value = item.partition("=")
        key = {"degree": "d"}.get(key.strip(), key.strip())
        if not eq or key not in ("n", "d", "seed", "repair"):
            raise MachineError(f"shortcut option {item!r} in machine spec {spec!r} is not n=, d=, seed= or repair=")
        if key in opts:
            raise MachineError(f"shortcut option {key} is given twice in machine spec {spec!r}")
        if not re.fullmatch(r"\d+", value.strip()):
            raise MachineError(f"shortcut option {key}={value!r} in machine spec {spec!r} is not an integer")
        opts[key] = int(value)
    if "n" not in opts:
        raise MachineError(f"machine spec {spec!r} needs n= (the number of switches)")
    n = opts["n"]
    # The thesis pairs n switches with degree 2 log2(n) - 1, the circulant's.
    d = opts.get("d", 2 * math.ceil(math.log2(max(n, 2))) - 1)
    if opts.get("repair", 1) not in (0, 1):
        raise MachineError(f"shortcut option repair must be 0 or 1 in machine spec {spec!r}")
    return RandomShortcut(n, d, opts.get("seed", 0), bool(opts.get("repair", 1))), node
