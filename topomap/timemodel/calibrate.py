"""Measure the time model's link classes on a running MPI job (mpi4py ping-pong).

:func:`calibrate` is collective over a communicator.  It finds where every
rank runs (:func:`topomap.mpi.job.discover_job`: host names, CPU bindings,
the node tree), names the link class of every pair of ranks by the rule of
:mod:`topomap.timemodel.model` (``"intra-socket"``/``"inter-socket"`` where
the binding and the node tree show sockets, ``"intra-node"`` otherwise,
``"network"`` between hosts), and ping-pongs one pair per class, one pair at
a time while the other ranks sleep in a non-blocking barrier (so that even
an oversubscribed job measures an uncontended pair):

* the pair is the first one in rank order of its class; the lower rank
  times ``repeats`` round trips (``Send`` then ``Recv``) per message size
  after ``warmup`` untimed ones, and half the **median** round trip is the
  one-way time of that size (the median ignores the round trips another
  process preempted);
* ``"PE"`` (two ranks on one PE) cannot be set up on purpose, so rank 0's
  messages to itself (MPI's self path, a memory copy) stand in for it;
* ``alpha`` and ``bandwidth`` are the least-squares fit of
  ``t = alpha + m / bandwidth`` to the one-way times, with relative
  residuals so that the small messages (which fix ``alpha``) count as much
  as the large ones (which fix the bandwidth) (:func:`fit_hockney`).

Classes this job cannot measure are left out, never filled in: a job on one
host has no ``"network"`` class, unbound ranks give ``"intra-node"`` but no
socket classes.  :func:`~topomap.timemodel.predict` then fails naming the
missing class; merge explicitly, e.g.
``TimeModel.default().merged(calibrate(comm))`` keeps the defaults for what
was not measured.  The returned model's ``hop_latency`` is 0 unless given:
the measured ``alpha`` already contains the route of the pair measured.

Every rank returns the same model (fitted on rank 0 and broadcast); a fault
on any rank raises :class:`~topomap.mpi.CollectiveError` on all of them.

Examples
--------
>>> from mpi4py import MPI
>>> from topomap.timemodel.calibrate import calibrate
>>> model = calibrate(MPI.COMM_WORLD, repeats=5)
>>> "PE" in model.classes
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import TimeModelError
from ..machine import Machine
from ..mpi._collective import agree, from_root, mpi
from ..mpi.job import discover_job
from .model import LinkClass, TimeModel

__all__ = ["SIZES", "PingPong", "calibrate", "measure", "fit_hockney"]

#: Default message sizes in bytes.
SIZES = (0, 8, 64, 512, 4096, 32768, 262144, 1048576)


@dataclass(frozen=True, eq=False)
class PingPong:
    """One link class as measured: which ranks, and the one-way seconds per size.

    Attributes
    ----------
    name : str
        The link class.
    ranks : tuple of int
        The two ranks (of the communicator) that ping-ponged (equal for ``"PE"``).
    sizes : numpy.ndarray
        Message sizes in bytes.
    seconds : numpy.ndarray
        One-way time per size: half the median round trip (``"PE"``: the
        median time of one message to itself).
    """

    name: str
    ranks: tuple[int, int]
    sizes: np.ndarray
    seconds: np.ndarray

    def fit(self) -> LinkClass:
        """:func:`fit_hockney` of these measurements."""
        return fit_hockney(self.sizes, self.seconds, self.name)


def fit_hockney(sizes: Any, seconds: Any, name: str = "link") -> LinkClass:
    """Least-squares ``alpha`` and ``bandwidth`` of ``t = alpha + m / bandwidth``.

    The residuals are relative, ``(alpha + m / bandwidth - t) / t``, so every
    size counts alike whatever its time.

    Parameters
    ----------
    sizes, seconds : array_like
        Message sizes (bytes, at least two different ones) and their times.
    name : str
        What is being fitted, for the error messages.

    Raises
    ------
    TimeModelError
        Fewer than two sizes, a non-positive or non-finite time, or
        measurements whose fit has a negative latency or a bandwidth that is
        not positive (times that do not grow with the size).

    Examples
    --------
    >>> link = fit_hockney([0, 1000, 100000], [2e-6, 3e-6, 102e-6])
    >>> round(link.alpha, 12), round(link.bandwidth)
    (2e-06, 1000000000)
    """
    m = np.asarray(sizes, dtype=np.float64)
    t = np.asarray(seconds, dtype=np.float64)
    if m.ndim != 1 or m.shape != t.shape or np.unique(m).size < 2:
        raise TimeModelError(f"{name}: fitting alpha and bandwidth needs times of at least two message sizes, "
                             f"got sizes {m.tolist()} and times {t.tolist()}")
    if not np.all(np.isfinite(t) & (t > 0)) or not np.all(np.isfinite(m) & (m >= 0)):
        raise TimeModelError(f"{name}: sizes must be >= 0 and times positive and finite, got sizes {m.tolist()} "
                             f"and times {t.tolist()}")
    (alpha, inverse), *_ = np.linalg.lstsq(np.column_stack([1.0 / t, m / t]), np.ones_like(t), rcond=None)
    if alpha < 0 or not inverse > 0:
        raise TimeModelError(f"{name}: the times do not fit t = alpha + m / bandwidth with alpha >= 0 and a "
                             f"positive bandwidth (fit: alpha {alpha:.3g} s, 1/bandwidth {inverse:.3g} s/B); "
                             f"one-way times {dict(zip(m.astype(int).tolist(), t.tolist()))}")
    return LinkClass(float(alpha), float(1.0 / inverse))


def _check_sizes(sizes: Any, repeats: Any, warmup: Any) -> tuple[tuple[int, ...], str | None]:
    try:
        out = tuple(int(s) for s in sizes)
        if any(isinstance(s, bool) or int(s) != s for s in sizes):
            raise ValueError
    except (TypeError, ValueError):
        return (), f"sizes must be whole numbers of bytes, got {sizes!r}"
    if len(set(out)) < 2 or min(out) < 0:
        return (), f"sizes needs at least two different sizes >= 0, got {list(out)}"
    for what, v, low in (("repeats", repeats, 1), ("warmup", warmup, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            return (), f"{what} must be an integer >= {low}, got {v!r}"
    return tuple(sorted(set(out))), None


def _pairs(machine: Machine, pes: np.ndarray, hosts: Sequence[str]) -> dict[str, tuple[int, int]]:
    """The first pair of ranks (in rank order) of every link class the job offers, in that order."""
    names = [*TimeModel.default().level_classes(machine), "network"]
    host = np.unique(np.asarray(hosts), return_inverse=True)[1]
    every = set(names[1:-1]) | ({"network"} if host.max(initial=0) > 0 else set())
    out: dict[str, tuple[int, int]] = {"PE": (0, 0)}
    # row by row (never all n^2 pairs at once), stopping once every class the job can have is found
    for i in range(len(pes) - 1):
        if every <= set(out):
            break
        cls = machine.level_of(np.full(len(pes) - i - 1, pes[i]), pes[i + 1:]).astype(np.int64)
        # fake host names (TOPOMAP_MPI_HOSTS) may split a node of the machine: those pairs are network pairs
        cls[host[i + 1:] != host[i]] = len(names) - 1
        found, first = np.unique(cls, return_index=True)
        for c, j in zip(found.tolist(), first.tolist()):
            out.setdefault(names[c], (i, i + 1 + j))
    return dict(sorted(out.items(), key=lambda kv: kv[1]))


def _sleep_barrier(comm: Any) -> None:
    """A barrier that sleeps instead of spinning, so waiting ranks leave the measured pair its CPUs."""
    req = comm.Ibarrier()
    while not req.Test():
        time.sleep(2e-4)


def _pingpong(comm: Any, me: int, peer: int, sizes: tuple[int, ...], repeats: int, warmup: int) -> np.ndarray:
    MPI = mpi()
    out = np.empty(len(sizes))
    buf = np.zeros(max(sizes), dtype=np.uint8)
    back = np.zeros(max(sizes), dtype=np.uint8)
    leader = me <= peer
    for k, size in enumerate(sizes):
        msg = [buf[:size], MPI.BYTE]
        times = np.empty(repeats)
        for r in range(warmup + repeats):
            t0 = MPI.Wtime()
            if me == peer:
                comm.Sendrecv(msg, dest=me, sendtag=k, recvbuf=[back[:size], MPI.BYTE], source=me, recvtag=k)
            elif leader:
                comm.Send(msg, dest=peer, tag=k)
                comm.Recv(msg, source=peer, tag=k)
            else:
                comm.Recv(msg, source=peer, tag=k)
                comm.Send(msg, dest=peer, tag=k)
            if r >= warmup:
                times[r - warmup] = MPI.Wtime() - t0
        out[k] = float(np.median(times)) / (1 if me == peer else 2)
    return out


def measure(comm: Any = None, sizes: Sequence[int] = SIZES, repeats: int = 20, warmup: int = 3, *,
            machine: "Machine | str | None" = None, hosts: "Sequence[str] | str | None" = None) -> list[PingPong]:
    """Ping-pong one pair per link class of the job (collective; module docstring).

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm, optional
        Default ``MPI.COMM_WORLD``.
    sizes : sequence of int
        Message sizes in bytes (at least two different ones).
    repeats, warmup : int
        Timed and untimed round trips per size.
    machine, hosts
        As for :func:`topomap.mpi.job.discover_job` (the machine the hosts
        are part of; fake host names per rank).

    Returns
    -------
    list of PingPong
        On every rank, ``"PE"`` first, then the other classes in the rank
        order of their pairs.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> [p.name for p in measure(MPI.COMM_SELF, sizes=(0, 1024), repeats=2)]
    ['PE']
    """
    MPI = mpi()
    comm = MPI.COMM_WORLD if comm is None else comm
    clean, error = _check_sizes(sizes, repeats, warmup)
    agree(comm, error, "calibrate")
    differ = len(set(comm.allgather(repr((clean, int(repeats), int(warmup)))))) != 1
    agree(comm, "ranks passed different sizes, repeats or warmup" if differ else None, "calibrate")
    job = discover_job(comm, machine=machine, hosts=hosts)
    assert job is not None
    pairs = _pairs(job.machine, job.allocation.pes, [p.host for p in job.places])
    results = []
    for name, (a, b) in pairs.items():
        mine = None
        if comm.rank in (a, b):
            mine = _pingpong(comm, comm.rank, b if comm.rank == a else a, clean, int(repeats), int(warmup))
        _sleep_barrier(comm)
        seconds = comm.bcast(mine, root=a)
        results.append(PingPong(name, (a, b), np.array(clean, dtype=np.int64), seconds))
    return results


def calibrate(comm: Any = None, sizes: Sequence[int] = SIZES, repeats: int = 20, warmup: int = 3, *,
              machine: "Machine | str | None" = None, hosts: "Sequence[str] | str | None" = None,
              link_bandwidth: float = 1.25e10, hop_latency: float = 0.0) -> TimeModel:
    """A :class:`TimeModel` of the link classes measured on this job (collective).

    Parameters
    ----------
    comm, sizes, repeats, warmup, machine, hosts
        As for :func:`measure`.
    link_bandwidth, hop_latency : float
        Passed to the model (bytes/s per unit of link capacity; seconds per
        network link on top of the measured ``alpha``).

    Returns
    -------
    TimeModel
        The same on every rank; its classes are the measured ones only.

    Raises
    ------
    CollectiveError
        On every rank, when any rank fails (bad arguments, discovery, a fit).
    MissingDependencyError
        mpi4py is not installed.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> model = calibrate(MPI.COMM_SELF, sizes=(0, 4194304), repeats=5)   # sizes far apart: noise cannot invert them
    >>> sorted(model.classes), model.hop_latency
    (['PE'], 0.0)
    """
    MPI = mpi()
    comm = MPI.COMM_WORLD if comm is None else comm
    try:        # the model's own checks of these two, before minutes of measuring
        TimeModel({"PE": (0.0, 1.0)}, link_bandwidth=link_bandwidth, hop_latency=hop_latency)
        error = None
    except TimeModelError as exc:
        error = str(exc)
    agree(comm, error, "calibrate")
    measured = measure(comm, sizes, repeats, warmup, machine=machine, hosts=hosts)

    def build() -> dict:
        classes = {p.name: p.fit() for p in measured}
        return TimeModel(classes, link_bandwidth=link_bandwidth, hop_latency=hop_latency).to_dict()

    return TimeModel.from_dict(from_root(comm, build, "calibrate"))
