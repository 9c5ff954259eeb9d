"""Count what an mpi4py code sends, per destination rank, without leaving Python.

:func:`profile` hands out a *counting communicator*: an instance of a
Python subclass of the communicator's own mpi4py class (``Intracomm``,
``Cartcomm``, ``Graphcomm``, ``Distgraphcomm``) sharing the same MPI handle.
It is a real communicator (``isinstance`` checks, mpi4py calls and
``comm == MPI.COMM_WORLD`` all behave), whose send methods first count the
bytes and messages bound to each destination and then call mpi4py.

Why a subclass and not patching ``MPI.Comm``: mpi4py's classes are compiled
extension types whose methods cannot be replaced, and patching them would
count every communicator of the process.  The limits follow from the
mechanism:

* only calls made **through the counting communicator** or communicators
  derived from it (``Dup``, ``Split``, ``Split_type``, ``Create``,
  ``Create_group``, ``Create_cart``, ``Create_graph``,
  ``Create_dist_graph(_adjacent)``, ``Idup``, ...) are counted; code that
  fetches ``MPI.COMM_WORLD`` itself is reached only with
  ``patch_world=True``, which rebinds the module attribute
  ``mpi4py.MPI.COMM_WORLD`` for the duration of the block (not names bound
  earlier, e.g. by ``from mpi4py.MPI import COMM_WORLD``);
* counted: ``Send``/``Ssend``/``Bsend``/``Rsend`` and their ``I`` forms,
  ``Sendrecv``, ``Sendrecv_replace``, ``Isendrecv(_replace)`` and the
  lower-case ``send``/``ssend``/``bsend``/``isend``/``issend``/``ibsend``/
  ``sendrecv``; the neighbourhood collectives ``Neighbor_allgather(v)``,
  ``Neighbor_alltoall(v,w)`` (blocking and ``I`` forms) and the lower-case
  ``neighbor_allgather``/``neighbor_alltoall``;
* not counted: receives (the sender counts), persistent and partitioned
  sends (``Send_init``, ``Psend_init``: the bytes move at each ``Start``,
  which belongs to the request, not the communicator), one-sided
  operations and the other collectives (use the PMPI profiler,
  ``topomap profile``, for those);
* lower-case calls are counted at the size of their pickle
  (``MPI.pickle.dumps``), which is what mpi4py sends (out-of-band pickle-5
  buffers aside); upper-case calls at ``count x MPI_Type_size``;
* destinations are counted as ranks of the communicator given to
  :func:`profile` (ranks of derived communicators are translated through
  their groups); messages to ``MPI.PROC_NULL`` and to oneself are dropped
  by the Pattern, as everywhere in topomap.

Examples
--------
>>> from mpi4py import MPI
>>> import numpy as np
>>> from topomap.mpi import profile
>>> with profile(MPI.COMM_SELF) as prof:
...     prof.comm.Sendrecv(np.zeros(4), 0, recvbuf=np.zeros(4), source=0)
>>> prof.row.tolist(), prof.calls
([32.0], {'Sendrecv': 1})
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from ..pattern import Pattern
from ._collective import mpi
from .reorder import pattern_from_rows

__all__ = ["profile", "Profile"]

_P2P_UPPER = ("Send", "Ssend", "Bsend", "Rsend", "Isend", "Issend", "Ibsend", "Irsend",
              "Sendrecv", "Sendrecv_replace", "Isendrecv", "Isendrecv_replace")
_P2P_LOWER = ("send", "ssend", "bsend", "isend", "issend", "ibsend", "sendrecv")
_NEIGHBOR = {  # name -> how the send buffer splits over the destinations
    "Neighbor_allgather": "all", "Ineighbor_allgather": "all",
    "Neighbor_allgatherv": "all", "Ineighbor_allgatherv": "all",
    "Neighbor_alltoall": "blocks", "Ineighbor_alltoall": "blocks",
    "Neighbor_alltoallv": "v", "Ineighbor_alltoallv": "v",
    "Neighbor_alltoallw": "w", "Ineighbor_alltoallw": "w",
    "neighbor_allgather": "obj_all", "neighbor_alltoall": "obj_list",
}
_CREATORS = ("Dup", "Dup_with_info", "Clone", "Split", "Split_type", "Create", "Create_group", "Create_cart",
             "Create_graph", "Create_dist_graph", "Create_dist_graph_adjacent", "Idup", "Idup_with_info")


class Profile:
    """Bytes and messages this rank sent inside a :func:`profile` block.

    Attributes
    ----------
    comm : mpi4py.MPI.Comm
        The counting communicator: use it (or communicators made from it)
        inside the block.
    row, msgs : numpy.ndarray
        Bytes and messages sent to each rank of the profiled communicator
        (float64, length ``size``).
    calls : dict
        Number of counted calls by method name.
    """

    def __init__(self, base: Any):
        self._base = base
        self.row = np.zeros(base.size, dtype=np.float64)
        self.msgs = np.zeros(base.size, dtype=np.float64)
        self.calls: dict[str, int] = {}
        self.active = True
        self.comm: Any = None

    def pattern(self, root: int | None = None) -> Pattern | None:
        """Gather every rank's row into a Pattern (collective over the profiled communicator).

        ``root=None``: the Pattern on every rank; else on ``root`` only (None elsewhere).
        """
        mine = (np.flatnonzero(self.row), self.row[self.row > 0], self.msgs[self.row > 0])
        rows = self._base.allgather(mine) if root is None else self._base.gather(mine, root=root)
        if rows is None:
            return None
        return pattern_from_rows(rows, self._base.size, {"source": "topomap.mpi.profile",
                                                         "counted": "mpi4py sends through the counting communicator"})

    def _add(self, name: str, dests: Any, nbytes: Any, ref_of: np.ndarray) -> None:
        if not self.active:
            return
        self.calls[name] = self.calls.get(name, 0) + 1
        dests = np.atleast_1d(np.asarray(dests, dtype=np.int64))
        nbytes = np.broadcast_to(np.asarray(nbytes, dtype=np.float64), dests.shape)
        keep = (dests >= 0) & (dests < ref_of.size)       # PROC_NULL and friends are negative
        ref = ref_of[dests[keep]]
        keep_ref = ref >= 0
        np.add.at(self.row, ref[keep_ref], nbytes[keep][keep_ref])
        np.add.at(self.msgs, ref[keep_ref], 1.0)

    def __repr__(self) -> str:
        return f"Profile({int(sum(self.calls.values()))} calls, {self.row.sum():.0f} bytes to {np.count_nonzero(self.row)} ranks)"


def _type_size(datatype: Any) -> int:
    MPI = mpi()
    if isinstance(datatype, MPI.Datatype):
        return datatype.Get_size()
    from mpi4py.util import dtlib
    return dtlib.from_numpy_dtype(datatype).Get_size()


def _raw_nbytes(data: Any) -> int:
    MPI = mpi()
    if data is None or data is MPI.IN_PLACE or data is MPI.BOTTOM:
        return 0
    return memoryview(data).nbytes


def _buffer_bytes(buf: Any) -> tuple[int | None, int]:
    """(explicit byte count or None, the raw buffer size) of an upper-case buffer spec."""
    if isinstance(buf, (list, tuple)):
        if len(buf) == 2:
            return None, _raw_nbytes(buf[0])
        if len(buf) in (3, 4):
            count = buf[1][0] if isinstance(buf[1], (list, tuple)) else buf[1]
            return int(count) * _type_size(buf[-1]), _raw_nbytes(buf[0])
    return None, _raw_nbytes(buf)


def _vector_bytes(buf: Any, per_type: bool) -> np.ndarray:
    """Bytes per destination of a v (or, with ``per_type``, w) buffer spec:
    ``[data, counts]``, ``[data, (counts, displs)(, datatype)]`` or ``[data, counts, displs, datatype]``."""
    if not isinstance(buf, (list, tuple)) or len(buf) < 2:
        raise TypeError("a vector buffer spec needs counts: [data, counts(, displs), datatype]")
    second = buf[1]
    pair = isinstance(second, tuple) and len(second) == 2 and not np.isscalar(second[0])
    counts = np.asarray(second[0] if pair else second, dtype=np.float64)
    if per_type:
        return counts * np.asarray([_type_size(t) for t in buf[-1]], dtype=np.float64)
    if len(buf) == 2:     # mpi4py takes the element type from the data
        return counts * memoryview(buf[0]).itemsize
    return counts * _type_size(buf[-1])


def _pickled(obj: Any) -> int:
    return len(mpi().pickle.dumps(obj))


def _destinations(comm: Any) -> np.ndarray:
    MPI = mpi()
    if isinstance(comm, MPI.Distgraphcomm):
        return np.asarray(comm.Get_dist_neighbors()[1], dtype=np.int64)
    if isinstance(comm, MPI.Cartcomm):
        out = []
        for d in range(comm.Get_dim()):
            out.extend(comm.Shift(d, 1))          # MPI order: the - neighbour, then the + one
        return np.asarray(out, dtype=np.int64)
    if isinstance(comm, MPI.Graphcomm):
        return np.asarray(comm.Get_neighbors(comm.rank), dtype=np.int64)
    raise TypeError(f"{type(comm).__name__} has no neighbourhood")


class _Counting:
    """Mixin put in front of an mpi4py communicator class (see the module docstring)."""

    _tm_profile: Profile
    _tm_ref_of: np.ndarray

    def _tm_attach(self, prof: Profile) -> None:
        MPI = mpi()
        self._tm_profile = prof
        group, ref_group = self.Get_group(), prof._base.Get_group()
        try:
            ref = MPI.Group.Translate_ranks(group, list(range(group.size)), ref_group)
        finally:
            group.Free()
            ref_group.Free()
        self._tm_ref_of = np.array([-1 if r == MPI.UNDEFINED else r for r in ref], dtype=np.int64)

    def _tm_wrap(self, result: Any) -> Any:
        MPI = mpi()
        if isinstance(result, tuple):                 # Idup: (comm, request)
            return (self._tm_wrap(result[0]),) + result[1:]
        if isinstance(result, MPI.Comm) and result != MPI.COMM_NULL:
            return _counting(result, self._tm_profile)
        return result


def _p2p(name: str, lower: bool) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        first = ("sendobj" if name == "sendrecv" else "obj") if lower else ("sendbuf" if "recv" in name and
                                                                            "replace" not in name else "buf")
        buf = args[0] if args else kwargs.get(first)
        dest = args[1] if len(args) > 1 else kwargs.get("dest")
        if lower:
            nbytes = _pickled(buf)
        else:
            explicit, raw = _buffer_bytes(buf)
            nbytes = raw if explicit is None else explicit
        self._tm_profile._add(name, dest, nbytes, self._tm_ref_of)
        return getattr(super(_Counting, self), name)(*args, **kwargs)
    method.__name__ = name
    return method


def _neighbor(name: str, how: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        buf = args[0] if args else kwargs.get("sendobj" if how.startswith("obj") else "sendbuf")
        dests = _destinations(self)
        if how == "all":
            explicit, raw = _buffer_bytes(buf)
            nbytes: Any = raw if explicit is None else explicit
        elif how == "blocks":
            explicit, raw = _buffer_bytes(buf)
            nbytes = raw / max(1, dests.size) if explicit is None else explicit
        elif how in ("v", "w"):
            nbytes = _vector_bytes(buf, how == "w")
        elif how == "obj_all":
            nbytes = _pickled(buf)
        else:
            nbytes = [_pickled(x) for x in buf]
        self._tm_profile._add(name, dests, nbytes, self._tm_ref_of)
        return getattr(super(_Counting, self), name)(*args, **kwargs)
    method.__name__ = name
    return method


def _creator(name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self._tm_wrap(getattr(super(_Counting, self), name)(*args, **kwargs))
    method.__name__ = name
    return method


for _n in _P2P_UPPER:
    setattr(_Counting, _n, _p2p(_n, False))
for _n in _P2P_LOWER:
    setattr(_Counting, _n, _p2p(_n, True))
for _n, _how in _NEIGHBOR.items():
    setattr(_Counting, _n, _neighbor(_n, _how))
for _n in _CREATORS:
    setattr(_Counting, _n, _creator(_n))

_CLASSES: dict[type, type] = {}


def _counting(comm: Any, prof: Profile) -> Any:
    """A counting communicator sharing ``comm``'s handle."""
    base = type(comm)
    if issubclass(base, _Counting):
        base = next(c for c in base.__mro__[1:] if not issubclass(c, _Counting))
    cls = _CLASSES.get(base)
    if cls is None:
        cls = _CLASSES[base] = type(f"Counting{base.__name__}", (_Counting, base), {})
    obj = cls(comm)
    obj._tm_attach(prof)
    return obj


