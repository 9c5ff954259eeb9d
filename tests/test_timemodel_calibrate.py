"""calibrate(): a time model measured by ping-pong on a running MPI job (topomap/timemodel/calibrate.py).

The MPI parts run tests/mpi/calibrate_job.py under mpiexec (-n 2, and -n 4 oversubscribed, once
on one host and once on two fake hosts); the fit and the choice of pairs are tested here directly.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from topomap.errors import MissingDependencyError, TimeModelError
from topomap.timemodel import TimeModel, predict
from topomap.timemodel.calibrate import _pairs, calibrate, fit_hockney

sys.path.insert(0, str(Path(__file__).parent / "mpi"))
from harness import results, run  # noqa: E402

INSIDE = {"intra-socket", "inter-socket", "intra-node"}


# ------------------------------------------------------------------ the fit

def test_fit_worked_by_hand():
    # t = 1 us + m / 2 GB/s exactly: 0 B -> 1 us, 2000 B -> 2 us, 2e6 B -> 1001 us
    link = fit_hockney([0, 2000, 2_000_000], [1e-6, 2e-6, 1001e-6])
    assert link.alpha == pytest.approx(1e-6, rel=1e-9) and link.bandwidth == pytest.approx(2e9, rel=1e-9)


@given(st.floats(1e-8, 1e-4), st.floats(1e7, 1e11), st.lists(st.floats(-0.05, 0.05), min_size=8, max_size=8))
def test_fit_recovers_parameters_from_noisy_times(alpha, bandwidth, noise):
    sizes = np.array([0, 8, 64, 512, 4096, 32768, 262144, 1048576], dtype=float)
    times = (alpha + sizes / bandwidth) * (1 + np.array(noise))
    link = fit_hockney(sizes, times)
    # relative residuals of at most 5% keep every predicted time within ~10% of the true one
    predicted = link.alpha + sizes / link.bandwidth
    assert np.all(np.abs(predicted / (alpha + sizes / bandwidth) - 1) < 0.11)


@pytest.mark.parametrize("sizes, seconds, message", [
    ([8], [1e-6], "needs times of at least two message sizes"),
    ([8, 8], [1e-6, 1e-6], "needs times of at least two message sizes"),
    ([0, 8], [1e-6, 0.0], "times positive and finite"),
    ([0, 8], [1e-6, math.nan], "times positive and finite"),
    ([-1, 8], [1e-6, 2e-6], "sizes must be >= 0"),
    ([0, 1_000_000], [1e-3, 1e-6], r"network: the times do not fit t = alpha \+ m / bandwidth"),
])
def test_fit_refuses_what_it_cannot_fit(sizes, seconds, message):
    with pytest.raises(TimeModelError, match=message):
        fit_hockney(sizes, seconds, "network")


# ------------------------------------------------------------------ which pairs

def test_pairs_follow_the_binding_levels():
    tree = tm.NodeTree.from_synthetic("pack:2 core:2 pu:1")
    machine = tm.Machine(tm.TreeNetwork((2,), (100.0,)), tree)
    pes = np.array([0, 1, 2, 3, 4])            # ranks 0,1: one socket; 2,3: the other; 4: next node
    pairs = _pairs(machine, pes, ["a"] * 4 + ["b"])
    assert pairs == {"PE": (0, 0), "intra-socket": (0, 1), "inter-socket": (0, 2), "network": (0, 4)}
    flat = tm.Machine(tm.SingleNode(), tm.NodeTree.flat(4))
    assert _pairs(flat, np.array([3, 1, 0]), ["h"] * 3) == {"PE": (0, 0), "intra-node": (0, 1)}
    # fake host names on one node of slots still make a network pair
    assert _pairs(flat, np.array([0, 1, 2]), ["h", "h", "g"]) == {"PE": (0, 0), "intra-node": (0, 1),
                                                                   "network": (0, 2)}


@pytest.mark.parametrize("kwargs, message", [
    ({"sizes": (0,)}, "sizes needs at least two different sizes >= 0"),
    ({"sizes": (0, -8)}, "sizes needs at least two different sizes >= 0"),
    ({"sizes": (0, 8.5)}, "sizes must be whole numbers of bytes"),
    ({"repeats": 0}, "repeats must be an integer >= 1"),
    ({"warmup": -1}, "warmup must be an integer >= 0"),
    ({"hop_latency": -1.0}, "hop_latency must be a non-negative"),
    ({"link_bandwidth": 0.0}, "link_bandwidth must be a positive"),
])
def test_bad_arguments_fail_before_measuring(kwargs, message):
    pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install 'topomap-hpc[mpi]'")
    from mpi4py import MPI
    from topomap.mpi import CollectiveError
    with pytest.raises(CollectiveError, match=f"calibrate: rank 0: {message}"):
        calibrate(MPI.COMM_SELF, **kwargs)


def test_without_mpi4py_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(MissingDependencyError, match=r"needs mpi4py .*pip install 'topomap-hpc\[mpi\]'"):
        calibrate()


# ------------------------------------------------------------------ under mpiexec

def pingpong_off(job: dict) -> list[dict]:
    """The ping-pong rows whose time the job's model misses by more than 5x: the model's prediction of
    one message against a ping-pong timed apart from calibrate."""
    return [row for row in job["pingpong"] if not 0.2 < row["predicted"] / row["measured"] < 5]


def calibrated(n: int, *args: str, **kwargs) -> tuple[TimeModel, dict]:
    """Run calibrate_job.py on n ranks and check what it returns.  The ping-pong is timed seconds after
    calibrate; on a shared machine (a parallel test run, oversubscribed ranks) a burst of other work can
    land on one of the two, so a job whose ping-pong disagrees runs once more before the check fails."""
    rows = results(run(n, "calibrate_job.py", *args, **kwargs))
    if len(rows) == 1 and pingpong_off(rows[0]):
        rows = results(run(n, "calibrate_job.py", *args, **kwargs))
    (job,) = rows
    assert len(job["models"]) == n
    assert all(m == job["models"][0] for m in job["models"]), "every rank returns the same model"
    model = TimeModel.from_dict(job["models"][0])
    for name, link in model.classes.items():
        assert 0 < link.alpha < 1e-2 and math.isfinite(link.alpha), (name, link)
        assert 1e6 < link.bandwidth < 1e13 and math.isfinite(link.bandwidth), (name, link)
    assert model.hop_latency == 0.0
    assert not pingpong_off(job), job["pingpong"]
    return model, job


def inside_class(job: dict) -> str:
    """The class of ranks 0 and 1 on one host, from the job's own levels (the model module's rule)."""
    names = job["level_names"]
    level = job["level01"]
    if any(t in n.lower() for n in names[1:level + 1] for t in ("package", "socket")):
        return "intra-socket"
    return "inter-socket" if any(t in n.lower() for n in names[1:] for t in ("package", "socket")) \
        else "intra-node"


def test_two_ranks_one_host():
    # not oversubscribed where the machine has the two CPUs: Open MPI then binds the ranks
    model, job = calibrated(2, "10", oversubscribe=(os.cpu_count() or 1) < 2)
    assert len(set(job["hosts"])) == 1
    assert set(model.classes) == {"PE", inside_class(job)}        # no network class on one host


def test_four_oversubscribed_ranks_one_host_then_two():
    model, job = calibrated(4, "10")
    assert set(model.classes) == {"PE", inside_class(job)}
    # a flat node of 4 PEs needs "intra-node", which a job with sockets does not measure: then that is named
    missing = "network" if "intra-node" in model.classes else "intra-node"
    with pytest.raises(TimeModelError, match=f"no link class '{missing}'"):
        predict(tm.Pattern.from_edges([0], [4], [1024], n=8), tm.machine("torus:2x2/4"), np.arange(8), model)
    merged = TimeModel.default().merged(model)
    assert merged.classes["network"] == TimeModel.default().classes["network"]

    model, job = calibrated(4, "10", env={"TOPOMAP_MPI_HOSTS": "a*2,b*2"})
    assert job["hosts"] == ["a", "a", "b", "b"]
    assert set(model.classes) == {"PE", inside_class(job), "network"}
