"""Fat trees: extended generalized fat trees with parallel cables, D-mod-k or
lowest-port routing (csrc/core/machine_fattree.c).

Topology (Öhring, Ibel, Das & Kumar, "On generalized fat trees", IPPS 1995;
parallel cables as in Zahavi's PGFT, CCIT Report 776, 2010): ``XGFT(h; m; w)``
with ``p``.  Level 0 holds the ``N = m_1 ... m_h`` nodes, level ``i`` the
switches; every level-``i`` switch has ``m_i`` children, every level-``(i-1)``
vertex has ``w_i`` parents, joined by ``p_i`` parallel cables each, and every
cable of level ``i`` has capacity ``c_i`` (in switch ports; 1 by default).

* k-ary n-tree (Petrini & Vanneschi): ``m_i = k``, ``w = (1, k, ..., k)``,
  ``k^n`` nodes.
* k-port n-tree (Lin, Chung & Huang 2004; the "k-ary fat tree" of data
  centres): ``k/2`` children and ``k/2`` parents per switch below the top,
  ``k`` children per top switch, ``2 (k/2)^n`` nodes.
* Taper: fewer up-links (``w_i p_i``) at a level, e.g. APHiD's 2x and 4x
  core taper.  Blocking B:1 at the leaves: B times as many nodes under each
  leaf switch for the same up-links (SciNet GPC: 30 nodes, 6 up-links).

Numbering (closed form; ``M_i = m_1..m_i``, ``W_i = w_1..w_i``, ``S_i =
(N / M_i) W_i`` switches at level ``i``): nodes are network vertices
``0..N-1`` (node id = ``x_1 + m_1 (x_2 + ...)``), then the switches level by
level, a level-``i`` switch at index ``X W_i + Y`` with ``X`` = (a node below
it) ``// M_i`` and ``Y`` its parent choices ``y_1 + w_1 (y_2 + ...)``.  A
vertex of index ``u`` at level ``i-1`` reaches parent ``y`` through cable
``c < p_i`` on port ``q = y + w_i c``; that cable's id is ``C_i + u w_i p_i +
q`` (``C_1 = 0``, ``C_{i+1} = C_i + S_{i-1} w_i p_i``), its up link ``2 id``,
its down link ``2 id + 1``.

Routing: up to the lowest common ancestor, then down.  Leaving level
``i-1`` towards node ``b`` a message takes port ``(b // W_{i-1}) mod (w_i
p_i)`` (``routing="dmodk"``, Zahavi's D-mod-K; the down cable of level ``i``
is the one this port names) or port 0 (``"shortest"``, lowest port).  The
routing choices and their reasons are in the header of the C file.

Spec strings (``/NODE`` as everywhere: PEs per node or an hwloc synthetic
tree, default 1; options separated by commas, in any order, each at most
once; ``ROUTING`` is ``dmodk`` (default) or ``shortest``; integers are >= 1)::

    xgft:m=M1xM2x..,w=W1xW2x..[,p=P1xP2x..][,c=C1xC2x..][,routing=ROUTING][,radix=R][/NODE]
    fattree:k=K,levels=N[,taper=T][,block=B][,routing=ROUTING][/NODE]
    fattree:ports=P,levels=N[,taper=T][,block=B][,routing=ROUTING][/NODE]
    aphid:taper=T|untapered[,routing=ROUTING][/NODE]

``m``, ``w``, ``p`` list integers and ``c`` positive numbers per level,
bottom-up, all of the same length (``p`` and ``c`` default to 1).
``fattree:k=`` is a k-ary n-tree, ``fattree:ports=`` a k-port n-tree (``P``
even); ``taper=T`` divides the top level's up-links by ``T`` and
``block=B`` puts ``B`` times as many nodes under each leaf (see
:func:`tapered`, :func:`blocking`).  ``aphid:taper=T`` is the APHiD 64-port
fat tree, ``T = 1`` (the baseline tapered tree), 2 or 4; ``aphid:untapered``
the untapered one (see :func:`aphid_fat_tree`).

Examples
--------
>>> import topomap as tm
>>> m = tm.machine("xgft:m=2x4,w=1x2/2")        # 4 leaves of 2 nodes, 2 spines
>>> m.nnodes, m.npes, m.nvertices
(8, 16, 14)
>>> m.route(0, 5).tolist()                      # up port 5 mod 2 = 1: spine 1
[0, 18, 27, 11]
>>> tm.machine("fattree:k=4,levels=2,taper=2").network.w
(1, 2)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import MachineError
from .spec import parse_node, register_spec, spec_float, spec_int
from .base import Network

__all__ = ["FatTree", "k_ary_n_tree", "k_port_n_tree", "xgft", "tapered", "blocking", "aphid_fat_tree",
           "ROUTINGS"]

#: Up-port selection rules, in the order of the C core's codes.
ROUTINGS = ("dmodk", "shortest")

_MAX_ID = 2**31 - 1
_MAX_LEVELS = 32


def _check_levels(n: int) -> None:
    """Refuse a level count before ``n``-long parameter tuples are built from it."""
    if n > _MAX_LEVELS:
        raise MachineError(f"a fat tree needs 1 to {_MAX_LEVELS} levels, got {n}")


def _positive_ints(values: Any, what: str) -> tuple[int, ...]:
    try:
        items = tuple(values)
    except TypeError:
        raise MachineError(f"fat tree {what} must be a sequence of integers, got {values!r}") from None
    out = []
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= _MAX_ID:
            raise MachineError(f"fat tree {what} must be integers from 1 to 2^31 - 1, got {v!r} in {items}")
        out.append(int(v))
    return tuple(out)


@dataclass(frozen=True)
class FatTree(Network):
    """Extended generalized fat tree ``XGFT(h; m; w)`` with ``p`` parallel
    cables per child-parent pair (see the module docstring).

    Parameters
    ----------
    m : sequence of int
        Children per switch, bottom-up: ``m[0]`` nodes per leaf switch.
    w : sequence of int
        Parents per vertex: ``w[0]`` leaf switches per node (1 for a tree of
        single-homed nodes), ``w[i]`` level-``i+1`` switches per level-``i`` switch.
    p : sequence of int, optional
        Parallel cables between a vertex and each of its parents (default 1).
    capacity : sequence of float, optional
        Capacity of one cable of each level, in switch ports (default 1).
        With any value other than 1 the machine stores one capacity per link.
    routing : {"dmodk", "shortest"}
        Destination-based D-mod-k up ports, or always the lowest port.
    radix : int, optional
        Switch ports; when given, no switch may use more (cables x capacity),
        and :meth:`packed_top_switches` counts the physical top switches.

    Notes
    -----
    Network levels (``Machine.level_names``) are ``leaf``, then ``agg`` (one
    middle level) or ``agg2``, ``agg3``, ... and ``spine`` for the top.
    Distance between nodes = hops = twice the level where they meet.

    Examples
    --------
    >>> import topomap as tm
    >>> ft = tm.FatTree((2, 4), (1, 2))
    >>> ft.nnodes, ft.switches_per_level(), ft.cables_per_level()
    (8, (4, 2), (8, 8))
    >>> tm.Machine(ft, tm.NodeTree.flat(1)).route(0, 5).tolist()
    [0, 18, 27, 11]
    """

    m: tuple[int, ...]
    w: tuple[int, ...]
    p: tuple[int, ...] = ()
    capacity: tuple[float, ...] = ()
    routing: str = "dmodk"
    radix: int | None = None
    kind = "fattree"

    def __post_init__(self) -> None:
        m = _positive_ints(self.m, "m")
        h = len(m)
        if not 1 <= h <= _MAX_LEVELS:
            raise MachineError(f"a fat tree needs 1 to {_MAX_LEVELS} levels, got {h}")
        w = _positive_ints(self.w, "w")
        p = _positive_ints(self.p, "p") or (1,) * h
        try:
            cap = tuple(float(c) for c in self.capacity) or (1.0,) * h
        except (TypeError, ValueError):
            raise MachineError(f"fat tree capacity must be numbers, got {self.capacity!r}") from None
        for name, seq in (("w", w), ("p", p), ("capacity", cap)):
            if len(seq) != h:
                raise MachineError(f"fat tree has {h} levels (m={m}) but {name} has {len(seq)}: {seq}")
        for i, c in enumerate(cap):
            if not (math.isfinite(c) and c > 0):
                raise MachineError(f"fat tree level {i + 1} has capacity {c!r} (must be > 0 and finite)")
        if self.routing not in ROUTINGS:
            raise MachineError(f"unknown fat tree routing {self.routing!r}; choose one of {', '.join(ROUTINGS)}")
        if math.prod(m) > _MAX_ID:
            raise MachineError(f"fat tree m={m} has {math.prod(m)} nodes, more than 2^31 - 1")
        object.__setattr__(self, "m", m)
        object.__setattr__(self, "w", w)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "capacity", cap)
        if self.radix is not None:
            if isinstance(self.radix, bool) or not isinstance(self.radix, (int, np.integer)) or self.radix < 1:
                raise MachineError(f"fat tree radix must be a positive integer, got {self.radix!r}")
            object.__setattr__(self, "radix", int(self.radix))
            for i, used in enumerate(self.ports_per_switch()):
                if used > self.radix:
                    raise MachineError(f"level-{i + 1} switches of fat tree {self.spec_head()} use {used:g} ports, "
                                       f"more than radix {self.radix}")

    # ------------------------------------------------------------ sizes
    @property
    def levels(self) -> int:
        """Number of switch levels ``h``."""
        return len(self.m)

    @property
    def nnodes(self) -> int:
        """Number of compute nodes ``m_1 ... m_h``."""
        return math.prod(self.m)

    def switches_per_level(self) -> tuple[int, ...]:
        """Switches of levels 1..h: ``(N / (m_1..m_i)) * (w_1..w_i)``."""
        return tuple(self.nnodes // math.prod(self.m[:i]) * math.prod(self.w[:i]) for i in range(1, self.levels + 1))

    def cables_per_level(self) -> tuple[int, ...]:
        """Cables between levels ``i-1`` and ``i`` (i = 1..h); each is two directed links."""
        below = (self.nnodes, *self.switches_per_level()[:-1])
        return tuple(n * w * p for n, w, p in zip(below, self.w, self.p))

    def ports_per_level(self) -> tuple[float, ...]:
        """Cables times capacity per level: links counted per switch port, as
        APHiD's Table II counts them."""
        return tuple(n * c for n, c in zip(self.cables_per_level(), self.capacity))

    def ports_per_switch(self) -> tuple[float, ...]:
        """Ports one switch of each level uses: ``m_i p_i c_i`` down plus
        ``w_{i+1} p_{i+1} c_{i+1}`` up."""
        down = [m * p * c for m, p, c in zip(self.m, self.p, self.capacity)]
        up = [w * p * c for w, p, c in zip(self.w[1:], self.p[1:], self.capacity[1:])] + [0.0]
        return tuple(d + u for d, u in zip(down, up))

    def blocking_ratios(self) -> tuple[float, ...]:
        """Down/up bandwidth of the switches of levels 1..h-1 (1.0 = full
        bisection; 5.0 = 5:1 blocking): ports below the level over ports above."""
        ports = self.ports_per_level()
        return tuple(ports[i] / ports[i + 1] for i in range(self.levels - 1))

    def packed_top_switches(self) -> int:
        """Physical top-level switches of :attr:`radix` ports when the top
        (tapered) switches are packed: ``ceil(top ports / radix)``.

        Top switches only forward down, so merging under-filled ones changes
        no route and no link load (APHiD's 25 and 13 core switches, Table I).
        """
        if self.radix is None:
            raise MachineError("packed_top_switches needs the switch radix (FatTree(..., radix=R))")
        return math.ceil(self.ports_per_level()[-1] / self.radix)

    # ------------------------------------------------------------ Network
    def core_params(self) -> dict[str, np.ndarray]:
        return {"m": np.asarray(self.m, dtype=np.int32), "w": np.asarray(self.w, dtype=np.int32),
                "p": np.asarray(self.p, dtype=np.int32), "capacity": np.asarray(self.capacity, dtype=np.float64),
                "routing": np.array([ROUTINGS.index(self.routing)], dtype=np.int32)}

    def level_names(self) -> list[str]:
        h = self.levels
        if h == 1:
            return ["leaf"]
        middle = ["agg"] if h == 3 else [f"agg{i}" for i in range(2, h)]
        return ["leaf", *middle, "spine"]

    def spec_head(self) -> str:
        parts = [f"m={'x'.join(map(str, self.m))}", f"w={'x'.join(map(str, self.w))}"]
        if any(v != 1 for v in self.p):
            parts.append(f"p={'x'.join(map(str, self.p))}")
        if any(v != 1.0 for v in self.capacity):
            parts.append(f"c={'x'.join(f'{v:g}' for v in self.capacity)}")
        if self.routing != "dmodk":
            parts.append(f"routing={self.routing}")
        if self.radix is not None:
            parts.append(f"radix={self.radix}")
        return "xgft:" + ",".join(parts)

    def summary(self) -> dict[str, Any]:
        """Routing, switches and cables per level, blocking ratios and (with a
        radix) the packed top switch count."""
        out: dict[str, Any] = {
            "routing": self.routing,
            "switches_per_level": list(self.switches_per_level()),
            "cables_per_level": list(self.cables_per_level()),
            "blocking_ratios": list(self.blocking_ratios()),
        }
        if self.radix is not None:
            out["packed_top_switches"] = self.packed_top_switches()
        return out


