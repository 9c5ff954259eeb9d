"""GPU nodes: links with bandwidths, routes, and the intra-node link loads (topomap.node.gpu)."""

import json

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
    path.write_text(json.dumps(node.to_dict()))
    assert GpuNode.read_json(path) == node
    tree = node.cpu_tree()
    assert tree.npes == 4 and tree.lca_level(0, 1) == 1 and tree.lca_level(0, 2) == 2
    bad = tmp_path / "bad.json"
    bad.write_text('{"vertices": [\n  {"name": "cpu0"\n')
    with pytest.raises(MachineError, match=r"bad.json:3"):
        GpuNode.read_json(bad)


# ---------------------------------------------------------------- readers, presets, spec, discovery
import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import types  # noqa: E402

from topomap.node.gpu_discover import discover_gpu_node, nvml_gpu_node  # noqa: E402
from topomap.node.gpu_hwloc import read_hwloc_gpu  # noqa: E402
from topomap.node.gpu_nccl import read_nccl_xml  # noqa: E402
from topomap.node.gpu_presets import gpu_node, read_gpu_file  # noqa: E402
from topomap.node.gpu_smi import read_smi_xml, read_topo_matrix  # noqa: E402

REAL = "/work/shared/data/gpu-node"
DATA = os.path.join(os.path.dirname(__file__), "data", "gpu")
needs_real = pytest.mark.skipif(not os.path.isdir(REAL), reason=f"{REAL} (the real GPU node's files) is absent")


def route_names(node, a, b):
    return [node.channel_name(c) for c in node.route(a, b)]


@needs_real
def test_the_real_node_files_all_give_one_h100_on_pcie5_x16():
    for name, reader in [("lstopo.xml", read_hwloc_gpu), ("lstopo-whole-io.xml", read_hwloc_gpu),
                         ("nccl-topo.xml", read_nccl_xml), ("nvidia-smi-q.xml", read_smi_xml)]:
        node = reader(os.path.join(REAL, name))
        assert node.ngpus == 1 and node.kinds.count("cpu") == 1, name
        gpu_link = next(ln for ln in node.links if node.kinds[ln.b] == "gpu" or node.kinds[ln.a] == "gpu")
        assert gpu_link.bandwidth == pytest.approx(63.0, rel=1e-3), name  # PCIe 5.0 x16
        assert read_gpu_file(os.path.join(REAL, name)) == node
    assert read_hwloc_gpu(os.path.join(REAL, "lstopo.xml")).ncores == 16
    for name in ("nvidia-smi-topo-m.txt", "nvidia-smi-topo-mp.txt"):  # ANSI codes in the header row
        node = read_topo_matrix(os.path.join(REAL, name))
        assert (node.ngpus, node.ncores, node.names) == (1, 16, ("cpu0", "gpu0"))


def test_eight_gpu_topo_matrix_rebuilds_switches_sockets_and_nvlinks():
    node = read_topo_matrix(os.path.join(DATA, "topo-8gpu.txt"))
    assert (node.ngpus, node.ncores, node.kinds.count("cpu"), node.kinds.count("switch")) == (8, 48, 2, 6)
    g = node.gpu_endpoint
    assert route_names(node, g(0), g(2)) == ["gpu0->sw1", "sw1->gpu2"]  # PIX: one switch
    assert route_names(node, g(1), g(3)) == ["gpu1->sw2", "sw2->gpu3"]
    # PXB between 1 and 2, but NVLink to 0 and its PIX switch is faster than up and down the tree
    assert route_names(node, g(1), g(2)) == ["gpu1->gpu0", "gpu0->sw1", "sw1->gpu2"]
    assert route_names(node, g(2), g(3)) == ["gpu2->gpu3"]  # NV4
    assert route_names(node, g(0), g(4))[3:5] == ["cpu0->cpu1", "cpu1->sw3"]  # SYS
    assert route_names(node, g(0), node.nic_endpoint) == ["gpu0->sw1", "sw1->sw0", "sw0->cpu0", "cpu0->nic"]
    nv = [ln for ln in node.links if ln.kind.startswith("nvlink")]
    assert len(nv) == 4 and all(ln.bandwidth == 100.0 for ln in nv)


