"""topomap.mpi pieces that need no mpiexec: host lists, job allocations, plans, launcher files, laziness."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from topomap.cli import main as cli_main
from topomap.mpi.job import RankPlace, job_allocation, parse_hosts
from topomap.mpi.launch import launcher_file
from topomap.mappers.topdown import process_grid
from topomap.mpi.reorder import inverse, pattern_from_rows, plan_reorder, with_cart_grid


# ------------------------------------------------------------------ laziness
def test_import_topomap_does_not_import_mpi4py():
    code = "import sys, topomap, topomap.mpi; print('mpi4py' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


def test_missing_mpi4py_names_the_extra():
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "import topomap as tm\n"
            "try:\n    tm.mpi.reorder(object(), None, method='block')\n"
            "except tm.MissingDependencyError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert "topomap-hpc[mpi]" in out.stdout


# ------------------------------------------------------------------ host lists
def test_parse_hosts():
    assert parse_hosts("a*2,b,c[1-2]*2") == ["a", "a", "b", "c1", "c1", "c2", "c2"]
    assert parse_hosts("n[0-1,3]") == ["n0", "n1", "n3"]
    for bad in ("a*0", "a*x", "", "n[0-", ","):
        with pytest.raises(tm.MachineError):
            parse_hosts(bad)


# ------------------------------------------------------------------ job allocations
def places(hosts: str, cpus=(0, 1), ncpus=2) -> list[RankPlace]:
    return [RankPlace(h, tuple(cpus), ncpus) for h in parse_hosts(hosts)]


def test_default_machine_is_one_switch_with_slots():
    job = job_allocation(places("a*2,b*3"))
    m = job.machine
    assert (m.nnodes, m.pes_per_node, job.placement) == (2, 3, "slots")
    assert job.allocation.pes.tolist() == [0, 1, 3, 4, 5]
    assert m.hops(0, 1) == 2 and m.distance(0, 1) < m.distance(0, 3)
    assert job.host_of_node() == {0: "a", 1: "b"}


def test_interleaved_hosts_keep_rank_order_inside_a_host():
    job = job_allocation(places("a,b,a,b"))
    assert job.allocation.pes.tolist() == [0, 2, 1, 3]


def test_bound_ranks_use_the_discovered_tree():
    tree = tm.NodeTree.from_synthetic("pack:2 core:2 pu:1")
    ps = [RankPlace("a", (3,), 4), RankPlace("a", (0,), 4), RankPlace("b", (1, 2), 4)]
    job = job_allocation(ps, node_trees={"a": tree, "b": tree})
    assert job.placement == "binding" and job.machine.node == tree
    assert job.allocation.pes.tolist() == [3, 0, 4 + 1]
    # two ranks on one CPU, or trees that differ between hosts: back to slots
    clash = [RankPlace("a", (1,), 4), RankPlace("a", (1,), 4)]
    assert job_allocation(clash, node_trees={"a": tree}).placement == "slots"
    other = tm.NodeTree.from_synthetic("core:4 pu:1")
    assert job_allocation(ps, node_trees={"a": tree, "b": other}).placement == "slots"


def test_named_fabric_hosts(tmp_path):
    conf = tmp_path / "topology.conf"
    conf.write_text("SwitchName=s0 Nodes=n[0-3]\nSwitchName=s1 Nodes=n[4-7]\nSwitchName=top Switches=s[0-1]\n")
    job = job_allocation(places("n5*2,n1*2"), machine=f"file:{conf}/2")
    assert job.nodes == (5, 1) and job.allocation.pes.tolist() == [10, 11, 2, 3]
    with pytest.raises(tm.MachineError, match=r"ranks 2, 3 run on host 'x9'"):
        job_allocation(places("n5*2,x9*2"), machine=f"file:{conf}/2")
    with pytest.raises(tm.MachineError, match="3 ranks"):
        job_allocation(places("n5*3"), machine=f"file:{conf}/2")


def test_unnamed_machine_hosts():
    m = "torus:4x4/2"
    assert job_allocation(places("p*2,q*2"), machine=m).nodes == (0, 1)
    job = job_allocation(places("p*2,q*2"), machine=m, host_nodes={"p": 7, "q": 3})
    assert job.allocation.pes.tolist() == [14, 15, 6, 7]
    assert job_allocation(places("nid5,nid9"), machine=m, host_nodes=lambda h: int(h[3:])).nodes == (5, 9)
    with pytest.raises(tm.MachineError, match="unknown to host_nodes"):
        job_allocation(places("p,q"), machine=m, host_nodes={"p": 1})
    with pytest.raises(tm.MachineError, match="both map to node 1"):
        job_allocation(places("p,q"), machine=m, host_nodes={"p": 1, "q": 1})
    with pytest.raises(tm.MachineError, match="not a node id"):
        job_allocation(places("p"), machine=m, host_nodes={"p": 16})
    with pytest.raises(tm.MachineError, match="node= and node_trees="):
        job_allocation(places("p"), machine=m, node="slots")


# ------------------------------------------------------------------ plans
def test_plan_reorder_moves_roles_to_their_partners():
    # heavy pairs 0<->2 and 1<->3 on two hosts of two slots: block cuts both, cyclic cuts none
    pat = tm.Pattern.from_edges([0, 2, 1, 3], [2, 0, 3, 1], [100.0] * 4)
    alloc = job_allocation(places("a*2,b*2")).allocation
    plan = plan_reorder(pat, alloc, "cyclic")
    assert plan.mapping.pe_of.tolist() == [0, 2, 1, 3]
    assert plan.new_rank.tolist() == [0, 2, 1, 3]
    assert plan.before.edge_cut == 400.0 and plan.after.edge_cut == 0.0
    with pytest.raises(tm.TopomapError, match="3 processes but the job has 4"):
        plan_reorder(tm.generators.stencil_2d((3, 1)), alloc, "block")


def test_a_cartesian_communicators_grid_reaches_topdown():
    # a 7-point stencil numbered as MPI numbers Create_cart([18, 18, 36]): row-major, the last fastest
    gen = tm.generators.stencil_3d((36, 18, 18), points=7)
    pat = tm.Pattern.from_edges(gen.senders(), gen.indices, gen.bytes, n=gen.n)    # no grid of its own
    assert process_grid(pat) is None
    cart = with_cart_grid(pat, (18, 18, 36), (False, False, False))
    rank = (3 * 18 + 5) * 36 + 7                                   # MPI coordinates (3, 5, 7)
    assert process_grid(cart)[rank].tolist() == [7, 5, 3]
    alloc = tm.machine("torus:9x9x9/16").allocate(pat.n)
    blk = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block")).hop_bytes
    hb = {p is cart: tm.evaluate(pat, alloc, tm.map(p, alloc, method="topdown", seed=0, coords=c)).hop_bytes / blk
          for p, c in ((pat, None), (cart, "auto"))}
    assert hb[True] == pytest.approx(0.1068, abs=5e-4) and hb[False] > 1.2 * hb[True]   # the embedding; without: 0.136
    assert with_cart_grid(gen, (1, 2, 3), (True,) * 3).provenance["dims"] == [36, 18, 18]   # its own grid stays


@given(st.integers(2, 12), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_plan_new_rank_puts_each_role_on_its_pe(n, seed, alloc_seed):
    """new_rank[r] = p exactly when rank r sits on the PE the mapping gives process p."""
    alloc = tm.machine("torus:4x4/2").allocate(n, policy="random", seed=alloc_seed)
    rng = np.random.default_rng(seed)
    pat = tm.Pattern.from_dense(rng.integers(0, 9, (n, n)) * (rng.random((n, n)) < 0.5))
    plan = plan_reorder(pat, alloc, "random", seed=seed)
    for r in range(n):
        assert plan.mapping.pe_of[plan.new_rank[r]] == alloc.pes[r]
    assert sorted(plan.new_rank.tolist()) == list(range(n))
    assert np.array_equal(inverse(inverse(plan.new_rank)), plan.new_rank)


def test_pattern_from_rows_sums_and_drops_self():
    rows = [(np.array([1, 1, 0]), np.array([2.0, 3.0, 9.0]), None), (np.array([0]), np.array([1.0]), None)]
    pat = pattern_from_rows(rows)
    assert pat.to_dense().tolist() == [[0.0, 5.0], [1.0, 0.0]]


# ------------------------------------------------------------------ launcher files
def _expand(text: str) -> list[int]:
    """Read an MPICH_RANK_ORDER file: '#' comments, comma lists with a-b ranges over lines."""
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        for item in filter(None, (x.strip() for x in line.split(","))):
            a, _, b = item.partition("-")
            out.extend(range(int(a), int(b or a) + 1))
    return out


@given(st.integers(0, 2**32 - 1))
def test_launcher_files_follow_their_formats(seed):
    alloc = tm.machine("torus:3x2/4").allocate(20, policy="random", seed=seed % 97)
    pat = tm.generators.stencil_2d((5, 4))
    mp = tm.map(pat, alloc, method="random", seed=seed)
    ppn = alloc.machine.pes_per_node
    names = {n: f"h{n}" for n in range(alloc.machine.nnodes)}
    rankfile = launcher_file("rankfile", mp, alloc, hosts=names).splitlines()
    assert len(rankfile) == 20
    for r, line in enumerate(rankfile):   # Open MPI: "rank N=hostname slot=S"
        assert line == f"rank {r}=h{mp.pe_of[r] // ppn} slot={mp.pe_of[r] % ppn}"
    order = _expand(launcher_file("mpich", mp, alloc))
    assert sorted(order) == list(range(20))
    for j, rank in enumerate(order):      # the j-th PE of the allocation runs that rank
        assert mp.pe_of[rank] == alloc.pes[j]
    for fmt in ("slurm", "hostfile"):     # host of rank i on line i
        assert launcher_file(fmt, mp, alloc, hosts="h{node}").splitlines() == [f"h{p // ppn}" for p in mp.pe_of]


def test_launcher_file_errors():
    alloc = tm.machine("torus:2/2").allocate(4)
    with pytest.raises(tm.MappingError, match="unknown launcher file format"):
        launcher_file("pbs", [0, 1, 2, 3], alloc)
    with pytest.raises(tm.MappingError, match="one rank on each"):
        launcher_file("mpich", [0, 0, 1, 1], alloc, capacity=2)
    with pytest.raises(tm.MappingError, match="not in the allocation|outside"):
        launcher_file("slurm", [0, 1, 2, 9], alloc)
    with pytest.raises(tm.MappingError, match="none for node 1"):
        launcher_file("slurm", [0, 1, 2, 3], alloc, hosts=["only"])
    with pytest.raises(tm.MappingError, match="format string"):
        launcher_file("slurm", [0, 1, 2, 3], alloc, hosts="plain")


def test_launch_file_cli(tmp_path, capsys):
    out = tmp_path / "rankfile"
    assert cli_main(["launch-file", "rankfile", "stencil2d:4x4", "torus:2x2/4", "--method", "cyclic",
                     "--hosts", "nid[10-13]", "-o", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[:2] == ["rank 0=nid10 slot=0", "rank 1=nid11 slot=0"] and len(lines) == 16
    assert "--rankfile" in capsys.readouterr().err
    assert cli_main(["launch-file", "slurm", "stencil2d:2x2", "torus:2/2"]) == 0
    assert capsys.readouterr().out.split() == ["node0", "node0", "node1", "node1"]
    assert cli_main(["launch-file", "mpich", "stencil2d:2x2", "torus:2/2", "--capacity", "2"]) == 2
    assert "MPICH_RANK_ORDER" in capsys.readouterr().err
    # the default mapper is auto, as tm.map's: a 4 x 4 stencil gets 2 x 2 blocks per node, not block's rows
    files = {}
    for extra in ([], ["--method", "auto"], ["--method", "block"]):
        assert cli_main(["launch-file", "hostfile", "stencil2d:4x4", "torus:2x2/4", *extra]) == 0
        files[" ".join(extra)] = capsys.readouterr().out.split()
    assert files[""] == files["--method auto"] != files["--method block"]
