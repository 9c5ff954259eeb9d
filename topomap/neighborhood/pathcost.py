"""Path costs between the nodes a mapping uses, for the path-cost-aware friend choice of
:func:`topomap.neighborhood.combine` (beyond Mirsadeghi et al. 2017, issue 16 part 5)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .graph import NeighborhoodError

__all__ = ["path_costs"]


def path_costs(machine: Any, mapping: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The node index of every rank and the hop distance between the nodes used.

    Parameters
    ----------
    machine : topomap.machine.Machine
        The machine whose routes give the hops.
    mapping : sequence of int
        The PE of each rank.

    Returns
    -------
    node : ndarray of int32, one entry per rank
        Index (0 .. k-1) of the rank's node among the k distinct nodes the mapping uses.
    distance : ndarray of int32, k x k
        Links on the route between two used nodes, the larger of the two directions so the
        cost of a friendship is the same from both ends (0 on the diagonal).

    Examples
    --------
    >>> import topomap as tm
    >>> node, dist = path_costs(tm.machine("torus:4x4/2"), [0, 1, 2, 10])
    >>> node.tolist(), dist.tolist()
    ([0, 0, 1, 2], [[0, 1, 2], [1, 0, 1], [2, 1, 0]])
    """
    pes = np.asarray(mapping, dtype=np.int64)
    if pes.ndim != 1:
        raise NeighborhoodError(f"mapping must be one PE per rank, got shape {pes.shape}")
    used, node = np.unique(machine.node_of(pes), return_inverse=True)
    hops = machine.hops(used[:, None], used[None, :])
    return node.astype(np.int32), np.maximum(hops, hops.T).astype(np.int32)
