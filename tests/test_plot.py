"""Plot smoke tests on the Agg backend, asserting on the artists each function returns."""

import math
import sys

import numpy as np
import pytest

import topomap as tm
from topomap.errors import MachineError, MappingError, MissingDependencyError

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402

import topomap.plot as tp  # noqa: E402
from topomap.experiments import run_grid  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _colorbar_range(ax):
    cbar = ax.images[0].colorbar if ax.images else ax.collections[0].colorbar
    return cbar.mappable.norm.vmin, cbar.mappable.norm.vmax


# ---------------------------------------------------------------- matrices
def test_comm_matrix_log_scale_spans_the_message_sizes_and_marks_nodes():
    pat = tm.generators.stencil_2d((8, 8), weights=(5, 2))
    alloc = tm.machine("torus:4x4/4").allocate(64, policy="random", seed=3)
    mp = tm.map(pat, alloc, method="random", seed=1)
    ax = tp.comm_matrix(pat, mp, alloc)
    norm = ax.images[0].norm
    assert type(norm).__name__ == "LogNorm"
    assert _colorbar_range(ax) == (pat.bytes.min(), pat.bytes.max()) == (2.0, 5.0)
    hlines, vlines = ax.collections[:2]
    assert len(hlines.get_segments()) == len(vlines.get_segments()) == 16 - 1  # 16 nodes
    assert ax.get_title() == "random"
    # the image is the pattern in node order: every byte is there once
    assert float(ax.images[0].get_array().sum()) == pytest.approx(pat.total_bytes)


def test_comm_matrix_node_blocks_hold_the_intra_node_traffic():
    pat = tm.generators.stencil_2d((8, 8))
    alloc = tm.machine("torus:4x4/4").allocate(64)
    mp = tm.map(pat, alloc, method="cyclic")
    image = tp.comm_matrix(pat, mp, alloc, colorbar=False).images[0].get_array().filled(0)
    inside = sum(image[i:i + 4, i:i + 4].sum() for i in range(0, 64, 4))
    met = tm.evaluate(pat, alloc, mp)
    assert inside == pytest.approx(met.total_bytes - met.edge_cut)


def test_comm_matrix_without_mapping_and_coarsened():
    pat = tm.generators.random_sparse(300, 0.05, seed=2)
    ax = tp.comm_matrix(pat, max_size=100)
    image = ax.images[0].get_array()
    assert image.shape == (100, 100)
    assert float(image.sum()) == pytest.approx(pat.total_bytes)
    assert not ax.collections and ax.get_title() == "rank order"
    with pytest.raises(MappingError, match="needs the allocation"):
        tp.comm_matrix(pat, np.arange(300))
    with pytest.raises(MappingError, match="has 3 entries but the pattern has 300"):
        tp.comm_matrix(pat, [0, 1, 2], tm.machine("torus:20x20"))


def test_comm_matrix_pair_shares_one_colour_scale():
    pat = tm.generators.stencil_2d((8, 8), weights=(3, 1))
    alloc = tm.machine("torus:4x4/4").allocate(64)
    left, right = tp.comm_matrix_pair(pat, alloc, tm.map(pat, alloc, method="random"))
    assert (left.get_title(), right.get_title()) == ("block", "random")
    assert left.images[0].norm is right.images[0].norm
    assert (left.images[0].norm.vmin, left.images[0].norm.vmax) == (1.0, 3.0)
    assert len(left.figure.axes) == 3  # two panels and one colour bar
    # block order on a contiguous allocation is rank order: the left image is the plain matrix
    dense = np.zeros((64, 64))
    rows = np.repeat(np.arange(64), np.diff(pat.indptr))
    dense[rows, pat.indices] = pat.bytes
    np.testing.assert_array_equal(left.images[0].get_array().filled(0), dense)
    with pytest.raises(ValueError, match="two axes"):
        tp.comm_matrix_pair(pat, alloc, tm.map(pat, alloc, "random"), ax=[left])


