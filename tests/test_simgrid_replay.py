"""SimGrid replays of topomap's flows (topomap.export.simgrid.replay), and the time model against them.

Golden values are worked by hand from plain max-min sharing (Bertsekas &
Gallager §6.5.2) and from SimGrid 3.32's CM02 source (src/surf/network_cm02.cpp:
a flow's sharing penalty is its route latency, so with link latencies its
share is inversely proportional to that latency).  Every test that runs
SimGrid skips where /usr/bin/python3 cannot ``import simgrid`` (Debian
``python3-simgrid``).
"""

import functools
import json
import os
import subprocess

import numpy as np
import pytest

import topomap as tm
from topomap import MappingError, PatternError, TimeModelError, TopomapError
from topomap.collectives import schedules
from topomap.collectives.schedules import Schedule
from topomap.export import simgrid
from topomap.export.simgrid import SYNCS
from topomap.timemodel import TimeModel, predict

from test_export import SIMGRID_PY

needs_simgrid = pytest.mark.skipif(SIMGRID_PY is None,
                                   reason="SimGrid's Python module (python3-simgrid) is not installed")

GB = 10**9


def line_of_four():
    """The notes' case (notes/simgrid.md): 4 nodes in a line, 1 GB/s links, 1 GB flows."""
    pat = tm.Pattern.from_edges([0, 1, 1, 0], [2, 3, 2, 1], [GB] * 4, n=4)
    return tm.machine("mesh:4/1"), pat


