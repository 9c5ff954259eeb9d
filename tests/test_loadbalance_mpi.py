"""topomap.mpi.balance in real MPI jobs of 2-16 ranks (tests/mpi/loadbalance_job.py under
mpiexec --oversubscribe): the tasks each rank ends with are recomputed here from the counts the job
drew, by replaying the flow with the documented rule (a sender gives its last tasks, in receiver
order; a receiver appends, in sender order), so exactly the planned tasks move and none is lost or
duplicated."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from topomap.loadbalance import alias_flow, unit_flow

sys.path.insert(0, str(Path(__file__).parent / "mpi"))
from harness import results, run  # noqa: E402

CASES = [
    {"seed": 1, "method": "alias", "pack": "numpy", "high": 12},
    {"seed": 2, "method": "alias", "pack": "pickle", "high": 9},
    {"seed": 3, "method": "unit", "pack": "numpy", "high": 12},
    {"seed": 4, "method": "alias", "pack": "numpy", "high": 0},          # nothing to move
    {"seed": 5, "method": "alias", "pack": "numpy", "high": 12, "reverse": True},
    {"seed": 7, "method": "alias", "pack": "numpy", "high": 12, "refill": "next"},
    {"seed": 6, "method": "unit", "pack": "numpy", "high": 12, "reverse": True},
]


def replay(counts, method, reverse, refill):
    """Every rank's final ids by the documented rule, written out independently of balance()."""
    order = list(range(len(counts)))[::-1] if reverse else None
    flow = alias_flow(counts, order=order, refill=refill) if method == "alias" else unit_flow(counts, order=order)
    starts = np.concatenate([[0], np.cumsum(counts)])
    held = [list(range(starts[r], starts[r + 1])) for r in range(len(counts))]
    outgoing = {}
    for r in range(len(counts)):
        for d, n in sorted((d, n) for s, d, n in flow.messages() if s == r):
            outgoing[(r, d)] = held[r][len(held[r]) - n:]
            held[r] = held[r][:len(held[r]) - n]
    for r in range(len(counts)):
        for s in sorted(s for s, d, _ in flow.messages() if d == r):
            held[r] = held[r] + outgoing[(s, r)]
    return flow, held


@pytest.mark.parametrize("nranks", [2, 3, 5, 8, 16])
def test_balance_moves_exactly_the_planned_tasks(nranks):
    done = run(nranks, "loadbalance_job.py", json.dumps(CASES), timeout=300)
    lines = results(done)
    assert [x["case"] for x in lines] == CASES
    for case, line in zip(CASES, lines):
        mine = line["ranks"]
        assert [x["rank"] for x in mine] == list(range(nranks))
        counts = mine[0]["counts"]
        flow, expect = replay(counts, case["method"], case.get("reverse", False), case.get("refill", "deferred"))
        k = -(-sum(counts) // nranks)
        for x in mine:
            assert x["counts"] == counts
            assert x["final"] == expect[x["rank"]]
            assert len(x["final"]) <= k
            assert [tuple(p) for p in x["sent"]] == [(d, n) for s, d, n in flow.messages() if s == x["rank"]]
            if case["method"] == "alias":
                assert len(x["received"]) <= 1
        moved = sum(n for x in mine for _, n in x["sent"])
        assert moved == flow.metrics().total_tasks_sent
        assert sorted(i for x in mine for i in x["final"]) == list(range(sum(counts)))


def test_bad_input_raises_on_every_rank():
    cases = [{"error": "dtype"}, {"error": "container"}, {"error": "objects"}]
    lines = results(run(3, "loadbalance_job.py", json.dumps(cases), timeout=120))
    assert [x["case"] for x in lines] == cases
    dtype, container, objects = (x["messages"] for x in lines)
    assert len(set(dtype)) == 1 and dtype[0].startswith("balance: rank 2 holds rows of dtype <f8")
    assert len(set(container)) == 1 and container[0] == ("balance: rank 2: tasks must be a NumPy array of rows "
                                                         "(or give pack/unpack), got list")
    assert len(set(objects)) == 1 and "give pack/unpack" in objects[0]
