"""Experiment grids: rows, normalisation, resume, Ctrl-C, errors, files, grid files, CLI."""

import json
import math
import os
import sys

import numpy as np
import pytest

import topomap as tm
from topomap import registry
from topomap.cli import main
from topomap.compare import NORMALIZED
from topomap.errors import FormatError, MachineError, MappingError, MissingDependencyError
from topomap.experiments import (KEY, AllocationSpec, GridInterrupted, GridRunsFailed, MethodSpec, grid as grid_mod, load,
                                 normalize, read_grid, run_grid, save, summarize)

pd = pytest.importorskip("pandas")


@pytest.fixture
def probe(monkeypatch):
    """A registered test mapper with options: rank order shifted by ``shift``; ``fail`` raises."""
    def func(pattern, allocation, *, seed, capacity, progress, shift, fail):
        if fail:
            raise MappingError("probe asked to fail")
        return np.roll(np.asarray(allocation.pes[:pattern.n]), int(shift))
    info = registry.MapperInfo("probe", func, "test mapper",
                               {"shift": (0, "rotate the block order"), "fail": (False, "raise")})
    monkeypatch.setitem(registry._REGISTRY, "probe", info)
    return info


@pytest.fixture
def counted(monkeypatch):
    """Count the mapper calls the grid makes."""
    calls = []
    real = grid_mod.run_mapper

    def wrapper(*args, **kwargs):
        calls.append(kwargs["method"])
        return real(*args, **kwargs)
    monkeypatch.setattr(grid_mod, "run_mapper", wrapper)
    return calls


GRID = dict(patterns={"halo": "stencil2d:8x8", "cube": tm.generators.stencil_3d((4, 4, 4))},
            machines=["torus:4x4/4", "hierarchy:4:4:4/1:10:100"], methods=["cyclic", "random"],
            seeds=[0, 1], allocations=["contiguous", "fragmented:seed=1,runs=2"], progress=False)


def test_one_row_per_run_with_every_metric_and_the_baseline_added():
    df = run_grid(**GRID)
    # the baseline (block) runs in every cell although not asked for
    assert len(df) == 2 * 2 * 2 * 2 * 3
    assert list(df.columns[:len(KEY)]) == list(KEY)
    assert (df["status"] == "ok").all() and (df["error"] == "").all()
    assert list(dict.fromkeys(df["method"])) == ["block", "cyclic", "random"]
    metric_names = tm.evaluate(tm.generators.stencil_2d((8, 8)), tm.machine("torus:4x4/4"),
                               np.arange(64)).to_dict()
    for name in metric_names:
        assert name in df.columns
    for name in NORMALIZED:
        assert f"{name}_norm" in df.columns
    assert set(df["topomap_version"]) == {tm.__version__} and set(df["numpy_version"]) == {np.__version__}
    assert (df["seconds"] > 0).all()


def test_rows_equal_a_direct_map_and_evaluate():
    df = run_grid(**GRID)
    row = df[(df["pattern"] == "cube") & (df["machine"] == "hierarchy:4:4:4/1:10:100") & (df["method"] == "random")
             & (df["allocation"] == "fragmented:runs=2,seed=1") & (df["seed"] == 1)].iloc[0]
    alloc = tm.machine("hierarchy:4:4:4/1:10:100").allocate(64, policy="fragmented", seed=1, runs=2)
    pat = tm.generators.stencil_3d((4, 4, 4))
    met = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="random", seed=1))
    for k, v in met.to_dict().items():
        assert row[k] == pytest.approx(v)
    assert row["nodes"] == len(alloc.nodes()) and row["n"] == 64


def test_normalised_by_the_baseline_of_the_same_cell():
    df = run_grid(**GRID)
    cell = ["pattern", "machine", "allocation", "seed"]
    base = df[df["method"] == "block"].set_index(cell)
    for _, row in df.iterrows():
        b = base.loc[tuple(row[c] for c in cell)]
        for m in ("hop_bytes", "max_congestion", "hybrid", "qap"):
            expect = 1.0 if b[m] == 0 and row[m] == 0 else row[m] / b[m]
            assert row[f"{m}_norm"] == pytest.approx(expect)
    assert (df.loc[df["method"] == "block", "hop_bytes_norm"] == 1.0).all()
    # random really is worse than block on a halo exchange: the ratios are not all 1
    assert df.loc[df["method"] == "random", "hop_bytes_norm"].min() > 1.0


