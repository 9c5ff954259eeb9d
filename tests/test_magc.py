"""MAGC (topomap.mappers.magc): Alg. 5.1 against a literal transcription, capacities, baselines."""

import os
import shutil

import numpy as np
import pytest

import topomap as tm
from topomap import _core
from topomap.errors import MappingError
from topomap.mappers.magc import STRATEGIES, evaluate_gpu, magc
from topomap.node.gpu import GpuNode
from topomap.node.gpu_presets import gpu_node
from topomap.node.gpu_smi import read_topo_matrix

DATA = os.path.join(os.path.dirname(__file__), "data", "gpu")


def alg51(node, c, cand, load=None):
    """Alg. 5.1 as notes 000 §4.3 writes it: 0/0 := 0, ties to the lowest id / first candidate,
    neighbours counted on the symmetrised pattern; congestion = bytes / bandwidth per channel,
    summed over mapped neighbours in increasing id, the send before the receive."""
    n = c.shape[0]
    bw = node.bandwidths
    cong = np.zeros(node.nchannels) if load is None else np.array(load, dtype=float)
    mapped, free = [], list(cand)
    ep = [None] * n
    steps = []
    while len(mapped) < n:
        best, best_delta = None, None
        for q in range(n):
            if q in mapped:
                continue
            sm = su = 0.0
            nm = nu = 0
            for r in range(n):
                if r == q:
                    continue
                vol = c[q, r] + c[r, q]
                if r in mapped:
                    sm, nm = sm + vol, nm + (vol > 0)
                else:
                    su, nu = su + vol, nu + (vol > 0)
            delta = (sm / nm if nm else 0.0) - (su / nu if nu else 0.0)
            if best is None or delta > best_delta:
                best, best_delta = q, delta
        p = best

        def put(pe, into):
            for r in sorted(mapped):
                if c[p, r] > 0:
                    for ch in node.route(pe, ep[r]):
                        into[ch] += c[p, r]
                if c[r, p] > 0:
                    for ch in node.route(ep[r], pe):
                        into[ch] += c[r, p]

        costs = []
        for pe in free:
            tmp = cong.copy()
            put(pe, tmp)
            costs.append(max((tmp / bw).max(initial=0.0), 0.0))
        k = int(np.argmin(costs))  # first of the minima
        put(free[k], cong)
        ep[p] = free[k]
        steps.append((p, free[k], costs[k]))
        mapped.append(p)
        free.pop(k)
    return ep, steps


def random_node(rng):
    kind = rng.integers(4)
    if kind == 0:
        return gpu_node(["clusterA", "clusterB", "dgx"][rng.integers(3)])
    if kind == 1:
        return read_topo_matrix(os.path.join(DATA, "topo-8gpu.txt"))
    sockets = int(rng.integers(1, 4))
    return GpuNode.build([int(rng.integers(1, 5)) for _ in range(sockets)],
                         [int(rng.integers(1, 6)) for _ in range(sockets)],
                         switch_fanout=int(rng.integers(0, 3)), root_link=float(rng.choice([8.0, 15.76, 31.5])),
                         gpu_link=float(rng.choice([8.0, 15.76])), qpi=float(rng.choice([16.0, 32.0])))


@pytest.mark.parametrize("seed", range(60))
def test_alg51_matches_the_transcription_step_by_step(seed):
    rng = np.random.default_rng(seed)
    node = random_node(rng)
    gpus = np.arange(node.ngpus) + node.ncores
    use_cores = rng.random() < 0.3
    pool = np.arange(node.ncores) if use_cores else gpus
    cand = rng.permutation(pool)[:int(rng.integers(1, pool.size + 1))]
    n = int(rng.integers(1, cand.size + 1))
    density = rng.choice([0.2, 0.5, 1.0])
    c = rng.integers(0, 4, (n, n)).astype(float) if seed % 2 else rng.random((n, n)) * 10  # ties, and none
    c *= rng.random((n, n)) < density
    np.fill_diagonal(c, 0)
    load = rng.random(node.nchannels) * 5 if rng.random() < 0.3 else None
    ptr, chans = node.route_table()
    args = (node.bandwidths, ptr, chans, c, cand.astype(np.int32)) + ((load,) if load is not None else ())
    ep, order = _core.magc_greedy(*args)
    want, steps = alg51(node, c, cand.tolist(), load)
    assert order.tolist() == [p for p, _, _ in steps]
    assert ep.tolist() == want
    assert len(set(ep.tolist())) == n and set(ep.tolist()) <= set(cand.tolist())