# ---------------------------------------------------------------- constructors
def xgft(m: Sequence[int], w: Sequence[int], p: Sequence[int] | None = None,
         capacity: Sequence[float] | None = None, routing: str = "dmodk", radix: int | None = None) -> FatTree:
    """``XGFT(h; m; w)`` with ``p`` parallel cables (see :class:`FatTree`).

    Parameters
    ----------
    m, w : sequence of int
        Children per switch and parents per vertex, per level, bottom-up.
    p : sequence of int, optional
        Parallel cables per child-parent pair (default 1).
    capacity : sequence of float, optional
        Capacity of one cable per level, in switch ports (default 1).
    routing : {"dmodk", "shortest"}
        Up-port selection.
    radix : int, optional
        Switch ports, checked against every switch.

    Returns
    -------
    FatTree

    Examples
    --------
    >>> from topomap.networks.fattree import xgft
    >>> xgft((4, 4), (1, 4), p=(1, 2)).cables_per_level()
    (16, 32)
    """
    return FatTree(tuple(m), tuple(w), tuple(p or ()), tuple(capacity or ()), routing, radix)


def k_ary_n_tree(k: int, n: int, routing: str = "dmodk") -> FatTree:
    """k-ary n-tree (Petrini & Vanneschi 1997): ``k^n`` nodes, ``n k^(n-1)``
    switches of ``2k`` ports; ``m = (k,)*n``, ``w = (1, k, ..., k)``.

    Parameters
    ----------
    k : int
        Children (and, above the leaves, parents) per switch.
    n : int
        Switch levels.
    routing : {"dmodk", "shortest"}
        Up-port selection.

    Returns
    -------
    FatTree

    Examples
    --------
    >>> from topomap.networks.fattree import k_ary_n_tree
    >>> ft = k_ary_n_tree(4, 3)
    >>> ft.nnodes, ft.switches_per_level()
    (64, (16, 16, 16))
    """
    k, n = _positive_ints((k, n), "k and levels")
    _check_levels(n)
    return FatTree((k,) * n, (1,) + (k,) * (n - 1), routing=routing)