def test_normalize_rules_zero_over_zero_and_missing_baseline():
    cell = dict(pattern="p", machine="m", allocation="a", capacity=1, weights="1,1,1,1", status="ok")
    df = pd.DataFrame([dict(cell, seed=0, method="block", edge_cut=0.0, hop_bytes=2.0),
                       dict(cell, seed=0, method="x", edge_cut=0.0, hop_bytes=3.0),
                       dict(cell, seed=0, method="y", edge_cut=5.0, hop_bytes=1.0),
                       dict(cell, seed=1, method="x", edge_cut=1.0, hop_bytes=1.0)])
    out = normalize(df, "block")
    assert out["edge_cut_norm"].tolist()[:3] == [1.0, 1.0, math.inf]
    assert out["hop_bytes_norm"].tolist()[:3] == [1.0, 1.5, 0.5]
    assert math.isnan(out["hop_bytes_norm"].iloc[3])  # seed 1 has no baseline run


def test_same_seed_same_rows():
    a = run_grid(**GRID).drop(columns=["seconds", "timestamp"])
    b = run_grid(**GRID).drop(columns=["seconds", "timestamp"])
    pd.testing.assert_frame_equal(a, b)


def test_capacity_and_weights_reach_the_mapper_and_the_evaluator():
    df = run_grid(["stencil2d:8x4"], ["torus:4x4"], ["block", "random"], capacity=2, weights=(0, 1, 0, 0),
                  progress=False)
    assert (df["status"] == "ok").all() and set(df["capacity"]) == {2} and set(df["weights"]) == {"0,1,0,0"}
    assert (df["nodes"] == 16).all()  # 32 processes on 16 single-PE nodes, two per PE
    assert (df["hybrid"] == df["max_congestion"]).all()


def test_labels_from_specs_provenance_and_machine_objects():
    mach = tm.machine("mesh:4x4/4")
    df = run_grid([tm.generators.stencil_2d((8, 8)), "stencil2d:4x4"], mach, ["block"], progress=False)
    assert set(df["pattern"]) == {"stencil_2d:8x8", "stencil2d:4x4"}
    assert set(df["machine"]) == {"mesh:4x4/4"}
    with pytest.raises(ValueError, match="two patterns have the label 'stencil2d:4x4'"):
        run_grid(["stencil2d:4x4", "stencil2d:4x4"], mach, ["block"], progress=False)
    with pytest.raises(ValueError, match="no methods"):
        run_grid(["stencil2d:4x4"], mach, [], baseline=None, progress=False)


def test_methods_with_options_are_labelled_keyed_and_passed(probe):
    df = run_grid(["stencil2d:4x4"], ["torus:4x4"], [("probe", {"shift": 3}), {"method": "probe", "label": "p0"}],
                  progress=False)
    assert df["method"].tolist() == ["block", "probe(shift=3)", "p0"]
    assert df["options"].tolist() == ["{}", '{"shift": 3}', "{}"]
    opts = json.loads(df["method_options"].iloc[1])
    assert opts == {"shift": 3, "fail": False}
    # shift 0 is the block order: same metrics; shift 3 moves processes: different hop-bytes
    assert df["hop_bytes"].iloc[2] == df["hop_bytes"].iloc[0] != df["hop_bytes"].iloc[1]


