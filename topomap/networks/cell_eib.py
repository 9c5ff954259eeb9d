"""The Cell Broadband Engine's Element Interconnect Bus (EIB) and the QS20 Blade.

Kumar (PhD thesis 2012, ch. 4; notes 001 §4.1): the EIB is **four
unidirectional rings**, two clockwise and two counter-clockwise, past 12
ramps; each ring carries up to **3 transfers at once if their paths do not
overlap**; the arbiter sends a transfer the **short way**, and one going
**exactly half-way may take either direction**.  The ramp order (Kistler et
al. 2006, thesis ref. [32]; Fig. 4.1 is not in the text) is

    PPE, SPE1, SPE3, SPE5, SPE7, IOIF1, BIF, SPE6, SPE4, SPE2, SPE0, MIC

(cyclic; clockwise = forward in this list), so the SPEs' cyclic order is
0, 1, 3, 5, 7, 6, 4, 2 and the half-way pairs are (0, 7), (1, 6), (3, 4),
(2, 5).  The ring's two "sides" are the segments PPE-MIC and BIF-IOIF1.

As a :class:`~topomap.Machine` (spec ``cell``) the EIB is a
:class:`~topomap.GraphNetwork`: SPE ``i`` is compute node ``i`` (one PE
each), the PPE, IOIF1, BIF and MIC ramps are switches, and each ring segment
is one link per direction of capacity 2 (the two rings of that direction;
the unit is one ring, 16 B x 1.6 GHz = 25.6 GB/s, so a
:class:`~topomap.timemodel.TimeModel` with ``link_bandwidth=25.6e9`` gives
the EIB's rates).  Routes are tabled the short way; half-way transfers go
the way ``halfway`` names (``"cw"`` by default, ``cell:halfway=ccw`` for
the other), a choice, since the hardware may take either.  ``cell:blade``
is the QS20 Blade: two EIBs (SPEs 8-15 on processor 1) joined at their BIF
ramps by one link each way, 30 GB/s from processor 0 to 1 and 20 GB/s back
(capacities 30/25.6 and 20/25.6).  The affinity tools are in
:mod:`topomap.networks.cell_affinity`.

Examples
--------
>>> import topomap as tm
>>> m = tm.machine("cell")
>>> m.nnodes, m.npes, m.nlinks
(8, 8, 24)
>>> [m.network.vertex_name(v) for v in (0, 8, 9, 10, 11)]
['SPE0', 'PPE', 'IOIF1', 'BIF', 'MIC']
>>> route(1, 5), route(4, 5), route(0, 7)       # (direction, segments): +1 clockwise
((1, (1, 2)), (-1, (7, 6, 5, 4, 3)), (1, (10, 11, 0, 1, 2, 3)))
"""

from __future__ import annotations

import numpy as np

from ..errors import MachineError
from ..machine import Machine
from ..node.nodetree import NodeTree
from .graph import GraphNetwork
from .spec import register_spec

__all__ = ["RAMPS", "SPE_POSITION", "SIDES", "RING_GBPS", "route", "is_halfway", "eib_network", "blade_network",
           "machine"]

#: Ramps in ring order (clockwise = forward).
RAMPS = ("PPE", "SPE1", "SPE3", "SPE5", "SPE7", "IOIF1", "BIF", "SPE6", "SPE4", "SPE2", "SPE0", "MIC")
#: Ring position of physical SPE ``i``.
SPE_POSITION = tuple(RAMPS.index(f"SPE{i}") for i in range(8))
#: The ring's two sides, as segment ids (segment ``s`` joins positions ``s`` and ``s + 1``).
SIDES = (RAMPS.index("MIC"), RAMPS.index("IOIF1"))
#: Bandwidth of one ring in one direction, GB/s (16 B x 1.6 GHz).
RING_GBPS = 25.6
_N = len(RAMPS)
_SWITCHES = ("PPE", "IOIF1", "BIF", "MIC")
_BIF = RAMPS.index("BIF")
_BIF_GBPS = (30.0, 20.0)        # processor 0 -> 1, 1 -> 0 (thesis §4.5)


def _check_spe(spe: int) -> int:
    if isinstance(spe, bool) or not isinstance(spe, (int, np.integer)) or not 0 <= spe < 8:
        raise MachineError(f"a Cell SPE is numbered 0..7, got {spe!r}")
    return int(spe)


def is_halfway(a: int, b: int) -> bool:
    """Whether SPEs ``a`` and ``b`` sit exactly half-way round the ring (either direction is short)."""
    return (SPE_POSITION[_check_spe(b)] - SPE_POSITION[_check_spe(a)]) % _N == _N // 2


def route(a: int, b: int, halfway: str = "cw") -> tuple[int, tuple[int, ...]]:
    """Direction (+1 clockwise, -1 counter-clockwise) and segments of the EIB transfer ``a -> b``.

    The short way; a half-way transfer goes the way ``halfway`` names.
    Segment ``s`` joins ring positions ``s`` and ``s + 1``.
    """
    pa, pb = SPE_POSITION[_check_spe(a)], SPE_POSITION[_check_spe(b)]
    return _arc(pa, pb, halfway)


