"""distributed_ptram under mpiexec: usage: prog_ptram.py JSON  (a list of cases)

A case: {"name", "machine", "n", "policy", "pattern": [nx, ny] (stencil_2d, weights 1,3), "seed",
"partition", "plateau", "rounds", "capacity", "leaders", "candidates", "hosts"?}.  Every rank checks it got the same
result; rank 0 prints it.  Special names: "cancel" (rank 1's progress returns True past 50%),
"interrupt" (rank 1's progress raises KeyboardInterrupt, as Ctrl-C would), "raise" (rank 2's progress
raises ValueError), "mismatch" (rank 2 passes another pattern), "root_only" (the pattern and the allocation on rank 0 only); for these every
rank reports {"name", "rank", "error"} (printed by rank 0).
"""

from __future__ import annotations

import json

import topomap as tm
from mpiprog import all_ok, emit, main
from topomap.mpi import discover_job
from topomap.mpi.ptram import distributed_ptram


def inputs(comm, case):
    pat = tm.generators.stencil_2d(tuple(case["pattern"]), weights=(1, 3))
    if case.get("hosts"):
        alloc = discover_job(comm, hosts=case["hosts"], node="slots").allocation
    else:
        alloc = tm.machine(case["machine"]).allocate(case["n"], policy=case.get("policy", "contiguous"), seed=0)
    return pat, alloc


def options(case):
    return dict(seed=case.get("seed", 0), capacity=case.get("capacity", 1), partition=case.get("partition", True),
                plateau=case.get("plateau", False), rounds=case.get("rounds", 10), leaders=case.get("leaders"),
                candidates=case.get("candidates"))


def interrupt(fraction):
    raise KeyboardInterrupt


def fail(fraction):
    raise ValueError(f"progress failed at {fraction:.2f}")


PROGRESS = {("cancel", 1): lambda f: f > 0.5, ("interrupt", 1): interrupt, ("raise", 2): fail}


def body(comm, argv):
    for case in json.loads(argv[0]):
        pat, alloc = inputs(comm, case)
        name = case["name"]
        if name in ("cancel", "interrupt", "raise", "mismatch"):
            progress = PROGRESS.get((name, comm.rank))
            given = tm.generators.stencil_2d(tuple(case["pattern"]), weights=(1, 4)) \
                if name == "mismatch" and comm.rank == 2 else pat
            try:
                distributed_ptram(comm, given, alloc, progress=progress, **options(case))
                error = None
            except BaseException as exc:  # noqa: BLE001 - KeyboardInterrupt is expected too
                error = f"{type(exc).__name__}: {exc}"
            # rank 0 prints for all: mpiexec may interleave long lines of different ranks
            for entry in comm.gather({"name": name, "rank": comm.rank, "error": error}) or ():
                emit(entry)
            continue
        if name == "root_only":
            res = distributed_ptram(comm, pat if comm.rank == 0 else None, alloc if comm.rank == 0 else None,
                                    **options(case))
        else:
            res = distributed_ptram(comm, pat, alloc, **options(case))
        out = {"name": name, "pe_of": res.pe_of.tolist(), "group": res.group.tolist(), "order": res.order.tolist(),
               "unit_node": res.unit_node.tolist(), "round_mc": res.round_mc.tolist(),
               "rounds_done": res.rounds_done, "greedy_hybrid": res.greedy_hybrid, "pes": alloc.pes.tolist(),
               "spec": alloc.machine.spec, "comm_seconds": res.seconds["comm"]}
        same = comm.allgather((out["pe_of"], out["order"], out["round_mc"]))
        all_ok(comm, all(s == same[0] for s in same), f"{name}: every rank got the same result")
        if comm.rank == 0:
            emit(out)


if __name__ == "__main__":
    main(body)
