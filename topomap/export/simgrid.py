"""SimGrid platform XML, SMPI host files and flow replays, so that SimGrid replays topomap's routes and flows.

Format: SimGrid platform DTD version 4.1 (``simgrid.dtd``, SimGrid >= 3.16;
read by SimGrid 3.x and 4.x).  The platform is one ``<zone routing="Full">``
holding

* a ``<prop id="topomap_spec">`` with the machine's spec string;
* one ``<host id="nodeN">`` per compute node, with ``core`` = PEs per node;
* one ``<router id="switchV">`` per switch (for reading only: Full routing
  takes routes as lists of links);
* one ``<link id="lK">`` per directed topomap link ``K``, ``SHARED``, with
  bandwidth = ``capacity x bandwidth`` and the same ``latency`` for all;
* one ``<route src= dst= symmetrical="NO">`` per ordered pair of distinct
  nodes listing the links of :meth:`Machine.route`, so SimGrid's flows use
  exactly topomap's routes (Floyd or Dijkstra zones would pick their own
  shortest paths).

Choices the formats leave open, made here:

* Units: bandwidth in bytes/s (``Bps``), latency in seconds, host speed in
  flop/s, always written with their unit (SimGrid warns on unit-less values).
  Defaults are InfiniBand-class figures: 12.5 GB/s per unit of capacity
  (100 Gb/s), 100 ns per link, 1 Gflop/s per core.  Pass your own.
* Inside a node SimGrid uses its loopback link; the node tree is not modelled.
* Full routing stores N(N-1) routes, so :func:`platform` refuses more than
  ``max_nodes`` nodes (default 512: 261,632 routes, about 50 MB for a 3-D
  torus) unless told otherwise, or given the ``pairs`` to write.
* Host file (``smpirun -hostfile``): one line per rank, the host of the node
  whose PE the rank is mapped to; SMPI gives rank ``i`` the ``i``-th line.

Replaying flows (:func:`replay`, :func:`write_case`)
----------------------------------------------------
A pattern or a schedule on a mapping becomes a platform (the routes of the
node pairs its flows use), a deployment (an actor per rank) and a flows file
that the driver :mod:`topomap.export.simgrid_replay` plays under topomap's
schedule rules.  The driver sets SimGrid to plain max-min sharing
(:data:`~topomap.export.simgrid_replay.PLAIN_MAXMIN`: CM02 without latency
or bandwidth factors, weight-S, cross-traffic or the TCP-gamma bound).  One
thing those settings leave: SimGrid 3.32's CM02 gives a flow the sharing
penalty of its route latency (``sharing_penalty_ = latency`` in
``NetworkCm02Model::communicate``, src/surf/network_cm02.cpp; the solver in
src/kernel/lmm/maxmin.cpp gives each flow ``usage / penalty``), so with link
latencies a flow over three links gets a third of a one-link flow's share
of a link they both cross; a route without latency has penalty 1.  Hence the
replay's links have no latency and each flow waits its own latency
(``alpha + hops x latency``) before it is put: all flows weigh the same, as
in topomap (``latency_on="links"`` keeps SimGrid's own weighting, which
agrees only where flows sharing a link have equal hop counts).  A flow
inside one node crosses SimGrid's loopback link, set unlimited so that only
the flow's rate limits it, as topomap's flow inside a node uses no link.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Sequence
from xml.sax.saxutils import quoteattr

import numpy as np

from . import simgrid_replay
from ..collectives.schedules import Schedule
from ..errors import (MachineError, MappingError, MissingDependencyError, PatternError, TimeModelError,
                      TopomapError)
from ..machine import Allocation, Machine
from ..mapping import Mapping
from ..pattern import Pattern
from ..timemodel.predict import message_table, stages_of

__all__ = ["platform", "hostfile", "host_name", "link_name", "flows", "deployment", "write_case", "replay", "Replay"]


def host_name(node: int) -> str:
    """SimGrid host id of a compute node.

    Examples
    --------
    >>> host_name(3)
    'node3'
    """
    return f"node{node}"


def link_name(link: int) -> str:
    """SimGrid link id of a topomap link.

    Examples
    --------
    >>> link_name(12)
    'l12'
    """
    return f"l{link}"


def _positive(value: float, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value) or value <= 0:
        raise MachineError(f"{what} must be a positive finite number, got {value!r}")
    return float(value)


def platform(machine: Machine, bandwidth: float = 1.25e10, latency: float = 1e-7, speed: float = 1e9,
             max_nodes: int = 512, *, pairs: Any = None) -> str:
    """SimGrid platform XML (DTD 4.1) of a machine with topomap's own routes.

    Parameters
    ----------
    machine : Machine
        Any machine.
    bandwidth : float
        Bytes per second of a link of capacity 1.
    latency : float
        Seconds per link.
    speed : float
        Flop/s of each core.
    max_nodes : int
        Refuse machines with more compute nodes (the file holds N(N-1) routes)
        when ``pairs`` is not given.
    pairs : array of shape (k, 2), optional
        Ordered ``(src node, dst node)`` pairs: write only their routes (pairs
        of a node with itself and repeats are dropped), so that a case on a
        machine of thousands of nodes stays small.  All hosts and links are
        still written, under the same names.

    Returns
    -------
    str
        The XML document.

    Examples
    --------
    >>> import topomap as tm
    >>> xml = platform(tm.machine("torus:2x2"))
    >>> xml.count("<route "), xml.count("<link ")
    (12, 16)
    >>> [line.strip() for line in xml.splitlines() if 'src="node0" dst="node3"' in line]
    ['<route src="node0" dst="node3" symmetrical="NO"><link_ctn id="l0"/><link_ctn id="l6"/></route>']
    >>> platform(tm.machine("torus:2x2"), pairs=[(0, 3), (0, 3), (1, 1)]).count("<route ")
    1
    """
    bw = _positive(bandwidth, "bandwidth")
    lat = _positive(latency, "latency")
    spd = _positive(speed, "speed")
    if pairs is None:
        n = machine.nnodes
        if n > max_nodes:
            raise MachineError(f"{machine.spec!r} has {n} nodes: a Full-routing platform would hold {n * (n - 1)} "
                               f"routes; pass max_nodes={n} to write it anyway, or only the pairs you need")
    return _platform(machine, bw, lat, spd, _node_pairs(machine, pairs))


def _node_pairs(machine: Machine, pairs: Any) -> np.ndarray:
    """Distinct ordered pairs of distinct nodes, sorted; all of them for None."""
    n = machine.nnodes
    if pairs is None:
        a, b = np.divmod(np.arange(n * n, dtype=np.int64), n)
    else:
        arr = np.asarray(pairs)
        if arr.size == 0:
            arr = arr.reshape(0, 2)
        if arr.ndim != 2 or arr.shape[1] != 2 or arr.dtype.kind not in "iu":
            raise MachineError(f"pairs must be an integer array of shape (k, 2), got shape {arr.shape} "
                               f"and dtype {arr.dtype}")
        bad = (arr < 0) | (arr >= n)
        if bad.any():
            i = int(np.flatnonzero(bad.any(axis=1))[0])
            raise MachineError(f"pair {i} = {arr[i].tolist()} names a node outside [0, {n})")
        a, b = np.divmod(np.unique(arr[:, 0].astype(np.int64) * n + arr[:, 1]), n)
    keep = a != b
    return np.stack([a[keep], b[keep]], axis=1)


def _platform(machine: Machine, bw: float, lat: float, spd: float, pairs: np.ndarray) -> str:
    """The platform text; ``lat`` may be 0 here (the replay's links, see :func:`replay`)."""
    g = machine.links()
    lines = ["<?xml version='1.0'?>",
             '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">',
             '  <zone id="topomap" routing="Full">',
             f'    <prop id="topomap_spec" value={quoteattr(machine.spec)}/>']
    lines += [f'    <host id="{host_name(v)}" speed="{spd!r}f" core="{machine.pes_per_node}"/>'
              for v in range(machine.nnodes)]
    lines += [f'    <router id="switch{v}"/>' for v in range(machine.nnodes, machine.nvertices)]
    lines += [f'    <link id="{link_name(k)}" bandwidth="{c * bw!r}Bps" latency="{lat!r}s" '
              f'sharing_policy="SHARED"/>' for k, c in zip(g["link"].tolist(), g["capacity"].tolist())]
    for a, b in pairs.tolist():
        ctn = "".join(f'<link_ctn id="{link_name(k)}"/>' for k in machine.route(a, b).tolist())
        lines.append(f'    <route src="{host_name(a)}" dst="{host_name(b)}" symmetrical="NO">{ctn}</route>')
    lines += ["  </zone>", "</platform>"]
    return "\n".join(lines) + "\n"


def hostfile(where: "Allocation | Machine", mapping: "Mapping | Any | None" = None) -> str:
    """SMPI host file: the host of each rank, one line per rank.

    Parameters
    ----------
    where : Allocation or Machine
        With an Allocation and no mapping, rank ``i`` runs on ``pes[i]`` (the
        launcher's order); with a Machine and no mapping, on PE ``i`` of the
        whole machine.
    mapping : Mapping or array of PE ids, optional
        ``pe_of[rank]``; with an Allocation every PE must be in it.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("torus:2x2/2").allocate(4)
    >>> hostfile(alloc, [3, 2, 1, 0]).split()
    ['node1', 'node1', 'node0', 'node0']
    """
    machine, pe = _placement(where, mapping)
    return "".join(f"{host_name(v)}\n" for v in machine.node_of(pe).tolist())


def _placement(where: "Allocation | Machine", mapping: "Mapping | Any | None") -> tuple[Machine, np.ndarray]:
    """The machine and the PE of each rank (rules of :func:`hostfile`)."""
    machine = where.machine if isinstance(where, Allocation) else where
    if not isinstance(machine, Machine):
        raise MappingError(f"a host file needs an Allocation or a Machine, got {type(where).__name__}")
    if mapping is None:
        pe = where.pes if isinstance(where, Allocation) else np.arange(machine.npes)
    else:
        pe = mapping.pe_of if isinstance(mapping, Mapping) else Mapping(np.asarray(mapping)).pe_of
        if isinstance(where, Allocation):
            outside = ~np.isin(pe, where.pes)
            if outside.any():
                r = int(np.flatnonzero(outside)[0])
                raise MappingError(f"rank {r} is mapped to PE {pe[r]}, which is not in the allocation")
    return machine, pe


# ------------------------------------------------------------------ replaying flows

def _stages(work: "Pattern | Schedule") -> tuple[Pattern, ...]:
    if not isinstance(work, Pattern) and not isinstance(getattr(work, "stages", None), (tuple, list)):
        raise PatternError(f"flows need a Pattern or a Schedule with stages, got {type(work).__name__}")
    return stages_of(work)


def flows(work: "Pattern | Schedule") -> dict[str, np.ndarray]:
    """The flows of a pattern (one stage) or of a schedule, one row per message entry.

    Stage by stage, within a stage in CSR order (by sender, then receiver);
    ``bytes`` rounded to whole bytes, as SimGrid's message sizes are integers.
    A pattern entry is one flow even where it counts several messages.

    Examples
    --------
    >>> from topomap.collectives.schedules import binomial_bcast
    >>> f = flows(binomial_bcast(4, bytes=10.4))
    >>> f["stage"].tolist(), f["src"].tolist(), f["dst"].tolist(), f["bytes"].tolist()
    ([0, 1, 1], [0, 0, 2], [2, 1, 3], [10, 10, 10])
    """
    t = message_table(_stages(work))
    return {"src": t["src"].astype(np.int64), "dst": t["dst"].astype(np.int64), "stage": t["stage"].astype(np.int64),
            "bytes": np.rint(t["bytes"]).astype(np.int64)}


def deployment(where: "Allocation | Machine", mapping: "Mapping | Any | None" = None) -> str:
    """SimGrid deployment XML: one actor ``rank`` per rank on the host of its PE.

    The actor's only argument is its rank; :mod:`topomap.export.simgrid_replay`
    registers the function ``rank``.  ``where`` and ``mapping`` as in
    :func:`hostfile`.

    Examples
    --------
    >>> import topomap as tm
    >>> print(deployment(tm.machine("torus:2x2/2").allocate(4), [3, 2, 1, 0]), end="")
    <?xml version='1.0'?>
    <!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
    <platform version="4.1">
      <actor host="node1" function="rank"><argument value="0"/></actor>
      <actor host="node1" function="rank"><argument value="1"/></actor>
      <actor host="node0" function="rank"><argument value="2"/></actor>
      <actor host="node0" function="rank"><argument value="3"/></actor>
    </platform>
    """
    machine, pe = _placement(where, mapping)
    lines = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">']
    lines += [f'  <actor host="{host_name(v)}" function="rank"><argument value="{r}"/></actor>'
              for r, v in enumerate(machine.node_of(pe).tolist())]
    return "\n".join(lines + ["</platform>"]) + "\n"


SYNCS = ("barrier", "ranks")
LATENCY_ON = ("flows", "links")


def _per_flow(value: Any, nflows: int, what: str, positive: bool, allow_inf: bool = False) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        arr = np.zeros((0, 0))
    if arr.shape not in ((), (nflows,)):
        raise TimeModelError(f"{what} must be a number or one number per flow ({nflows}), got {value!r:.80}")
    arr = np.broadcast_to(arr, (nflows,)).copy()
    bad = np.isnan(arr) | (np.isinf(arr) & (not allow_inf)) | ((arr <= 0) if positive else (arr < 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        need = "positive" if positive else ">= 0"
        raise TimeModelError(f"{what} of flow {i} is {float(arr[i])!r}; it must be {need} "
                             f"and {'not NaN' if allow_inf else 'finite'}")
    return arr


def _case(work: "Pattern | Schedule", where: "Allocation | Machine", mapping: "Mapping | Any | None",
          bandwidth: float, latency: float, alpha: Any, rate: Any, sync: str, iterations: int,
          latency_on: str) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    """The three files of a replay and the flows they hold."""
    if sync not in SYNCS:
        raise TimeModelError(f"sync must be one of {SYNCS}, got {sync!r}")
    if latency_on not in LATENCY_ON:
        raise TimeModelError(f"latency_on must be one of {LATENCY_ON}, got {latency_on!r}")
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise TimeModelError(f"iterations must be a positive integer, got {iterations!r}")
    bw = _positive(bandwidth, "bandwidth")
    if isinstance(latency, bool) or not isinstance(latency, (int, float, np.integer, np.floating)) \
            or not math.isfinite(latency) or latency < 0:
        raise TimeModelError(f"latency is seconds per link, one finite number >= 0, got {latency!r:.80} "
                             "(seconds per flow go in alpha)")
    hop = float(latency)
    stages = _stages(work)
    machine, pe = _placement(where, mapping)
    if stages[0].n != len(pe):
        raise MappingError(f"the mapping places {len(pe)} ranks, the work has {stages[0].n}")
    fl = flows(work)
    node = machine.node_of(pe)
    a, b = node[fl["src"]], node[fl["dst"]]
    lat = _per_flow(alpha, a.size, "alpha", False)
    if latency_on == "flows":
        lat = lat + machine.hops(a, b) * hop
    lim = np.full(a.size, np.inf) if rate is None else _per_flow(rate, a.size, "rate", True, allow_inf=True)
    lim[np.isinf(lim)] = -1.0                             # the driver's "no limit"
    head = (f"topomap-flows 1\nsync {sync}\niterations {int(iterations)}\nranks {len(pe)}\nstages {len(stages)}\n"
            f"flows {a.size}\n")
    rows = "".join(f"{s} {x} {y} {z} {t!r} {c!r}\n" for s, x, y, z, t, c in zip(
        fl["stage"].tolist(), fl["src"].tolist(), fl["dst"].tolist(), fl["bytes"].tolist(), lat.tolist(),
        lim.tolist()))
    files = {"platform.xml": _platform(machine, bw, hop if latency_on == "links" else 0.0, 1e9,
                                       _node_pairs(machine, np.stack([a, b], axis=1))),
             "deployment.xml": deployment(machine, pe),
             "flows.txt": head + rows}
    return files, fl


def write_case(directory: "str | os.PathLike", work: "Pattern | Schedule", where: "Allocation | Machine",
               mapping: "Mapping | Any | None" = None, *, bandwidth: float = 1.25e10, latency: float = 1e-7,
               alpha: Any = 0.0, rate: Any = None, sync: str = "barrier", iterations: int = 1,
               latency_on: str = "flows") -> list[str]:
    """Write a SimGrid replay of ``work`` on a mapping into ``directory``; return its command line.

    Files: ``platform.xml`` (the routes of the node pairs the flows use),
    ``deployment.xml`` (:func:`deployment`), ``flows.txt`` (one line per flow)
    and the driver ``simgrid_replay.py`` (SimGrid's Python API and the standard
    library only).  Run it yourself, in that directory, with the interpreter
    that has ``python3-simgrid``::

        /usr/bin/python3 simgrid_replay.py platform.xml deployment.xml flows.txt

    It prints ``{"makespan": ..., "finish": [[...]]}`` (seconds; ``finish[i][f]``
    for iteration ``i`` and flow ``f`` of :func:`flows`).  Add ``--cfg=...``
    flags to change SimGrid's settings (they come after
    :data:`~topomap.export.simgrid_replay.PLAIN_MAXMIN`).

    Parameters
    ----------
    directory : str or path
        Created if missing; the four files are overwritten.
    work : Pattern or Schedule
        One phase (all flows start together) or stages (``.stages``).
    where, mapping
        Allocation or Machine, and the PE of each rank, as in :func:`hostfile`.
    bandwidth : float
        Bytes per second of a link of capacity 1.
    latency : float
        Seconds per link of a flow's route.
    alpha : float or array of one per flow
        Seconds added to each flow's latency (a link class's Hockney alpha).
    rate : float or array of one per flow, optional
        Bytes per second a flow may use at most (its class's bandwidth);
        no limit by default.
    sync : {"barrier", "ranks"}
        Stages separated by barriers, or a rank starts stage ``s + 1`` once its
        receives of stage ``s`` are done (its sends of a stage start then).
    iterations : int
        Times the stages repeat.
    latency_on : {"flows", "links"}
        ``"flows"``: links have no latency in SimGrid, each flow waits
        ``alpha + hops x latency`` before it is put, so SimGrid's sharing is
        plain max-min (see the module docstring of :mod:`topomap.export.simgrid`);
        ``"links"``: SimGrid's links carry ``latency`` and flows wait ``alpha``,
        which SimGrid's CM02 shares in inverse proportion to route latency.

    Returns
    -------
    list of str
        The command line above (relative file names; run it in ``directory``).

    Examples
    --------
    >>> import os, tempfile, topomap as tm
    >>> m = tm.machine("torus:4/1")
    >>> with tempfile.TemporaryDirectory() as d:
    ...     cmd = write_case(d, tm.generators.stencil_2d((4, 1)), m.allocate(4))
    ...     print(sorted(os.listdir(d)))
    ...     print(" ".join(cmd))
    ['deployment.xml', 'flows.txt', 'platform.xml', 'simgrid_replay.py']
    /usr/bin/python3 simgrid_replay.py platform.xml deployment.xml flows.txt
    """
    files, _ = _case(work, where, mapping, bandwidth, latency, alpha, rate, sync, iterations, latency_on)
    return _write(directory, files)


def _write(directory: "str | os.PathLike", files: dict[str, str]) -> list[str]:
    os.makedirs(directory, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(directory, name), "w") as f:
            f.write(text)
    shutil.copyfile(simgrid_replay.__file__, os.path.join(directory, "simgrid_replay.py"))
    return ["/usr/bin/python3", "simgrid_replay.py", "platform.xml", "deployment.xml", "flows.txt"]


@dataclass(frozen=True, eq=False)
class Replay:
    """What SimGrid reported for a replayed case.

    Attributes
    ----------
    makespan : float
        Seconds until the last flow finished.
    finish : numpy.ndarray
        ``finish[i, f]``: finish time of flow ``f`` in iteration ``i``.
    messages : dict of numpy.ndarray
        The flows (:func:`flows`): ``src``, ``dst``, ``stage``, ``bytes``.
    seconds : float
        Wall-clock time of the SimGrid process.
    """

    makespan: float
    finish: np.ndarray
    messages: dict
    seconds: float


def replay(work: "Pattern | Schedule", where: "Allocation | Machine", mapping: "Mapping | Any | None" = None, *,
           bandwidth: float = 1.25e10, latency: float = 1e-7, alpha: Any = 0.0, rate: Any = None,
           sync: str = "barrier", iterations: int = 1, latency_on: str = "flows",
           python: str = "/usr/bin/python3", cfg: Sequence[str] = (), timeout: float = 600.0) -> Replay:
    """Replay ``work`` on a mapping in SimGrid and return its finish times.

    Writes :func:`write_case`'s files to a temporary directory, runs the
    driver with ``python`` (an interpreter that can ``import simgrid``) and
    reads its answer.  Parameters as in :func:`write_case`; ``cfg`` adds
    SimGrid flags (``"--cfg=network/model:LV08"``); ``timeout`` in seconds.

    Raises
    ------
    MissingDependencyError
        ``python`` does not exist.
    TopomapError
        SimGrid failed or ran past ``timeout`` (with the tail of its stderr).

    Examples
    --------
    Two 1 MB flows over 1 GB/s links, 1 us each: 0->1 starts alone at 1 us,
    0->2 joins it on link 0->1 at 2 us; they split it until 0->1 ends, and
    0->2 sends its last 1000 bytes alone:

    >>> import topomap as tm
    >>> pat = tm.Pattern.from_edges([0, 0], [1, 2], [1e6, 1e6], n=3)
    >>> r = replay(pat, tm.machine("mesh:3/1"), bandwidth=1e9, latency=1e-6)
    >>> r.finish.round(9).tolist(), round(r.makespan, 9)
    ([[0.002, 0.002001]], 0.002001)
    """
    files, fl = _case(work, where, mapping, bandwidth, latency, alpha, rate, sync, iterations, latency_on)
    if not os.path.exists(python):
        raise MissingDependencyError(f"{python} does not exist: replay needs a Python with SimGrid "
                                     "(Debian: apt install python3-simgrid)")
    with tempfile.TemporaryDirectory(prefix="topomap-simgrid-") as d:
        cmd = _write(d, files)
        t0 = time.perf_counter()
        try:
            res = subprocess.run([python, *cmd[1:], *cfg], cwd=d, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            tail = (exc.stderr or b"")[-2000:]
            raise TopomapError(f"SimGrid ran past {timeout} s on {fl['src'].size} flows; stderr ends:\n"
                               f"{tail.decode(errors='replace') if isinstance(tail, bytes) else tail}") from None
        seconds = time.perf_counter() - t0
    if res.returncode != 0:
        raise TopomapError(f"SimGrid failed (exit {res.returncode}); stderr ends:\n{res.stderr[-2000:]}")
    out = json.loads(res.stdout.strip().splitlines()[-1])
    finish = np.asarray(out["finish"], dtype=float).reshape(iterations, fl["src"].size)
    return Replay(float(out["makespan"]), finish, fl, seconds)