def test_alg51_first_steps_by_hand():
    """Three GPUs on one switch (cpu - sw - gpu0..2, one channel each way, 10 GB/s): a chain 0 - 1 - 2.
    Step 0: deltas -(volume per unmapped neighbour) = -2, -3, -4 -> process 0 (lowest id of the max)
    to gpu0; step 1: process 1 (mapped-neighbour average 2) beats 2 (0 - 4)."""
    node = GpuNode.build([1], [3], switch_fanout=3, root_link=10.0, gpu_link=10.0)
    c = np.array([[0, 1, 0], [1, 0, 2], [0, 2, 0]], dtype=float)
    gpus = np.arange(3, dtype=np.int32) + node.ncores
    ptr, chans = node.route_table()
    ep, order = _core.magc_greedy(node.bandwidths, ptr, chans, c, gpus)
    assert order.tolist() == [0, 1, 2] and (ep - node.ncores).tolist() == [0, 1, 2]


def check_capacities(mp, alloc, node):
    m = alloc.machine
    assert np.isin(mp.pe_of, alloc.pes).all()
    assert np.unique(mp.pe_of).size == mp.n  # one core each
    nodes = m.node_of(mp.pe_of)
    assert ((mp.gpu_of >= 0) & (mp.gpu_of < node.ngpus)).all()  # a GPU of its own node
    pairs = nodes.astype(np.int64) * node.ngpus + mp.gpu_of
    assert np.unique(pairs).size == mp.n  # one process per GPU
    assert np.bincount(nodes).max() <= node.ngpus


@pytest.mark.parametrize("seed", range(12))
def test_every_strategy_respects_cores_gpus_and_nodes(seed):
    rng = np.random.default_rng(seed)
    spec = ["fattree:k=4,levels=2/gpu:clusterB", "torus:3x2/gpu:dgx", "hypercube:2/gpu:clusterA"][seed % 3]
    m = tm.machine(spec)
    node = m.node.gpu
    # a partial allocation: some nodes with fewer cores than GPUs
    pes = np.sort(np.concatenate([nd * m.pes_per_node + rng.choice(m.pes_per_node, int(rng.integers(2, 12)),
                                                                    replace=False) for nd in range(m.nnodes)]))
    alloc = m.allocation(pes)
    slots = sum(min(int((m.node_of(pes) == nd).sum()), node.ngpus) for nd in range(m.nnodes))
    n = int(rng.integers(2, slots + 1))
    cpu = tm.generators.random_sparse(n, 0.3, seed=seed)
    gpu = tm.generators.random_sparse(n, 0.3, seed=seed + 100)
    for strategy in STRATEGIES:
        mp = magc(cpu, gpu, alloc, strategy=strategy, seed=seed)
        check_capacities(mp, alloc, node)
        res = evaluate_gpu(cpu, gpu, alloc, mp)
        assert res.node.load.shape == (m.nnodes, node.nchannels)


def test_baselines_are_what_the_thesis_says():
    m = tm.machine("fattree:k=4,levels=1/gpu:clusterB")  # 4 nodes of 20 cores, 8 GPUs
    alloc = m.allocate(m.npes)
    cpu = tm.generators.stencil_2d((8, 4))
    gpu = tm.generators.subcomm_alltoall((8, 4), axes=1)
    default = magc(cpu, gpu, alloc, strategy="default")
    # block over 8 slots per node, GPU = local rank
    assert default.pe_of.tolist() == [nd * 20 + k for nd in range(4) for k in range(8)]
    assert default.gpu_of.tolist() == list(range(8)) * 4
    s2 = magc(cpu, gpu, alloc, strategy="strategy2")
    nodes = m.node_of(s2.pe_of)
    for nd in range(4):
        assert s2.gpu_of[nodes == nd].tolist() == list(range((nodes == nd).sum()))
    s1 = magc(cpu, gpu, alloc, strategy="strategy1")
    assert (m.node_of(s1.pe_of) == nodes).all()  # same phase 1 and 2 on the CPU pattern
    assert (s1.pe_of == s2.pe_of).all()


def test_magc_wins_where_cpu_and_gpu_patterns_disagree():
    """COL-2D on cluster A (000 §7.7: Strategies 1/2 worse than default, MAGC far better)."""
    m = tm.machine("fattree:k=4,levels=1/gpu:clusterA")
    alloc = m.allocation(np.arange(96))
    cpu = tm.generators.subcomm_alltoall((4, 4, 4), axes=0)
    gpu = tm.generators.stencil_2d((8, 8))
    mc = {s: evaluate_gpu(cpu, gpu, alloc, magc(cpu, gpu, alloc, strategy=s)).network.max_congestion
          for s in STRATEGIES}
    assert mc["magc"] < mc["default"] < mc["strategy1"] == mc["strategy2"]