def _arc(pa: int, pb: int, halfway: str) -> tuple[int, tuple[int, ...]]:
    """The short way between ring positions (half-way: as ``halfway`` says)."""
    if halfway not in ("cw", "ccw"):
        raise MachineError(f"halfway must be 'cw' or 'ccw', got {halfway!r}")
    forward = (pb - pa) % _N
    if forward == 0:
        return 0, ()
    if forward < _N // 2 or (forward == _N // 2 and halfway == "cw"):
        return 1, tuple((pa + i) % _N for i in range(forward))
    return -1, tuple((pa - 1 - i) % _N for i in range(_N - forward))


def _ring(chips: int) -> tuple[list, list, list, list]:
    """Links of ``chips`` EIBs: SPE 8c + i is node 8c + i, chip c's switches follow all SPEs."""
    def vertex(chip: int, pos: int) -> int:
        name = RAMPS[pos]
        if name.startswith("SPE"):
            return 8 * chip + int(name[3:])
        return 8 * chips + 4 * chip + _SWITCHES.index(name)
    src, dst, cap = [], [], []
    for chip in range(chips):
        for s in range(_N):                   # link 2s + 24c: clockwise over segment s, 2s + 1: back
            src += [vertex(chip, s), vertex(chip, (s + 1) % _N)]
            dst += [vertex(chip, (s + 1) % _N), vertex(chip, s)]
            cap += [2.0, 2.0]
    names = [f"SPE{i}" for i in range(8 * chips)] + [
        f"{n}{'' if chips == 1 else chip}" for chip in range(chips) for n in _SWITCHES]
    return src, dst, cap, names


def _link(chip: int, direction: int, segment: int) -> int:
    return 2 * _N * chip + 2 * segment + (direction < 0)


def eib_network(halfway: str = "cw") -> GraphNetwork:
    """One Cell's EIB as a graph with tabled short-way routes (module docstring)."""
    src, dst, cap, names = _ring(1)
    routes = {}
    for a in range(8):
        for b in range(8):
            if a != b:
                d, segs = route(a, b, halfway)
                routes[(a, b)] = [_link(0, d, s) for s in segs]
    return GraphNetwork(8, 4, src, dst, capacity=cap, routing="table", routes=routes, names=names)


def blade_network(halfway: str = "cw") -> GraphNetwork:
    """The QS20 Blade: two EIBs joined at their BIF ramps (module docstring)."""
    src, dst, cap, names = _ring(2)
    bif = [16 + 4 * chip + _SWITCHES.index("BIF") for chip in range(2)]
    cross = len(src)                           # link cross: BIF0 -> BIF1, cross + 1: back
    src += [bif[0], bif[1]]
    dst += [bif[1], bif[0]]
    cap += [g / RING_GBPS for g in _BIF_GBPS]
    routes = {}
    for a in range(16):
        for b in range(16):
            if a == b:
                continue
            ca, cb = divmod(a, 8)[0], divmod(b, 8)[0]
            if ca == cb:
                d, segs = route(a % 8, b % 8, halfway)
                routes[(a, b)] = [_link(ca, d, s) for s in segs]
                continue
            d1, s1 = _arc(SPE_POSITION[a % 8], _BIF, halfway)
            d2, s2 = _arc(_BIF, SPE_POSITION[b % 8], halfway)
            routes[(a, b)] = ([_link(ca, d1, s) for s in s1] + [cross + ca]
                              + [_link(cb, d2, s) for s in s2])
    return GraphNetwork(16, 8, src, dst, capacity=cap, routing="table", routes=routes, names=names)


def machine(blade: bool = False, halfway: str = "cw") -> Machine:
    """The EIB (or the Blade) as a Machine of one PE per SPE.

    Examples
    --------
    >>> from topomap.networks import cell_eib
    >>> cell_eib.machine(blade=True).npes
    16
    """
    net = blade_network(halfway) if blade else eib_network(halfway)
    spec = "cell:" + ("blade" if blade else "eib") + ("" if halfway == "cw" else ",halfway=ccw")
    return Machine(net, NodeTree.flat(1), spec=spec)


@register_spec("cell", bare=True)
def _parse(kind: str, body: str, spec: str):
    """``cell``, ``cell:eib`` or ``cell:blade``, optionally ``,halfway=cw|ccw``; no ``/NODE`` (one PE per SPE)."""
    if "/" in body:
        raise MachineError(f"machine spec {spec!r}: a Cell has one PE per SPE, no /NODE part")
    head, *opts = [t.strip() for t in body.split(",")] if body else ["eib"]
    if head not in ("eib", "blade"):
        raise MachineError(f"machine spec {spec!r}: a Cell is 'eib' or 'blade', got {head!r}")
    if len(opts) > 1:
        raise MachineError(f"machine spec {spec!r}: a Cell takes one option (halfway=cw or halfway=ccw)")
    halfway = "cw"
    for opt in opts:
        key, _, value = opt.partition("=")
        if key.strip() != "halfway" or value.strip() not in ("cw", "ccw"):
            raise MachineError(f"machine spec {spec!r}: option {opt!r} is not halfway=cw or halfway=ccw")
        halfway = value.strip()
    net = blade_network(halfway) if head == "blade" else eib_network(halfway)
    return net, NodeTree.flat(1)