def test_bad_methods_and_allocations_fail_before_running(counted):
    with pytest.raises(MappingError, match="unknown mapping method 'nope'"):
        run_grid(["stencil2d:4x4"], ["torus:4x4"], ["block", "nope"], progress=False)
    with pytest.raises(MappingError, match="no option 'k'"):
        run_grid(["stencil2d:4x4"], ["torus:4x4"], [("random", {"k": 1})], progress=False)
    with pytest.raises(MachineError, match="unknown allocation policy 'packed'"):
        run_grid(["stencil2d:4x4"], ["torus:4x4"], ["block"], allocations=["packed"], progress=False)
    with pytest.raises(MachineError, match="bad token 'seed=x'"):
        AllocationSpec.parse("random:seed=x")
    with pytest.raises(MachineError, match="no parameter 'size'"):
        AllocationSpec.parse({"policy": "random", "size": 2})
    with pytest.raises(MachineError, match="runs must be an integer >= 1"):
        AllocationSpec.parse("fragmented:runs=0")
    with pytest.raises(MappingError, match="seeds must be integers"):
        run_grid(["stencil2d:4x4"], ["torus:4x4"], ["block"], seeds=[-1], progress=False)
    with pytest.raises(MappingError, match="capacity must be a positive integer"):
        run_grid(["stencil2d:4x4"], ["torus:4x4"], ["block"], capacity=0, progress=False)
    with pytest.raises(MappingError, match="weights must be 4 finite non-negative"):
        run_grid(["stencil2d:4x4"], ["torus:4x4"], ["block"], weights=(1, 1, -1, 1), progress=False)
    with pytest.raises(ValueError, match="'method' key"):
        MethodSpec.parse({"shift": 1})
    assert counted == []
    assert AllocationSpec.parse({"policy": "fragmented", "runs": 2}).label == "fragmented:runs=2"


def test_errors_are_recorded_and_do_not_stop_the_grid(probe):
    with pytest.warns(GridRunsFailed, match="11 of 12 runs failed"):
        df = run_grid({"ok": "stencil2d:4x4", "bad": "stencil2d:0x4", "big": "stencil2d:16x16"},
                      ["torus:4x4", "nope:1"], ["probe", ("probe", {"fail": True})], baseline="probe", progress=False)
    assert len(df) == 3 * 2 * 2
    ok = df[(df["pattern"] == "ok") & (df["machine"] == "torus:4x4")]
    assert ok["status"].tolist() == ["ok", "error"]
    assert ok["error"].iloc[1] == "MappingError: probe asked to fail"
    assert math.isnan(ok["hop_bytes_norm"].iloc[1])
    assert df.loc[df["pattern"] == "bad", "error"].str.startswith("PatternError: pattern spec 'stencil2d:0x4'").all()
    assert df.loc[(df["pattern"] == "big") & (df["machine"] == "torus:4x4"), "error"].str.contains(
        "cannot allocate 256 PEs").all()
    # a bad pattern is reported first; every other row on the unknown machine names the machine
    assert df.loc[(df["machine"] == "nope:1") & (df["pattern"] != "bad"), "error"].str.contains(
        "unknown machine kind 'nope'").all()
    assert summarize(df).loc["probe", "errors"] == 5


def test_fail_fast_raises_and_saves_what_finished(tmp_path, probe):
    out = tmp_path / "r.csv"
    with pytest.raises(MappingError, match="probe asked to fail"):
        run_grid(["stencil2d:4x4"], ["torus:4x4"], ["probe", ("probe", {"fail": True})], out=out,
                 fail_fast=True, progress=False)
    assert load(out)["method"].tolist() == ["block", "probe"]
    with pytest.raises(MachineError, match="cannot allocate"):
        run_grid(["stencil2d:16x16"], ["torus:4x4"], ["probe"], fail_fast=True, progress=False)


def test_resume_skips_finished_rows_and_reruns_failed_ones(tmp_path, counted):
    out = tmp_path / "r.csv"
    first = run_grid(**GRID, out=out)
    assert len(counted) == len(first)
    counted.clear()
    again = run_grid(**GRID, out=out)
    assert counted == []
    pd.testing.assert_frame_equal(again, first, check_dtype=False)
    # a wider grid runs only the new seed; the file keeps both
    run_grid(**{**GRID, "seeds": [0, 1, 2]}, out=out)
    assert len(counted) == len(first) // 2
    assert len(load(out)) == len(first) * 3 // 2
    # a failed row is run again
    data = load(out)
    data.loc[3, "status"] = "error"
    save(data, out)
    counted.clear()
    run_grid(**GRID, out=out)
    assert len(counted) == 1
    counted.clear()
    run_grid(**GRID, out=out, resume=False)
    assert len(counted) == len(first)
    assert len(load(out)) == len(first)  # a fresh start overwrites the file


