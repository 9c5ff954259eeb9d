"""GPU nodes: links with bandwidths, routes, and the intra-node link loads (topomap.node.gpu)."""

import numpy as np
import pytest

import topomap as tm
from topomap.errors import MachineError
from topomap.node.gpu import GpuNode, Link, node_link_loads, nvlink, pcie


def two_socket_four_gpu() -> GpuNode:
    """cpu0 - cpu1 over QPI (20 GB/s); each package a PCIe switch (16 GB/s up) with two GPUs (16 GB/s)."""
    return GpuNode.build([2, 2], [2, 2], switch_fanout=2, root_link=16.0, gpu_link=16.0, qpi=20.0, nic_link=8.0)


def loads_by_name(node, res, k=0):
    return {node.channel_name(c): res.load[k, c] for c in range(node.nchannels) if res.load[k, c]}


def test_pcie_and_nvlink_bandwidths():
    assert pcie(3, 16) == 15.76 and pcie(2, 16) == 8.0 and pcie(5, 16) == 63.008
    assert nvlink(4, 18) == 450.0
    with pytest.raises(MachineError, match="generation 7"):
        pcie(7, 16)
    with pytest.raises(MachineError, match="x3"):
        pcie(3, 3)


def test_routes_follow_the_tree():
    node = two_socket_four_gpu()
    names = lambda a, b: [node.channel_name(c) for c in node.route(a, b)]  # noqa: E731
    g = node.gpu_endpoint
    assert names(g(0), g(1)) == ["gpu0->sw0", "sw0->gpu1"]
    assert names(g(0), g(3)) == ["gpu0->sw0", "sw0->cpu0", "cpu0->cpu1", "cpu1->sw1", "sw1->gpu3"]
    assert names(0, 1) == [] and names(0, 2) == ["cpu0->cpu1"]
    assert names(g(2), node.nic_endpoint) == ["gpu2->sw1", "sw1->cpu1", "cpu1->cpu0", "cpu0->nic"]


def test_nvlink_is_preferred_between_peers_but_not_towards_the_host():
    node = GpuNode(["cpu0", "gpu0", "gpu1"], ["cpu", "gpu", "gpu"],
                   [Link(0, 1, 16.0, "pcie"), Link(0, 2, 16.0, "pcie"), Link(1, 2, nvlink(2, 2), "nvlink2x2")],
                   [0])
    assert [node.channel_name(c) for c in node.route(1, 2)] == ["gpu0->gpu1"]
    assert [node.channel_name(c) for c in node.route(0, 2)] == ["cpu0->gpu1"]


def test_loads_equal_the_hand_computation():
    node = two_socket_four_gpu()
    gb = 1e9
    gpu = tm.Pattern.from_edges([0, 0, 3], [1, 2, 0], [100 * gb, 50 * gb, 30 * gb], n=4)
    cpu = tm.Pattern.from_edges([0, 1], [2, 0], [40 * gb, 10 * gb], n=4)
    res = node_link_loads(node, 1, [0] * 4, cpu, [0, 1, 2, 3], gpu, [0, 1, 2, 3])
    # worked by hand: each message's channels along the tree (the CPU 1 -> 0 message stays in cpu0)
    expect = {"gpu0->sw0": 150, "sw0->gpu1": 100, "sw0->cpu0": 50, "cpu0->cpu1": 90, "cpu1->sw1": 50,
              "sw1->gpu2": 50, "gpu3->sw1": 30, "sw1->cpu1": 30, "cpu1->cpu0": 30, "cpu0->sw0": 30,
              "sw0->gpu0": 30}
    assert loads_by_name(node, res) == {k: v * gb for k, v in expect.items()}
    assert res.max_congestion == 150 / 16 and res.nz_links == 11
    cong = [150 / 16, 100 / 16, 50 / 16, 90 / 20, 50 / 16, 50 / 16, 30 / 16, 30 / 16, 30 / 20, 30 / 16, 30 / 16]
    assert res.nz_congestion_avg == pytest.approx(np.mean(cong))
    assert res.nz_congestion_var == pytest.approx(np.var(cong))


