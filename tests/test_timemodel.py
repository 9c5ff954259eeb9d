"""topomap.timemodel: hand-worked predictions, the class rule, LogGP, bad input."""

import json
import math

import numpy as np
import pytest

import topomap as tm
from topomap.errors import TimeModelError
from topomap.timemodel import LinkClass, LogGP, TimeModel, predict
from topomap.compare import compare_rows
from topomap.timemodel import crossover, sweep

GB = 1e9


def plain(alpha=0.0, bandwidth=math.inf, hop_latency=0.0):
    """Every class the same; network links of 1 GB/s per unit of capacity."""
    classes = {c: (alpha, bandwidth if c == "network" else 1e12)
               for c in ("PE", "intra-socket", "inter-socket", "intra-node", "network")}
    return TimeModel(classes, link_bandwidth=GB, hop_latency=hop_latency)


def edges(src, dst, byts, n):
    return tm.Pattern.from_edges(src, dst, byts, n=n)


# ---------------------------------------------------------------- hand-worked flows
def test_one_link_shared_by_two_and_by_three_flows():
    two = predict(edges([0, 1], [2, 3], [GB, GB], 4), "mesh:2/2", [0, 1, 2, 3], plain())
    assert two.makespan == pytest.approx(2.0)
    # 1, 2 and 3 GB over one link: thirds until 3 s, halves until 5 s, the whole link until 6 s
    three = predict(edges([0, 1, 2], [3, 4, 5], [GB, 2 * GB, 3 * GB], 6), "mesh:2/3", np.arange(6), plain())
    assert three.finish[0] == pytest.approx([3.0, 5.0, 6.0])
    assert three.bottleneck.tolist() != [-1] and three.bottleneck_time[0] == pytest.approx(6.0)


def test_chain_max_min_is_not_equal_sharing():
    # shared/notes/simgrid.md: 0->2, 1->3, 1->2, 0->1 on the line 0-1-2-3; equal per-link sharing would
    # give 0->1 half of link 0-1 (done at 2 s); max-min gives it the 2/3 that 0->2 cannot use
    pat = edges([0, 1, 1, 0], [2, 3, 2, 1], [GB] * 4, 4)
    t = predict(pat, "mesh:4", [0, 1, 2, 3], plain())
    f = dict(zip(zip(t.messages["src"].tolist(), t.messages["dst"].tolist()), t.finish[0]))
    assert f[(0, 1)] == pytest.approx(1.5)
    assert [f[(0, 2)], f[(1, 2)], f[(1, 3)]] == pytest.approx([3.0, 3.0, 3.0])
    assert t.makespan == pytest.approx(3.0)


def test_two_stages_barrier_waits_ranks_do_not():
    # stage 0: 0->1 (1 GB), 2->3 (0.5 GB); stage 1: 3->2 and 1->0 (1 GB each), all on separate links
    s0 = edges([0, 2], [1, 3], [GB, GB / 2], 4)
    s1 = edges([3, 1], [2, 0], [GB, GB], 4)
    bar = predict([s0, s1], "mesh:4", [0, 1, 2, 3], plain(), sync="barrier")
    ranks = predict([s0, s1], "mesh:4", [0, 1, 2, 3], plain(), sync="ranks")
    assert bar.stage_end[0] == pytest.approx([1.0, 2.0])
    assert ranks.stage_end[0] == pytest.approx([1.0, 2.0])
    late = {(int(s), int(d)): f for s, d, f in zip(bar.messages["src"], bar.messages["dst"], bar.finish[0])}
    early = {(int(s), int(d)): f for s, d, f in zip(ranks.messages["src"], ranks.messages["dst"], ranks.finish[0])}
    assert late[(3, 2)] == pytest.approx(2.0)
    assert early[(3, 2)] == pytest.approx(1.5)       # rank 3 has its stage-0 data at 0.5 s
    assert early[(1, 0)] == pytest.approx(2.0)
    assert bar.stage_time[0] == pytest.approx([1.0, 1.0])


def test_iterations_repeat_the_stages():
    pat = edges([0], [1], [GB], 2)
    t = predict(pat, "mesh:2", [0, 1], plain(alpha=0.25), iterations=3)
    assert t.finish[:, 0] == pytest.approx([1.25, 2.5, 3.75])
    assert t.makespan == pytest.approx(3.75)


