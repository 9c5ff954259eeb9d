"""distributed_ptram in real MPI jobs (tests/mpi/prog_ptram.py under mpiexec, oversubscribed).

The expected result is the serial run_ptram, computed here in the test process from the same
inputs: the mapping and the whole trace must be equal, not just as good.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import topomap as tm
import topomap.cli
from topomap.mappers.ptram import run_ptram

sys.path.insert(0, str(Path(__file__).parent / "mpi"))
from harness import ROOT, ROOT_ENV, launcher, results, run  # noqa: E402

ENV = {"PYTHONPATH": str(ROOT)}
CASES4 = [
    {"name": "gpc", "machine": "gpc/8", "n": 512, "policy": "random", "pattern": [32, 16], "plateau": True},
    {"name": "fattree", "machine": "fattree:k=4,levels=3/2", "n": 64, "policy": "random", "pattern": [8, 8],
     "seed": 3},
    {"name": "torus_nopart", "machine": "torus:4x4/2", "n": 32, "pattern": [8, 4], "partition": False,
     "plateau": True},
    {"name": "root_only", "machine": "torus:3x3/4", "n": 36, "policy": "random", "pattern": [6, 6], "seed": 1},
    {"name": "cancel", "machine": "torus:4x4/2", "n": 32, "pattern": [8, 4]},
    {"name": "interrupt", "machine": "torus:4x4/2", "n": 32, "pattern": [8, 4]},
    {"name": "raise", "machine": "torus:4x4/2", "n": 32, "pattern": [8, 4]},
    {"name": "mismatch", "machine": "torus:4x4/2", "n": 32, "pattern": [8, 4]},
]
STOPS = ("cancel", "interrupt", "raise", "mismatch")
CASES8 = [
    {"name": "node_leaders", "hosts": "a*2,b*2,c*2,d*2", "pattern": [8, 4], "capacity": 4, "leaders": "node",
     "plateau": True},
    {"name": "gpc8", "machine": "gpc/8", "n": 512, "policy": "random", "pattern": [32, 16], "seed": 2},
    {"name": "gpc8_candidates", "machine": "gpc/8", "n": 512, "policy": "random", "pattern": [32, 16],
     "candidates": 4, "plateau": True},
]


def serial(case: dict, out: dict):
    pat = tm.generators.stencil_2d(tuple(case["pattern"]), weights=(1, 3))
    if case.get("hosts"):
        # what discover_job builds for fake hosts: a flat network of hosts with one slot per rank
        alloc = tm.Machine(tm.TreeNetwork((4,), (10.0,)), tm.NodeTree.flat(2)).allocation(out["pes"])
    else:
        alloc = tm.machine(case["machine"]).allocate(case["n"], policy=case.get("policy", "contiguous"), seed=0)
    assert out["pes"] == alloc.pes.tolist()
    return run_ptram(pat, alloc, seed=case.get("seed", 0), capacity=case.get("capacity", 1),
                     partition=case.get("partition", True), plateau=case.get("plateau", False),
                     rounds=case.get("rounds", 10), candidates=case.get("candidates"))


def assert_equal(out: dict, ref) -> None:
    assert out["pe_of"] == ref.pe_of.tolist()
    assert out["group"] == ref.group.tolist()
    assert out["order"] == ref.order.tolist()
    assert out["unit_node"] == ref.unit_node.tolist()
    assert out["round_mc"] == ref.round_mc.tolist()
    assert out["rounds_done"] == ref.rounds_done
    assert out["greedy_hybrid"] == ref.greedy_hybrid


@pytest.fixture(scope="module")
def run4() -> list[dict]:
    return results(run(4, "prog_ptram.py", json.dumps(CASES4), env=ENV, timeout=90))


@pytest.fixture(scope="module")
def run8() -> list[dict]:
    return results(run(8, "prog_ptram.py", json.dumps(CASES8), env=ENV, timeout=90))


@pytest.mark.parametrize("case", [c for c in CASES4 if c["name"] not in STOPS],
                         ids=lambda c: c["name"])
def test_four_ranks_equal_serial(run4, case):
    out = next(r for r in run4 if r["name"] == case["name"])
    assert_equal(out, serial(case, out))


def test_gpc_refines_and_communicates(run4):
    out = next(r for r in run4 if r["name"] == "gpc")
    assert out["rounds_done"] >= 1 and out["comm_seconds"] > 0
    assert len(set(out["pe_of"])) == 512


@pytest.mark.parametrize("case", CASES8, ids=lambda c: c["name"])
def test_eight_ranks_equal_serial(run8, case):
    out = next(r for r in run8 if r["name"] == case["name"])
    assert_equal(out, serial(case, out))


def test_node_leaders_use_the_discovered_hosts(run8):
    out = next(r for r in run8 if r["name"] == "node_leaders")
    assert out["pes"] == list(range(8))      # two slots on each of the four fake hosts
    assert sorted(set(out["unit_node"])) == [0, 1, 2, 3]


def stop_rows(run4: list[dict], name: str) -> dict[int, str]:
    rows = {r["rank"]: r["error"] for r in run4 if r["name"] == name}
    assert sorted(rows) == [0, 1, 2, 3]
    return rows


def test_cancel_on_one_rank_raises_cancelled_on_every_rank(run4):
    errors = set(stop_rows(run4, "cancel").values())
    assert len(errors) == 1
    # the first exchange past 50% of the greedy steps: 0.1 + 0.8 * placed / 16 units
    assert re.fullmatch(r"Cancelled: distributed ptram \(rank 1\) cancelled by the progress callback at "
                        r"(5[0-9]|60)%", errors.pop())


def test_ctrl_c_on_one_rank_interrupts_every_rank(run4):
    assert set(stop_rows(run4, "interrupt").values()) == {
        "KeyboardInterrupt: distributed ptram interrupted on rank 1"}


def test_progress_exception_propagates_on_its_rank(run4):
    rows = stop_rows(run4, "raise")
    # the first exchange: the second of the 16 units (the first needs no scores) at 0.1 + 0.8 / 16
    assert rows.pop(2) == "ValueError: progress failed at 0.15"
    assert set(rows.values()) == {"CollectiveError: distributed_ptram: rank 2 failed (its error is printed on its "
                                  "stderr)"}


def test_different_patterns_raise_on_every_rank(run4):
    rows = [r for r in run4 if r["name"] == "mismatch"]
    assert sorted(r["rank"] for r in rows) == [0, 1, 2, 3]
    assert len({r["error"] for r in rows}) == 1
    assert rows[0]["error"].startswith("CollectiveError: distributed_ptram: rank 2's pattern")


def test_cli_under_mpiexec_writes_the_serial_mapping(tmp_path):
    args = ["stencil2d:16x16", "gpc/8", "--allocation", "random", "--method", "ptram", "-O", "plateau=true"]
    cmd = [*launcher(4), sys.executable, "-m", "topomap", "map", *args, "--mpi", "-o", str(tmp_path / "mpi.txt")]
    env = {**os.environ, **ROOT_ENV, **ENV}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=90, env=env, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("wrote ") == 1           # rank 0 alone prints
    serial_out = tmp_path / "serial.txt"
    assert tm.cli.main(["map", *args, "-o", str(serial_out)]) == 0
    got = np.loadtxt(tmp_path / "mpi.txt", dtype=np.int64)
    assert got.tolist() == np.loadtxt(serial_out, dtype=np.int64).tolist()
