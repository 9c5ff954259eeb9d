"""A load-balancing flow: who sends how many tasks to whom, its metrics and its schedule.

The six metrics are those of Kumar's Table 5.4.1 (PhD thesis 2012, §5.4;
notes 001 §4.2).  The schedule is the flow as a
:class:`~topomap.Pattern` (one message per transfer, ``tasks x task_bytes``
bytes), so :func:`topomap.timemodel.predict` can time it on a placement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..pattern import Pattern
from ..timemodel.predict import TimePrediction, predict
from .counts import LoadBalanceError

__all__ = ["Flow", "LBMetrics"]


@dataclass(frozen=True)
class LBMetrics:
    """The six load-balancing metrics of Kumar's Table 5.4.1.

    Attributes
    ----------
    max_receives, max_sends : int
        Most messages one process receives / sends.
    max_tasks_received, max_tasks_sent : int
        Most tasks one process receives / sends.
    total_messages, total_tasks_sent : int
        Messages and tasks over all processes.
    """

    max_receives: int
    max_tasks_received: int
    total_messages: int
    total_tasks_sent: int
    max_sends: int
    max_tasks_sent: int


@dataclass(frozen=True, eq=False)
class Flow:
    """Transfers that balance ``counts``: message ``i`` moves ``tasks[i]`` tasks ``src[i] -> dst[i]``.

    Build one with :func:`~topomap.loadbalance.alias_flow`,
    :func:`~topomap.loadbalance.sfc_flow` or
    :func:`~topomap.loadbalance.unit_flow`.  Messages are sorted by
    receiver, then sender.

    Examples
    --------
    >>> from topomap.loadbalance import alias_flow
    >>> f = alias_flow([6, 0, 3, 3])
    >>> f.messages()
    [(0, 1, 3)]
    >>> f.after.tolist(), f.metrics().total_tasks_sent
    ([3, 3, 3, 3], 3)
    """

    counts: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    tasks: np.ndarray
    method: str

    @classmethod
    def from_messages(cls, counts: np.ndarray, src: Any, dst: Any, tasks: Any, method: str) -> "Flow":
        """A flow from parallel message arrays (sorted here by receiver, then sender)."""
        src = np.asarray(src, dtype=np.int32)
        dst = np.asarray(dst, dtype=np.int32)
        tasks = np.asarray(tasks, dtype=np.int64)
        order = np.lexsort((src, dst))
        arrays = [src[order], dst[order], tasks[order]]
        for a in (counts, *arrays):
            a.setflags(write=False)
        return cls(counts, *arrays, method=method)

    @property
    def nproc(self) -> int:
        """Number of processes."""
        return int(self.counts.size)

    @property
    def k(self) -> int:
        """The target ``ceil(T / P)``: no process ends with more."""
        return int(-(-int(self.counts.sum()) // self.nproc))

    @property
    def after(self) -> np.ndarray:
        """Tasks on every process once the flow has run."""
        n = self.nproc
        gain = np.bincount(self.dst, weights=self.tasks, minlength=n) - np.bincount(self.src, weights=self.tasks,
                                                                                   minlength=n)
        return self.counts + gain.astype(np.int64)

    def messages(self) -> list[tuple[int, int, int]]:
        """``(src, dst, tasks)`` of every message."""
        return list(zip(self.src.tolist(), self.dst.tolist(), self.tasks.tolist()))

    def sends(self, rank: int) -> tuple[np.ndarray, np.ndarray]:
        """Receivers and task counts of ``rank``'s messages."""
        pick = self.src == self._rank(rank)
        return self.dst[pick], self.tasks[pick]

    def receives(self, rank: int) -> tuple[np.ndarray, np.ndarray]:
        """Senders and task counts of the messages ``rank`` receives."""
        pick = self.dst == self._rank(rank)
        return self.src[pick], self.tasks[pick]

    def metrics(self) -> LBMetrics:
        """The six metrics of Kumar's Table 5.4.1.

        Examples
        --------
        >>> from topomap.loadbalance import unit_flow
        >>> unit_flow([4, 4, 0, 0]).metrics()      # doctest: +NORMALIZE_WHITESPACE
        LBMetrics(max_receives=1, max_tasks_received=2, total_messages=2, total_tasks_sent=4,
                  max_sends=1, max_tasks_sent=2)
        """
        n = self.nproc
        if self.src.size == 0:
            return LBMetrics(0, 0, 0, 0, 0, 0)
        return LBMetrics(
            max_receives=int(np.bincount(self.dst, minlength=n).max()),
            max_tasks_received=int(np.bincount(self.dst, weights=self.tasks, minlength=n).max()),
            total_messages=int(self.src.size),
            total_tasks_sent=int(self.tasks.sum()),
            max_sends=int(np.bincount(self.src, minlength=n).max()),
            max_tasks_sent=int(np.bincount(self.src, weights=self.tasks, minlength=n).max()),
        )

    def schedule(self, task_bytes: float = 1.0) -> Pattern:
        """The migration as a pattern: ``tasks x task_bytes`` bytes per message, one message each.

        Examples
        --------
        >>> from topomap.loadbalance import alias_flow
        >>> alias_flow([6, 0, 3, 3]).schedule(8192).to_dense()[0].tolist()
        [0.0, 24576.0, 0.0, 0.0]
        """
        if not np.isfinite(task_bytes) or task_bytes <= 0:
            raise LoadBalanceError(f"task_bytes must be a positive finite number, got {task_bytes!r}")
        return Pattern.from_edges(self.src, self.dst, self.tasks * float(task_bytes), np.ones(self.src.size),
                                  n=self.nproc, provenance={"generator": f"loadbalance.{self.method}",
                                                            "task_bytes": float(task_bytes)})

    def predict(self, where: Any, mapping: Any, task_bytes: float = 1.0, model: Any = None,
                method: str = "flow") -> TimePrediction:
        """Predicted time of the migration (one round, every message at once) on a placement.

        ``where`` and ``mapping`` are those of :func:`topomap.timemodel.predict`
        (a :class:`~topomap.Mapping` or the PE of every process); returns its
        :class:`~topomap.timemodel.TimePrediction`.

        Examples
        --------
        >>> import topomap as tm
        >>> from topomap.loadbalance import alias_flow
        >>> t = alias_flow([6, 0, 3, 3]).predict(tm.machine("mesh:4"), [0, 1, 2, 3], task_bytes=1e6)
        >>> t.makespan > 0, len(t.messages["src"])
        (True, 1)
        """
        pes = np.asarray(getattr(mapping, "pe_of", mapping))
        if pes.ndim != 1 or pes.size != self.nproc:
            raise LoadBalanceError(f"mapping must give a PE to each of the {self.nproc} processes, "
                                   f"got shape {pes.shape}")
        return predict(self.schedule(task_bytes), where, mapping, model, method=method)

    def _rank(self, rank: int) -> int:
        if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or not 0 <= rank < self.nproc:
            raise LoadBalanceError(f"rank {rank!r} is not a process of this flow (0..{self.nproc - 1})")
        return int(rank)