def test_small_messages_are_latency_bound():
    model = TimeModel({"intra-node": (3e-7, 1e10), "network": (1e-6, 1.25e10)}, link_bandwidth=1.25e10,
                      hop_latency=1e-7)
    pat = edges([0, 0], [1, 5], [8.0, 8.0], 8)
    t = predict(pat, "mesh:4/2", np.arange(8), model)
    # 0 -> 1 in one node: alpha + 8 B / 10 GB/s; 0 -> 5 two hops away: alpha + 2 hops + 8 B / 12.5 GB/s
    assert t.finish[0] == pytest.approx([3e-7 + 8e-10, 1e-6 + 2e-7 + 6.4e-10])
    assert t.messages["latency"] == pytest.approx([3e-7, 1.2e-6])


def test_message_counts_pay_alpha_each():
    pat = tm.Pattern.from_edges([0], [1], [GB], msgs=[4], n=2)
    t = predict(pat, "mesh:2", [0, 1], plain(alpha=0.5))
    assert t.makespan == pytest.approx(4 * 0.5 + 1.0)


def test_class_bandwidth_caps_network_flows():
    model = plain().merged({"network": (0.0, GB / 4)})
    t = predict(edges([0], [1], [GB], 2), "mesh:2", [0, 1], model)
    assert t.makespan == pytest.approx(4.0)


def test_link_capacity_scales_bandwidth():
    m = tm.machine("mesh:2")
    m.set_capacities(2.0)
    t = predict(edges([0], [1], [GB], 2), m, [0, 1], plain())
    assert t.makespan == pytest.approx(0.5)


def test_hockney_ignores_congestion_and_flow_never_beats_it():
    pat = tm.generators.stencil_3d((4, 4, 4), bytes=1e6)
    alloc = tm.machine("torus:4x4x4/1").allocate(64)
    rnd = tm.map(pat, alloc, method="random", seed=3)
    flow = predict(pat, alloc, rnd)
    alone = predict(pat, alloc, rnd, method="hockney")
    assert (flow.finish >= alone.finish * (1 - 1e-12)).all()
    assert flow.makespan > 1.5 * alone.makespan


def test_prediction_to_dict_is_json():
    t = predict(edges([0], [1], [GB], 2), "mesh:2", [0, 1], plain())
    d = json.loads(json.dumps(t.to_dict()))
    assert d["makespan"] == pytest.approx(1.0) and d["finish"] == [[pytest.approx(1.0)]]
    assert "1 messages" in repr(t)


# ---------------------------------------------------------------- LogGP
def test_loggp_one_message_and_a_train():
    p = LogGP(L=1e-6, o=2e-7, g=5e-7, G=1e-9)
    model = TimeModel({"network": (1e-6, 1e9), "intra-node": (1e-6, 1e9), "PE": (0, 1e9)}, hop_latency=0,
                      loggp={"network": p})
    one = predict(edges([0], [1], [1000.0], 2), "mesh:2", [0, 1], model, method="loggp")
    assert one.makespan == pytest.approx(2e-7 + 999e-9 + 1e-6 + 2e-7)
    # three messages from 0: each takes max(g, o + (m-1)G) = 1.199 us of the sender; rank 1 gets them
    # one after the other, each arriving after the previous one's receive overhead ended
    train = predict(edges([0, 0, 0], [1, 2, 3], [1000.0] * 3, 4), "mesh:4", np.arange(4), model, method="loggp")
    step = 2e-7 + 999e-9
    assert train.finish[0] == pytest.approx([k * step + step + 1e-6 + 2e-7 for k in range(3)])
    # two senders to one receiver: its overhead serialises them
    fan = predict(edges([1, 2], [0, 0], [1.0, 1.0], 3), "mesh:3", np.arange(3), model, method="loggp")
    assert sorted(fan.finish[0]) == pytest.approx([2e-7 + 1e-6 + 2e-7, 2e-7 + 1e-6 + 4e-7])


def test_loggp_from_hockney_rule():
    p = LogGP.from_hockney(LinkClass(1e-6, 1e10))
    assert (p.L, p.o, p.g, p.G) == pytest.approx((5e-7, 2.5e-7, 5e-7, 1e-10))
    assert p.time(1) == pytest.approx(1e-6)


# ---------------------------------------------------------------- classes
@pytest.mark.parametrize("spec, expected", [
    ("torus:4x4/8", ["PE", "intra-node", "network"]),
    ("torus:4x4/package:2 core:8", ["PE", "intra-socket", "inter-socket", "network"]),
    ("fattree:k=4,levels=2/2", ["PE", "intra-node", "network", "network"]),
])
def test_level_classes(spec, expected):
    assert TimeModel.default().level_classes(tm.machine(spec)) == expected


def test_exact_level_name_wins():
    m = TimeModel.default().merged({"spine": (5e-6, 1e9)})
    assert m.level_classes(tm.machine("fattree:k=4,levels=2/2"))[-1] == "spine"


