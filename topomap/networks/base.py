"""What every network kind provides to :class:`topomap.Machine`.

A kind is a frozen dataclass with a ``kind`` name known to the C glue
(``csrc/python/py_kinds.c``), the parameters its C constructor takes, names
for its levels (reported in ``Metrics.level_bytes``) and a short spec head
for display.  Routing itself lives only in ``csrc/core/machine_<kind>.c``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Network:
    """Base class of network descriptions (see the module docstring)."""

    kind: str = ""

    def core_params(self) -> dict[str, np.ndarray]:
        """Parameters for the C constructor of this kind."""
        return {}

    def level_names(self) -> list[str]:
        """Names of the network's lowest-common-ancestor levels, lowest first."""
        return []

    def spec_head(self) -> str:
        """The part of a spec string before ``/NODE``."""
        return self.kind

    def summary(self) -> dict[str, Any]:
        """Kind-specific entries for :meth:`topomap.Machine.summary`."""
        return {}
