"""topomap.mpi.balance under mpiexec: usage: loadbalance_job.py JSON
(a list of {"seed", "method", "pack", "high"[, "reverse", "refill"]}, or {"error": ...} cases)

Each case draws the same task counts on every rank (seeded), gives every task a job-wide unique id
(rows [id, origin rank, id * 7 + 3] of an int64 array, or a list of {"id", "word"} dicts moved
through pickled pack/unpack), balances ("reverse": the flow visits the ranks in reverse order),
and rank 0 prints every rank's final ids for the driver, which checks them against the planned
flow.  The ranks check among themselves that no id is lost or duplicated and that every row's
contents travelled intact.
"""

from __future__ import annotations

import json

import numpy as np

from mpiprog import all_ok, emit, main
from topomap.mpi import CollectiveError, balance


def counts_for(seed: int, size: int, high: int) -> list[int]:
    return np.random.default_rng(seed).integers(0, high + 1, size=size).tolist()


def list_pack(tasks: list, n: int) -> tuple[list, list]:
    return tasks[:len(tasks) - n], tasks[len(tasks) - n:]


def list_unpack(kept: list, incoming: list) -> list:
    return kept + [t for payload in incoming for t in payload]


def bad_input(comm, case):
    """Every rank raises the same CollectiveError naming the last rank, whose input is wrong."""
    last = comm.size - 1
    tasks = np.zeros((3, 2), dtype=np.float64 if comm.rank == last else np.int64)
    if case["error"] == "container" and comm.rank == last:
        tasks = [1, 2, 3]
    if case["error"] == "objects" and comm.rank == last:
        tasks = np.array([{"id": 1}, {"id": 2}], dtype=object)
    try:
        balance(comm, tasks)
    except CollectiveError as exc:
        message = str(exc) if exc.rank == last else f"wrong rank {exc.rank}: {exc}"
    else:
        message = "no error"
    messages = comm.gather(message, root=0)
    if comm.rank == 0:
        emit({"case": case, "messages": messages})


def body(comm, argv):
    for case in json.loads(argv[0]):
        if "error" in case:
            bad_input(comm, case)
            continue
        counts = counts_for(case["seed"], comm.size, case["high"])
        first = sum(counts[:comm.rank])
        ids = np.arange(first, first + counts[comm.rank], dtype=np.int64)
        if case["pack"] == "numpy":
            tasks = np.stack([ids, np.full_like(ids, comm.rank), ids * 7 + 3], axis=1)
            order = list(range(comm.size))[::-1] if case.get("reverse") else None
            mine, info = balance(comm, tasks, method=case["method"], order=order,
                                 **({"refill": case["refill"]} if "refill" in case else {}))
            all_ok(comm, bool((mine[:, 2] == mine[:, 0] * 7 + 3).all()), "row contents")
            final = mine[:, 0].tolist()
        else:
            tasks = [{"id": int(i), "word": f"task-{int(i)}"} for i in ids]
            mine, info = balance(comm, tasks, method=case["method"], pack=list_pack, unpack=list_unpack)
            all_ok(comm, all(t["word"] == f"task-{t['id']}" for t in mine), "pickled contents")
            final = [t["id"] for t in mine]
        everything = sorted(i for part in comm.allgather(final) for i in part)
        all_ok(comm, everything == list(range(sum(counts))), "no task lost or duplicated")
        ranks = comm.gather({"rank": comm.rank, "counts": counts, "final": final, "sent": info.sent,
                             "received": info.received}, root=0)
        if comm.rank == 0:                  # one writer: lines of several ranks would interleave
            emit({"case": case, "ranks": ranks})


if __name__ == "__main__":
    main(body)