# ---------------------------------------------------------------- machines
def _loaded(spec, pattern_spec, method="random"):
    m = tm.machine(spec)
    pat = tm.generators.from_spec(pattern_spec)
    alloc = m.allocate(pat.n, policy="random", seed=2)
    return m, alloc, tm.evaluate(pat, alloc, tm.map(pat, alloc, method=method, seed=5), link_load=True)


def test_torus_grid_colours_links_by_congestion():
    m, alloc, met = _loaded("torus:4x4/4", "stencil2d:8x8")
    ax = tp.machine_links(m, met, nodes=alloc.nodes())
    lines = ax.collections[0]
    # 64 directed links; the 16 wrap-around links are drawn as two stubs each
    assert len(lines.get_segments()) == 64 + 16
    assert lines.get_clim() == (0.0, met.max_congestion)
    assert _colorbar_range(ax) == (0.0, met.max_congestion)
    assert max(lines.get_array()) == met.max_congestion
    nodes = ax.collections[1]
    assert len(nodes.get_offsets()) == 16


def test_mesh_has_no_wrap_stubs_and_respects_capacities():
    m = tm.machine("mesh:3x2")
    m.set_capacities(2.0)
    pat = tm.Pattern.from_edges([0], [1], [8.0])
    met = tm.evaluate(pat, m, [0, 2], link_load=True)
    ax = tp.machine_links(m, met, colorbar=False)
    segs = ax.collections[0].get_segments()
    assert len(segs) == int(m.links_exist().sum()) == 14
    assert ax.collections[0].get_clim() == (0.0, 4.0)  # 8 bytes over capacity 2


def test_fat_tree_and_hierarchy_are_drawn_by_levels():
    m, _, met = _loaded("xgft:m=4x4,w=1x2/2", "stencil2d:4x8")
    ax = tp.machine_links(m, met)
    assert len(ax.collections[0].get_segments()) == len(m.links()["link"])
    heights = sorted(set(np.round(np.concatenate([c.get_offsets()[:, 1] for c in ax.collections[1:3]]), 6)))
    assert len(heights) == 3  # nodes, leaf switches, spines
    assert ax.collections[0].get_clim()[1] == met.max_congestion
    m = tm.machine("hierarchy:4:4:4/1:10:100")
    ax = tp.machine_links(m)
    assert len(ax.collections[0].get_segments()) == len(m.links()["link"])
    assert ax.collections[0].get_array() is None  # no loads: plain grey links


def test_dragonfly_groups_and_circle_layouts():
    m, _, met = _loaded("dragonfly:g=5,a=4,h=1,p=2", "stencil2d:8x5")
    ax = tp.machine_links(m, met)
    assert len(ax.collections[0].get_segments()) == len(m.links()["link"])
    assert ax.collections[0].get_clim() == (0.0, met.max_congestion)
    m, _, met = _loaded("hypercube:4/2", "stencil2d:4x8")
    ax = tp.machine_links(m, met, layout="auto")
    assert len(ax.collections[0].get_segments()) == 4 * 16


def test_machine_links_errors():
    with pytest.raises(MachineError, match="no network links"):
        tp.machine_links("tree:core:4")
    with pytest.raises(MachineError, match="1 or 2 dimensions"):
        tp.machine_links("torus:2x2x2", layout="grid")
    with pytest.raises(MachineError, match="unknown layout 'spring'"):
        tp.machine_links("torus:2x2", layout="spring")
    with pytest.raises(MachineError, match="'groups' is for dragonflies"):
        tp.machine_links("torus:2x2", layout="groups")
    pat = tm.generators.stencil_2d((2, 2))
    with pytest.raises(MachineError, match="link_load=True"):
        tp.machine_links("torus:2x2", tm.evaluate(pat, tm.machine("torus:2x2"), np.arange(4)))
    with pytest.raises(MachineError, match="one value per link id"):
        tp.machine_links("torus:2x2", [1.0, 2.0])
    with pytest.raises(MachineError, match="node 9 is not a node"):
        tp.machine_links("torus:2x2", nodes=[9])