@contextmanager
def profile(comm: Any, patch_world: bool = False) -> Iterator[Profile]:
    """Count the bytes and messages sent through a communicator during a ``with`` block.

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm
        The communicator whose ranks name the destinations (and whose
        counting twin the block uses).
    patch_world : bool
        Also rebind ``mpi4py.MPI.COMM_WORLD`` to the counting twin during
        the block (``comm`` must then be ``MPI.COMM_WORLD``).

    Yields
    ------
    Profile
        Use ``prof.comm`` inside; afterwards ``prof.row``/``prof.msgs`` hold
        this rank's counts and ``prof.pattern()`` gathers the Pattern.  Pass
        ``prof`` itself as the row to :func:`topomap.mpi.reorder`.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> with profile(MPI.COMM_SELF) as prof:
    ...     graph = prof.comm.Create_dist_graph_adjacent([0], [0])
    ...     _ = graph.neighbor_alltoall([b"abc"])
    >>> prof.calls, prof.pattern().n
    ({'neighbor_alltoall': 1}, 1)
    """
    MPI = mpi()
    if not isinstance(comm, MPI.Comm) or comm == MPI.COMM_NULL:
        raise TypeError(f"profile needs an mpi4py communicator, got {type(comm).__name__}")
    if patch_world and comm != MPI.COMM_WORLD:
        raise ValueError("patch_world=True profiles MPI.COMM_WORLD: pass it as comm")
    prof = Profile(comm)
    prof.comm = _counting(comm, prof)
    saved = MPI.COMM_WORLD
    if patch_world:
        MPI.COMM_WORLD = prof.comm
    try:
        yield prof
    finally:
        prof.active = False
        if patch_world:
            MPI.COMM_WORLD = saved