@pytest.mark.skipif(shutil.which("scotch_gmap") is None and shutil.which("gmap") is None,
                    reason="Scotch's gmap is not installed")
def test_scotch_intra_node_phases():
    m = tm.machine("fattree:k=4,levels=1/gpu:clusterB")
    alloc = m.allocate(m.npes)
    cpu = tm.generators.stencil_2d((8, 4))
    mp = magc(cpu, cpu, alloc, intra="scotch")
    check_capacities(mp, alloc, m.node.gpu)
    greedy = magc(cpu, cpu, alloc)
    assert (m.node_of(mp.pe_of) == m.node_of(greedy.pe_of)).all()  # phase 1 is shared


def test_bad_input():
    pat = tm.generators.stencil_2d((4, 2))
    with pytest.raises(MappingError, match="GPU nodes"):
        magc(pat, pat, tm.machine("torus:4/8").allocate(8))
    alloc = tm.machine("gpu:clusterB").allocate(20)
    with pytest.raises(MappingError, match="only 8 core\\+GPU pairs"):
        magc(tm.generators.stencil_2d((4, 4)), tm.generators.stencil_2d((4, 4)), alloc)
    with pytest.raises(MappingError, match="the GPU pattern 16"):
        magc(pat, tm.generators.stencil_2d((4, 4)), alloc)
    with pytest.raises(MappingError, match="strategy 'best'"):
        magc(pat, pat, alloc, strategy="best")
    with pytest.raises(MappingError, match="no GPU per process"):
        evaluate_gpu(pat, pat, alloc, tm.map(pat, alloc, method="block"))
    with pytest.raises(MappingError, match="gpu_of must be"):
        tm.Mapping([0, 1], gpu_of=[0])
    assert "gpu_of" not in tm.Mapping([0, 1]).to_dict()
    assert tm.Mapping([0, 1], gpu_of=[1, 0]).to_dict()["gpu_of"] == [1, 0]


# ---------------------------------------------------------------- the GPU of each rank, for the launcher
def test_reorder_plan_carries_a_gpu_per_new_rank():
    from topomap.mpi.reorder import ReorderInfo, plan_reorder
    m = tm.machine("fattree:k=4,levels=1/gpu:clusterB")
    alloc = m.allocation([0, 1, 2, 3, 20, 21, 22, 23])  # the job: 4 ranks on each of 2 nodes
    cpu = tm.generators.stencil_2d((4, 2))
    gpu = tm.generators.subcomm_alltoall((4, 2), axes=1)
    plan = plan_reorder(cpu, alloc, "ptram", gpu_pattern=gpu)
    want = magc(cpu, gpu, alloc, phase1="ptram")
    assert (plan.mapping.pe_of == want.pe_of).all() and (plan.mapping.gpu_of == want.gpu_of).all()
    check_capacities(plan.mapping, alloc, m.node.gpu)
    # new rank p sits where process p was mapped: old rank new_rank^-1[p] is on pe_of[p]
    assert (alloc.pes[np.argsort(plan.new_rank)] == plan.mapping.pe_of).all()
    info = ReorderInfo(plan.new_rank, plan.mapping, plan.before, plan.after, "ptram", 0)
    assert info.to_dict()["gpu_of"] == want.gpu_of.tolist()
    plain = plan_reorder(cpu, alloc, "ptram")
    assert plain.mapping.gpu_of is None
    assert "gpu_of" not in ReorderInfo(plain.new_rank, plain.mapping, plain.before, plain.after, "ptram", 0).to_dict()


def test_gpu_file_list_and_wrapper_script(tmp_path):
    import subprocess

    from topomap.mpi.launch import gpu_file
    mp = tm.Mapping([0, 1, 2], gpu_of=[2, 0, 1])
    assert gpu_file(mp) == "2\n0\n1\n"
    script = tmp_path / "gpu-wrap.sh"
    script.write_text(gpu_file(mp, "wrapper"))
    script.chmod(0o755)
    for var in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"):
        for rank, gpu in enumerate([2, 0, 1]):
            env = {"PATH": os.environ["PATH"], var: str(rank)}
            out = subprocess.run([str(script), "sh", "-c", "echo $CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER"],
                                 capture_output=True, text=True, env=env, check=True).stdout
            assert out.split() == [str(gpu), "PCI_BUS_ID"]
    bad = subprocess.run([str(script), "true"], capture_output=True, text=True, env={"PMI_RANK": "7"})
    assert bad.returncode == 1 and "no GPU for rank '7'" in bad.stderr
    with pytest.raises(MappingError, match="no GPU per rank"):
        gpu_file(tm.Mapping([0, 1]))
