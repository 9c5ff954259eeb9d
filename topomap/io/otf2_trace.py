"""OTF2 traces (``.otf2`` anchor file): point-to-point sends of an MPI trace.

Source: OTF2 3.x documentation (definitions ``Location``, ``LocationGroup``,
``Group``, ``Comm``; events ``MpiSend``/``MpiIsend`` with ``receiver``,
``communicator``, ``msgLength``), read through the low-level ``_otf2``
bindings of the ``otf2`` Python package (extra ``topomap-hpc[otf2]``).

Why the low-level bindings: the high-level ``otf2.reader`` refuses traces
with duplicate definitions, which EZTrace 2.x writes (one ``MPI_COMM_WORLD``
group per rank); this reader keeps the first definition of every reference and
counts the duplicates in ``provenance["duplicate_definitions"]``.

Choices the source leaves open:

* The world rank of a location is its index in the MPI ``COMM_LOCATIONS``
  group (or, OTF2 3.x, the index of its location group in a
  ``COMM_LOCATION_GROUPS`` group); a trace without either (some EZTrace
  versions) falls back to the location-group reference.
* ``receiver`` is a rank in ``communicator``: translated to a world rank
  through the communicator's group (``COMM_GROUP`` members are indices into
  the world group; a ``COMM_SELF`` receiver is the sender).
* Counted: ``MpiSend`` and ``MpiIsend`` events, bytes = ``msgLength``,
  one message each.  Receives, collectives and one-sided events are not
  counted (collectives have no per-peer volumes in OTF2).
* ``n`` is the size of the world group.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
from typing import Any

import numpy as np

from ..errors import FormatError, MissingDependencyError
from ..pattern import Pattern


def _bindings() -> Any:
    try:
        import _otf2
    except ImportError as exc:
        raise MissingDependencyError("reading OTF2 traces needs the otf2 package: "
                                     "pip install 'topomap-hpc[otf2]'") from exc
    return _otf2


class _Definitions:
    """The global definitions an MPI traffic pattern needs, first definition wins."""

    def __init__(self) -> None:
        self.location_group: dict[int, int] = {}   # location -> its location group
        self.groups: dict[int, tuple[int, int, list[int]]] = {}   # group -> (type, paradigm, members)
        self.comms: dict[int, int] = {}            # communicator -> group
        self.duplicates = 0
        self.fault: str | None = None              # why a callback stopped the reading

    def __getstate__(self) -> dict:
        # only the tables cross the process boundary; the bindings attach C callbacks to the instance
        return {k: getattr(self, k) for k in ("location_group", "groups", "comms", "duplicates", "fault")}

    def _keep(self, table: dict, ref: int, value: Any) -> None:
        if ref in table:
            self.duplicates += 1
        else:
            table[ref] = value

    def location(self, _ud, ref, _name, _type, _events, group) -> None:
        self._keep(self.location_group, ref, group)

    def group(self, ref: int, group_type: int, paradigm: int, members: list[int]) -> None:
        self._keep(self.groups, ref, (group_type, paradigm, members))

    def comm(self, _ud, ref, _name, group, _parent, _flags) -> None:
        self._keep(self.comms, ref, group)


def read_otf2(path: "str | os.PathLike[str]", timeout: float | None = None) -> Pattern:
    """Read the point-to-point sends of an OTF2 MPI trace.

    The OTF2 library runs in a child process: on some corrupt traces it loops
    forever or crashes, which must not take the caller down.

    Parameters
    ----------
    path : str or path
        The anchor file (``traces.otf2``).
    timeout : float, optional
        Seconds the library may take; default 60 s plus 1 s per MB of trace.

    Returns
    -------
    Pattern
        Bytes and messages of ``MpiSend``/``MpiIsend`` events per (world
        sender, world receiver) pair.

    Examples
    --------
    >>> import topomap as tm
    >>> tm.io.read_otf2("missing/traces.otf2")
    Traceback (most recent call last):
    ...
    topomap.errors.FormatError: missing/traces.otf2: cannot open (No such file or directory)
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FormatError(f"{path}: cannot open (No such file or directory)")
    _bindings()
    n, indptr, indices, byts, msgs, provenance = _read_in_child(path, timeout)
    return Pattern._canonical(n, indptr, indices, byts, msgs, provenance)


def _trace_megabytes(anchor: str) -> float:
    root = os.path.splitext(anchor)[0]
    files = [anchor, root + ".def"] + [os.path.join(root, f) for f in (os.listdir(root) if os.path.isdir(root) else [])]
    return sum(os.path.getsize(f) for f in files if os.path.isfile(f)) / 1e6