# ---------------------------------------------------------------- results
@pytest.fixture(scope="module")
def results():
    return run_grid({f"s{k}": f"stencil2d:{k}x{k}" for k in (4, 8, 16)}, ["torus:8x8/4"], ["block", "cyclic", "random"],
                    seeds=[0, 1], progress=False)


def test_metric_bars_one_bar_per_metric_and_method(results):
    ax = tp.metric_bars(results)
    assert len(ax.patches) == 4 * 3
    assert [t.get_text() for t in ax.get_xticklabels()] == ["HB", "MC", "NZCA", "NZCV"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["block", "cyclic", "random"]
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    block = [p.get_height() for p in bars[0]]
    assert block == [1.0, 1.0, 1.0, 1.0]
    rnd = [p.get_height() for p in bars[2]]
    expect = np.exp(np.log(results.loc[results["method"] == "random", "hop_bytes_norm"]).mean())
    assert rnd[0] == pytest.approx(expect)


def test_metric_bars_raw_values_selected_methods_and_infinite_ratios():
    alloc = tm.machine("torus:4x4/4").allocate(64)
    rows = tm.compare(tm.generators.stencil_2d((8, 8)), alloc, ["block", "random"])
    ax = tp.metric_bars(rows, metrics=["hop_bytes", "edge_cut"], methods=["random"], normalized=False)
    assert len(ax.patches) == 2
    assert ax.patches[0].get_height() == pytest.approx(rows.loc["random", "hop_bytes"])
    records = rows.to_dict("records")  # compare's form without pandas
    records[1]["nz_congestion_var_norm"] = math.inf  # the baseline had no variance, random has some
    ax = tp.metric_bars(records, metrics=["hop_bytes", "nz_congestion_var"])
    assert [t.get_text() for t in ax.texts] == ["inf"]
    assert math.isnan(ax.patches[3].get_height()) and ax.patches[2].get_height() > 1
    with pytest.raises(ValueError, match="no successful run of method 'ptramx'"):
        tp.metric_bars(rows, methods=["ptramx"])
    with pytest.raises(ValueError, match="no column 'hop_bytes_norm'"):
        tp.metric_bars(rows.drop(columns=["hop_bytes_norm"]))


def test_improvement_lines_vs_process_count_and_message_size(results):
    ax = tp.improvement_lines(results, x="n", metric="hop_bytes")
    assert len(ax.lines) == 3 + 1  # methods and the baseline
    assert ax.lines[0].get_xdata().tolist() == [16.0, 64.0, 256.0]
    assert ax.lines[0].get_ydata().tolist() == [1.0, 1.0, 1.0]
    assert ax.get_xscale() == "log"
    ax = tp.improvement_lines(results, x="message_bytes", metric="max_congestion", percent=True, logx=False)
    assert ax.lines[0].get_ydata().tolist() == [0.0]  # all stencils send 1-byte messages
    with pytest.raises(ValueError, match="no column 'fanout'"):
        tp.improvement_lines(results, x="fanout")


def test_mapping_time_log_log(results):
    ax = tp.mapping_time(results, reference=(1, 2))
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert len(ax.lines) == 3 + 2
    rnd = results[results["method"] == "random"]
    assert ax.lines[2].get_ydata().tolist() == [float(rnd.loc[rnd["n"] == n, "seconds"].median())
                                                for n in (16, 64, 256)]
    assert len(tp.mapping_time(results, methods=["block"], reference=()).lines) == 1


def test_failed_runs_are_left_out(results):
    broken = results.copy()
    broken.loc[broken["method"] == "cyclic", "status"] = "error"
    assert len(tp.metric_bars(broken).patches) == 4 * 2


def test_missing_matplotlib_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(MissingDependencyError, match=r"topomap-hpc\[plot\]"):
        tp.comm_matrix(tm.generators.stencil_2d((2, 2)))
    with pytest.raises(MissingDependencyError, match=r"topomap-hpc\[plot\]"):
        tp.machine_links("torus:2x2")