def test_messages_between_nodes_load_the_path_to_the_adapter_on_both_sides():
    node = two_socket_four_gpu()
    gpu = tm.Pattern.from_edges([0], [1], [8e9])
    res = node_link_loads(node, 2, [0, 1], gpu_pattern=gpu, gpu_ep=[3, 1])
    assert loads_by_name(node, res, 0) == {"gpu3->sw1": 8e9, "sw1->cpu1": 8e9, "cpu1->cpu0": 8e9, "cpu0->nic": 8e9}
    assert loads_by_name(node, res, 1) == {"nic->cpu0": 8e9, "cpu0->sw0": 8e9, "sw0->gpu1": 8e9}
    assert res.max_congestion == 1.0


def test_loads_match_a_python_sum_over_routes():
    rng = np.random.default_rng(3)
    node = two_socket_four_gpu()
    for _ in range(20):
        n, nnodes = 12, 3
        dense = rng.integers(0, 5, (n, n)) * (rng.random((n, n)) < 0.4)
        np.fill_diagonal(dense, 0)
        pat = tm.Pattern.from_dense(dense.astype(float)) if dense.any() else tm.Pattern.from_edges([0], [1], [1.0], n=n)
        node_of = rng.integers(0, nnodes, n)
        gep = rng.integers(0, node.ngpus, n)
        res = node_link_loads(node, nnodes, node_of, gpu_pattern=pat, gpu_ep=gep)
        want = np.zeros((nnodes, node.nchannels))
        d = pat.to_dense()
        for p, q in zip(*np.nonzero(d)):
            a, b = node.gpu_endpoint(gep[p]), node.gpu_endpoint(gep[q])
            if node_of[p] == node_of[q]:
                want[node_of[p], node.route(a, b)] += d[p, q]
            else:
                want[node_of[p], node.route(a, node.nic_endpoint)] += d[p, q]
                want[node_of[q], node.route(node.nic_endpoint, b)] += d[p, q]
        np.testing.assert_allclose(res.load, want)


def test_bad_nodes_and_arguments_are_refused():
    with pytest.raises(MachineError, match="not connected"):
        GpuNode(["cpu0", "gpu0"], ["cpu", "gpu"], [], [0])
    with pytest.raises(MachineError, match="bandwidth"):
        GpuNode(["cpu0", "gpu0"], ["cpu", "gpu"], [Link(0, 1, 0.0, "pcie")], [0])
    with pytest.raises(MachineError, match="core 0 is on vertex 1"):
        GpuNode(["cpu0", "gpu0"], ["cpu", "gpu"], [Link(0, 1, 1.0, "pcie")], [1])
    with pytest.raises(MachineError, match="kind 'tpu'"):
        GpuNode(["cpu0", "x"], ["cpu", "tpu"], [Link(0, 1, 1.0, "pcie")], [0])
    node = two_socket_four_gpu()
    pat = tm.Pattern.from_edges([0], [1], [1.0])
    with pytest.raises(MachineError, match="local GPU ids"):
        node_link_loads(node, 1, [0, 0], gpu_pattern=pat, gpu_ep=[0, 4])
    with pytest.raises(MachineError, match="local core"):
        node_link_loads(node, 1, [0, 0], cpu_pattern=pat)


def test_json_round_trip_and_cpu_tree(tmp_path):
    node = two_socket_four_gpu()
    path = tmp_path / "n.json"
    import json
    path.write_text(json.dumps(node.to_dict()))
    assert GpuNode.read_json(path) == node
    tree = node.cpu_tree()
    assert tree.npes == 4 and tree.lca_level(0, 1) == 1 and tree.lca_level(0, 2) == 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"vertices": [\n  {"name": "cpu0"\n')
    with pytest.raises(MachineError, match=r"bad.json:3"):
        GpuNode.read_json(bad)
