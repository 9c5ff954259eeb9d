"""What a user gets without asking: default methods that skip what does not apply, capacity="auto",
launcher files for oversubscribed and given mappings, message counts, readable tables, warnings,
and a clear message when Python imports the source tree instead of the installed package."""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import topomap as tm
from topomap.cli import main
from topomap.compare import DEFAULT_METHODS, MethodsSkipped, compare_rows
from topomap.registry import auto_capacity

ROOT = Path(__file__).resolve().parent.parent


def cli(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


# ---------------------------------------------------------------- compare's default methods

@pytest.mark.parametrize("spec, skipped", [
    ("torus:8x8/16", {"hierarchy", "aphid"}),                 # no levels to follow on a torus
    ("fattree:k=8,levels=3/8", {"hilbert"}),                  # no coordinates on a fat tree
    ("hierarchy:16:8:8/1:10:100", {"hilbert"}),
])
def test_default_methods_skip_what_does_not_apply(spec, skipped):
    pat = tm.generators.stencil_2d((32, 32))
    alloc = tm.machine(spec).allocate(pat.n)
    rows, why = compare_rows(pat, alloc)
    assert set(why) == skipped
    assert [r["method"] for r in rows] == [m for m in DEFAULT_METHODS if m not in skipped]
    with pytest.warns(MethodsSkipped, match=sorted(skipped)[0]):
        df = tm.compare(pat, alloc)
    assert set(df.attrs["skipped"]) == skipped and len(df) == len(rows)


def test_named_methods_must_all_run():
    alloc = tm.machine("torus:4x4/4").allocate(64)
    with pytest.raises(tm.NotApplicable, match="needs a network with levels"):
        tm.compare(tm.generators.stencil_2d((8, 8)), alloc, ["block", "aphid"])


def test_not_applicable_is_a_mapping_error_for_each_refusing_method():
    pat = tm.generators.stencil_2d((4, 4))
    on_torus = tm.machine("torus:4x4").allocate(16)
    for method in ("aphid", "hierarchy"):
        with pytest.raises(tm.NotApplicable):
            tm.map(pat, on_torus, method=method)
    with pytest.raises(tm.NotApplicable, match="torus or mesh"):
        tm.map(pat, tm.machine("fattree:k=4,levels=2/2").allocate(16), method="hilbert")
    assert issubclass(tm.NotApplicable, tm.MappingError)


def test_cli_compare_lists_what_it_skipped(capsys):
    rc, out, err = cli(capsys, "compare", "stencil2d:32x32", "torus:8x8/16")
    assert rc == 0
    table = [ln.split()[0] for ln in out.splitlines()[2:]]
    assert table == [m for m in DEFAULT_METHODS if m not in ("hierarchy", "aphid")]
    assert "skipped hierarchy" in err and "skipped aphid" in err and "levels" in err
    rc, out, err = cli(capsys, "compare", "stencil2d:32x32", "fattree:k=8,levels=3/8")
    assert rc == 0 and "skipped hilbert" in err and "hierarchy" in out and "aphid" in out


# ---------------------------------------------------------------- capacity="auto"

def test_auto_capacity_is_the_smallest_that_fits_widened_by_imbalance():
    assert [auto_capacity(n, 256) for n in (1, 256, 257, 32768)] == [1, 1, 2, 128]
    assert auto_capacity(32768, 256, 0.03) == 131 and auto_capacity(256, 256, 0.03) == 1
    with pytest.raises(tm.MappingError, match="imbalance"):
        auto_capacity(10, 2, -0.5)


def test_map_with_capacity_auto():
    alloc = tm.machine("hierarchy:16:16/1:10").allocate(256)
    pat = tm.generators.stencil_2d((256, 128))                      # 32,768 processes on 256 PEs
    block = tm.map(pat, alloc, method="block", capacity="auto")
    assert block.capacity == 128 and np.bincount(block.pe_of).max() == 128
    hier = tm.map(pat, alloc, method="hierarchy", capacity="auto", imbalance=0.03)
    assert hier.capacity == 131 and np.bincount(hier.pe_of, minlength=256).max() <= 131
    assert tm.map(pat, alloc, method="hierarchy", capacity="auto", imbalance=0.0).capacity == 128
    with pytest.raises(tm.MappingError, match="capacity='auto' takes the smallest"):
        tm.map(pat, alloc, method="block")
    with pytest.raises(tm.MappingError, match="positive integer or 'auto'"):
        tm.map(pat, alloc, capacity="most")


def test_cli_capacity_auto(capsys):
    rc, out, _ = cli(capsys, "eval", "stencil2d:64x64", "torus:8x8/8", "--method", "cyclic", "--capacity", "auto",
                     "--json")
    assert rc == 0 and json.loads(out)["pairs"] == 4 * 64 * 63
    rc, out, _ = cli(capsys, "map", "stencil2d:64x64", "torus:8x8/8", "--capacity", "auto", "--json")
    assert rc == 0 and json.loads(out)["capacity"] == 8
    rc, _, err = cli(capsys, "eval", "stencil2d:64x64", "torus:8x8/8")
    assert rc == 2 and "--capacity auto" in err


# ---------------------------------------------------------------- launcher files

def test_launch_file_honours_capacity_and_a_given_mapping(capsys, tmp_path):
    rc, out, _ = cli(capsys, "launch-file", "rankfile", "stencil2d:4x4", "torus:2x2/4", "--capacity", "2")
    slots = [ln.split("=", 1)[1] for ln in out.splitlines()]
    assert rc == 0 and len(slots) == 16 and max(slots.count(s) for s in slots) == 2
    assert len(set(slots)) == 8                                       # just enough PEs: 16 ranks on 8
    mapping = tmp_path / "pe_of.txt"
    mapping.write_text("\n".join(str(pe) for pe in [0, 0, 1, 1, 5, 5, 6, 6]) + "\n")
    rc, out, _ = cli(capsys, "launch-file", "hostfile", "stencil2d:4x2", "torus:2x2/4", "--mapping", str(mapping))
    assert rc == 0 and out.split() == ["node0"] * 4 + ["node1"] * 4
    rc, out, _ = cli(capsys, "launch-file", "rankfile", "stencil2d:4x2", "torus:2x2/4", "--mapping", str(mapping))
    assert rc == 0 and out.splitlines()[4] == "rank 4=node1 slot=1"
    rc, _, err = cli(capsys, "launch-file", "rankfile", "stencil2d:4x2", "torus:2x2/4", "--mapping", str(mapping),
                     "--capacity", "1")
    assert rc == 2 and "more than capacity 1" in err
    rc, _, err = cli(capsys, "launch-file", "rankfile", "stencil2d:4x4", "torus:2x2/4", "--mapping", str(mapping))
    assert rc == 2 and "maps 8 processes but the pattern has 16" in err


# ---------------------------------------------------------------- message counts

def test_metrics_count_messages_not_pairs_when_the_pattern_counts_them(capsys, tmp_path):
    # 0 -> 1 carries 40 messages, 1 -> 0 carries 2: two pairs, 42 messages, 2 of them cross nodes
    pat = tm.Pattern.from_edges([0, 1], [1, 0], [400.0, 8.0], msgs=[40, 2], n=2)
    m = tm.machine("torus:2/1")
    met = tm.evaluate(pat, m, [0, 1])
    assert (met.pairs, met.messages, met.edge_cut_messages) == (2, 42, 42)
    two = tm.machine("torus:2/2")
    assert tm.evaluate(pat, two, [0, 1]).edge_cut_messages == 0        # both on node 0
    ev = tm.Evaluator(pat, two, [0, 1])
    assert ev.try_move(1, 2).edge_cut_messages == 42 and ev.metrics().messages == 42
    plain = tm.Pattern.from_edges([0, 1], [1, 0], [400.0, 8.0], n=2)   # no counts: one per pair
    assert tm.evaluate(plain, m, [0, 1]).messages == 2
    path = tmp_path / "app.csv"
    path.write_text("src,dst,bytes,msgs\n0,1,400,40\n1,0,8,2\n")
    rc, out, _ = cli(capsys, "eval", str(path), "torus:2/1", "--json")
    got = json.loads(out)
    assert rc == 0 and (got["pairs"], got["messages"], got["edge_cut_messages"]) == (2, 42, 42)


# ---------------------------------------------------------------- tables, help, warnings, version

def test_methods_prints_as_a_table():
    text = repr(tm.methods())
    lines = text.splitlines()
    assert lines[0].split() == ["method", "options", "summary"]
    rows = {ln.split()[0] for ln in lines[1:] if ln and not ln.startswith(" ")}
    assert rows == set(tm.methods())
    assert "<table>" in tm.methods()._repr_html_() and "hierarchy" in tm.methods()._repr_html_()
    assert isinstance(tm.methods()["ptram"], tm.registry.MapperInfo)     # still a dict of MapperInfo


def test_demo_help_states_the_allocation_it_uses(capsys):
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    out = capsys.readouterr().out
    assert "default fragmented" in " ".join(out.split())
    rc, out, _ = cli(capsys, "demo", "--pattern", "stencil2d:8x8", "--methods", "block")
    assert rc == 0 and "policy='fragmented'" in out


def test_run_grid_warns_when_runs_fail():
    from topomap.experiments import GridRunsFailed, run_grid
    with pytest.warns(GridRunsFailed, match="1 of 2 runs failed.*cannot allocate 256 PEs"):
        df = run_grid(["stencil2d:16x16"], ["torus:4x4", "torus:16x16"], ["block"], progress=False)
    assert df["status"].tolist() == ["error", "ok"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_grid(["stencil2d:4x4"], ["torus:4x4"], ["block"], progress=False)


def test_version_is_the_installed_distribution_s():
    assert tm.__version__ == importlib.metadata.version("topomap-hpc")


def test_importing_the_source_tree_says_what_to_do(tmp_path):
    tree = tmp_path / "checkout"
    shutil.copytree(ROOT / "topomap", tree / "topomap",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    (tree / "setup.py").write_text("")
    (tree / "csrc").mkdir()
    # Python started in the checkout, as after a non-editable `pip install .` (no editable finder)
    code = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'Editable' not in getattr(f, '__name__', '')]"
            "\nimport topomap")
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: topomap is being imported from its source tree")
    assert "Start Python outside" in last and "pip install -e ." in last and "circular" not in last
