"""Scotch target architectures and source graphs of a machine.

Formats from the Scotch 7 user's guide, section "Files and data structures"
(``doc/src/scotch/s_f.tex``): algorithmically-coded targets (``tleaf``,
``mesh2D``/``mesh3D``/``meshXD``, ``torus2D``/``torus3D``/``torusXD``), graph
files (``.grf``: version ``0``; ``vertnbr arcnbr``; ``baseval flag``; one line
per vertex ``degree nbr...``), and the vertex list ``amk_grf -l`` reads (a
count, then vertex labels).

* :func:`tleaf` writes the **differenced** form.  Scotch 7 adds the link costs
  of every tree level on the path between two leaves, so a hierarchy whose
  leaves meeting at level ``k`` are at distance ``d_k`` becomes ``tleaf L
  a_L (d_L - d_{L-1}) ... a_1 d_1`` (top level first): KaHIP's ``4:16:16`` /
  ``1:10:100`` is ``tleaf 3 16 90 16 9 4 1`` (notes/anchors.md §1.5).  The
  undifferenced ``tleaf 3 16 100 16 10 4 1`` is a different, costlier target.
  Tree-shaped machines are hierarchies, ``tree:`` networks and fat trees
  (:func:`network_levels`: a fat tree's levels at their hop distances,
  2, 4, 6, ...; its nodes are numbered leaf switch by leaf switch, as a
  ``tleaf`` numbers its leaves).
* Scotch accepts only tree levels of at least 2 sons and link costs that are
  integers >= 1 (``archTleafArchLoad``).  Levels of arity 1 never are the
  lowest common level of two leaves, so they are dropped; consecutive levels
  of equal distance are merged into one level (the product of their arities),
  which keeps every leaf-to-leaf distance.  Anything else that Scotch cannot
  represent (distance 0, fractional or decreasing distances) is refused with a
  :class:`~topomap.MachineError` naming the level.
* :func:`torus` targets have one terminal per compute **node** (Scotch's
  ``torusXD`` numbering is topomap's node numbering); with several PEs per
  node, Scotch's balanced mapping puts about ``n / nodes`` processes on each.
  1-D grids are written as ``mesh2D n 1`` / ``torus2D n 1`` and 2-D/3-D grids
  with the fixed-dimension names, because Scotch 7.0.3 (Debian 12) measures
  ``meshXD`` distances with wrap-around, like ``torusXD`` (its ``atst``
  reports torus distances for ``meshXD 1 5``).  Meshes of 4 or more
  dimensions can only be ``meshXD``: with such a Scotch, export them as
  :func:`grf` instead.
* :func:`grf` is the simple undirected graph under the machine's links (nodes
  ``0..N-1``, then switches): parallel links and the two directions of a
  cable are one edge, and every edge costs 1, so ``amk_grf`` derives hop
  distances.  Scotch needs a symmetric graph, so a link without its reverse
  still gives an edge.  ``amk_grf -l`` with :func:`vertex_list` keeps the
  compute nodes as the only terminals; their labels are the node ids.  With
  vertex loads (flag ``001``) ``amk_grf`` weights the terminals by them.
"""

from __future__ import annotations

import numpy as np

from ..errors import MachineError
from ..machine import Machine

__all__ = ["tleaf", "tleaf_levels", "tleaf_text", "network_levels", "merge_levels", "torus", "grf", "vertex_list"]


