"""The Scotch target of an allocation for the ``scotch`` method.

Scotch maps onto algorithmically coded targets much faster and better than
onto graph-defined (``deco``) ones (Pellegrini, Scotch 7 user's guide,
"Target architectures"), so :func:`choose` picks the coded target that
matches the machine and falls back to a graph only where none does:

* **Trees** (hierarchies, ``tree:`` networks, fat trees): a differenced
  ``tleaf`` (:mod:`topomap.export.scotch`).  When every allocated node holds
  the same number of allocated PEs and the PEs of a node are at distance 0
  from each other (``/16``: where a process sits inside its node changes no
  cost), the terminals are the **nodes** (Scotch balances the same number of
  processes onto each, and bipartitions 16 times fewer terminals) and the
  levels are the network's; otherwise the terminals are the **PEs** and the
  node's own levels sit under the network's.  Fat-tree levels count hops weighted by
  their bandwidth deficit: the link cost of level ``i`` is ``2 P_1 / P_i``
  with ``P_i`` the level's cables x capacity (``FatTree.ports_per_level``),
  so a full-bisection tree gets its hop distances 2, 4, 6, ... and a tapered
  or blocking level costs as much more as its links are scarcer, which
  steers Scotch's bipartitions away from the links that congest first.
* **Tori and meshes**, **hypercubes**: node terminals of ``torus2D``/
  ``torus3D``/``torusXD``, ``mesh2D``/``mesh3D`` or ``hcub``; an allocation
  that is a box of the torus gets the box's own grid (wrap-around kept in the
  dimensions it spans, a mesh in those it covers no more than half of), any
  other one the full target restricted by ``sub``.  These targets need the
  same number of allocated PEs on every node.
* **Everything else** (dragonflies, graphs, torus-meshes, meshes of 4 or
  more dimensions, which Scotch 7.0.3 measures with wrap-around, unequal
  nodes on a torus): a graph target that ``amk_grf`` builds from the network
  graph with the allocated nodes as terminals, weighted by their allocated
  PEs.  Up to :data:`DECO2_ABOVE` terminals it is a ``deco 1`` target, whose
  distance matrix grows with the square of the terminals (a 64,000-node one
  made gmap fail with ``archDecoArchLoad: bad input``); above, a ``deco 2``
  target (``amk_grf -2``), which stores the graph instead.  Scotch 7.0.3
  cannot load every ``deco 2`` target it builds (SciNet GPC's graph gives
  ``archDeco2ArchLoad2: bad input``), hence not below the threshold.

Scotch needs integer link costs >= 1: distances are scaled by the smallest
integer factor (up to 1000) that makes them integral, else rounded, and
shifted up when the lowest is below 1.  Adding one constant to every distance
between distinct PEs adds the same amount to the cost of every mapping with
one process per PE, so such a target keeps Scotch's objective exact there;
with several processes per PE it counts a pair on one PE as cheaper than a
pair on two PEs of the same node.
"""

from __future__ import annotations

import math
import os
import subprocess
from dataclasses import dataclass

import numpy as np

from ..errors import MachineError, MappingError, NotApplicable
from ..export import scotch as export
from ..machine import Allocation, Machine

__all__ = ["Target", "choose", "DECO2_ABOVE"]

#: Graph targets of more terminals are ``deco 2`` (linear size); up to this many, ``deco 1``.
DECO2_ABOVE = 4096


@dataclass(frozen=True)
class Target:
    """A Scotch target: its text, what its terminals stand for, and which rule chose it.

    Attributes
    ----------
    text : str
        The target file's contents.
    terms : numpy.ndarray
        PE (``unit == "pe"``) or node (``"node"``) of Scotch terminal ``j``.
    unit : {"pe", "node"}
    kind : str
        ``"tleaf"``, ``"torus"``, ``"mesh"``, ``"hcub"`` (each possibly as a
        ``sub`` target) or ``"deco"``.
    labelled : bool
        True when gmap names terminals by their label (``terms[j]``), not by ``j``.
    """

    text: str
    terms: np.ndarray
    unit: str
    kind: str
    labelled: bool = False