def _read_in_child(path: str, timeout: float | None) -> tuple:
    limit = timeout if timeout is not None else 60.0 + _trace_megabytes(path)
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
    with tempfile.TemporaryDirectory(prefix="topomap-otf2-") as tmp:
        out = os.path.join(tmp, "result.pickle")
        code = "import sys; from topomap.io.otf2_trace import _child; _child(sys.argv[1], sys.argv[2])"
        try:
            proc = subprocess.run([sys.executable, "-c", code, path, out], capture_output=True, env=env,
                                  timeout=limit)
        except subprocess.TimeoutExpired:
            raise FormatError(f"{path}: the OTF2 library did not finish within {limit:.0f} s (corrupt traces can "
                              "make it loop; pass timeout= for a larger trace)") from None
        if proc.returncode != 0 or not os.path.exists(out):
            lines = proc.stderr.decode(errors="replace").strip().splitlines() or [f"exit status {proc.returncode}"]
            raise FormatError(f"{path}: the OTF2 library failed on this trace ({lines[-1][:200]})")
        with open(out, "rb") as fh:
            status, value = pickle.load(fh)
    if status == "error":
        raise FormatError(value)
    return value


def _child(path: str, out: str) -> None:
    """Child process: read the trace with the library, pickle the pattern's arrays (far fewer
    than the events) or the FormatError text."""
    try:
        pat = _pattern(_bindings(), path, *_read_raw(path))
        result = ("ok", (pat.n, pat.indptr, pat.indices, pat.bytes, pat.msgs, pat.provenance))
    except FormatError as exc:
        result = ("error", str(exc))
    with open(out, "wb") as fh:
        pickle.dump(result, fh)


def _read_raw(path: str) -> tuple["_Definitions", np.ndarray]:
    otf2 = _bindings()
    try:
        handle = otf2.Reader_Open(path)
    except otf2.Error as exc:
        raise FormatError(f"{path}: not a readable OTF2 anchor file ({exc.name})") from None
    stage = ["global definitions"]  # what was being read when the library failed, for the message
    defs = _Definitions()
    try:
        try:
            _read_definitions(otf2, handle, defs, _max_members(path))
            stage[0] = "event files"
            sends = _read_sends(otf2, handle, sorted(defs.location_group))
        finally:
            otf2.Reader_Close(handle)
    except otf2.Error as exc:
        raise FormatError(f"{path}: corrupt or missing {stage[0]} ({defs.fault or exc.name})") from None
    return defs, sends


def _max_members(anchor: str) -> int:
    """A bound on any group's size: each member takes at least a byte of the global definitions file."""
    defs_file = os.path.splitext(anchor)[0] + ".def"
    return os.path.getsize(defs_file) if os.path.isfile(defs_file) else 0


def _read_definitions(otf2: Any, handle: Any, defs: _Definitions, max_members: int) -> None:
    otf2.Reader_SetSerialCollectiveCallbacks(handle)
    reader = otf2.Reader_GetGlobalDefReader(handle)
    callbacks = otf2.GlobalDefReaderCallbacks_New()
    otf2.GlobalDefReaderCallbacks_SetLocationCallback(callbacks, defs.location)
    otf2.GlobalDefReaderCallbacks_SetCommCallback(callbacks, defs.comm)
    keep_alive = _set_group_callback(callbacks, defs, max_members)
    otf2.Reader_RegisterGlobalDefCallbacks(handle, reader, callbacks, None)
    otf2.GlobalDefReaderCallbacks_Delete(callbacks)
    try:
        otf2.Reader_ReadAllGlobalDefinitions(handle, reader)
    finally:
        otf2.Reader_CloseGlobalDefReader(handle, reader)
        del keep_alive


def _set_group_callback(callbacks: Any, defs: _Definitions, max_members: int) -> Any:
    """Register the Group definition callback directly.

    Why not the bindings' ``GlobalDefReaderCallbacks_SetGroupCallback``: it copies the member
    array in a Python loop before calling back, and a corrupt member count (up to 2^32) turns
    that into a hang.  This callback checks the count against the file size first and copies
    with NumPy.  Returns the C function object, which must outlive the reading.
    """
    import ctypes

    from _otf2.GlobalDefReaderCallbacks import GlobalDefReaderCallbacks
    from _otf2.GlobalDefReaderCallbacks import _GlobalDefReaderCallback_FP_Group as GroupCallback

    def on_group(_ud, ref, _name, group_type, paradigm, _flags, count, members) -> int:
        if count > max_members:
            defs.fault = f"group {ref} claims {count} members, more than the definitions file can hold"
            return 1  # OTF2_CALLBACK_INTERRUPT: stop reading
        values = np.ctypeslib.as_array(members, shape=(count,)).tolist() if count else []
        defs.group(ref, int(group_type.value), int(paradigm.value), values)
        return 0

    c_func = GroupCallback(on_group)
    _c_function("OTF2_GlobalDefReaderCallbacks_SetGroupCallback", ctypes.POINTER(GlobalDefReaderCallbacks),
                GroupCallback)(callbacks, c_func)
    return c_func


