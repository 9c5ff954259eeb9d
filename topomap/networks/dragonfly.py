"""Dragonfly networks with minimal routing (csrc/core/machine_dragonfly.c).

Topology (Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable
Dragonfly Topology", ISCA 2008, §3.1): ``g`` groups of ``a`` routers, the
routers of a group joined all-to-all by local links, ``h`` global links and
``p`` compute nodes per router.  Node ``n`` is on router ``n // p``; router
``R = group * a + r`` is network vertex ``nnodes + R``.

Global links.  Group ``i`` has ``P = a*h`` global ports ``k = 0..P-1``, port
``k`` on router ``k // h`` of the group (the per-router order, which Alzaid
et al., ICS 2020, note the named arrangements leave open, follows SST/merlin).
With ``m = g - 1`` other groups the ports form ``c = P // m`` full rounds
(port ``k`` has round ``k // m`` and offset ``t = k % m``) and ``P % m`` spare
ports.  The arrangement names are those of Hastings et al., "Comparing Global
Link Arrangements for Dragonfly Networks", IEEE Cluster 2015; the formulas
are SST's.  In every round, offset ``t`` of group ``i`` leads to group

* ``absolute``: ``t`` if ``t < i`` else ``t + 1`` (SST/merlin
  ``global_routes="absolute"``);
* ``relative``: ``(i + t + 1) mod g`` (SST/merlin ``"relative"``);
* ``circulant``: ``i + (s+1)`` for ``t = 2s``, ``i - (s+1)`` for
  ``t = 2s+1`` and, when ``g`` is even, ``i + g/2`` for the last offset
  (SST/macro ``inter_group="circulant"``: the group graph is a circulant),

and is joined to the offset of the same round in that group which leads back
to ``i``.  ``g = a*h + 1`` is Kim's largest group count, one link per group
pair; a smaller ``g`` gives ``c`` or ``c + 1`` parallel links per pair.  Spare port ``q`` joins
group ``i`` to ``i + (s+1)`` (``q = 2s``) or ``i - (s+1)`` (``q = 2s+1``);
when the spare count is odd, the last joins ``i`` to ``i + g/2`` (an odd
spare count with an odd ``g`` cannot be paired and is refused).

Minimal routing (Kim §4 "MIN"): node -> router, a local hop to the router
owning the global link (skipped at the source router), the global hop, a
local hop to the destination router (skipped when the link lands there),
-> node.  Among parallel links: the one joining the two routers directly,
else one owned by the source router (Kim's step 1 leaves the source router
only when it has no channel to the destination group), else one landing on
the destination router, else any; ties go to the lowest port.  Distance =
links on the route (the node-router links included); levels: same router,
same group, other group.

Link ids: node ``n`` up ``2n`` and down ``2n+1``; local ``R -> r'``:
``2N + R*(a-1) + (r' if r' < r else r'-1)``; global from port ``k`` of group
``i``: ``2N + g*a*(a-1) + i*P + k``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import MachineError
from .spec import parse_node, register_spec, spec_int
from .base import Network

ARRANGEMENTS = ("absolute", "relative", "circulant")

#: Named instances.  ``cui``: the 1,024-router baseline of Ke Cui's thesis
#: (SOKENDAI 2024, Ch. 5; notes 003 §1.3, §5.8): 64 groups of 16 routers,
#: 4 global links and one compute node per router (degree 19).
PRESETS: dict[str, tuple[int, int, int, int]] = {"cui": (64, 16, 4, 1)}


@dataclass(frozen=True)
class Dragonfly(Network):
    """Dragonfly: ``g`` groups of ``a`` routers, ``h`` global links and ``p``
    nodes per router, global links by ``arrangement``, minimal routing.

    See the module docstring for the arrangements, the routing rule and the
    link ids.

    Parameters
    ----------
    g, a, h, p : int
        Groups, routers per group, global links per router, nodes per router
        (Kim et al. 2008 notation); ``2 <= g <= a*h + 1``.
    arrangement : {"absolute", "relative", "circulant"}
        How global ports are wired to groups.

    Examples
    --------
    >>> import topomap as tm
    >>> m = tm.Machine(tm.Dragonfly(g=3, a=2, h=1, p=1), tm.NodeTree.flat(1))
    >>> m.nnodes, m.nvertices, m.max_route
    (6, 12, 5)
    >>> m.route(0, 5).tolist()          # up, local, global, local, down
    [0, 12, 19, 16, 11]
    """

    g: int
    a: int
    h: int
    p: int
    arrangement: str = "absolute"
    kind = "dragonfly"

    def __post_init__(self) -> None:
        for name in ("g", "a", "h", "p"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not 1 <= value < 2**31:
                raise MachineError(f"dragonfly {name} must be an integer from 1 to 2^31 - 1, got {value!r}")
        if self.arrangement not in ARRANGEMENTS:
            raise MachineError(f"unknown dragonfly arrangement {self.arrangement!r}; choose one of "
                               f"{', '.join(ARRANGEMENTS)}")

    @classmethod
    def preset(cls, name: str, arrangement: str = "absolute") -> "Dragonfly":
        """A named dragonfly from :data:`PRESETS`.

        Examples
        --------
        >>> import topomap as tm
        >>> s = tm.Dragonfly.preset("cui").summary()
        >>> s["router_radix"], s["router_degree"], s["balanced"]
        (20, 19, False)
        """
        if name not in PRESETS:
            raise MachineError(f"unknown dragonfly preset {name!r}; known: {', '.join(sorted(PRESETS))}")
        g, a, h, p = PRESETS[name]
        return cls(g, a, h, p, arrangement)

    def core_params(self) -> dict[str, np.ndarray]:
        return {"shape": np.array([self.g, self.a, self.h, self.p], dtype=np.int32),
                "arrangement": np.array([ARRANGEMENTS.index(self.arrangement)], dtype=np.int32)}

    def level_names(self) -> list[str]:
        return ["router", "group", "global"]

    def spec_head(self) -> str:
        return f"dragonfly:g={self.g},a={self.a},h={self.h},p={self.p},arrangement={self.arrangement}"

    def summary(self) -> dict[str, Any]:
        """Sizes, router radix (node + local + global ports) and degree
        (router-to-router links), the number of parallel global links between
        two groups and Kim's balance test ``a == 2p == 2h``.  The machine's
        diameter and ASPL count the two node-router links of every route."""
        rounds, spare = divmod(self.a * self.h, self.g - 1)
        return {
            "groups": self.g,
            "routers": self.g * self.a,
            "router_radix": self.p + self.a - 1 + self.h,
            "router_degree": self.a - 1 + self.h,
            "arrangement": self.arrangement,
            "global_links_per_group_pair": (rounds, rounds + (spare > 0)),
            "balanced": self.a == 2 * self.p == 2 * self.h,
        }


@register_spec("dragonfly")
def _parse(kind: str, body: str, spec: str):
    """``dragonfly:g=64,a=16,h=4,p=4[,arrangement=X][/NODE]`` or
    ``dragonfly:PRESET[,arrangement=X][/NODE]``."""
    head, slash, node_text = body.partition("/")
    if slash and not node_text.strip():
        raise MachineError(f"machine spec {spec!r} ends in '/' without a node description (e.g. /8)")
    tokens = [t.strip() for t in head.split(",")]
    values: dict[str, Any] = {}
    if tokens[0] and "=" not in tokens[0]:
        name = tokens.pop(0)
        if name not in PRESETS:
            raise MachineError(f"unknown dragonfly preset {name!r} in machine spec {spec!r}; "
                               f"known: {', '.join(sorted(PRESETS))}")
        values.update(zip("gahp", PRESETS[name]))
        allowed = ("arrangement",)
    else:
        allowed = ("g", "a", "h", "p", "arrangement")
    given: set[str] = set()
    for token in tokens:
        key, eq, value = (s.strip() for s in token.partition("="))
        if not eq or key not in allowed:
            raise MachineError(f"dragonfly option {token!r} in machine spec {spec!r} is not one of "
                               f"{', '.join(k + '=' for k in allowed)}")
        if key in given:
            raise MachineError(f"dragonfly option {key!r} is given twice in machine spec {spec!r}")
        given.add(key)
        if key == "arrangement":
            if value not in ARRANGEMENTS:
                raise MachineError(f"dragonfly arrangement {value!r} in machine spec {spec!r} is not one of "
                                   f"{', '.join(ARRANGEMENTS)}")
            values[key] = value
        else:
            values[key] = spec_int(value, f"dragonfly {key}", spec)
    missing = [k for k in "gahp" if k not in values]
    if missing:
        raise MachineError(f"machine spec {spec!r} lacks {', '.join(k + '=' for k in missing)}: kind 'dragonfly' "
                           f"needs g=, a=, h=, p= (e.g. dragonfly:g=9,a=4,h=2,p=2)")
    node = parse_node(node_text or "1", spec)
    return Dragonfly(**values), node