def test_resume_refuses_a_label_that_names_another_pattern(tmp_path):
    out = tmp_path / "r.csv"
    run_grid({"app": "stencil2d:4x4"}, ["torus:4x4"], ["block"], out=out, progress=False)
    with pytest.raises(ValueError, match="pattern label 'app' named a different pattern"):
        run_grid({"app": "stencil2d:4x4:9"}, ["torus:4x4"], ["block"], out=out, progress=False)
    with pytest.raises(ValueError, match="machine label 'torus:4x4' named a different machine"):
        run_grid({"app": "stencil2d:4x4"}, {"torus:4x4": "mesh:4x4"}, ["block"], out=out, progress=False)


def test_ctrl_c_keeps_and_saves_finished_rows_then_resumes(tmp_path, monkeypatch):
    out = tmp_path / "r.csv"
    real = grid_mod.run_mapper
    calls = []

    def interrupt_fifth(*args, **kwargs):
        calls.append(1)
        if len(calls) == 5 and not interrupted:
            interrupted.append(1)
            raise KeyboardInterrupt
        return real(*args, **kwargs)
    interrupted = []
    monkeypatch.setattr(grid_mod, "run_mapper", interrupt_fifth)
    with pytest.raises(GridInterrupted) as info:
        run_grid(**GRID, out=out)
    assert isinstance(info.value, KeyboardInterrupt)
    assert len(info.value.results) == 4 and info.value.saved_to == str(out)
    assert len(load(out)) == 4
    calls.clear()
    df = run_grid(**GRID, out=out)
    assert len(calls) == len(df) - 4 and (df["status"] == "ok").all()


def test_csv_round_trip_keeps_text_nan_and_inf(tmp_path):
    with pytest.warns(GridRunsFailed):
        df = run_grid({"1": "stencil2d:4x4", "NA": "stencil2d:0x1"}, ["torus:4x4"], ["block", "random"],
                      progress=False)
    df.loc[1, "hop_bytes_norm"] = math.inf
    path = tmp_path / "r.csv"
    save(df, path)
    back = load(path)
    pd.testing.assert_frame_equal(back, df, check_dtype=False)
    assert back["pattern"].tolist()[:1] == ["1"] and back["error"].iloc[0] == ""
    with pytest.raises(ValueError, match=r"\.csv, \.parquet or \.pq"):
        save(df, tmp_path / "r.xlsx")


def test_parquet_needs_pyarrow(tmp_path, monkeypatch):
    df = run_grid(["stencil2d:4x4"], ["torus:4x4"], ["block"], progress=False)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        with pytest.raises(MissingDependencyError, match="pyarrow"):
            save(df, tmp_path / "r.parquet")
        return
    save(df, tmp_path / "r.parquet")
    pd.testing.assert_frame_equal(load(tmp_path / "r.parquet"), df, check_dtype=False)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(MissingDependencyError, match="pyarrow"):
        run_grid(["stencil2d:4x4"], ["torus:4x4"], ["block"], out=tmp_path / "x.pq", progress=False)


