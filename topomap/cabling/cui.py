"""Cable length and cost of a switch network laid out in cabinets.

Source: Cui's thesis §5.6 (seed 003; notes §1.4).  Top-of-rack layout:

* 8 switches per cabinet, switch ``i`` in cabinet ``i // 8`` (so ring
  neighbours share a cabinet);
* cabinets 0.6 m wide and 2.1 m deep, on a grid of ``r = ceil(sqrt(n))`` rows
  and ``c = ceil(n / r)`` columns, ``n`` the number of cabinets, filled row by
  row (``order="row-major"``) or in alternate directions (``"snake"``);
* a cable inside a cabinet is 1 m; between cabinets it is the Manhattan
  distance (columns x 0.6 m + rows x 2.1 m) plus 2 m;
* node-to-switch cables are ignored; only switch-to-switch cables count.

Cost: the thesis uses the Slim Fly model (Besta & Hoefler, SC'14): switch
cost + cable cost for 100 Gb/s cables, but gives no coefficients.  The
defaults of :class:`CableCostModel` are the Slim Fly linear functions as
recalled in the notes (marked *unverified* there): electrical cables
``(0.4079 L + 0.5771)`` $/(Gb/s), optical ``(0.0919 L + 7.2745)`` $/(Gb/s),
routers ``350.4 k - 892.3`` $ for ``k`` ports.  Choices made here, where the
thesis is silent: electrical cables inside a cabinet and optical ones
between cabinets; ``k`` = the largest switch degree + 1 port per attached
compute node.  With these numbers the circulant saves about 9% against the
random shortcut network at 1,024 switches, not the thesis's 18%: the
coefficients (or the missing reference [136]) differ.  The cable-length
result (46% shorter at 1,024 switches) is reproduced.  The thesis has no
power model, so none is offered.

Examples
--------
>>> import topomap as tm
>>> from topomap.cabling.cui import cable_report
>>> rep = cable_report(tm.Circulant(64))
>>> rep["cables"], rep["intra_cabinet"], round(rep["average_m"], 2)
(352, 136, 3.03)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MachineError

__all__ = ["CabinetLayout", "CableCostModel", "switch_cables", "cable_report", "network_cost"]


@dataclass(frozen=True)
class CabinetLayout:
    """Where switches sit (see the module docstring); lengths in metres.

    Examples
    --------
    >>> from topomap.cabling.cui import CabinetLayout
    >>> lay = CabinetLayout()
    >>> lay.grid(1024)                      # 128 cabinets on a 12 x 11 grid
    (12, 11)
    >>> lay.cable_lengths([0, 0], [7, 8], 1024).tolist()   # same cabinet; next column
    [1.0, 2.6]
    """

    switches_per_cabinet: int = 8
    width_m: float = 0.6
    depth_m: float = 2.1
    intra_m: float = 1.0
    inter_overhead_m: float = 2.0
    order: str = "row-major"

    def __post_init__(self) -> None:
        if self.order not in ("row-major", "snake"):
            raise MachineError(f"cabinet order must be 'row-major' or 'snake', got {self.order!r}")
        if self.switches_per_cabinet < 1:
            raise MachineError(f"a cabinet holds at least one switch, got {self.switches_per_cabinet}")

    def grid(self, nswitches: int) -> tuple[int, int]:
        """(rows, columns) of the cabinet grid for ``nswitches`` switches."""
        n = -(-nswitches // self.switches_per_cabinet)
        rows = math.ceil(math.sqrt(n))
        return rows, -(-n // rows)

    def place(self, switch: Any, nswitches: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(cabinet, row, column) of each switch."""
        cab = np.asarray(switch, dtype=np.int64) // self.switches_per_cabinet
        _, cols = self.grid(nswitches)
        row, col = np.divmod(cab, cols)
        if self.order == "snake":
            col = np.where(row % 2 == 1, cols - 1 - col, col)
        return cab, row, col

    def cable_lengths(self, u: Any, v: Any, nswitches: int) -> np.ndarray:
        """Length of the cable between switches ``u[i]`` and ``v[i]``."""
        cu, ru, colu = self.place(u, nswitches)
        cv, rv, colv = self.place(v, nswitches)
        between = np.abs(colu - colv) * self.width_m + np.abs(ru - rv) * self.depth_m + self.inter_overhead_m
        return np.where(cu == cv, self.intra_m, between)


