"""PTRAM's stepwise state (_core.ptram_state, map_ptram.h "Parallel decomposition") without MPI.

Leaders are simulated in one process: each has its own state, serves some of the nodes, and the
scores / kept tries of all leaders are assembled in node order before every leader takes the
decision, as topomap.mpi.ptram does over MPI.  The result must equal the serial C mapper's, trace
included.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap import _core
from topomap.errors import TopomapError
from topomap.mappers.ptram import run_ptram
from topomap.mpi.ptram import leader_nodes

from conftest import machines


def new_state(pat, alloc, *, group=None, capacity=1, **opt):
    return _core.ptram_state(alloc.machine._core, pat.indptr, pat.indices, pat.bytes, alloc.pes, capacity,
                             group=group, **opt)


def simulate(pat, alloc, owners, *, capacity=1, seed=0, **opt):
    """Run the steps with node j served by leader owners[j]; every leader's (pe_of, trace)."""
    nleaders = int(owners.max()) + 1
    first = new_state(pat, alloc, capacity=capacity, seed=seed, **opt)
    group = first.group if opt.get("partition", 1) else None
    states = [first] + [new_state(pat, alloc, group=group, capacity=capacity, seed=seed, **opt)
                        for _ in range(nleaders - 1)]
    mine = [np.flatnonzero(owners == i).astype(np.int32) for i in range(nleaders)]
    N = owners.size
    while True:
        steps = [s.greedy_next() for s in states]
        assert len(set(steps)) == 1
        unit, needs = steps[0]
        if unit < 0:
            break
        scores = None
        if needs:
            scores = np.empty(N)
            for s, nodes in zip(states, mine):
                scores[nodes] = s.greedy_score(unit, nodes)
        for s in states:
            s.greedy_place(unit, scores)
    while True:
        go = [s.round_begin() for s in states]
        assert len(set(go)) == 1
        if not go[0]:
            break
        kept = np.empty((N, 5))
        for s, nodes in zip(states, mine):
            kept[nodes] = s.leader_search(nodes)
        assert len({s.round_end(kept) for s in states}) == 1
    return [s.finish() for s in states]


def assert_same(results, ref):
    for pe_of, tr in results:
        assert pe_of.tolist() == ref.pe_of.tolist()
        assert tr["group"].tolist() == ref.group.tolist()
        assert tr["order"].tolist() == ref.order.tolist()
        assert tr["unit_node"].tolist() == ref.unit_node.tolist()
        assert tr["round_mc"].tolist() == ref.round_mc.tolist()
        assert tr["rounds_done"] == ref.rounds_done
        assert tr["greedy_hybrid"] == ref.greedy_hybrid


CASES = [
    ("gpc/8", 256, "random", (16, 16), dict(plateau=1)),
    ("fattree:k=4,levels=3/2", 64, "random", (8, 8), dict(seed=4)),
    ("torus:4x4x2/2", 64, "fragmented", (8, 8), dict(partition=0, plateau=1)),
    ("torus:3x3/4", 30, "contiguous", (6, 5), dict(rounds=3)),      # unequal last node
    ("torus:4x4x2/1", 32, "random", (8, 4), dict(candidates=2, plateau=1)),
]