def _c_function(name: str, *argtypes: Any) -> Any:
    """The library's C function `name` called through ctypes with these argument types; a
    failing error code raises the bindings' exception."""
    from _otf2.Config import conf
    from _otf2.ErrorCodes import ErrorCode, HandleErrorCode
    func = getattr(conf.lib, name)
    func.argtypes, func.restype, func.errcheck = list(argtypes), ErrorCode, HandleErrorCode
    return func


def _read_sends(otf2: Any, handle: Any, locations: list[int]) -> np.ndarray:
    """(location, receiver, communicator, bytes) of every MpiSend/MpiIsend event, as uint64 rows.

    The events are taken by C callbacks of topomap's core (``_core.otf2_sends``) registered
    with the library through ctypes: a Python callback per event read 4-5 MB/s."""
    import ctypes

    from _otf2.GlobalEvtReader import GlobalEvtReader
    from _otf2.GlobalEvtReaderCallbacks import GlobalEvtReaderCallbacks

    from .. import _core

    for ref in locations:
        otf2.Reader_SelectLocation(handle, ref)
    # Local definition files are optional in OTF2; their absence is not an error.
    local_defs = True
    try:
        otf2.Reader_OpenDefFiles(handle)
    except otf2.Error:
        local_defs = False
    otf2.Reader_OpenEvtFiles(handle)
    for ref in locations:
        if local_defs:
            local = otf2.Reader_GetDefReader(handle, ref)
            if local:
                otf2.Reader_ReadAllLocalDefinitions(handle, local)
                otf2.Reader_CloseDefReader(handle, local)
        otf2.Reader_GetEvtReader(handle, ref)
    if local_defs:
        otf2.Reader_CloseDefFiles(handle)
    sink, sink_address, on_send, on_isend = _core.otf2_sends()
    reader = otf2.Reader_GetGlobalEvtReader(handle)
    callbacks = otf2.GlobalEvtReaderCallbacks_New()
    to_callbacks = ctypes.POINTER(GlobalEvtReaderCallbacks)
    _c_function("OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback", to_callbacks, ctypes.c_void_p)(callbacks, on_send)
    _c_function("OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback", to_callbacks, ctypes.c_void_p)(callbacks,
                                                                                                    on_isend)
    _c_function("OTF2_GlobalEvtReader_SetCallbacks", ctypes.POINTER(GlobalEvtReader), to_callbacks,
                ctypes.c_void_p)(reader, callbacks, sink_address)
    otf2.GlobalEvtReaderCallbacks_Delete(callbacks)
    try:
        otf2.GlobalEvtReader_ReadEvents(reader, 2**64 - 1)
    except otf2.Error:
        _core.otf2_sends_array(sink)  # a callback out of memory stopped the reading: MemoryError, not a bad trace
        raise
    finally:
        otf2.Reader_CloseGlobalEvtReader(handle, reader)
        otf2.Reader_CloseEvtFiles(handle)
    return _core.otf2_sends_array(sink)


def _world(otf2: Any, defs: _Definitions) -> tuple[int, dict[int, int], str]:
    """(n, world rank of every location, how ranks were found)."""
    mpi = int(otf2.PARADIGM_MPI.value)
    kinds = {int(otf2.GROUP_TYPE_COMM_LOCATIONS.value): "locations",
             int(otf2.GROUP_TYPE_COMM_LOCATION_GROUPS.value): "location groups"}
    for gtype, paradigm, members in defs.groups.values():
        if paradigm == mpi and gtype in kinds:
            if kinds[gtype] == "locations":
                rank = {loc: r for r, loc in enumerate(members)}
            else:
                of_group = {g: r for r, g in enumerate(members)}
                rank = {loc: of_group[g] for loc, g in defs.location_group.items() if g in of_group}
            return len(members), rank, f"MPI COMM_{kinds[gtype].upper().replace(' ', '_')} group"
    rank = dict(defs.location_group)
    return max(rank.values(), default=-1) + 1, rank, "location group references (no MPI world group)"