def test_missing_class_is_named():
    model = TimeModel({"network": (1e-6, 1e10)})
    with pytest.raises(TimeModelError, match="no link class 'intra-node'.*level 1"):
        predict(edges([0], [1], [1.0], 2), "mesh:2/2", [0, 1], model)


def test_json_round_trip_and_files(tmp_path):
    model = TimeModel.default().merged({"leaf": (2e-6, 5e9)})
    path = tmp_path / "m.json"
    path.write_text(model.to_json())
    assert TimeModel.from_json(path) == model
    assert TimeModel.from_json(model.to_json()) == model
    (tmp_path / "bad.json").write_text('{"classes": {"network": [1e-6, -1]}}')
    with pytest.raises(TimeModelError, match=r"bad.json: link class 'network': bandwidth must be a positive"):
        TimeModel.from_json(tmp_path / "bad.json")
    (tmp_path / "broken.json").write_text('{"classes": \n{')
    with pytest.raises(TimeModelError, match="broken.json: line 2"):
        TimeModel.from_json(tmp_path / "broken.json")


@pytest.mark.parametrize("classes, match", [
    ({"network": (-1e-6, 1e10)}, "alpha must be a non-negative"),
    ({"network": (1e-6, 0)}, "bandwidth must be a positive"),
    ({"network": (float("nan"), 1e10)}, "alpha must be"),
    ({"network": "fast"}, "must be \\(alpha, bandwidth\\)"),
    ({"network": (1e-6, 1e10), "Network": (1e-6, 1e10)}, "given twice"),
    ({}, "non-empty"),
])
def test_bad_models(classes, match):
    with pytest.raises(TimeModelError, match=match):
        TimeModel(classes)


def test_bad_work_and_options():
    pat = edges([0], [1], [1.0], 2)
    with pytest.raises(TimeModelError, match="stage 1 has 3 processes but stage 0 has 2"):
        predict([pat, edges([0], [2], [1.0], 3)], "mesh:2", [0, 1])
    with pytest.raises(tm.MappingError, match="2 processes"):
        predict(pat, "mesh:4", [0, 1, 2])
    with pytest.raises(TimeModelError, match="sync must be"):
        predict(pat, "mesh:2", [0, 1], sync="eventually")
    with pytest.raises(TimeModelError, match="iterations"):
        predict(pat, "mesh:2", [0, 1], iterations=0)
    with pytest.raises(TimeModelError, match="bytes_scale"):
        predict(pat, "mesh:2", [0, 1], bytes_scale=float("nan"))
    with pytest.raises(TimeModelError, match="bytes inf after bytes_scale"):
        predict(edges([0], [1], [1e300], 2), "mesh:2", [0, 1], bytes_scale=1e10)
    with pytest.raises(TimeModelError, match="infinite bandwidth.*inside a node"):
        predict(pat, "mesh:1/2", [0, 1], TimeModel({"PE": (0, 1), "intra-node": (0, math.inf), "network": (0, 1)}))
    with pytest.raises(tm.PatternError):
        predict(edges([0], [1], [float("nan")], 2), "mesh:2", [0, 1])


# ---------------------------------------------------------------- where users compare
def test_compare_with_time():
    alloc = tm.machine("torus:4x4/4").allocate(64)
    pat = tm.generators.stencil_2d((8, 8))
    rows, _ = compare_rows(pat, alloc, ["block", "greedy"], time=True, bytes_scale=1e6)
    by = {r["method"]: r for r in rows}
    assert by["block"]["predicted_time_norm"] == 1.0
    assert by["greedy"]["predicted_time_norm"] == pytest.approx(
        by["greedy"]["predicted_time"] / by["block"]["predicted_time"])
    assert by["greedy"]["predicted_time_norm"] < 0.5
    assert by["block"]["predicted_time"] == predict(pat, alloc, tm.map(pat, alloc, method="block"),
                                                    bytes_scale=1e6).makespan
    assert "predicted_time" not in compare_rows(pat, alloc, ["block"])[0][0]
    with pytest.raises(TimeModelError, match="cannot read time model yes"):
        compare_rows(pat, alloc, ["block"], time="yes")
    with pytest.raises(TimeModelError, match="time must be"):
        compare_rows(pat, alloc, ["block"], time=3)


