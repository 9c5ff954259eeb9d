"""Replay topomap's flows in SimGrid: the driver program (SimGrid's Python API, standard library).

Run by the system interpreter that has Debian's ``python3-simgrid``::

    /usr/bin/python3 simgrid_replay.py platform.xml deployment.xml flows.txt [--cfg=...] [--log=...]

It imports nothing from topomap, so the three files written by
:func:`topomap.export.simgrid.write_case` replay anywhere SimGrid 3.32+ is.

Input
-----
``platform.xml``: hosts, links and routes (:func:`topomap.export.simgrid.platform`).
``deployment.xml``: one ``<actor host= function="rank">`` per rank, its only
argument the rank id.  ``flows.txt``: a header of ``key value`` lines
(``topomap-flows 1``, ``sync barrier|ranks``, ``iterations``, ``ranks``,
``stages``, ``flows``), then one line per flow of one iteration:
``stage src dst bytes latency rate`` (ranks; whole bytes; seconds; bytes/s,
``-1`` for no limit).

Semantics (those of ``topomap._core.flowsim``)
----------------------------------------------
* A flow released at ``t`` is put at ``t + latency`` (the rank actor sleeps,
  so the latency uses no bandwidth), then shares link bandwidth with SimGrid's
  network model; it finishes when its receiver's ``get`` completes.
* ``barrier``: every rank starts its sends of a stage, waits for its
  receives of the stage and for its delayed sends to be put, then meets the
  others at a :class:`simgrid.Barrier`.
* ``ranks``: at time 0 each rank posts a ``get_async`` for every receive of
  every stage and iteration (one mailbox per flow and iteration), so a
  transfer starts as soon as its sender puts; rank ``r`` starts stage
  ``s + 1`` when its receives of stage ``s`` are done, without waiting for
  its sends (MPI ``Isend``).
* ``iterations`` repeat the stages: stage ``s`` of iteration ``i`` is global
  stage ``i * stages + s``.

The settings in :data:`PLAIN_MAXMIN` come first on SimGrid's command line, so
the model is plain max-min fair sharing unless later ``--cfg`` flags say
otherwise.

Output (stdout): one JSON object ``{"makespan": float, "finish": [[...], ...]}``
with ``finish[i][f]`` the finish time of flow ``f`` (line order of
``flows.txt``) in iteration ``i``.
"""

import heapq
import json
import sys

# Why each setting (SimGrid 3.32, src/surf/network_cm02.cpp and src/simgrid/sg_config.cpp):
# CM02 is max-min sharing (Casanova & Marchal 2002) without LV08's latency x13.01 and
# bandwidth x0.97 factors; weight-S adds bandwidth terms to a flow's sharing penalty;
# crosstraffic adds each flow's 5 % back-traffic to the reverse route; TCP-gamma bounds a flow
# by gamma / (2 x route latency); the implicit loopback (a FATPIPE link) must not limit a flow
# inside one host, which only its own rate limits, as in topomap; surf/precision (seconds) is
# the date resolution, 1e-9 s by default, tightened so microsecond flows keep 1e-7 accuracy.
PLAIN_MAXMIN = (
    "--cfg=network/model:CM02",
    "--cfg=network/latency-factor:1",
    "--cfg=network/bandwidth-factor:1",
    "--cfg=network/weight-S:0",
    "--cfg=network/crosstraffic:0",
    "--cfg=network/TCP-gamma:0",
    "--cfg=network/loopback-bw:1e30",
    "--cfg=network/loopback-lat:0",
    "--cfg=surf/precision:1e-13",
    "--log=root.thres:warning",
)

HEADER = ("topomap-flows", "sync", "iterations", "ranks", "stages", "flows")


def read_flows(path):
    """Header dict and flow rows of a flows file (format in the module docstring)."""
    with open(path) as f:
        head = {}
        for key in HEADER:
            k, _, v = f.readline().partition(" ")
            if k != key:
                raise SystemExit(f"{path}: header line {key!r} expected, got {k!r}")
            head[key] = v.strip()
        if head["topomap-flows"] != "1" or head["sync"] not in ("barrier", "ranks"):
            raise SystemExit(f"{path}: unsupported version {head['topomap-flows']!r} or sync {head['sync']!r}")
        for key in HEADER[2:]:
            head[key] = int(head[key])
        rows = []
        for line in f:
            s, a, b, size, lat, rate = line.split()
            rows.append((int(s), int(a), int(b), int(size), float(lat), float(rate)))
    if len(rows) != head["flows"]:
        raise SystemExit(f"{path}: header says {head['flows']} flows, found {len(rows)}")
    return head, rows