def _pattern(otf2: Any, path: str, defs: _Definitions, sends: np.ndarray) -> Pattern:
    """World (sender, receiver, bytes) of every send row (location, receiver, communicator, bytes).

    Translated with NumPy over the distinct locations and communicators (a trace has few of
    them and millions of sends); the first event that cannot be translated is named by
    :func:`_raise_for_event`."""
    n, rank_of, how = _world(otf2, defs)
    if n < 1:
        raise FormatError(f"{path}: no MPI ranks defined")
    kinds = (int(otf2.GROUP_TYPE_COMM_SELF.value), int(otf2.GROUP_TYPE_COMM_GROUP.value))
    location, receiver, comm = sends[:, 0], sends[:, 1].astype(np.int64), sends[:, 2]
    locs = np.array(sorted(rank_of), dtype=np.uint64)
    loc_at = np.minimum(np.searchsorted(locs, location), max(len(locs) - 1, 0))
    known = (locs[loc_at] == location) if len(locs) else np.zeros(len(location), bool)
    sender = np.where(known, np.array([rank_of[int(loc)] for loc in locs] or [0], dtype=np.int64)[loc_at], -1)
    comms = np.array(sorted(defs.comms), dtype=np.uint64)
    comm_at = np.minimum(np.searchsorted(comms, comm), max(len(comms) - 1, 0))
    members = [_members(defs, int(c)) for c in comms] + [None]  # the last: communicators never defined
    comm_at = np.where((comms[comm_at] == comm) if len(comms) else False, comm_at, len(comms))
    gtype = np.array([-1 if m is None else m[0] for m in members], dtype=np.int64)[comm_at]
    size = np.array([0 if m is None else len(m[1]) for m in members], dtype=np.int64)[comm_at]
    target = receiver.copy()
    target[gtype == kinds[0]] = sender[gtype == kinds[0]]
    in_group = (gtype == kinds[1]) & (receiver < size)
    if in_group.any():
        offset = np.cumsum([0] + [0 if m is None else len(m[1]) for m in members])
        # members are uint64 in the file: any beyond n is no world rank (and must not overflow int64)
        flat = np.minimum(np.concatenate([np.asarray(m[1], dtype=np.uint64) for m in members if m is not None]),
                          n).astype(np.int64)
        target[in_group] = flat[offset[comm_at[in_group]] + receiver[in_group]]
    bad = (sender < 0) | (gtype < 0) | ((gtype == kinds[1]) & (receiver >= size)) | (target < 0) | (target >= n)
    if bad.any():
        event = int(np.argmax(bad))
        _raise_for_event(path, defs, n, rank_of, kinds, event, [int(v) for v in sends[event]])
    provenance = {"source": "otf2", "file": path, "events": len(sends), "ranks_from": how,
                  "duplicate_definitions": defs.duplicates,
                  "counted": "msgLength of MpiSend and MpiIsend events, one message each, per world rank pair"}
    byts = sends[:, 3].astype(np.float64)
    return Pattern.from_edges(sender, target, byts, np.ones_like(byts), n=n, provenance=provenance)


def _members(defs: _Definitions, comm: int) -> "tuple[int, list[int]] | None":
    """(group type, members) of a communicator's group; None when either is undefined."""
    if comm not in defs.comms or defs.comms[comm] not in defs.groups:
        return None
    gtype, _, members = defs.groups[defs.comms[comm]]
    return gtype, members


def _raise_for_event(path: str, defs: _Definitions, n: int, rank_of: dict[int, int], kinds: tuple[int, int],
                     event: int, row: list[int]) -> None:
    """The FormatError saying why send `event` (row: location, receiver, communicator, bytes)
    has no world sender or receiver; kinds: the COMM_SELF and COMM_GROUP group types."""
    location, receiver, comm, _ = row
    if location not in rank_of:
        raise FormatError(f"{path}: send event {event} on location {location}, which is no MPI rank")
    sender = rank_of[location]
    group = _members(defs, comm)
    if group is None:
        raise FormatError(f"{path}: send event {event} (rank {sender}) uses undefined communicator {comm}")
    gtype, members = group
    if gtype == kinds[0]:
        target = sender
    elif gtype == kinds[1]:
        if receiver >= len(members):
            raise FormatError(f"{path}: send event {event} (rank {sender}) to rank {receiver} of communicator "
                              f"{comm}, which has {len(members)} ranks")
        target = members[receiver]
    else:
        target = receiver
    if not 0 <= target < n:
        raise FormatError(f"{path}: send event {event} (rank {sender}) to world rank {target}, outside 0..{n - 1}")