def two_stages():
    """Stage 0: 0->1 (1 GB), 2->3 (0.5 GB); stage 1: 3->2 (1 GB); on the 4-node line."""
    st0 = tm.Pattern.from_edges([0, 2], [1, 3], [GB, GB // 2], n=4)
    st1 = tm.Pattern.from_edges([3], [2], [GB], n=4)
    total = tm.Pattern.from_edges([0, 2, 3], [1, 3, 2], [GB, GB // 2, GB], n=4)
    return Schedule("two", (st0, st1), total)


# ------------------------------------------------------------------ files, without SimGrid

def test_flows_are_stage_by_stage_in_csr_order_with_whole_bytes():
    f = simgrid.flows(two_stages())
    assert f["stage"].tolist() == [0, 0, 1]
    assert f["src"].tolist() == [0, 2, 3] and f["dst"].tolist() == [1, 3, 2]
    assert f["bytes"].tolist() == [GB, GB // 2, GB] and f["bytes"].dtype == np.int64
    assert simgrid.flows(tm.Pattern.from_edges([1], [0], [2.5], n=2))["bytes"].tolist() == [2]


def test_case_files_hold_the_flows_latencies_and_only_the_routes_used(tmp_path):
    m = tm.machine("mesh:4/1")
    pat = tm.Pattern.from_edges([0, 3], [2, 2], [100, 7], n=4)
    cmd = simgrid.write_case(tmp_path, pat, m, [3, 2, 1, 0], bandwidth=2.0, latency=0.25, alpha=[1.0, 2.0],
                             rate=[5.0, np.inf], sync="ranks", iterations=3)
    assert cmd == ["/usr/bin/python3", "simgrid_replay.py", "platform.xml", "deployment.xml", "flows.txt"]
    # ranks 0 and 3 sit on nodes 3 and 0: rank 0 -> 2 is node 3 -> 1 (2 hops), rank 3 -> 2 is node 0 -> 1 (1 hop)
    assert (tmp_path / "flows.txt").read_text() == (
        "topomap-flows 1\nsync ranks\niterations 3\nranks 4\nstages 1\nflows 2\n"
        "0 0 2 100 1.5 5.0\n0 3 2 7 2.25 -1.0\n")
    plat = (tmp_path / "platform.xml").read_text()
    routes = [line.strip() for line in plat.splitlines() if "<route " in line]
    assert routes == [f'<route src="node0" dst="node1" symmetrical="NO"><link_ctn id="l{m.route(0, 1)[0]}"/></route>',
                      f'<route src="node3" dst="node1" symmetrical="NO">'
                      + "".join(f'<link_ctn id="l{k}"/>' for k in m.route(3, 1)) + "</route>"]
    # latency is taken by the flows, so SimGrid's links carry none
    assert plat.count('latency="0.0s"') == len(m.links()["link"]) and 'bandwidth="2.0Bps"' in plat
    assert 'host="node3" function="rank"><argument value="0"/>' in (tmp_path / "deployment.xml").read_text()
    assert (tmp_path / "simgrid_replay.py").read_text() == open(simgrid.simgrid_replay.__file__).read()
    simgrid.write_case(tmp_path, pat, m, [3, 2, 1, 0], latency=0.25, latency_on="links")
    assert (tmp_path / "platform.xml").read_text().count('latency="0.25s"') == len(m.links()["link"])
    assert (tmp_path / "flows.txt").read_text().endswith("0 0 2 100 0.0 -1.0\n0 3 2 7 0.0 -1.0\n")


def test_platform_pairs_validated():
    m = tm.machine("torus:2x2")
    with pytest.raises(tm.MachineError, match=r"pair 1 = \[0, 4\] names a node outside \[0, 4\)"):
        simgrid.platform(m, pairs=[(0, 1), (0, 4)])
    with pytest.raises(tm.MachineError, match=r"shape \(3,\)"):
        simgrid.platform(m, pairs=[0, 1, 2])
    assert simgrid.platform(m, pairs=np.zeros((0, 2), int)).count("<route ") == 0
    # a big machine is fine when only some pairs are written
    assert simgrid.platform(tm.machine("torus:32x32"), pairs=[(0, 1023)]).count("<route ") == 1


@pytest.mark.parametrize("kw, err, what", [
    ({"sync": "lazy"}, TimeModelError, "sync must be one of"),
    ({"latency_on": "nodes"}, TimeModelError, "latency_on must be one of"),
    ({"iterations": 0}, TimeModelError, "iterations must be a positive integer"),
    ({"alpha": [1.0]}, TimeModelError, r"alpha must be a number or one number per flow \(2\)"),
    ({"alpha": [0.0, -1.0]}, TimeModelError, "alpha of flow 1 is -1.0"),
    ({"rate": [1.0, np.nan]}, TimeModelError, "rate of flow 1 is nan"),
    ({"rate": 0}, TimeModelError, "rate of flow 0 is 0.0; it must be positive"),
    ({"latency": [1.0, 2.0]}, TimeModelError, r"latency is seconds per link, one finite number >= 0, got \[1.0, 2.0\]"),
    ({"latency": float("inf")}, TimeModelError, "one finite number >= 0, got inf"),
    ({"mapping": [0, 1, 2]}, MappingError, "the mapping places 3 ranks, the work has 4"),
    ({"bandwidth": -1}, tm.MachineError, "bandwidth must be a positive finite number"),
])
def test_bad_replay_input_is_named(tmp_path, kw, err, what):
    m = tm.machine("mesh:4/1")
    pat = tm.Pattern.from_edges([0, 3], [2, 2], [100, 7], n=4)
    mapping = kw.pop("mapping", None)
    with pytest.raises(err, match=what):
        simgrid.write_case(tmp_path, pat, m, mapping, **kw)
    with pytest.raises(PatternError, match="a Pattern or a Schedule"):
        simgrid.flows([pat])


def test_missing_interpreter_and_failing_simgrid_are_topomap_errors(tmp_path):
    m, pat = line_of_four()
    with pytest.raises(tm.MissingDependencyError, match="does not exist"):
        simgrid.replay(pat, m, python=str(tmp_path / "no-python"))
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'simgrid: out of cheese' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(TopomapError, match=r"SimGrid failed \(exit 3\); stderr ends:\nsimgrid: out of cheese"):
        simgrid.replay(pat, m, python=str(fake))
    fake.write_text("#!/bin/sh\necho 'still thinking' >&2\nsleep 5\n")
    with pytest.raises(TopomapError, match="SimGrid ran past 0.5 s on 4 flows"):
        simgrid.replay(pat, m, python=str(fake), timeout=0.5)


# ------------------------------------------------------------------ SimGrid, golden cases

@needs_simgrid
@pytest.mark.parametrize("sync", ["barrier", "ranks"])
def test_notes_hand_case(sync):
    # link 1->2 carries three flows (1/3 GB/s each); 0->1 gets the other 2/3 of link 0->1
    m, pat = line_of_four()
    r = simgrid.replay(pat, m, bandwidth=GB, latency=0.0, sync=sync, python=SIMGRID_PY)
    assert list(zip(r.messages["src"].tolist(), r.messages["dst"].tolist())) == [(0, 1), (0, 2), (1, 2), (1, 3)]
    assert r.finish == pytest.approx(np.array([[1.5, 3.0, 3.0, 3.0]]), rel=1e-12)
    assert r.makespan == pytest.approx(3.0, rel=1e-12)


@needs_simgrid
def test_latency_rate_and_iterations_by_hand():
    # released at 0.5 s (alpha); 0->1 is held to its 0.4 GB/s rate, under the 2/3 GB/s max-min
    # would give it: ends at 0.5 + 2.5; the three on link 1->2 at 0.5 + 3; the barrier makes
    # iteration 1 start at 3.5
    m, pat = line_of_four()
    r = simgrid.replay(pat, m, bandwidth=GB, latency=0.0, alpha=0.5, rate=4e8, iterations=2, python=SIMGRID_PY)
    assert r.finish == pytest.approx(np.array([[3.0, 3.5, 3.5, 3.5], [6.5, 7.0, 7.0, 7.0]]), rel=1e-12)
    assert r.makespan == pytest.approx(7.0, rel=1e-12)


@needs_simgrid
@pytest.mark.parametrize("sync, want", [
    # barrier: stage 1 starts at 1.0; iteration 1 at 2.0
    ("barrier", [[1.0, 0.5, 2.0], [3.0, 2.5, 4.0]]),
    # ranks: rank 3 sends 3->2 once 2->3 arrives (0.5); rank 0 receives nothing, so it sends 0->1 of
    # both iterations at 0 (they share link 0->1: 2.0); rank 2 starts iteration 1 when 3->2 arrives
    # (1.5), so 2->3 ends at 2.0 and 3->2 of iteration 1 at 3.0
    ("ranks", [[2.0, 0.5, 1.5], [2.0, 2.0, 3.0]]),
])
def test_two_stage_schedule_by_hand(sync, want):
    r = simgrid.replay(two_stages(), tm.machine("mesh:4/1"), bandwidth=GB, latency=0.0, sync=sync, iterations=2,
                       python=SIMGRID_PY)
    assert r.finish == pytest.approx(np.array(want), rel=1e-12)


@needs_simgrid
def test_cm02_shares_inversely_to_route_latency():
    # 2->3 (1 hop) and 0->3 (3 hops) share link 2->3; 1 ms per link, 1 GB each at 1 GB/s.
    # latency_on="flows": plain max-min, half each once both transfer (from 3 ms):
    #   2->3 ends at 0.003 + (1e9 - 2e6) / 0.5e9 = 1.999, 0->3 at 2.001 (2 GB through one link after 1 ms)
    # latency_on="links": CM02's penalties 1 ms and 3 ms give shares 3/4 and 1/4:
    #   2->3 ends at 0.003 + 0.998e9 / 0.75e9 = 1.3336667, then 0->3 alone: 2.001
    m = tm.machine("mesh:4/1")
    pat = tm.Pattern.from_edges([2, 0], [3, 3], [GB, GB], n=4)
    plain = simgrid.replay(pat, m, bandwidth=GB, latency=1e-3, python=SIMGRID_PY)
    assert plain.finish[0] == pytest.approx([2.001, 1.999], rel=1e-12)
    cm02 = simgrid.replay(pat, m, bandwidth=GB, latency=1e-3, latency_on="links", python=SIMGRID_PY)
    assert cm02.finish[0] == pytest.approx([2.001, 0.003 + 0.998 / 0.75], rel=1e-12)


@needs_simgrid
def test_standalone_driver_runs_the_written_case(tmp_path):
    m, pat = line_of_four()
    cmd = simgrid.write_case(tmp_path, pat, m, bandwidth=GB, latency=0.0)
    res = subprocess.run([SIMGRID_PY, *cmd[1:]], cwd=tmp_path, capture_output=True, text=True,
                         env={"PATH": os.environ.get("PATH", "")})          # no topomap on the path
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["makespan"] == pytest.approx(3.0, rel=1e-12)
    assert out["finish"] == [pytest.approx([1.5, 3.0, 3.0, 3.0], rel=1e-12)]


# ------------------------------------------------------------------ the time model against SimGrid

MACHINES = ("fattree:k=4,levels=3/1", "torus:4x4x4/1", "dragonfly:g=5,a=4,h=2,p=2/1", "gpc:/1")
# one PE per node: every flow crosses the network, so SimGrid's loopback never carries one
MODEL = {"classes": {"PE": (1e-7, 2e10), "network": (1e-6, 9e9)}, "link_bandwidth": 1.25e10, "hop_latency": 1e-7}
NCASES = 56


@functools.lru_cache(maxsize=None)
def machine(spec):
    return tm.machine(spec)


def random_stages(rng, n, nflows, nstages, equal=False):
    """``nstages`` patterns over ``n`` ranks with about ``nflows`` flows in all, log-uniform sizes 100 B-4 MB
    (``equal``: one size for all, so that many flows end together, as in a halo exchange)."""
    stages = []
    for k in range(nstages):
        want = max(1, nflows // nstages)
        pairs = rng.choice(n * (n - 1), size=min(want, n * (n - 1)), replace=False)
        src, off = np.divmod(pairs, n - 1)
        dst = off + (off >= src)                                   # skip the diagonal
        size = np.rint(10 ** rng.uniform(2, 6.6, 1 if equal else src.size)) * np.ones(src.size)
        stages.append(tm.Pattern.from_edges(src, dst, size, n=n))
    return stages


def random_case(seed):
    """Case ``seed``: machine, work (one phase, random stages or a collective), placement, sync, iterations."""
    rng = np.random.default_rng(seed)
    spec = MACHINES[seed % len(MACHINES)]
    m = machine(spec)
    n = int(rng.integers(16, min(m.npes, 96) + 1))
    kind = ("phase", "stages", "collective")[(seed // len(MACHINES)) % 3]
    if kind == "phase":
        work = random_stages(rng, n, int(rng.integers(16, 513)), 1, equal=bool(seed % 3 == 0))[0]
    elif kind == "stages":
        stages = random_stages(rng, n, int(rng.integers(16, 513)), int(rng.integers(2, 5)))
        work = Schedule("random", tuple(stages), stages[0])      # total unused by the simulators
    else:
        size = float(np.rint(10 ** rng.uniform(2, 6)))
        n, work = [(32, schedules.recursive_doubling(32, size)), (16, schedules.ring_allgather(16, size)),
                   (32, schedules.bruck(32, size, op="alltoall")), (32, schedules.binomial_bcast(32, size))][
            int(rng.integers(4))]
    policy = ("contiguous", "random")[seed % 2]
    alloc = m.allocate(n, policy=policy, seed=seed)
    mapping = alloc.pes if rng.random() < 0.5 else rng.permutation(alloc.pes)    # block or random
    sync = ("barrier", "ranks")[(seed // 2) % 2]
    return spec, work, alloc, mapping, sync, int(rng.integers(1, 3))


def simgrid_of(case, model):
    """The case replayed in SimGrid with the model's parameters (every flow in class "network")."""
    _, work, alloc, mapping, sync, iterations = case
    alpha, rate = model.classes["network"].alpha, model.classes["network"].bandwidth
    return simgrid.replay(work, alloc, mapping, bandwidth=model.link_bandwidth, latency=model.hop_latency,
                          alpha=alpha, rate=rate, sync=sync, iterations=iterations, python=SIMGRID_PY)


def test_random_cases_cover_what_the_issue_asks():
    cases = [random_case(seed) for seed in range(NCASES)]
    nflows = [simgrid.flows(c[1])["src"].size for c in cases]
    assert min(nflows) >= 16 and max(nflows) <= 512
    assert {c[0] for c in cases} == set(MACHINES)
    assert {(c[4], isinstance(c[1], tm.Pattern)) for c in cases} == {(s, p) for s in SYNCS for p in (True, False)}
    assert {c[5] for c in cases} == {1, 2}


@needs_simgrid
@pytest.mark.parametrize("seed", range(NCASES))
def test_time_model_matches_simgrid(seed):
    case = random_case(seed)
    spec, work, alloc, mapping, sync, iterations = case
    model = TimeModel(**MODEL)
    mine = predict(work, alloc, mapping, model, sync=sync, iterations=iterations)
    sg = simgrid_of(case, model)
    for key in ("src", "dst", "stage"):
        assert np.array_equal(mine.messages[key], sg.messages[key]), key
    assert np.array_equal(mine.messages["bytes"], sg.messages["bytes"])      # whole bytes in every case
    assert mine.makespan == pytest.approx(sg.makespan, rel=0.01)
    assert mine.finish == pytest.approx(sg.finish, rel=0.01)
    # what is observed, far inside the issue's 1 %: SimGrid dates to 1e-13 s, topomap merges events 1e-11 apart
    assert np.abs(mine.finish / sg.finish - 1).max() < 1e-6, (spec, sync)


@needs_simgrid
@pytest.mark.parametrize("sync, want", [("barrier", [1.0, 1.1]), ("ranks", [1.0, 0.1])])
def test_a_later_stage_receive_that_ends_first_keeps_its_time(sync, want):
    # rank 1 receives 0->1 (1 GB) in stage 0 and 2->1 (0.1 GB) in stage 1; rank 2 has nothing in
    # stage 0, so under "ranks" 2->1 leaves at 0 and ends at 0.1 while rank 1 still waits for 0->1
    st0 = tm.Pattern.from_edges([0], [1], [GB], n=4)
    st1 = tm.Pattern.from_edges([2], [1], [GB // 10], n=4)
    work = Schedule("late", (st0, st1), st0)
    r = simgrid.replay(work, tm.machine("mesh:4/1"), bandwidth=GB, latency=0.0, sync=sync, python=SIMGRID_PY)
    assert r.finish[0] == pytest.approx(want, rel=1e-12)


@needs_simgrid
@pytest.mark.parametrize("sync", SYNCS)
def test_flows_inside_a_node_take_the_loopback_at_their_class_rate(sync):
    # two PEs per node: the flows between PEs of one node cross SimGrid's loopback link, which the
    # driver leaves unlimited, so only their class's bandwidth (the flow's rate) limits them, as in
    # topomap, where such a flow crosses no link
    m = tm.machine("fattree:k=4,levels=2/2")
    model = TimeModel({"PE": (1e-7, 2e10), "intra-node": (3e-7, 5e9), "network": (1e-6, 9e9)},
                      link_bandwidth=1.25e10, hop_latency=1e-7)
    rng = np.random.default_rng(7)
    stages = random_stages(rng, 32, 256, 2)
    work = Schedule("random", tuple(stages), stages[0])
    pe = rng.permutation(m.npes)
    mine = predict(work, m, pe, model, sync=sync)
    f = simgrid.flows(work)
    inside = m.node_of(pe[f["src"]]) == m.node_of(pe[f["dst"]])
    assert 5 <= inside.sum() < inside.size
    cls = [model.classes["intra-node" if i else "network"] for i in inside]
    sg = simgrid.replay(work, m, pe, bandwidth=model.link_bandwidth, latency=model.hop_latency,
                        alpha=[c.alpha for c in cls], rate=[c.bandwidth for c in cls], sync=sync,
                        python=SIMGRID_PY)
    assert np.abs(mine.finish / sg.finish - 1).max() < 1e-6


@needs_simgrid
def test_ranks_run_ahead_into_the_next_iteration_by_hand():
    # 0->1 (1 GB) and 2->0 (0.25 GB) on the line 0-1-2, 1 GB/s, "ranks", 2 iterations.  Rank 2
    # receives nothing, so both of its 2->0 leave at 0 and share links 2->1 and 1->0: both end at 0.5.
    # Rank 0 then starts iteration 1: its second 0->1 joins the first (0.5 GB left) on link 0->1;
    # they split it until the first ends at 1.5, and the second ends alone at 2.0
    pat = tm.Pattern.from_edges([0, 2], [1, 0], [GB, GB // 4], n=3)
    r = simgrid.replay(pat, tm.machine("mesh:3/1"), bandwidth=GB, latency=0.0, sync="ranks", iterations=2,
                       python=SIMGRID_PY)
    assert r.finish == pytest.approx(np.array([[1.5, 0.5], [2.0, 0.5]]), rel=1e-12)
    model = TimeModel({"PE": (0, 1e12), "network": (0, 1e12)}, link_bandwidth=GB, hop_latency=0)
    assert predict(pat, tm.machine("mesh:3/1"), [0, 1, 2], model, sync="ranks", iterations=2).finish == \
        pytest.approx(r.finish, rel=1e-12)
