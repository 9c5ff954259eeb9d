"""Graphviz ``dot`` drawing of a machine's network, optionally with link loads.

Format: the DOT language (graphviz.org/doc/info/lang.html): a ``digraph``
with one edge per directed topomap link, so the two directions of a cable
show their own loads.  Compute nodes are boxes ``nN`` labelled ``node N``;
switches are ellipses ``sV`` labelled ``switch V`` and their level (hop
distance to the nearest node, see :func:`topomap.networks.analysis.vertex_levels`).

Choices made here (drawing conventions, not from a source):

* Loads come from ``tm.evaluate(..., link_load=True)`` (bytes per link); a
  link is drawn by its congestion, bytes / capacity, relative to the most
  congested link: pen width 1 to 8, colour from green (light) through yellow
  to red (the maximum), HSV hue ``(1 - c/max) / 3``.  Idle links are thin,
  dashed and grey.  The edge label is the load in bytes (``%.3g``), the
  tooltip names the link id, its bytes and capacity.
* Without loads every link is drawn thin and black, labelled by nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..networks.analysis import vertex_levels
from ..errors import MachineError
from ..machine import Machine
from ..metrics import Metrics

__all__ = ["dot"]


def _loads(machine: Machine, load: Any) -> np.ndarray | None:
    if load is None:
        return None
    if isinstance(load, Metrics):
        if load.link_load is None:
            raise MachineError("these metrics carry no link loads: evaluate with link_load=True")
        load = load.link_load
    arr = np.asarray(load, dtype=np.float64)
    if arr.shape != (machine.nlinks,):
        raise MachineError(f"link loads need one value per link id ({machine.nlinks}), got shape {arr.shape}")
    if not np.isfinite(arr).all() or (arr < 0).any():
        k = int(np.flatnonzero(~np.isfinite(arr) | (arr < 0))[0])
        raise MachineError(f"the load of link {k} is {float(arr[k])!r}; loads must be finite and >= 0")
    return arr


def _vertex(v: int, nnodes: int) -> str:
    return f"n{v}" if v < nnodes else f"s{v}"


def dot(machine: Machine, load: "Metrics | Any | None" = None) -> str:
    """The network as a Graphviz digraph, links styled by congestion.

    Parameters
    ----------
    machine : Machine
        Any machine.
    load : Metrics or array of float, optional
        Metrics from ``tm.evaluate(..., link_load=True)`` or bytes per link id.

    Returns
    -------
    str
        DOT source; render with ``dot -Tsvg`` (trees) or ``neato`` (tori).

    Examples
    --------
    >>> import topomap as tm
    >>> m = tm.machine("torus:3")
    >>> met = tm.evaluate(tm.Pattern.from_edges([0], [1], [5.0]), m, [0, 1], link_load=True)
    >>> [line for line in dot(m, met).splitlines() if "->" in line][0]
    '  n0 -> n1 [penwidth=8, color="0.000 1.000 0.900", label="5", tooltip="link 0: 5 bytes / capacity 1"];'
    """
    loads = _loads(machine, load)
    g = machine.links()
    n = machine.nnodes
    levels = vertex_levels(machine)
    spec = machine.spec.replace("\\", "\\\\").replace('"', '\\"')
    lines = ["digraph topomap {",
             f'  graph [label="{spec}", labelloc=t, fontname="Helvetica"];',
             '  node [fontname="Helvetica"];',
             '  edge [fontname="Helvetica", fontsize=9];']
    lines += [f'  n{v} [shape=box, label="node {v}"];' for v in range(n)]
    lines += [f'  s{v} [shape=ellipse, label="switch {v}\\nlevel {levels[v]}"];' for v in range(n, machine.nvertices)]
    cong = None
    if loads is not None:
        cong = loads[g["link"]] / g["capacity"]
        top = float(cong.max()) if cong.size else 0.0
    for i, (k, s, d, cap) in enumerate(zip(g["link"].tolist(), g["src"].tolist(), g["dst"].tolist(),
                                           g["capacity"].tolist())):
        if cong is None:
            style = ""
        elif cong[i] > 0:
            frac = cong[i] / top
            style = (f' [penwidth={1 + 7 * frac:.3g}, color="{(1 - frac) / 3:.3f} 1.000 0.900", '
                     f'label="{loads[k]:.3g}", tooltip="link {k}: {loads[k]:.6g} bytes / capacity {cap:g}"]')
        else:
            style = f' [penwidth=1, color=gray60, style=dashed, tooltip="link {k}: idle / capacity {cap:g}"]'
        lines.append(f"  {_vertex(s, n)} -> {_vertex(d, n)}{style};")
    lines.append("}")
    return "\n".join(lines) + "\n"