def _integer_costs(dists: list[float]) -> list[int]:
    """Increasing positive distances as integers >= 1 (see the module docstring)."""
    top = max(dists)
    scale = next((s for s in range(1, 1001)
                  if all(abs(d * s - round(d * s)) <= 1e-9 * max(1.0, d * s) for d in dists)), None)
    scaled = [round(d * (scale or 1e6 / top)) for d in dists]
    shift = max(0, 1 - scaled[0])
    out: list[int] = []
    for v in scaled:   # rounding must not merge two levels
        out.append(max(v + shift, out[-1] + 1 if out else 1))
    return out


def _fattree_levels(m: Machine) -> list[tuple[int, float, str]]:
    """Fat-tree levels at hop distances weighted by each level's bandwidth deficit."""
    ports = m.network.ports_per_level()
    dist, out = 0.0, []
    for (arity, _, name), p in zip(export.network_levels(m), ports):
        dist += 2.0 * ports[0] / p
        out.append((arity, dist, name))
    return out


def _sub(text: str, terms: np.ndarray, total: int) -> str:
    return text if terms.size == total else f"sub {terms.size} {' '.join(map(str, terms.tolist()))} {text}"


def _tree(m: Machine, pes: np.ndarray, nodes: np.ndarray, even: bool) -> Target | None:
    net = m.network.kind
    try:
        inside = export.merge_levels(export._node_levels(m))
        between = _fattree_levels(m) if net == "fattree" else export.network_levels(m)
        if m.nnodes > 1 and even and all(d == 0 for _, d, _ in inside):
            levels, terms, unit, total = export.merge_levels(between), nodes, "node", m.nnodes
        else:
            levels, terms, unit, total = export.merge_levels(inside + between), pes, "pe", m.npes
    except MachineError:
        return None
    if not levels:
        return None
    costs = _integer_costs([d for _, d, _ in levels])
    text = export.tleaf_text([(a, c) for (a, _, _), c in zip(levels, costs)])
    return Target(_sub(text, terms, total), terms, unit, "tleaf")