def _node_levels(machine: Machine) -> list[tuple[int, float, str]]:
    """(arity, distance, name) of each node-tree level, bottom-up; refuses irregular trees."""
    tree = machine.node
    pes = np.arange(tree.npes)
    below = 1
    out = []
    for k, name in enumerate(tree.levels):
        sizes = np.bincount(tree.groups[k])
        block = int(sizes[0])
        if (sizes != block).any() or (tree.groups[k] != pes // block).any():
            raise MachineError(f"a Scotch tleaf needs a regular tree of consecutive PEs, but the node level "
                               f"{name!r} has groups of sizes {sorted(set(sizes.tolist()))} or out of order")
        out.append((block // below, float(tree.costs[k]), name))
        below = block
    return out


def network_levels(machine: Machine) -> list[tuple[int, float, str]]:
    """(arity, distance, name) of each level of a tree-shaped network, bottom-up.

    ``distance`` is the machine distance between PEs of two nodes whose
    lowest common switch is the level: the tree network's cost, or a fat
    tree's hop count (twice the level).  A single node has no levels.

    Examples
    --------
    >>> import topomap as tm
    >>> network_levels(tm.machine("fattree:k=4,levels=3/16"))
    [(4, 2.0, 'leaf'), (4, 4.0, 'agg'), (4, 6.0, 'spine')]
    """
    net = machine.network
    if net.kind == "single":
        return []
    if net.kind == "tree":
        return [(int(a), float(c), f"switch{i + 1}") for i, (a, c) in enumerate(zip(net.arities, net.costs))]
    if net.kind == "fattree":
        return [(int(a), 2.0 * (i + 1), name) for i, (a, name) in enumerate(zip(net.m, net.level_names()))]
    raise MachineError(f"a Scotch tleaf describes tree-shaped machines (hierarchy:, tree:, fattree: specs); "
                       f"{machine.spec!r} has a {net.kind} network: export it as 'torus' or 'grf'")


def merge_levels(levels: list[tuple[int, float, str]]) -> list[tuple[int, float, str]]:
    """Drop arity-1 levels and merge consecutive levels of equal distance (see the module docstring).

    Raises :class:`~topomap.MachineError` when a distance falls going up.

    Examples
    --------
    >>> merge_levels([(2, 1.0, "core"), (1, 5.0, "die"), (3, 10.0, "socket"), (2, 10.0, "board")])
    [(2, 1.0, 'core'), (6, 10.0, 'socket+board')]
    """
    out: list[tuple[int, float, str]] = []
    for arity, dist, name in levels:
        if arity == 1:
            continue
        if out and dist == out[-1][1]:
            out[-1] = (out[-1][0] * arity, dist, f"{out[-1][2]}+{name}")
        elif out and dist < out[-1][1]:
            raise MachineError(f"level {name!r} has distance {dist:g}, below {out[-1][1]:g} of level "
                               f"{out[-1][2]!r} under it: a tleaf needs distances that grow upwards")
        else:
            out.append((arity, dist, name))
    return out


def _tree_levels(machine: Machine) -> list[tuple[int, float, str]]:
    return merge_levels(_node_levels(machine) + network_levels(machine))


def tleaf_levels(machine: Machine) -> list[tuple[int, float]]:
    """The machine as a tree of PEs: ``(arity, distance)`` per level, bottom-up.

    Levels of arity 1 are dropped and consecutive levels of equal distance
    merged (see the module docstring); ``distance`` is that of two PEs whose
    lowest common ancestor is the level.

    Parameters
    ----------
    machine : Machine
        A hierarchy or tree machine (network kind ``single`` or ``tree``)
        whose node tree is regular.

    Returns
    -------
    list of (int, float)

    Examples
    --------
    >>> import topomap as tm
    >>> tleaf_levels(tm.machine("hierarchy:2:3:1:2/1:10:10:100"))
    [(2, 1.0), (3, 10.0), (2, 100.0)]
    """
    return [(a, d) for a, d, _ in _tree_levels(machine)]


def tleaf(machine: Machine) -> str:
    """Scotch ``tleaf`` target of a hierarchy machine, differenced (see the module docstring).

    Parameters
    ----------
    machine : Machine
        Network kind ``single`` or ``tree``, a regular node tree, integer
        distances >= 1 that grow upwards.

    Returns
    -------
    str
        One line, e.g. ``"tleaf 3 16 90 16 9 4 1\\n"``; the leaves are the PEs
        in topomap's PE order.

    Examples
    --------
    >>> import topomap as tm
    >>> tleaf(tm.machine("hierarchy:4:16:16/1:10:100"))
    'tleaf 3 16 90 16 9 4 1\\n'
    """
    levels = _tree_levels(machine)
    if not levels:
        raise MachineError(f"{machine.spec!r} has a single PE; a Scotch tleaf needs at least 2")
    for _, dist, name in levels:
        if dist < 1 or dist != int(dist):
            raise MachineError(f"Scotch tleaf link costs are integers >= 1, but level {name!r} of "
                               f"{machine.spec!r} has distance {dist:g}")
    return tleaf_text([(a, int(d)) for a, d, _ in levels])


def tleaf_text(levels: list[tuple[int, int]]) -> str:
    """The differenced ``tleaf`` line of ``(arity, distance)`` levels, bottom-up.

    Distances are integers >= 1 that grow upwards (checked by the callers).

    Examples
    --------
    >>> tleaf_text([(16, 1), (16, 10), (4, 100)])
    'tleaf 3 4 90 16 9 16 1\\n'
    """
    dists = [d for _, d in levels]
    links = [d - below for d, below in zip(dists, [0] + dists[:-1])]
    fields = [f"{a} {c}" for (a, _), c in zip(reversed(levels), reversed(links))]
    return f"tleaf {len(levels)} {' '.join(fields)}\n"


def torus(machine: Machine) -> str:
    """Scotch ``torus2D``/``torus3D``/``torusXD`` (or ``mesh*``) target of a torus or mesh machine.

    Terminals are compute nodes, numbered as topomap numbers them.

    Examples
    --------
    >>> import topomap as tm
    >>> torus(tm.machine("torus:8x8x8/16")), torus(tm.machine("mesh:4x4x2x2"))
    ('torus3D 8 8 8\\n', 'meshXD 4 4 4 2 2\\n')
    """
    net = machine.network
    if net.kind != "torus":
        raise MachineError(f"a Scotch torus/mesh target needs a torus or mesh machine; {machine.spec!r} "
                           f"has a {net.kind} network: export it as 'tleaf' or 'grf'")
    if len(set(net.wrap)) > 1:
        raise MachineError(f"Scotch has no target that wraps only some dimensions ({machine.spec!r}, "
                           f"wrap={list(net.wrap)}): export it as 'grf'")
    name = "torus" if net.wrap[0] else "mesh"
    # a 1-D grid is written as 2-D with a second dimension of 1 (same terminals, same distances)
    dims = tuple(net.dims) + ((1,) if len(net.dims) == 1 else ())
    if len(dims) in (2, 3):
        return f"{name}{len(dims)}D {' '.join(map(str, dims))}\n"
    return f"{name}XD {len(dims)} {' '.join(map(str, dims))}\n"


def grf(machine: Machine, loads: np.ndarray | None = None) -> str:
    """Scotch source graph (``.grf``) of the network: nodes, then switches, unit edges.

    Build a target from it with ``amk_grf -l LIST net.grf net.tgt`` (LIST
    from :func:`vertex_list`).  ``loads`` (one integer >= 1 per network
    vertex) become vertex loads, which ``amk_grf`` turns into terminal
    weights: a node of twice the load receives twice the processes.

    Examples
    --------
    >>> import topomap as tm
    >>> print(grf(tm.machine("hierarchy:1:2/1:10")), end="")
    0
    3 4
    0 000
    1 2
    1 2
    2 0 1
    >>> print(grf(tm.machine("hierarchy:1:2/1:10"), loads=np.array([2, 1, 1])).splitlines()[2:4])
    ['0 001', '2 1 2']
    """
    g = machine.links()
    nvert = machine.nvertices
    if loads is not None:
        loads = np.asarray(loads)
        if loads.shape != (nvert,) or loads.dtype.kind not in "iu" or (loads < 1).any():
            raise MachineError(f"Scotch vertex loads of {machine.spec!r} must be {nvert} integers >= 1")
    u = np.concatenate([g["src"], g["dst"]]).astype(np.int64)
    v = np.concatenate([g["dst"], g["src"]]).astype(np.int64)
    arcs = np.unique(u * nvert + v)
    rows, cols = np.divmod(arcs, nvert)
    starts = np.searchsorted(rows, np.arange(nvert + 1))
    lines = ["0", f"{nvert} {arcs.size}", "0 000" if loads is None else "0 001"]
    for x in range(nvert):
        nbrs = cols[starts[x]:starts[x + 1]]
        head = [nbrs.size] if loads is None else [int(loads[x]), nbrs.size]
        lines.append(" ".join(map(str, [*head, *nbrs.tolist()])))
    return "\n".join(lines) + "\n"


def vertex_list(machine: Machine) -> str:
    """The compute nodes as a Scotch vertex list (``amk_grf -l``): their count, then ids.

    Examples
    --------
    >>> import topomap as tm
    >>> vertex_list(tm.machine("hierarchy:1:2:2/1:10:100"))
    '4\\n0 1 2 3\\n'
    """
    return f"{machine.nnodes}\n{' '.join(map(str, range(machine.nnodes)))}\n"