class Replay:
    """Per-rank send and receive lists of a flows file, and the finish times SimGrid reports."""

    def __init__(self, head, rows):
        self.sync = head["sync"]
        self.iterations = head["iterations"]
        self.stages = head["stages"]
        self.rows = rows
        n, nst = head["ranks"], head["stages"]
        self.sends = [[[] for _ in range(nst)] for _ in range(n)]
        self.recvs = [[[] for _ in range(nst)] for _ in range(n)]
        for f, (s, a, b, _, _, _) in enumerate(rows):
            self.sends[a][s].append(f)
            self.recvs[b][s].append(f)
        self.finish = [[-1.0] * len(rows) for _ in range(self.iterations)]
        self.barrier = None

    def rank(self, rank_id):
        """The program of one rank (deployment function ``rank``)."""
        from simgrid import Comm, Engine, Mailbox, this_actor

        r = int(rank_id)
        nst, rows = self.stages, self.rows
        stages = [(i, s) for i in range(self.iterations) for s in range(nst)]

        def post(i, s):
            # get_async's second item receives the payload: dropping it early corrupts the heap
            return [(f, *Mailbox.by_name(f"{i}:{f}").get_async()) for f in self.recvs[r][s]]

        posted = [post(i, s) for i, s in stages] if self.sync == "ranks" else None
        pending, puts, seq = [], [], 0        # heap of (put date, order, iteration, flow)

        def put(i, f):
            comm = Mailbox.by_name(f"{i}:{f}").put_init(f, rows[f][3])
            if rows[f][5] >= 0:
                comm.set_rate(rows[f][5])
            puts.append(comm.start())

        def put_due():
            while pending and pending[0][0] <= Engine.clock:
                _, _, i, f = heapq.heappop(pending)
                put(i, f)

        for g, (i, s) in enumerate(stages):
            start = Engine.clock
            for f in self.sends[r][s]:
                if rows[f][4] > 0:
                    heapq.heappush(pending, (start + rows[f][4], seq, i, f))
                    seq += 1
                else:
                    put(i, f)
            waiting = posted[g] if posted is not None else post(i, s)
            while True:
                put_due()
                if not waiting and (self.barrier is None or not pending):
                    break
                if not waiting:
                    this_actor.sleep_until(pending[0][0])
                    continue
                comms = [c for _, c, _ in waiting]
                k = Comm.wait_any_for(comms, pending[0][0] - Engine.clock) if pending else Comm.wait_any(comms)
                if k >= 0:
                    # not the clock: in "ranks" a receive of a later stage may have ended while this
                    # rank still waited for an earlier one
                    self.finish[i][waiting[k][0]] = waiting[k][1].finish_time
                    waiting[k] = waiting[-1]
                    waiting.pop()
            if self.barrier is not None:
                self.barrier.wait()
        while pending:
            this_actor.sleep_until(pending[0][0])
            put_due()
        Comm.wait_all(puts)


def raise_stack_limit(argv):
    """Re-run this program with the largest stack the hard limit allows.

    SimGrid's max-min solver walks the constraints a change touches
    recursively (``System::update_modified_cnst_set_rec``) on the stack of the
    thread that runs the engine, here the main thread; a 10^5-flow phase on a
    random mapping overflowed the usual 8 MB there.  The main thread's stack
    size is fixed when a program starts, hence the new start.
    """
    import os
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    if soft == hard or os.environ.get("TOPOMAP_REPLAY_STACK") == "raised":
        return
    resource.setrlimit(resource.RLIMIT_STACK, (hard, hard))
    os.environ["TOPOMAP_REPLAY_STACK"] = "raised"
    os.execv(sys.executable, [sys.executable, *argv])


def main(argv):
    """Run the replay; print the JSON result."""
    from simgrid import Barrier, Engine

    raise_stack_limit(argv)
    files = [a for a in argv[1:] if not a.startswith("--")]
    flags = [a for a in argv[1:] if a.startswith("--")]
    if len(files) != 3:
        raise SystemExit(f"usage: {argv[0]} platform.xml deployment.xml flows.txt [--cfg=...]")
    engine = Engine([argv[0], *PLAIN_MAXMIN, *flags])
    engine.load_platform(files[0])
    replay = Replay(*read_flows(files[2]))
    if replay.sync == "barrier":
        replay.barrier = Barrier(len(replay.sends))
    engine.register_actor("rank", replay.rank)
    engine.load_deployment(files[1])
    engine.run()
    finish = replay.finish
    if any(t < 0 for row in finish for t in row):
        raise SystemExit("some flows never finished (a rank of the flows file missing from the deployment?)")
    makespan = max((t for row in finish for t in row), default=0.0)
    json.dump({"makespan": makespan, "finish": finish}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
