"""The machine's network with its links coloured by congestion (bytes / capacity)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MachineError
from ..machine import Machine
from ..networks import Dragonfly, Torus
from ._common import axes, pyplot

__all__ = ["machine_links", "LAYOUTS"]

#: Layouts of :func:`machine_links`; ``auto`` picks by network kind.
LAYOUTS = ("auto", "grid", "levels", "groups", "circle")


def _grid(machine: Machine, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tori and meshes of 1 or 2 dimensions: node (x0, x1), first coordinate fastest.

    A wrap-around link is drawn as two stubs leaving and entering the grid
    border, so it gets one segment per end (``link_of`` maps segments back)."""
    dims = machine.network.dims
    if len(dims) > 2:
        raise MachineError(f"layout 'grid' draws tori and meshes of 1 or 2 dimensions; {machine.spec} has "
                           f"{len(dims)} (use layout='circle')")
    d0 = dims[0]
    ids = np.arange(machine.nnodes)
    pos = np.stack([ids % d0, ids // d0], axis=1).astype(float)
    segs, link_of = [], []
    for i, (u, v) in enumerate(zip(src, dst)):
        a, b = pos[u], pos[v]
        step = b - a
        axis = int(np.flatnonzero(step)[0])
        if abs(step[axis]) == 1:
            segs.append((a, b))
            link_of.append(i)
            continue
        out = np.zeros(2)
        out[axis] = -0.5 if step[axis] > 0 else 0.5  # the wrap goes the other way round
        segs += [(a, a + out), (b - out, b)]
        link_of += [i, i]
    return pos, np.asarray(segs, dtype=float), np.asarray(link_of)


def _levels(machine: Machine, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Compute nodes in a row at the bottom, each switch one row above its
    nearest node level; switches ordered by the mean position of their
    neighbours below (one barycentre pass keeps a tree from crossing itself)."""
    nv, nn = machine.nvertices, machine.nnodes
    level = np.full(nv, -1, dtype=np.int64)
    level[:nn] = 0
    frontier = np.arange(nn)
    depth = 0
    while frontier.size:
        depth += 1
        reach = np.concatenate([dst[np.isin(src, frontier)], src[np.isin(dst, frontier)]])
        frontier = np.unique(reach[level[reach] < 0])
        level[frontier] = depth
    if (level < 0).any():
        raise MachineError(f"switch {int(np.flatnonzero(level < 0)[0]) - nn} of {machine.spec} is not connected "
                           "to any node")
    pos = np.zeros((nv, 2))
    pos[:nn, 0] = np.arange(nn)
    pos[:, 1] = level
    width = max(nn - 1, 1)
    for lev in range(1, int(level.max()) + 1):
        members = np.flatnonzero(level == lev)
        below = level[dst] == lev - 1
        sums = np.zeros(nv)
        counts = np.zeros(nv)
        np.add.at(sums, src[below], pos[dst[below], 0])
        np.add.at(counts, src[below], 1)
        bary = sums[members] / np.maximum(counts[members], 1)
        ranked = members[np.lexsort((members, bary))]
        pos[ranked, 0] = np.linspace(0, width, ranked.size) if ranked.size > 1 else width / 2
    pos[:, 1] *= max(1.0, width / (2 * max(int(level.max()), 1)))  # keep the picture roughly as tall as wide
    return pos


def _groups(machine: Machine, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Dragonfly: groups around a circle, each group's routers on a small circle,
    each router's nodes just outside it."""
    net: Dragonfly = machine.network
    g, a, p = net.g, net.a, net.p
    nn = machine.nnodes
    pos = np.zeros((machine.nvertices, 2))
    r_group = min(0.35, 0.8 * np.pi / g)
    for router in range(g * a):
        grp, r = divmod(router, a)
        theta = 2 * np.pi * grp / g
        centre = np.array([np.cos(theta), np.sin(theta)])
        phi = theta + 2 * np.pi * r / a
        out = np.array([np.cos(phi), np.sin(phi)])
        pos[nn + router] = centre + r_group * out
        for k in range(p):
            spread = (k - (p - 1) / 2) * 0.5 / max(p, 1)
            tilt = np.array([np.cos(phi + spread), np.sin(phi + spread)])
            pos[router * p + k] = pos[nn + router] + 0.35 * r_group * tilt
    return pos


def _circle(machine: Machine, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    nn, nv = machine.nnodes, machine.nvertices
    pos = np.zeros((nv, 2))
    for start, count, radius in ((0, nn, 1.0), (nn, nv - nn, 0.6)):
        t = 2 * np.pi * np.arange(count) / max(count, 1)
        pos[start:start + count] = radius * np.stack([np.cos(t), np.sin(t)], axis=1)
    return pos


def _loads(machine: Machine, load: Any) -> np.ndarray | None:
    if load is None:
        return None
    if hasattr(load, "link_load"):
        if load.link_load is None:
            raise MachineError("these Metrics have no link loads: evaluate with tm.evaluate(..., link_load=True)")
        load = load.link_load
    arr = np.asarray(load, dtype=float)
    if arr.shape != (machine.nlinks,):
        raise MachineError(f"link loads must have one value per link id ({machine.nlinks}), got shape {arr.shape}")
    return arr


def machine_links(machine: "Machine | str", load: Any = None, *, ax: Any = None, layout: str = "auto",
                  nodes: Any = None, cmap: str = "inferno_r", colorbar: bool = True, width: float = 1.5,
                  title: str | None = None) -> Any:
    """Draw the network, each directed link coloured by its congestion.

    The two directions of a cable are drawn side by side, hottest links on
    top.  Compute nodes are squares, switches and routers dots.

    Parameters
    ----------
    machine : Machine or spec string
        The machine (its :meth:`~topomap.Machine.links`).
    load : Metrics or array, optional
        Bytes per link id: ``tm.evaluate(..., link_load=True)`` or its
        ``link_load``.  Links are coloured by bytes / capacity (the
        congestion whose maximum is ``max_congestion``); without loads all
        links are grey.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    layout : {"auto", "grid", "levels", "groups", "circle"}
        ``grid``: 1-D/2-D tori and meshes (wrap-around links as stubs at the
        border); ``levels``: networks with switches (trees, fat trees, fabric
        files) as rows of nodes and switch levels; ``groups``: dragonfly
        groups around a circle; ``circle``: anything else (hypercubes,
        circulants, 3-D tori).  ``auto`` picks by network kind.
    nodes : array of node ids, optional
        Nodes to highlight (e.g. ``allocation.nodes()``).
    cmap : str
        Colour map of the congestion.
    colorbar : bool
        Add a colour bar (only with loads).
    width : float
        Line width of a link.
    title : str, optional
        Default: the machine's spec.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import topomap as tm, topomap.plot as tp
    >>> pat = tm.generators.stencil_2d((8, 8))
    >>> alloc = tm.machine("torus:4x4/4").allocate(64)
    >>> met = tm.evaluate(pat, alloc, tm.map(pat, alloc, "random", seed=1), link_load=True)
    >>> ax = tp.machine_links(alloc.machine, met, nodes=alloc.nodes())
    >>> ax.collections[0].get_clim() == (0.0, met.max_congestion)
    True
    """
    pyplot()  # fail early, naming the extra, when matplotlib is missing
    from matplotlib.collections import LineCollection
    from matplotlib.colors import Normalize

    from ..networks.spec import machine as build_machine

    machine = build_machine(machine)
    if layout not in LAYOUTS:
        raise MachineError(f"unknown layout {layout!r}; choose one of {', '.join(LAYOUTS)}")
    g = machine.links()
    src, dst, ids = g["src"].astype(np.int64), g["dst"].astype(np.int64), g["link"]
    if ids.size == 0:
        raise MachineError(f"{machine.spec} has no network links to draw")
    values = _loads(machine, load)
    net = machine.network
    if layout == "auto":
        if isinstance(net, Torus) and len(net.dims) <= 2:
            layout = "grid"
        elif isinstance(net, Dragonfly):
            layout = "groups"
        elif machine.nvertices > machine.nnodes:
            layout = "levels"
        else:
            layout = "circle"
    if layout == "grid" and not isinstance(net, Torus):
        raise MachineError(f"layout 'grid' is for tori and meshes, not {net.kind} ({machine.spec})")
    if layout == "groups" and not isinstance(net, Dragonfly):
        raise MachineError(f"layout 'groups' is for dragonflies, not {net.kind} ({machine.spec})")
    if layout == "grid":
        pos, segs, link_of = _grid(machine, src, dst)
        gap = 0.08
    else:
        pos = {"levels": _levels, "groups": _groups, "circle": _circle}[layout](machine, src, dst)
        segs = np.stack([pos[src], pos[dst]], axis=1)
        link_of = np.arange(src.size)
        span = np.ptp(pos, axis=0).max() or 1.0
        gap = 0.004 * span if layout != "levels" else 0.15
    d = segs[:, 1] - segs[:, 0]
    length = np.hypot(d[:, 0], d[:, 1])
    normal = np.stack([-d[:, 1], d[:, 0]], axis=1) / np.maximum(length, 1e-12)[:, None]
    if layout == "levels":
        # rows are far apart and nodes close together: offset sideways, up links left of down links
        normal = np.where(np.abs(d[:, 1:2]) > 0, np.stack([np.sign(d[:, 1]), np.zeros(len(d))], axis=1), normal)
    segs = segs + gap * normal[:, None, :]

    ax = axes(ax)
    if values is None:
        lines = LineCollection(segs, colors="0.6", linewidths=width)
    else:
        congestion = values[ids] / g["capacity"]
        per_seg = congestion[link_of]
        order = np.argsort(per_seg, kind="stable")
        top = float(congestion.max()) if congestion.max() > 0 else 1.0
        lines = LineCollection(segs[order], array=per_seg[order], cmap=cmap, norm=Normalize(0.0, top),
                               linewidths=width)
    ax.add_collection(lines)
    nn = machine.nnodes
    highlight = np.zeros(nn, dtype=bool)
    if nodes is not None:
        chosen = np.asarray(nodes, dtype=np.int64)
        if chosen.size and (chosen.min() < 0 or chosen.max() >= nn):
            raise MachineError(f"node {chosen[(chosen < 0) | (chosen >= nn)][0]} is not a node of {machine.spec}")
        highlight[chosen] = True
    size = max(4.0, 60.0 / np.sqrt(max(nn, 1)))
    ax.scatter(pos[:nn, 0], pos[:nn, 1], s=size, marker="s", zorder=3,
               c=np.where(highlight, "tab:blue", "0.75"), edgecolors="none")
    if machine.nvertices > nn:
        ax.scatter(pos[nn:, 0], pos[nn:, 1], s=size, marker="o", c="0.35", zorder=3, edgecolors="none")
    if values is not None and colorbar:
        ax.figure.colorbar(lines, ax=ax, label="congestion (bytes / capacity)")
    ax.autoscale_view()
    if layout != "levels":
        ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title if title is not None else machine.spec)
    return ax