def test_nccl_xml_with_nvlinks_and_an_nvswitch(tmp_path):
    node = read_nccl_xml(os.path.join(DATA, "nccl-4gpu-nvlink.xml"))
    assert (node.ngpus, node.ncores) == (4, 48)
    g = node.gpu_endpoint
    assert route_names(node, g(0), g(1)) == ["gpu0->gpu1"] and route_names(node, g(1), g(3)) == ["gpu1->gpu3"]
    assert route_names(node, g(0), g(3)) == ["gpu0->gpu1", "gpu1->gpu3"]  # 300 then 100 GB/s beats PCIe+QPI
    assert route_names(node, g(0), node.nic_endpoint) == ["gpu0->sw0", "sw0->nic"]
    text = open(os.path.join(DATA, "nccl-4gpu-nvlink.xml")).read()
    sw = tmp_path / "sw.xml"
    sw.write_text(text.replace('tclass="0x030200"/>', 'tclass="0x068000"/>'))
    hub = read_nccl_xml(sw)
    assert hub.kinds.count("nvswitch") == 1 and route_names(hub, g(0), g(3)) == ["gpu0->nvswitch", "nvswitch->gpu3"]


def test_hwloc_xml_with_a_pcie_switch():
    node = read_hwloc_gpu(os.path.join(DATA, "hwloc-2gpu.xml"))
    assert (node.ngpus, node.ncores) == (2, 4)
    assert route_names(node, node.gpu_endpoint(1), node.nic_endpoint) == ["gpu1->sw0", "sw0->cpu0", "cpu0->nic"]
    assert [ln.bandwidth for ln in node.links if node.kinds[ln.b] == "nic"] == [7.876923]


@pytest.mark.parametrize("name, old, new, line, what", [
    ("topo-8gpu.txt", "GPU2\tPIX\tPXB\t X \tNV4", "GPU2\tPIX\tPXB\t X \tNVX", 4, "'NVX'"),
    ("topo-8gpu.txt", "\nGPU5\t", "\nGPU9\t", 7, "GPU9"),
    ("nccl-4gpu-nvlink.xml", 'link_speed="16.0 GT/s PCIe" link_width="16">\n        <gpu dev="1"',
     'link_speed="17 GT/s PCIe" link_width="16">\n        <gpu dev="1"', 12, "link_speed"),
    ("nccl-4gpu-nvlink.xml", 'count="4" tclass="0x030200"/>\n        </gpu>\n      </pci>\n    </pci>\n  </cpu>',
     'count="4" tclass="0x030200">\n        </gpu>\n      </pci>\n    </pci>\n  </cpu>', 37, "malformed XML"),
    ("hwloc-2gpu.xml", 'pci_link_speed="7.876923"', 'pci_link_speed="fast"', 23, "'fast'"),
])
def test_malformed_files_name_file_and_line(tmp_path, name, old, new, line, what):
    text = open(os.path.join(DATA, name)).read()
    assert text.count(old) == 1
    bad = tmp_path / name
    bad.write_text(text.replace(old, new))
    with pytest.raises(MachineError, match=f"{bad}:{line}: .*{what}"):
        read_gpu_file(bad)


