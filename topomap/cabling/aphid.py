"""Cabling cost and link power of fat trees, APHiD's model.

Source: Michelogiannakis, Ibrahim, Shalf, Wilke, Knight & Kenny, "APHiD:
Hierarchical Task Placement to Enable a Tapered Fat Tree Topology for Lower
Power and Cost in HPC Networks", LBNL 2017, §V-B and Table III (link counts
of §III, Table II; notes 004 §3-§5).

Model: only inter-switch cables count (node-leaf cables are excluded, §V-B:
"we focus specifically on the network link (cable) costs between switches").
Each cable, counted per switch port as Table II counts links, costs

============================ ============ ================================
coefficient                  value        source (§V-B)
============================ ============ ================================
electrical cable (Leaf-Agg)  $100         "rough estimates ... based on
optical cable (Agg-Core)     $600         current Mellanox InfiniBand prices"
electrical energy            5 pJ/bit     "roughly 5pJ/bit at 1Tb/s"
optical energy               10 pJ/bit    "10pJ/bit at 1Tb/s ... (link +
                                          transceiver)"
link rate                    1 Tb/s       the rate both energies assume
============================ ============ ================================

so cost = 100 LA + 600 AC dollars and power = 5 W LA + 10 W AC, with LA the
Leaf-Agg and AC the Agg-Core links.

Choices the paper leaves open
- Which cables are optical: the text only says tapering "primarily reduce[s]
  the number of optical cables between aggregation and core switches"; the
  assignment Leaf-Agg electrical, Agg-Core optical is the one that
  reproduces Table III (all four rows to the printed precision).  For trees
  of other heights, :func:`fat_tree_cabling` makes the top level optical and
  the other inter-switch levels electrical unless told otherwise.
- Power is per cable (one 1 Tb/s link), not per direction.
- Units: the Table III caption says "power (MW)"; the values are kW.

Erratum kept for reproduction: Table II prints 7744 Leaf-Agg links for the
tapered trees, which is 352 leaves x 22; its own per-switch count (20 up-links
per leaf) and the 64-port aggregation switches (22 leaves x 2 cables + 20 up)
give 7040.  Table III was computed from 7744, so :data:`TABLE_II` keeps the
printed counts, while :func:`fat_tree_cabling` of the trees built by
:func:`topomap.networks.fattree.aphid_fat_tree` uses 7040 (baseline
$2.62M / 67.2 kW instead of $2.69M / 71 kW).

Examples
--------
>>> from topomap.cabling.aphid import table_iii
>>> rows = table_iii()
>>> round(rows["untapered"].cost_usd / 1e6, 2), round(rows["taper4"].cost_usd / 1e6, 2)
(5.73, 1.25)
>>> round(rows["untapered"].power_w / 1e3), round(rows["taper4"].power_w / 1e3)
(123, 47)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Sequence

from ..errors import MachineError

if TYPE_CHECKING:
    from ..networks.fattree import FatTree

__all__ = ["Cabling", "cabling", "fat_tree_cabling", "table_iii", "TABLE_II", "TABLE_III",
           "ELECTRICAL_USD", "OPTICAL_USD", "ELECTRICAL_PJ_PER_BIT", "OPTICAL_PJ_PER_BIT", "LINK_BITS_PER_S"]

ELECTRICAL_USD = 100.0
OPTICAL_USD = 600.0
ELECTRICAL_PJ_PER_BIT = 5.0
OPTICAL_PJ_PER_BIT = 10.0
LINK_BITS_PER_S = 1e12

#: Table II as printed (links per port): Leaf-Agg and Agg-Core links of the
#: four configurations ("taper2" = "0.5-Core", "taper4" = "0.25-Core").
TABLE_II: dict[str, tuple[int, int]] = {
    "untapered": (8192, 8192),
    "baseline": (7744, 3200),
    "taper2": (7744, 1600),
    "taper4": (7744, 800),
}

#: Table III as printed: (cost in dollars, power in watts), to the printed
#: precision ($0.01M, 1 kW).
TABLE_III: dict[str, tuple[float, float]] = {
    "untapered": (5.73e6, 123e3),
    "baseline": (2.69e6, 71e3),
    "taper2": (1.73e6, 55e3),
    "taper4": (1.25e6, 47e3),
}


@dataclass(frozen=True)
class Cabling:
    """Inter-switch cables and what they cost and draw."""

    electrical_links: float
    optical_links: float
    cost_usd: float
    power_w: float

    def to_dict(self) -> dict:
        """All fields as a plain dict."""
        return asdict(self)


def cabling(electrical_links: float, optical_links: float, *, electrical_usd: float = ELECTRICAL_USD,
            optical_usd: float = OPTICAL_USD, electrical_pj_per_bit: float = ELECTRICAL_PJ_PER_BIT,
            optical_pj_per_bit: float = OPTICAL_PJ_PER_BIT, bits_per_s: float = LINK_BITS_PER_S) -> Cabling:
    """Cost and power of ``electrical_links`` + ``optical_links`` cables.

    Power of a cable = energy per bit x ``bits_per_s`` (5 pJ/bit x 1 Tb/s = 5 W).

    Parameters
    ----------
    electrical_links, optical_links : float
        Inter-switch cables of each kind, counted per port.
    electrical_usd, optical_usd : float
        Price of one cable (APHiD: $100 and $600).
    electrical_pj_per_bit, optical_pj_per_bit : float
        Energy per bit of one cable (APHiD: 5 and 10 pJ/bit).
    bits_per_s : float
        Rate the energies apply at (APHiD: 1 Tb/s).

    Returns
    -------
    Cabling

    Examples
    --------
    >>> from topomap.cabling.aphid import cabling
    >>> c = cabling(7744, 3200)                 # APHiD's baseline tapered tree
    >>> c.cost_usd, c.power_w
    (2694400.0, 70720.0)
    """
    for name, value in (("electrical_links", electrical_links), ("optical_links", optical_links)):
        if not value >= 0:
            raise MachineError(f"{name} must be >= 0, got {value!r}")
    cost = electrical_usd * electrical_links + optical_usd * optical_links
    power = (electrical_pj_per_bit * electrical_links + optical_pj_per_bit * optical_links) * 1e-12 * bits_per_s
    return Cabling(float(electrical_links), float(optical_links), float(cost), float(power))


def fat_tree_cabling(tree: "FatTree", optical_levels: Sequence[int] | None = None, **prices: float) -> Cabling:
    """Cabling of a :class:`~topomap.FatTree`: its inter-switch levels 2..h,
    counted per port (:meth:`~topomap.FatTree.ports_per_level`), the levels in
    ``optical_levels`` (default: the top one) optical, the others electrical.

    Parameters
    ----------
    tree : FatTree
        The fat tree; node-leaf cables (level 1) never count.
    optical_levels : sequence of int, optional
        Levels (2..h) of optical cables; default: the top level.
    **prices : float
        The keyword coefficients of :func:`cabling`.

    Returns
    -------
    Cabling

    Examples
    --------
    >>> from topomap.cabling.aphid import fat_tree_cabling
    >>> from topomap.networks.fattree import aphid_fat_tree
    >>> c = fat_tree_cabling(aphid_fat_tree(untapered=True))
    >>> c.electrical_links, c.optical_links, c.cost_usd, c.power_w
    (8192.0, 8192.0, 5734400.0, 122880.0)
    """
    h = tree.levels
    optical = {h} if optical_levels is None else set(optical_levels)
    bad = sorted(lv for lv in optical if not (isinstance(lv, int) and 2 <= lv <= h))
    if bad:
        raise MachineError(f"optical levels must be inter-switch levels 2..{h}, got {bad}")
    ports = tree.ports_per_level()
    elec = sum(ports[i - 1] for i in range(2, h + 1) if i not in optical)
    opt = sum(ports[i - 1] for i in optical)
    return cabling(elec, opt, **prices)


def table_iii(**prices: float) -> dict[str, Cabling]:
    """APHiD's Table III recomputed from the printed Table II link counts.

    Parameters
    ----------
    **prices : float
        The keyword coefficients of :func:`cabling` (default: the paper's).

    Returns
    -------
    dict of str to Cabling
        Keyed ``untapered``, ``baseline``, ``taper2``, ``taper4``.

    Examples
    --------
    >>> from topomap.cabling.aphid import table_iii
    >>> {k: round(v.cost_usd / 1e6, 2) for k, v in table_iii().items()}
    {'untapered': 5.73, 'baseline': 2.69, 'taper2': 1.73, 'taper4': 1.25}
    """
    return {name: cabling(la, ac, **prices) for name, (la, ac) in TABLE_II.items()}