def test_progress_falls_back_to_a_text_line_without_tqdm(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    run_grid(["stencil2d:4x4"], ["torus:4x4"], ["block", "random"], seeds=[0, 1, 2], progress=True)
    err = capsys.readouterr().err
    assert "grid: 6/6 runs (100%)" in err
    run_grid(["stencil2d:4x4"], ["torus:4x4"], ["block"], progress=False)
    assert capsys.readouterr().err == ""


def test_summarize_groups_and_aggregates():
    df = run_grid(**GRID)
    s = summarize(df, metrics=["hop_bytes_norm"], by=["method", "machine"], agg="max")
    assert s.loc[("block", "torus:4x4/4"), "hop_bytes_norm"] == 1.0
    rows = df[(df["method"] == "random") & (df["machine"] == "torus:4x4/4")]
    assert s.loc[("random", "torus:4x4/4"), "hop_bytes_norm"] == rows["hop_bytes_norm"].max()
    g = summarize(df, metrics=["hop_bytes_norm"]).loc["random", "hop_bytes_norm"]
    assert g == pytest.approx(np.exp(np.log(df.loc[df["method"] == "random", "hop_bytes_norm"]).mean()))
    with pytest.raises(ValueError, match="agg must be one of"):
        summarize(df, agg="sum")
    with pytest.raises(ValueError, match="no column 'x'"):
        summarize(df, metrics=["x"])


def _grid_file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_grid_files_json_and_yaml_with_relative_paths(tmp_path):
    tm.io.write(tm.generators.stencil_2d((4, 4)), str(tmp_path / "app.mtx"))
    grid = {"patterns": ["app.mtx", "stencil2d:4x4"], "machines": {"t": "torus:4x4"}, "methods": ["random"],
            "seeds": [0, 1], "out": "res.csv"}
    kwargs = read_grid(_grid_file(tmp_path, "g.json", json.dumps(grid)))
    assert kwargs["patterns"] == {"app.mtx": str(tmp_path / "app.mtx"), "stencil2d:4x4": "stencil2d:4x4"}
    assert kwargs["out"] == str(tmp_path / "res.csv")
    df = run_grid(**kwargs, progress=False)
    assert len(df) == 2 * 2 * 2 and (df["status"] == "ok").all()
    # the same pattern from a file and from a spec: same metrics
    a, b = (df[df["pattern"] == p].set_index(["method", "seed"])["hop_bytes"] for p in ("app.mtx", "stencil2d:4x4"))
    pd.testing.assert_series_equal(a, b)
    pytest.importorskip("yaml")
    yaml_grid = "patterns:\n  halo: stencil2d:4x4\nmachines: [torus:4x4]\nseeds: [0]\nmethods: [block]\n"
    assert read_grid(_grid_file(tmp_path, "g.yaml", yaml_grid))["patterns"] == {"halo": "stencil2d:4x4"}


def test_grid_file_errors(tmp_path, monkeypatch):
    with pytest.raises(FormatError, match="unknown key 'method'"):
        read_grid(_grid_file(tmp_path, "a.json", '{"patterns": [], "machines": [], "method": []}'))
    with pytest.raises(FormatError, match="needs 'machines'"):
        read_grid(_grid_file(tmp_path, "b.json", '{"patterns": ["stencil2d:4x4"]}'))
    with pytest.raises(FormatError, match=r"c\.json:2: not valid JSON"):
        read_grid(_grid_file(tmp_path, "c.json", '{"patterns": [],\n "machines": ]}'))
    with pytest.raises(FormatError, match="cannot read the grid file"):
        read_grid(tmp_path / "missing.json")
    monkeypatch.setitem(sys.modules, "yaml", None)
    with pytest.raises(MissingDependencyError, match=r"PyYAML.*topomap-hpc\[experiments\].*JSON"):
        read_grid(_grid_file(tmp_path, "d.yaml", "patterns: []\n"))


def test_cli_runs_a_grid_file_and_resumes(tmp_path, capsys, counted):
    path = _grid_file(tmp_path, "g.json", json.dumps({
        "patterns": {"halo": "stencil2d:8x8"}, "machines": ["torus:4x4/4"], "methods": ["block", "random"],
        "seeds": [0, 1], "out": "r.csv"}))
    assert main(["experiment", str(path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "hop_bytes_norm" in out and "random" in out and f"4 runs in {tmp_path / 'r.csv'}" in out
    counted.clear()
    assert main(["experiment", str(path), "--no-progress", "--json", "-o", str(tmp_path / "s.csv")]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["runs"] == 4 and [r["method"] for r in summary["summary"]] == ["block", "random"]
    assert len(counted) == 4 and os.path.exists(tmp_path / "s.csv")
    counted.clear()
    assert main(["experiment", str(path), "--no-progress"]) == 0
    assert counted == []


def test_cli_exit_status_for_failed_runs_bad_files_and_ctrl_c(tmp_path, capsys, monkeypatch):
    path = _grid_file(tmp_path, "g.json", json.dumps({"patterns": ["stencil2d:16x16", "stencil2d:4x4"],
                                                      "machines": ["torus:4x4"], "methods": ["block"]}))
    assert main(["experiment", str(path), "--no-progress"]) == 1
    assert "cannot allocate 256 PEs" in capsys.readouterr().err
    assert main(["experiment", str(tmp_path / "none.json")]) == 2
    assert "cannot read the grid file" in capsys.readouterr().err

    def interrupted(**kwargs):
        raise GridInterrupted(pd.DataFrame({"x": [1, 2]}), "r.csv")
    monkeypatch.setattr("topomap.cli.experiment_cmd.run_grid", interrupted)
    assert main(["experiment", str(path)]) == 130
    assert "interrupted after 2 runs; saved to r.csv" in capsys.readouterr().err