def test_sweep_finds_where_congestion_starts_to_matter():
    alloc = tm.machine("torus:4x4/4").allocate(64)
    pat = tm.generators.stencil_2d((8, 8))
    maps = {m: tm.map(pat, alloc, method=m) for m in ("block", "greedy")}
    rows = sweep(pat, alloc, maps)
    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    greedy = [r["predicted_time_norm"] for r in rows if r["method"] == "greedy"]
    # latency-bound at 8 B (greedy only saves hop latencies), congestion-bound from a few KB on
    assert greedy == sorted(greedy, reverse=True) and greedy[-1] < 0.2 and greedy[0] > 0.8
    assert crossover(rows, "greedy", threshold=0.5) == 2048.0
    assert crossover(rows, "greedy", threshold=0.1) is None
    with pytest.raises(TimeModelError, match="baseline"):
        sweep(pat, alloc, maps, baseline="random")


# ---------------------------------------------------------------- command line
def cli(capsys, *argv):
    from topomap.cli import main
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_eval_time_matches_predict(capsys, tmp_path):
    rc, out, _ = cli(capsys, "eval", "stencil2d:8x8", "torus:4x4/4", "--method", "greedy", "--time",
                     "--bytes-scale", "65536", "--json")
    assert rc == 0
    got = json.loads(out)
    alloc = tm.machine("torus:4x4/4").allocate(64)
    pat = tm.generators.stencil_2d((8, 8))
    want = predict(pat, alloc, tm.map(pat, alloc, method="greedy"), bytes_scale=65536)
    assert got["predicted_time"] == pytest.approx(want.makespan)
    assert got["predicted_bottleneck_link"] == int(want.bottleneck[0])
    path = tmp_path / "slow.json"
    path.write_text(TimeModel.default().merged({"network": (1e-3, 1e10)}).to_json())
    rc, out, _ = cli(capsys, "eval", "stencil2d:8x8", "torus:4x4/4", "--time", "--time-model", str(path), "--json")
    assert rc == 0 and json.loads(out)["predicted_time"] > 1e-3


@pytest.mark.parametrize("argv, message", [
    (["--bytes-scale", "2"], "need --time"),
    (["--time", "--bytes-scale", "-1"], "bytes-scale must be a positive"),
    (["--time", "--time-model", "/nonexistent/model.json"], "cannot read time model"),
])
def test_cli_eval_time_errors(capsys, argv, message):
    rc, _, err = cli(capsys, "eval", "stencil2d:4x4", "torus:4x4", *argv)
    assert rc == 2 and message in err and "Traceback" not in err


def test_cli_compare_time_column(capsys):
    rc, out, _ = cli(capsys, "compare", "stencil2d:8x8", "torus:4x4/4", "--methods", "block,greedy", "--time",
                     "--bytes-scale", "65536", "--json")
    assert rc == 0
    rows = {r["method"]: r for r in json.loads(out)}
    assert rows["greedy"]["predicted_time_norm"] == pytest.approx(0.1284, abs=1e-3)
    rc, out, _ = cli(capsys, "compare", "stencil2d:8x8", "torus:4x4/4", "--methods", "block,greedy", "--time")
    assert rc == 0 and "predicted/block" in out


def test_grid_predicts_and_resumes_only_with_the_same_model(tmp_path):
    from topomap.experiments import run_grid
    out = tmp_path / "grid.csv"
    df = run_grid({"halo": "stencil2d:8x8"}, ["torus:4x4/4"], ["block", "greedy"], progress=False, out=out,
                  time=True, bytes_scale=65536)
    by = df.set_index("method")
    assert by.loc["greedy", "predicted_time_norm"] == pytest.approx(0.1284, abs=1e-3)
    alloc = tm.machine("torus:4x4/4").allocate(64)
    pat = tm.generators.stencil_2d((8, 8))
    assert by.loc["block", "predicted_time"] == pytest.approx(
        predict(pat, alloc, tm.map(pat, alloc, method="block"), bytes_scale=65536).makespan)
    slow = TimeModel.default().merged({"network": (1e-3, 1e10)})
    again = run_grid({"halo": "stencil2d:8x8"}, ["torus:4x4/4"], ["block", "greedy"], progress=False, out=out,
                     time=slow, bytes_scale=65536)
    assert (again["predicted_time"] > 1e-3).all()          # rerun with the new model, not reused
    assert "predicted_time" not in run_grid({"halo": "stencil2d:4x4"}, ["torus:4x4"], ["block"],
                                            progress=False).columns


def test_mappers_and_metrics_take_a_schedule_as_its_total():
    from topomap.collectives.schedules import recursive_doubling
    sched = recursive_doubling(16, bytes=10)
    alloc = tm.machine("torus:4x4").allocate(16)
    mp = tm.map(sched, alloc, method="greedy")
    assert tm.evaluate(sched, alloc, mp).hop_bytes == tm.evaluate(sched.total, alloc, mp).hop_bytes