def k_port_n_tree(ports: int, n: int, routing: str = "dmodk") -> FatTree:
    """k-port n-tree (Lin, Chung & Huang 2004): switches of ``ports`` ports,
    half down and half up except at the top, which has all ``ports`` down;
    ``2 (ports/2)^n`` nodes, radix ``ports``.

    Parameters
    ----------
    ports : int
        Switch radix (even).
    n : int
        Switch levels.
    routing : {"dmodk", "shortest"}
        Up-port selection.

    Returns
    -------
    FatTree

    Examples
    --------
    >>> from topomap.networks.fattree import k_port_n_tree
    >>> ft = k_port_n_tree(4, 3)          # the 16-host data-centre fat tree
    >>> ft.nnodes, ft.switches_per_level(), ft.blocking_ratios()
    (16, (8, 8, 4), (1.0, 1.0))
    """
    ports, n = _positive_ints((ports, n), "ports and levels")
    _check_levels(n)
    if ports % 2:
        raise MachineError(f"a k-port n-tree needs an even number of ports, got {ports}")
    half = ports // 2
    return FatTree((half,) * (n - 1) + (ports,), (1,) + (half,) * (n - 1), routing=routing, radix=ports)


def tapered(tree: FatTree, factor: int, level: int | None = None) -> FatTree:
    """Divide the up-links ``w_i p_i`` of every vertex below ``level`` (default:
    the top level) by ``factor``.

    Parallel cables go first (``p_i`` shrinks by ``gcd(p_i, factor)``), so a
    vertex keeps all its parents as long as it can; the rest of the factor
    removes parents (``w_i``), and with them upper switches.

    Parameters
    ----------
    tree : FatTree
        The tree to taper.
    factor : int
        Divisor of ``w_i p_i``.
    level : int, optional
        Level ``i`` whose cables (from level ``i-1`` up) are cut, 1..h.

    Returns
    -------
    FatTree
        The tapered tree (same nodes, routing, capacities and radix).

    Raises
    ------
    MachineError
        When ``w_i p_i`` cannot be divided that way.

    Examples
    --------
    >>> from topomap.networks.fattree import k_ary_n_tree, tapered, xgft
    >>> tapered(k_ary_n_tree(4, 2), 2).w
    (1, 2)
    >>> tapered(xgft((2, 2), (1, 2), p=(1, 4)), 2).p
    (1, 2)
    """
    f = _positive_ints((factor,), "taper factor")[0]
    i = tree.levels if level is None else level
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 1 <= i <= tree.levels:
        raise MachineError(f"taper level must be 1..{tree.levels}, got {level!r}")
    w, p = tree.w[i - 1], tree.p[i - 1]
    g = math.gcd(p, f)
    if w % (f // g):
        raise MachineError(f"cannot taper level {i} by {f}: its {w} parents x {p} cables per vertex "
                           f"do not divide into {f} equal parts")
    ws, ps = list(tree.w), list(tree.p)
    ws[i - 1], ps[i - 1] = w // (f // g), p // g
    return FatTree(tree.m, tuple(ws), tuple(ps), tree.capacity, tree.routing, tree.radix)


def blocking(tree: FatTree, ratio: int) -> FatTree:
    """B:1 blocking at the leaves: ``ratio`` times as many nodes under each
    leaf switch (``m_1``), up-links unchanged.

    Parameters
    ----------
    tree : FatTree
        The tree to oversubscribe.
    ratio : int
        Factor on the nodes per leaf switch.

    Returns
    -------
    FatTree
        A tree with ``ratio`` times as many nodes (the radix, if any, is
        checked again).

    Examples
    --------
    >>> from topomap.networks.fattree import blocking, k_ary_n_tree
    >>> ft = blocking(k_ary_n_tree(6, 2), 5)          # 30 nodes, 6 up-links per leaf
    >>> ft.m, ft.blocking_ratios()
    ((30, 6), (5.0,))
    """
    b = _positive_ints((ratio,), "blocking ratio")[0]
    return FatTree((tree.m[0] * b, *tree.m[1:]), tree.w, tree.p, tree.capacity, tree.routing, tree.radix)


#: APHiD's untapered and baseline tapered 3-level fat trees of 64-port
#: switches (Michelogiannakis et al. 2017, §III, Tables I-II; notes 004 §3)
#: as XGFTs.  Untapered: 16 nodes per leaf with 2 links each, 32 leaves and
#: 32 aggregation switches per subtree (one cable to each), 8 subtrees, 128
#: cores reached 4 per aggregation switch with 8 cables each.  Baseline: 12
#: nodes per leaf sharing 42 ports ("netlink blocks", one cable of capacity
#: 3.5 per node), 22 leaves and 10 aggregation switches per subtree (2
#: cables per pair), 16 subtrees, 50 cores reached 5 per aggregation switch
#: with 4 cables each.
_APHID_UNTAPERED = FatTree((16, 32, 8), (1, 32, 4), (2, 1, 8), radix=64)
_APHID_BASELINE = FatTree((12, 22, 16), (1, 10, 5), (1, 2, 4), (3.5, 1.0, 1.0), radix=64)


def aphid_fat_tree(taper: int = 1, untapered: bool = False, routing: str = "dmodk") -> FatTree:
    """The APHiD 64-port 3-level fat tree (~4K nodes; notes 004 §3).

    ``taper`` = 1 is the paper's baseline tapered tree (4224 nodes); 2 and 4
    cut its aggregation-core cables to one half and one quarter ("0.5-Core",
    "0.25-Core") by dropping parallel cables, so every aggregation switch
    still reaches the same 5 core positions.  ``untapered=True`` gives the
    untapered 4096-node tree.

    Reproduces Table I (switches; with the 2x and 4x trees' under-filled
    cores packed into 25 and 13 physical switches, see
    :meth:`FatTree.packed_top_switches`) and Table II (links per port) except
    the printed Leaf-Agg count of the tapered trees: 7744 = 352 x 22 in the
    paper, 352 x 20 = 7040 here, the only count 64-port aggregation switches
    allow (22 leaves x 2 + 20 up = 64); see :mod:`topomap.cabling.aphid`.

    Parameters
    ----------
    taper : {1, 2, 4}
        Core taper over the baseline tapered tree.
    untapered : bool
        The untapered tree instead (``taper`` must stay 1).
    routing : {"dmodk", "shortest"}
        Up-port selection (APHiD simulated deterministic routing).

    Returns
    -------
    FatTree
        With ``radix=64``.

    Examples
    --------
    >>> from topomap.networks.fattree import aphid_fat_tree
    >>> ft = aphid_fat_tree(taper=4)
    >>> ft.nnodes, ft.switches_per_level()[:2], ft.packed_top_switches(), ft.ports_per_level()
    (4224, (352, 160), 13, (14784.0, 7040.0, 800.0))
    """
    if untapered:
        if taper != 1:
            raise MachineError(f"the untapered APHiD tree has no core taper, got taper={taper!r}")
        base = _APHID_UNTAPERED
    else:
        if taper not in (1, 2, 4):
            raise MachineError(f"APHiD core taper must be 1 (baseline), 2 or 4, got {taper!r}")
        base = _APHID_BASELINE if taper == 1 else tapered(_APHID_BASELINE, taper)
    return FatTree(base.m, base.w, base.p, base.capacity, routing, base.radix)


# ---------------------------------------------------------------- spec strings
def _options(body: str, spec: str, kind: str, allowed: Sequence[str], flags: Sequence[str] = ()) -> dict[str, str]:
    opts: dict[str, str] = {}
    for token in body.split(","):
        key, eq, value = (s.strip() for s in token.partition("="))
        if not eq and key in flags:
            value = ""
        elif not eq or key not in allowed:
            raise MachineError(f"unknown {kind} option {token.strip()!r} in machine spec {spec!r}; "
                               f"expected {', '.join([*(f'{a}=' for a in allowed), *flags])}")
        if key in opts:
            raise MachineError(f"{kind} option {key!r} is given twice in machine spec {spec!r}")
        opts[key] = value
    return opts


def _list(value: str, what: str, spec: str, number: Any = spec_int) -> tuple:
    return tuple(number(t, what, spec) for t in value.split("x"))


def _routing(opts: dict[str, str], spec: str) -> str:
    routing = opts.get("routing", "dmodk")
    if routing not in ROUTINGS:
        raise MachineError(f"routing {routing!r} in machine spec {spec!r} is not one of {', '.join(ROUTINGS)}")
    return routing


def _split_node(body: str, spec: str) -> tuple[str, str]:
    head, slash, node = body.partition("/")
    if slash and not node.strip():
        raise MachineError(f"machine spec {spec!r} ends in '/' without a node description (e.g. /8)")
    return head, node or "1"


@register_spec("xgft", "fattree", "aphid")
def _parse(kind: str, body: str, spec: str):
    head, node_text = _split_node(body, spec)
    if kind == "xgft":
        opts = _options(head, spec, kind, ("m", "w", "p", "c", "routing", "radix"))
        missing = [k for k in ("m", "w") if k not in opts]
        if missing:
            raise MachineError(f"machine spec {spec!r} needs {' and '.join(k + '=' for k in missing)} "
                               f"(e.g. xgft:m=4x4,w=1x4)")
        m = _list(opts["m"], "xgft m", spec)
        lists = {key: _list(opts[key], f"xgft {key}", spec, spec_float if key == "c" else spec_int)
                 for key in ("w", "p", "c") if key in opts}
        for key, seq in lists.items():
            if len(seq) != len(m):
                raise MachineError(f"xgft {key}={opts[key]} has {len(seq)} levels but m={opts['m']} has {len(m)} "
                                   f"in machine spec {spec!r}")
        radix = spec_int(opts["radix"], "xgft radix", spec) if "radix" in opts else None
        net = xgft(m, lists["w"], lists.get("p"), lists.get("c"), _routing(opts, spec), radix)
    elif kind == "fattree":
        opts = _options(head, spec, kind, ("k", "ports", "levels", "taper", "block", "routing"))
        if ("k" in opts) == ("ports" in opts) or "levels" not in opts:
            raise MachineError(f"machine spec {spec!r} needs levels= and exactly one of k= or ports= "
                               f"(e.g. fattree:k=16,levels=3)")
        levels = spec_int(opts["levels"], "fattree levels", spec)
        if "k" in opts:
            net = k_ary_n_tree(spec_int(opts["k"], "fattree k", spec), levels, _routing(opts, spec))
        else:
            net = k_port_n_tree(spec_int(opts["ports"], "fattree ports", spec), levels, _routing(opts, spec))
        if "taper" in opts:
            net = tapered(net, spec_int(opts["taper"], "fattree taper", spec))
        if "block" in opts:
            net = blocking(net, spec_int(opts["block"], "fattree block", spec))
    else:
        opts = _options(head, spec, kind, ("taper", "routing"), flags=("untapered",))
        if ("taper" in opts) == ("untapered" in opts):
            raise MachineError(f"machine spec {spec!r} needs exactly one of taper=1|2|4 or untapered "
                               f"(e.g. aphid:taper=2)")
        taper = spec_int(opts["taper"], "aphid taper", spec) if "taper" in opts else 1
        net = aphid_fat_tree(taper, "untapered" in opts, _routing(opts, spec))
    return net, parse_node(node_text, spec)