@pytest.mark.parametrize("spec,n,policy,shape,opt", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("nleaders", [1, 2, 3, 5])
def test_simulated_leaders_equal_serial(spec, n, policy, shape, opt, nleaders):
    alloc = tm.machine(spec).allocate(n, policy=policy, seed=1)
    pat = tm.generators.stencil_2d(shape, weights=(1, 3))
    ref = run_ptram(pat, alloc, seed=opt.get("seed", 0), partition=bool(opt.get("partition", 1)),
                    plateau=bool(opt.get("plateau", 0)), rounds=opt.get("rounds", 10), candidates=opt.get("candidates"))
    N = len(set(alloc.machine.node_of(alloc.pes).tolist()))
    owners = np.arange(N) % nleaders
    assert_same(simulate(pat, alloc, owners, **opt), ref)


@settings(max_examples=30, deadline=None)
@given(machines(), st.integers(2, 14), st.floats(0.1, 1.0), st.integers(0, 2**32 - 1), st.integers(1, 5),
       st.booleans(), st.booleans(), st.integers(1, 2))
def test_random_splits_equal_serial(m, n, density, seed, nleaders, partition, plateau, capacity):
    rng = np.random.default_rng(seed)
    dense = (rng.random((n, n)) < density) * rng.choice([1.0, 2.0, 3.5, 10.0], size=(n, n))
    np.fill_diagonal(dense, 0)
    pat = tm.Pattern.from_dense(dense)
    if m.npes * capacity < n:
        return
    alloc = m.allocate(-(-n // capacity) + int(rng.integers(0, m.npes - (-(-n // capacity)) + 1)),
                       policy="random", seed=seed % 1000)
    ref = run_ptram(pat, alloc, seed=seed, capacity=capacity, partition=partition, plateau=plateau, k=2)
    N = len(set(m.node_of(alloc.pes).tolist()))
    owners = rng.integers(0, nleaders, N)
    owners[rng.integers(0, N)] = 0      # leader 0 exists
    owners = np.unique(owners, return_inverse=True)[1].reshape(-1)
    assert_same(simulate(pat, alloc, owners, capacity=capacity, seed=seed, partition=int(partition),
                         plateau=int(plateau), k=2), ref)


def test_leader_nodes_serve_every_node_once():
    alloc = tm.machine("gpc/8").allocate(256, policy="random", seed=0)
    for split in (leader_nodes(alloc, 5), leader_nodes(alloc, 256, "node")):
        nodes = np.concatenate(split)
        assert sorted(nodes.tolist()) == list(range(32))


@pytest.fixture
def small():
    alloc = tm.machine("torus:2x2/2").allocate(8)
    return tm.generators.stencil_2d((4, 2), weights=(1, 3)), alloc


def test_bad_group_vectors(small):
    pat, alloc = small
    with pytest.raises(TopomapError, match=r"group\[2\] = 9 is not a unit id in \[0, 8\)"):
        new_state(pat, alloc, group=[0, 0, 9, 1, 1, 2, 2, 3])
    with pytest.raises(TopomapError, match="unit 2 of the group vector has no process"):
        new_state(pat, alloc, group=[0, 0, 1, 1, 3, 3, 4, 4])
    with pytest.raises(TopomapError, match="unit 0 has 3 processes, more than any node's 2 slots"):
        new_state(pat, alloc, group=[0, 0, 0, 1, 1, 2, 2, 3])
    with pytest.raises(TopomapError, match="only adopted with partition = 1"):
        new_state(pat, alloc, group=np.arange(8), partition=0)
    with pytest.raises(ValueError, match="group"):
        new_state(pat, alloc, group=[0, 1])


def test_bad_step_arguments(small):
    pat, alloc = small
    s = new_state(pat, alloc)
    unit, needs = s.greedy_next()
    with pytest.raises(TopomapError, match=r"nodes\[1\] = 7 is not an allocation node in \[0, 4\)"):
        s.greedy_score(unit, [0, 7])
    with pytest.raises(TopomapError, match=f"unit {unit + 1} is not the unit greedy_next chose \\({unit}\\)"):
        s.greedy_score(unit + 1, [0])
    with pytest.raises(TopomapError, match="round_begin: the greedy step has placed 0 of 4 units"):
        s.round_begin()
    s.greedy_place(unit, None)          # no placed neighbour: no scores needed
    unit, needs = s.greedy_next()
    assert needs
    with pytest.raises(ValueError, match="scores"):
        s.greedy_place(unit, np.zeros(3))
    with pytest.raises(TopomapError, match="needs scores"):
        s.greedy_place(unit, None)
    free = s.greedy_score(unit, np.arange(4, dtype=np.int32))
    assert np.isnan(free).sum() == 1 and np.isfinite(free).sum() == 3
    missing = free.copy()
    missing[np.flatnonzero(np.isfinite(free))[0]] = np.nan
    with pytest.raises(TopomapError, match="is missing \\(NaN\\)"):
        s.greedy_place(unit, missing)
    s.greedy_place(unit, free)           # the state is still usable after the refused calls
    while (step := s.greedy_next())[0] >= 0:
        s.greedy_place(step[0], s.greedy_score(step[0], np.arange(4, dtype=np.int32)) if step[1] else None)
    with pytest.raises(TopomapError, match="leader_search: no round is open"):
        s.leader_search([0])
    assert s.round_begin()
    bad = np.tile([-1.0, -1, -1, 0, 0], (4, 1))
    bad[1] = [0, -1, 2, 1.0, 1.0]
    with pytest.raises(TopomapError, match=r"round_end: kept\[1\]"):
        s.round_end(bad)
    with pytest.raises(ValueError, match=r"shape \(4, 5\)"):
        s.round_end(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="must be integers"):
        s.round_end(np.tile([0.5, -1, -1, 0, 0], (4, 1)))
    nothing = np.tile([-1.0, -1, -1, 0, 0], (4, 1))
    assert not s.round_end(nothing)
    assert not s.round_begin()          # a round without a swap ends the refinement
    pe_of, tr = s.finish()
    assert sorted(pe_of.tolist()) == list(range(8)) and tr["rounds_done"] == 0