def test_presets():
    a, b, d = gpu_node("clusterA"), gpu_node("clusterB"), gpu_node("DGX")
    assert (a.ngpus, a.ncores, b.ngpus, b.ncores, d.ngpus, d.ncores) == (16, 24, 8, 20, 8, 112)
    # A: GPUs of one K80 board share its switch; across boards the path climbs the PCIe tree
    assert len(a.route(a.gpu_endpoint(0), a.gpu_endpoint(1))) == 2
    assert len(a.route(a.gpu_endpoint(0), a.gpu_endpoint(7))) == 6
    assert len(a.route(a.gpu_endpoint(0), a.gpu_endpoint(8))) == 9
    assert {ln.bandwidth for ln in b.links if b.kinds[ln.b] == "gpu"} == {8.0}  # K20: PCIe 2.0 x16
    assert len(d.route(d.gpu_endpoint(0), d.gpu_endpoint(7))) == 2
    with pytest.raises(MachineError, match="neither a preset"):
        gpu_node("clusterZ")


def test_gpu_nodes_compose_with_network_kinds_and_keep_every_network_metric():
    pat = tm.generators.stencil_2d((16, 14))
    for net in ("fattree:k=4,levels=2", "torus:4x4", "hypercube:4"):
        gpu = tm.machine(f"{net}/gpu:dgx")
        plain = tm.machine(f"{net}/pack:2 core:56")
        assert gpu.node.gpu.ngpus == 8 and gpu.npes == plain.npes == 16 * 112
        pe = np.random.default_rng(1).permutation(gpu.npes)[:pat.n]
        assert tm.evaluate(pat, gpu, pe).to_dict() == tm.evaluate(pat, plain, pe).to_dict()
    single = tm.machine(f"gpu:{os.path.join(DATA, 'topo-8gpu.txt')}")
    assert single.nnodes == 1 and single.node.gpu.ngpus == 8


class FakeNVMLError(Exception):
    pass


