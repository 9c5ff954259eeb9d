"""What a network costs to build: cables, switches and link power.

================================== ===========================================================
:mod:`~topomap.cabling.aphid`      fat-tree cabling cost and power (APHiD 2017, Table III)
:mod:`~topomap.cabling.cui`        cable lengths and cost of shortcut networks laid out in
                                   cabinets (Cui's thesis §5.6)
================================== ===========================================================
"""

from . import aphid, cui

__all__ = ["aphid", "cui"]