def _box(m: Machine, nodes: np.ndarray) -> Target | None:
    """The grid of a box-shaped allocation, when Scotch's torus or mesh measures it exactly."""
    dims, wrap = m.network.dims, m.network.wrap[0]
    strides = np.cumprod((1,) + tuple(dims[:-1]))
    coords = (nodes[:, None] // strides) % np.asarray(dims)
    starts, extents, kinds = [], [], set()
    for d, size in enumerate(dims):
        used = np.unique(coords[:, d])
        gaps = np.diff(np.append(used, used[0] + size)) if wrap else np.diff(used)
        if used.size > 1 and (gaps > 1).sum() > (1 if wrap else 0):
            return None   # not a (cyclic) interval
        # a wrapped interval starts after its one gap
        start = int(used[(int(np.argmax(gaps)) + 1) % used.size]) if wrap and used.size < size else int(used[0])
        e = int(used.size)
        starts.append(start)
        extents.append(e)
        if e > 2:
            kinds.add("torus" if e == size and wrap else "mesh" if not wrap or e - 1 <= size // 2 else "none")
    if math.prod(extents) != nodes.size or "none" in kinds or len(kinds) > 1:
        return None
    name = kinds.pop() if kinds else "mesh"
    if name == "mesh" and len(dims) > 3:
        return None   # Scotch 7.0.3's meshXD wraps around
    grid = np.indices(extents[::-1]).reshape(len(dims), -1)[::-1].T   # x fastest, as Scotch numbers
    terms = (((grid + np.asarray(starts)) % np.asarray(dims)) * strides).sum(axis=1)
    shape = list(extents) + ([1] if len(extents) == 1 else [])
    text = f"{name}{len(shape)}D {' '.join(map(str, shape))}\n" if len(shape) <= 3 else \
        f"{name}XD {len(shape)} {' '.join(map(str, shape))}\n"
    return Target(text, terms.astype(np.int64), "node", name)


def _grid(m: Machine, nodes: np.ndarray, even: bool) -> Target | None:
    net = m.network
    if not even:
        return None
    if net.kind == "hypercube":
        return Target(_sub(f"hcub {net.dim}\n", nodes, m.nnodes), nodes, "node", "hcub")
    if len(set(net.wrap)) > 1 or (not net.wrap[0] and len(net.dims) > 3):
        return None
    if nodes.size == m.nnodes:
        return Target(export.torus(m), nodes, "node", "torus" if net.wrap[0] else "mesh")
    box = _box(m, nodes)
    if box is not None:
        return box
    return Target(_sub(export.torus(m), nodes, m.nnodes), nodes, "node", "torus" if net.wrap[0] else "mesh")


def _deco(m: Machine, nodes: np.ndarray, counts: np.ndarray, workdir: str, amk_grf: str | None) -> Target:
    if amk_grf is None:
        raise NotApplicable(f"scotch: {m.spec!r} needs a graph target built by Scotch's amk_grf, which is not "
                            "installed (Debian/Ubuntu: apt-get install scotch)")
    loads = np.ones(m.nvertices, dtype=np.int64)
    loads[nodes] = counts // np.gcd.reduce(counts)
    grf, lst, tgt = (os.path.join(workdir, f) for f in ("net.grf", "net.vl", "net.tgt"))
    with open(grf, "w") as fh:
        fh.write(export.grf(m, loads))
    with open(lst, "w") as fh:
        fh.write(f"{nodes.size}\n{' '.join(map(str, nodes.tolist()))}\n")
    two = nodes.size > DECO2_ABOVE
    res = subprocess.run([amk_grf, *(["-2"] if two else []), f"-l{lst}", grf, tgt], capture_output=True, text=True)
    if res.returncode or "ERROR" in res.stderr:
        raise MappingError(f"scotch: amk_grf failed on {m.spec!r}: {res.stderr.strip()}")
    with open(tgt) as fh:
        text = fh.read()
    if not two:   # gmap names a deco 1 terminal by its vertex label, the node id
        return Target(text, nodes, "node", "deco", labelled=True)
    # "deco 2", "termnbr vertnbr ...", then one "domain vertex" line per terminal, in terminal order
    fields = text.split(maxsplit=5 + 2 * nodes.size)
    try:
        ok = fields[:2] == ["deco", "2"] and int(fields[2]) == nodes.size
        terms = np.array(fields[6:6 + 2 * nodes.size:2], dtype=np.int64) if ok else None
    except (ValueError, IndexError):
        terms = None
    if terms is None or terms.size != nodes.size or not np.array_equal(np.sort(terms), nodes):
        raise MappingError(f"scotch: amk_grf wrote a target that does not list the {nodes.size} allocated nodes "
                           f"of {m.spec!r} as its terminals")
    return Target(text, terms, "node", "deco")


def choose(allocation: Allocation, workdir: str, amk_grf: str | None = None) -> Target:
    """The Scotch target of ``allocation`` (see the module docstring for the rules).

    Parameters
    ----------
    allocation : Allocation
    workdir : str
        Where ``amk_grf`` writes its files when a graph target is needed.
    amk_grf : str, optional
        Path of Scotch's ``amk_grf`` (needed only for graph targets).

    Returns
    -------
    Target

    Raises
    ------
    NotApplicable
        When a graph target is needed and ``amk_grf`` is None.

    Examples
    --------
    >>> import tempfile, topomap as tm
    >>> choose(tm.machine("fattree:k=4,levels=3/16").allocate(1024), tempfile.mkdtemp()).text
    'tleaf 3 4 2 4 2 4 2\\n'
    >>> t = choose(tm.machine("torus:8x8x8/2").allocate(16), tempfile.mkdtemp())
    >>> t.text, t.terms.tolist()
    ('torus3D 8 1 1\\n', [0, 1, 2, 3, 4, 5, 6, 7])
    """
    m = allocation.machine
    pes = np.sort(allocation.pes.astype(np.int64))
    nodes, counts = np.unique(pes // m.pes_per_node, return_counts=True)
    even = bool(counts.min() == counts.max())
    kind = m.network.kind
    found = None
    if kind in ("single", "tree", "fattree"):
        found = _tree(m, pes, nodes, even)
    elif kind in ("torus", "hypercube"):
        found = _grid(m, nodes, even)
    return found or _deco(m, nodes, counts, workdir, amk_grf)