def fake_pynvml():
    """An NVML stand-in for the 2-socket node of topo-8gpu.txt (GPUs only): 0-2 PIX, 0-3/1-2 PXB,
    NV4 pairs 0-1 and 2-3 (4 active links each), SYS across; PCIe 4.0 x16."""
    topo = read_topo_matrix(os.path.join(DATA, "topo-8gpu.txt"))
    rank = {"PIX": 10, "PXB": 20, "SYS": 50}
    rel = {(0, 2): "PIX", (1, 3): "PIX", (0, 3): "PXB", (1, 2): "PXB", (0, 1): "PXB", (2, 3): "PXB"}
    pairs = {(0, 1), (2, 3)}
    bus = [f"00000000:{0x10 + i:02x}:00.0" for i in range(8)]

    def level(a, b):
        if a // 4 != b // 4:
            return rank["SYS"]
        x, y = sorted((a % 4, b % 4))
        return rank[rel[x, y]]

    def remote(h, link):
        partner = h ^ 1 if (h % 4, h % 4 ^ 1) in pairs or (h % 4 ^ 1, h % 4) in pairs else None
        if link >= 4 or partner is None:
            raise FakeNVMLError("not supported")
        return types.SimpleNamespace(busId=bus[(h // 4) * 4 + (h % 4 ^ 1)].encode())

    nvml = types.SimpleNamespace(
        NVMLError=FakeNVMLError, NVML_NVLINK_MAX_LINKS=6, nvmlInit=lambda: None, nvmlShutdown=lambda: None,
        nvmlDeviceGetCount=lambda: 8, nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetPciInfo=lambda h: types.SimpleNamespace(busId=bus[h].encode()),
        nvmlDeviceGetCurrPcieLinkGeneration=lambda h: 4, nvmlDeviceGetCurrPcieLinkWidth=lambda h: 16,
        nvmlDeviceGetCpuAffinity=lambda h, n: [0xFFFFFF if h < 4 else 0xFFFFFF000000],
        nvmlDeviceGetTopologyCommonAncestor=level,
        nvmlDeviceGetNvLinkState=lambda h, link: 1, nvmlDeviceGetNvLinkRemotePciInfo=remote)
    return nvml, topo


def test_nvml_discovery_on_a_mock_builds_the_same_tree_as_topo_m():
    nvml, topo = fake_pynvml()
    node = nvml_gpu_node(nvml)
    assert (node.ngpus, node.ncores) == (8, 48)
    for a in range(8):
        for b in range(8):
            assert route_names(node, node.gpu_endpoint(a), node.gpu_endpoint(b)) == \
                route_names(topo, topo.gpu_endpoint(a), topo.gpu_endpoint(b))
    assert {ln.bandwidth for ln in node.links if ln.kind == "pcie"} == {pcie(4, 16)}


def test_discovery_falls_back_to_nvidia_smi(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text(f"#!/bin/sh\ncat '{os.path.join(DATA, 'topo-8gpu.txt')}'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setitem(__import__("sys").modules, "pynvml", None)  # import fails
    node = discover_gpu_node()
    assert node == read_topo_matrix(os.path.join(DATA, "topo-8gpu.txt"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(MachineError, match="pynvml is not installed.*nvidia-smi is not on PATH"):
        discover_gpu_node()


def _gpu_present() -> bool:
    smi = shutil.which("nvidia-smi")
    return bool(smi) and subprocess.run([smi, "-L"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _gpu_present(), reason="no NVIDIA GPU on this machine (nvidia-smi absent or failing)")
def test_discovery_on_the_real_gpu():
    node = discover_gpu_node()
    listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    assert node.ngpus == listed.count("GPU ") and node.ncores >= 1
    assert tm.machine("gpu:discover").node.gpu == node


def replayed_pynvml(path):
    """pynvml answering with the values recorded on a real machine (tests/data/gpu/h100-nvml.json)."""
    with open(path) as f:
        rec = json.load(f)
    devs = rec["devices"]

    def nvlink(h, link, what):
        entry = devs[h]["nvlink"][link]
        if isinstance(entry[1], str):
            raise FakeNVMLError(entry[1])
        return entry[1] if what == "state" else types.SimpleNamespace(busId=entry[2])

    return types.SimpleNamespace(
        NVMLError=FakeNVMLError, NVML_NVLINK_MAX_LINKS=len(devs[0]["nvlink"]), nvmlInit=lambda: None,
        nvmlShutdown=lambda: None, nvmlDeviceGetCount=lambda: rec["count"], nvmlDeviceGetHandleByIndex=lambda i: i,
        nvmlDeviceGetPciInfo=lambda h: types.SimpleNamespace(busId=devs[h]["bus"]),
        nvmlDeviceGetCurrPcieLinkGeneration=lambda h: devs[h]["gen"],
        nvmlDeviceGetCurrPcieLinkWidth=lambda h: devs[h]["width"],
        nvmlDeviceGetCpuAffinity=lambda h, n: devs[h]["affinity"][:n],
        nvmlDeviceGetTopologyCommonAncestor=lambda a, b: devs[a]["common_ancestor"][b],
        nvmlDeviceGetNvLinkState=lambda h, link: nvlink(h, link, "state"),
        nvmlDeviceGetNvLinkRemotePciInfo=lambda h, link: nvlink(h, link, "remote"))


def test_real_h100_capture_nvml_and_topo_m_agree():
    # one H100 on a 16-vCPU VM: NVML (recorded) and nvidia-smi topo -m (verbatim, ANSI header) describe
    # the same node: one GPU on PCIe under the CPU that owns cores 0-15
    node = nvml_gpu_node(replayed_pynvml(os.path.join(DATA, "h100-nvml.json")))
    topo = read_topo_matrix(os.path.join(DATA, "h100-topo-m.txt"))
    assert node.ngpus == topo.ngpus == 1
    assert node.ncores == topo.ncores == 16
    assert [ln.kind for ln in node.links] == [ln.kind for ln in topo.links] == ["pcie"]
    assert node.links[0].bandwidth == pcie(5, 16)        # NVML reads the link: PCIe 5.0 x16
    assert topo.links[0].bandwidth == pcie(3, 16)        # topo -m does not say; its documented default
    assert route_names(node, node.gpu_endpoint(0), 15) == \
        route_names(topo, topo.gpu_endpoint(0), 15)     # core 15 is endpoint 15
