"""The mapping value: ``pe_of[process]`` plus how it was obtained."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import MappingError

__all__ = ["Mapping", "check_mapping"]


@dataclass(frozen=True, eq=False)
class Mapping:
    """Where each process runs: ``pe_of[p]`` is the PE of process ``p``.

    Attributes
    ----------
    pe_of : numpy.ndarray
        int32 array of length n (read-only).
    method : str
        Name of the mapper that produced it.
    seed : int
        Seed it was run with.
    seconds : float
        Wall-clock mapping time.
    options : dict
        Options the mapper was run with.
    capacity : int
        Most processes a PE may hold.
    gpu_of : numpy.ndarray, optional
        Local GPU index (the CUDA device ordinal on its node) of each process, for GPU nodes
        (:mod:`topomap.mappers.magc`); ``None`` otherwise.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("torus:2x2/2").allocate(8)
    >>> mp = tm.map(tm.generators.stencil_2d((4, 2)), alloc, method="cyclic")
    >>> mp.pe_of.tolist()
    [0, 2, 4, 6, 1, 3, 5, 7]
    """

    pe_of: np.ndarray
    method: str = "explicit"
    seed: int = 0
    seconds: float = 0.0
    options: dict = field(default_factory=dict)
    capacity: int = 1
    gpu_of: np.ndarray | None = None

    def __post_init__(self) -> None:
        pe = np.asarray(self.pe_of)
        if pe.ndim != 1 or pe.size == 0:
            raise MappingError("a mapping needs a non-empty 1-D array of PE ids")
        if pe.dtype.kind not in "iu":
            raise MappingError(f"PE ids must be integers, got dtype {pe.dtype}")
        if pe.min() < 0 or pe.max() >= 2**31:
            p = int(np.flatnonzero((pe < 0) | (pe >= 2**31))[0])
            raise MappingError(f"process {p} is mapped to invalid PE {pe[p]}")
        pe = np.array(pe, dtype=np.int32, order="C", copy=True)  # never freeze the caller's array
        pe.setflags(write=False)
        object.__setattr__(self, "pe_of", pe)
        if self.gpu_of is not None:
            gpu = np.asarray(self.gpu_of)
            if gpu.shape != pe.shape or gpu.dtype.kind not in "iu" or (gpu.size and gpu.min() < 0):
                raise MappingError(f"gpu_of must be {pe.size} GPU indices >= 0, one per process")
            gpu = np.array(gpu, dtype=np.int32, copy=True)
            gpu.setflags(write=False)
            object.__setattr__(self, "gpu_of", gpu)

    @property
    def n(self) -> int:
        """Number of processes."""
        return int(self.pe_of.size)

    def to_dict(self) -> dict:
        """Plain-Python form (for JSON)."""
        out = {"pe_of": self.pe_of.tolist(), "method": self.method, "seed": self.seed,
               "seconds": self.seconds, "options": dict(self.options), "capacity": self.capacity}
        if self.gpu_of is not None:
            out["gpu_of"] = self.gpu_of.tolist()
        return out

    def __repr__(self) -> str:
        return f"Mapping(n={self.n}, method={self.method!r}, seed={self.seed}, seconds={self.seconds:.3g})"


def check_mapping(pe_of: np.ndarray, n: int, allocation: Any, capacity: int) -> None:
    """Raise MappingError unless ``pe_of`` maps n processes into the allocation
    with at most ``capacity`` processes per PE."""
    if pe_of.shape != (n,):
        raise MappingError(f"the mapping has {pe_of.size} entries but the pattern has {n} processes")
    if pe_of.dtype.kind not in "iu":
        raise MappingError(f"PE ids must be integers, got dtype {pe_of.dtype}")
    if pe_of.min() < 0:  # a negative index would wrap around in the mask below
        p = int(np.argmin(pe_of))
        raise MappingError(f"process {p} is mapped to invalid PE {pe_of[p]}")
    if pe_of.max() >= allocation.machine.npes:
        p = int(np.argmax(pe_of))
        raise MappingError(f"process {p} is mapped to PE {pe_of[p]}, outside the machine")
    mask = np.zeros(allocation.machine.npes, dtype=bool)
    mask[allocation.pes] = True
    allowed = mask[pe_of]
    if not allowed.all():
        p = int(np.flatnonzero(~allowed)[0])
        raise MappingError(f"process {p} is mapped to PE {pe_of[p]}, which is not in the allocation")
    pes, counts = np.unique(pe_of, return_counts=True)
    if (counts > capacity).any():
        i = int(np.flatnonzero(counts > capacity)[0])
        raise MappingError(f"PE {pes[i]} holds {counts[i]} processes, more than capacity {capacity}")
