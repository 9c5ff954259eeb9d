"""reorder() in real MPI jobs (tests/mpi/prog_reorder.py, prog_errors.py, prog_discover.py under mpiexec).

The expected permutation is recomputed here, in the test process, from the allocation the job
reported: tm.map with the same method and seed, then "rank r gets new rank p where pe_of[p] is the
PE rank r sits on", written out independently of topomap.mpi.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import topomap as tm

sys.path.insert(0, str(Path(__file__).parent / "mpi"))
from harness import launcher, results, run  # noqa: E402

CASES = [
    {"kind": "stencil", "method": "random", "seed": 3},
    {"kind": "root", "method": "cyclic", "seed": 0},
    {"kind": "rows", "method": "random", "seed": 5},
    {"kind": "dict", "method": "block", "seed": 0},
    {"kind": "profile", "method": "random", "seed": 2},
    {"kind": "dense", "seed": 4},                          # the whole matrix on every rank, the default method
    {"kind": "cart", "method": "topdown", "seed": 1},      # a Cartesian communicator's grid: as the generator's
]


def expected_new_rank(pattern: tm.Pattern, pes: list[int], method: str, seed: int) -> list[int]:
    machine = tm.Machine(tm.TreeNetwork((2,), (10.0,)), tm.NodeTree.flat(4))   # two hosts of four slots
    alloc = machine.allocation(pes)
    pe_of = tm.map(pattern, alloc, method=method, seed=seed).pe_of
    return [int(np.flatnonzero(pe_of == pe)[0]) for pe in pes]


@pytest.fixture(scope="module")
def reorder_run() -> list[dict]:
    done = run(8, "prog_reorder.py", json.dumps(CASES), env={"TOPOMAP_MPI_HOSTS": "a*4,b*4"})
    return results(done)


@pytest.mark.parametrize("case", CASES, ids=[c["kind"] for c in CASES])
def test_new_communicator_ranks_are_exactly_as_computed(reorder_run, case):
    out = next(r for r in reorder_run if r["kind"] == case["kind"])
    case = {"method": "auto", **case}                      # reorder's default method
    assert out["method"] == case["method"]
    assert out["node_hosts"] == ["a", "b"] and out["placement"] == "slots"
    assert out["pes"] == list(range(8))
    pattern = tm.generators.stencil_3d((2, 2, 2), points=7, weights=(4, 2, 1), periodic=True)
    assert out["new_rank"] == expected_new_rank(pattern, out["pes"], case["method"], case["seed"])
    alloc = tm.Machine(tm.TreeNetwork((2,), (10.0,)), tm.NodeTree.flat(4)).allocation(out["pes"])
    assert out["before"]["hop_bytes"] == tm.evaluate(pattern, alloc, out["pes"]).hop_bytes
    assert out["after"]["hop_bytes"] == tm.evaluate(pattern, alloc, out["pe_of"]).hop_bytes
    assert out["identity"] == (out["new_rank"] == list(range(8)))
    assert set(out["seconds"]) == {"pattern", "discover", "map", "split", "total"}


def test_random_order_really_moves_ranks(reorder_run):
    assert not next(r for r in reorder_run if r["kind"] == "stencil")["identity"]


def test_errors_raise_on_every_rank_and_leave_the_communicator_usable(tmp_path):
    conf = tmp_path / "topology.conf"
    conf.write_text("SwitchName=s0 Nodes=a[0-3]\n")
    done = run(4, "prog_errors.py", str(conf), env={"TOPOMAP_MPI_HOSTS": "a0*2,c0*2"})
    by_case: dict[str, list[dict]] = {}
    for r in results(done):
        by_case.setdefault(r["case"], []).append(r)
    expect = {
        "sizes": (3, "rank 3: its pattern has 5 processes but the communicator has 4"),
        "mismatch": (1, "rank 1's pattern"),
        "row_length": (2, "rank 2: bad pattern row: a row needs one entry per rank (4), got shape (3,)"),
        "row_value": (1, "bytes to rank 0 = -1.0 must be finite and >= 0"),
        "row_dest": (3, "destination 7 is not a rank"),
        "mixed": (1, "rank 0 passed a whole Pattern but rank 1 a row"),
        "none": (None, "no rank passed a pattern"),
        "missing_row": (3, "ranks [3] passed no row"),
        "method": (0, "unknown mapping method 'no-such-mapper'"),
        "unknown_host": (0, "ranks 2, 3 run on host 'c0', unknown to the machine"),
        "not_permutation": (0, "new_rank is not a permutation"),
        "out_of_range": (0, "new_rank[3] = 4 is not a rank"),
        "differ": (3, "rank 3 passed a different new_rank than rank 0"),
    }
    assert set(by_case) == set(expect)
    for case, (fault, text) in expect.items():
        rows = by_case[case]
        assert sorted(r["rank"] for r in rows) == [0, 1, 2, 3], case        # every rank raised...
        assert len({r["error"] for r in rows}) == 1, case                     # ...the same error
        assert text in rows[0]["error"], (case, rows[0]["error"])
        assert rows[0]["fault_rank"] == fault, case


def test_discovered_bindings_give_the_pes():
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs two CPUs to bind two ranks apart")
    launcher(2)                                   # skips without mpi4py or a matching mpiexec
    from topomap.mpi import mpi_library
    if mpi_library().vendor != "Open MPI":
        pytest.skip("binding flags are Open MPI's")
    out = results(run(2, "prog_discover.py", launcher_args=("--bind-to", "core")))[0]
    if any(len(c) != 1 for c in out["cpus"]):
        pytest.skip(f"Open MPI did not bind each rank to one CPU: {out['cpus']}")
    tree = tm.NodeTree.discover()
    assert out["placement"] == "binding"
    assert out["pes"] == [int(np.flatnonzero(tree.os_index == c[0])[0]) for c in out["cpus"]]


def test_launcher_matches_mpi4py():
    cmd = launcher(2)
    assert os.path.basename(cmd[0]) in ("mpiexec", "mpirun")
