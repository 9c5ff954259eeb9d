"""reorder_for ("do no harm", issue 15 part 5): the identity unless the time model predicts a gain for
the message size, the candidate paying for its InitComm exchange; times recomputed independently."""

import numpy as np
import pytest

import topomap as tm
from topomap.collectives import build, reorder_for
from topomap.collectives.plans import InitComm
from topomap.collectives.reorder import initial_layout, reorder
from topomap.errors import MappingError, PatternError

ALLOC = tm.machine("torus:4x4/8").allocate(128)
BLOCK = initial_layout(ALLOC, layout="block-bunch")
CYCLIC = initial_layout(ALLOC, layout="cyclic-bunch")


def test_recursive_doubling_pays_off_only_for_large_blocks():
    small = reorder_for("allgather", "recursive_doubling", ALLOC, BLOCK, 8)
    assert small.heuristic is None and np.array_equal(small.old_of_new, np.arange(128))
    assert small.seconds["rdmh"] > small.seconds["identity"]        # InitComm costs more than it saves
    large = reorder_for("allgather", "recursive_doubling", ALLOC, BLOCK, 65536)
    assert large.heuristic == "rdmh" and large.improved
    old = reorder("rdmh", ALLOC, BLOCK)
    assert np.array_equal(large.old_of_new, old)
    s = build("allgather", "recursive_doubling", 128, 65536)
    with_plan = [InitComm.of(old).stage(65536), *s.stages]
    assert large.seconds["rdmh"] == tm.timemodel.predict(with_plan, ALLOC, BLOCK[old]).makespan
    assert large.seconds["identity"] == tm.timemodel.predict(s, ALLOC, BLOCK).makespan
    assert large.seconds["rdmh"] < large.seconds["identity"] / 2


@pytest.mark.parametrize("op,alg,layout,nbytes", [
    ("allgather", "ring", BLOCK, 65536), ("allgather", "ring", CYCLIC, 65536),
    ("bcast", "binomial", CYCLIC, 65536), ("gather", "binomial", BLOCK, 65536),
    ("allreduce", "rabenseifner", CYCLIC, 65536), ("alltoall", "bruck", BLOCK, 64),
])
def test_never_slower_than_the_identity(op, alg, layout, nbytes):
    c = reorder_for(op, alg, ALLOC, layout, nbytes)
    best = min(c.seconds.values())
    assert c.seconds[c.heuristic or "identity"] == best
    if c.heuristic is None:
        assert np.array_equal(c.old_of_new, np.arange(128))
    else:
        assert c.seconds[c.heuristic] < c.seconds["identity"]
    if (op, alg) == ("allgather", "ring"):        # RMH does no harm on block and gains on cyclic (000 §7.6)
        assert (c.heuristic is None) == (layout is BLOCK)


def test_bad_input():
    with pytest.raises(PatternError, match="op = 'scan'"):
        reorder_for("scan", "ring", ALLOC, BLOCK, 8)
    with pytest.raises(MappingError, match="heuristic = 'best'"):
        reorder_for("allgather", "ring", ALLOC, BLOCK, 8, heuristics=["best"])
    with pytest.raises(MappingError, match="non-empty 1-D"):
        reorder_for("allgather", "ring", ALLOC, [], 8)
    with pytest.raises(PatternError, match="bytes"):
        reorder_for("allgather", "ring", ALLOC, BLOCK, -1)