@dataclass(frozen=True)
class CableCostModel:
    """Linear cable and router prices (Slim Fly, as recalled in the notes; unverified).

    Cable cost = (per_m x length + fixed) x bandwidth in Gb/s, electrical inside
    a cabinet and optical between cabinets; router cost = per_port x ports + fixed.
    """

    electrical_per_m: float = 0.4079
    electrical_fixed: float = 0.5771
    optical_per_m: float = 0.0919
    optical_fixed: float = 7.2745
    router_per_port: float = 350.4
    router_fixed: float = -892.3
    bandwidth_gbps: float = 100.0

    def cable_cost(self, lengths: Any, intra: Any) -> np.ndarray:
        """Price of each cable."""
        lengths = np.asarray(lengths, dtype=np.float64)
        per_gbps = np.where(intra, self.electrical_per_m * lengths + self.electrical_fixed,
                            self.optical_per_m * lengths + self.optical_fixed)
        return per_gbps * self.bandwidth_gbps

    def router_cost(self, ports: int) -> float:
        """Price of one router with ``ports`` ports."""
        return self.router_per_port * ports + self.router_fixed


def switch_cables(network: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """Cables between switches: ``(u, v, nswitches)`` with switch indices ``u < v``.

    ``network`` is a :class:`~topomap.Machine`, a :class:`~topomap.GraphNetwork`
    or a network with a ``graph`` (:class:`~topomap.Circulant`,
    :class:`~topomap.RandomShortcut`).  In a switchless (direct) network every
    node is its own switch.  A cable is a pair of opposite links: between two
    switches there are as many cables as the larger of the two link counts.
    """
    from ..machine import Machine
    from ..networks import GraphNetwork

    if isinstance(network, Machine):
        g = network.links()
        src, dst, nnodes, nvert = g["src"], g["dst"], network.nnodes, network.nvertices
    else:
        net = network if isinstance(network, GraphNetwork) else getattr(network, "graph", None)
        if not isinstance(net, GraphNetwork):
            raise MachineError(f"cannot lay out cables of a {type(network).__name__}; pass a Machine or a graph network")
        src, dst, nnodes, nvert = net.src, net.dst, net.nnodes, net.nvertices
    first = 0 if nvert == nnodes else nnodes
    keep = (src >= first) & (dst >= first)
    a, b = src[keep].astype(np.int64) - first, dst[keep].astype(np.int64) - first
    nsw = nvert - first
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    forward = np.bincount(lo * nsw + hi, weights=a < b, minlength=0)
    backward = np.bincount(lo * nsw + hi, weights=a > b, minlength=0)
    count = np.maximum(forward, backward).astype(np.int64)
    pairs = np.repeat(np.flatnonzero(count), count[count > 0])
    return pairs // nsw, pairs % nsw, nsw


def cable_report(network: Any, layout: CabinetLayout = CabinetLayout()) -> dict[str, Any]:
    """Cable count and lengths of a network in a cabinet layout.

    Returns
    -------
    dict
        ``switches``, ``cabinets``, ``grid`` (rows, columns), ``cables``,
        ``intra_cabinet`` (cables inside a cabinet), ``total_m``,
        ``average_m`` and ``lengths`` (metres per cable).

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.cabling.cui import CabinetLayout, cable_report
    >>> round(cable_report(tm.Circulant(1024), CabinetLayout(order="snake"))["average_m"], 2)
    5.95
    """
    u, v, nsw = switch_cables(network)
    lengths = layout.cable_lengths(u, v, nsw)
    intra = int(np.count_nonzero(u // layout.switches_per_cabinet == v // layout.switches_per_cabinet))
    return {
        "switches": nsw,
        "cabinets": -(-nsw // layout.switches_per_cabinet),
        "grid": layout.grid(nsw),
        "cables": int(u.size),
        "intra_cabinet": intra,
        "total_m": float(lengths.sum()),
        "average_m": float(lengths.mean()) if lengths.size else 0.0,
        "lengths": lengths,
    }


def network_cost(network: Any, layout: CabinetLayout = CabinetLayout(), model: CableCostModel = CableCostModel(),
                 nodes_per_switch: int = 1) -> dict[str, Any]:
    """Switch and cable cost of a network (Slim Fly model, see the module docstring).

    Every switch is priced with the same port count: the largest switch
    degree plus ``nodes_per_switch``, as the thesis prices both topologies'
    switches alike.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.cabling.cui import network_cost
    >>> c, r = network_cost(tm.Circulant(1024)), network_cost(tm.RandomShortcut(1024, 19))
    >>> c["ports"], c["switch_cost"] == r["switch_cost"], round(1 - c["total"] / r["total"], 2)
    (20, True, 0.09)
    """
    rep = cable_report(network, layout)
    u, v, nsw = switch_cables(network)
    degree = np.bincount(np.concatenate([u, v]), minlength=nsw)
    ports = int(degree.max(initial=0)) + nodes_per_switch
    intra = u // layout.switches_per_cabinet == v // layout.switches_per_cabinet
    cable = float(model.cable_cost(rep["lengths"], intra).sum())
    switch = nsw * model.router_cost(ports)
    return {"switches": nsw, "ports": ports, "switch_cost": switch, "cable_cost": cable, "total": switch + cable,
            "average_cable_m": rep["average_m"]}
