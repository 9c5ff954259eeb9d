"""One cancellation rule for every call that takes ``progress``.

A true return raises :class:`topomap.Cancelled` naming the call and the
fraction, an exception of the callable propagates unchanged, Ctrl-C raises
KeyboardInterrupt; afterwards the same call gives the same result.  The
distributed PTRAM follows the rule on every rank (tests/test_mpi_ptram.py).
"""

from __future__ import annotations

import pickle
import re
import signal

import numpy as np
import pytest

import topomap as tm
from topomap.mappers.scotch import gmap_program

# a machine each mapper accepts: a fat tree has levels (aphid), forms a
# hierarchy (hierarchy) and has routes (everything else); hilbert needs a
# grid; scotch polls gmap every 20 ms, so it gets a case gmap needs longer for
CASES = {"hilbert": ((8, 8), "torus:4x4/4"), "scotch": ((32, 32), "fattree:k=8,levels=2/16")}
OPTIONS = {"grasp": {"iterations": 2}, "kumar-hybrid": {"part_size": 4, "iterations": 2}}
INSTANT = {"block", "cyclic", "random", "hilbert"}  # they never call progress


def run(method: str, progress=None, **options) -> np.ndarray:
    shape, spec = CASES.get(method, ((8, 8), "fattree:k=4,levels=2/8"))
    pattern = tm.generators.stencil_2d(shape, weights=(1, 3))
    return tm.map(pattern, tm.machine(spec).allocate(pattern.n), method=method, seed=5, progress=progress,
                  **{**OPTIONS.get(method, {}), **options}).pe_of


@pytest.fixture(params=sorted(tm.methods()))
def method(request) -> str:
    if request.param == "scotch" and gmap_program() is None:
        pytest.skip("Scotch's gmap is not installed (apt-get install scotch)")
    return request.param


def test_every_mapper_follows_the_rule(method):
    reference = run(method)
    if method in INSTANT:
        # a callable that would stop changes nothing where nothing asks it
        assert np.array_equal(run(method, lambda f: True), reference)
        return
    calls: list[float] = []
    try:
        run(method, lambda f: calls.append(f) or True)
    except tm.Cancelled as exc:
        info = exc
    else:
        assert method == "scotch", f"{method} never called progress"
        pytest.skip("gmap finished before its first progress poll")
    assert len(calls) == 1 and info.fraction == calls[0]
    assert re.fullmatch(rf"{re.escape(method)} cancelled by the progress callback at \d+%", str(info))
    assert isinstance(info, tm.TopomapError) and not isinstance(info, tm.MappingError)

    mine = LookupError("from the callable")

    def boom(fraction):
        raise mine
    with pytest.raises(LookupError) as raised:
        run(method, boom)
    assert raised.value is mine

    def ctrl_c(fraction):
        signal.raise_signal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        run(method, ctrl_c)

    assert np.array_equal(run(method), reference)        # nothing left behind by the three stops


def test_cancel_at_a_later_fraction_names_it():
    calls: list[float] = []
    with pytest.raises(tm.Cancelled) as info:
        # grouped by the partitioner, which reports progress (boxes of the stencil's grid take no time)
        run("ptram", lambda f: calls.append(f) or len(calls) == 3, grid=None)
    assert info.value.fraction == calls[2] > calls[0]
    assert str(info.value) == f"ptram cancelled by the progress callback at {calls[2]:.0%}"


@pytest.mark.parametrize("method", ["builtin", "metis"])
def test_partition_follows_the_rule(method):
    if method == "metis":
        pytest.importorskip("pymetis", reason="METIS partitioning needs pymetis (extra metis)")
    graph = tm.generators.stencil_2d((24, 24))
    reference = tm.partition(graph, 6, method=method, seed=1).parts
    calls: list[float] = []
    with pytest.raises(tm.Cancelled, match=r"^partition cancelled by the progress callback at \d+%$") as info:
        tm.partition(graph, 6, method=method, seed=1, progress=lambda f: calls.append(f) or True)
    assert len(calls) == 1 and info.value.fraction == calls[0]
    mine = LookupError("from the callable")

    def boom(fraction):
        raise mine
    with pytest.raises(LookupError) as raised:
        tm.partition(graph, 6, method=method, seed=1, progress=boom)
    assert raised.value is mine
    assert np.array_equal(tm.partition(graph, 6, method=method, seed=1).parts, reference)


def test_cancelled_keeps_its_fraction_through_pickle():
    exc = tm.Cancelled.by_progress("ptram", 0.425)
    again = pickle.loads(pickle.dumps(exc))
    assert type(again) is tm.Cancelled and str(again) == str(exc) == "ptram cancelled by the progress callback at 42%"
    assert again.fraction == 0.425
    assert tm.PartitionCancelled is tm.Cancelled      # the former name of the partitioner's cancel
