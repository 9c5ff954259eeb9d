"""Method "scotch": Debian's scotch_gmap behind tm.map.

The real program runs when installed (tests skip otherwise); the target
texts and the translation back to PEs are checked without it.  Round trip:
the mapping tm.map returns is the one gmap wrote, and gmtst's CommExpan of
it (edge loads of C + C^T, each edge once) is topomap's J.
"""

import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import topomap as tm
from topomap import MappingError
from topomap.mappers import scotch as sm
from topomap.mappers import scotch_target as sm_target

GMAP = shutil.which("scotch_gmap") or shutil.which("gmap")
GMTST = shutil.which("gmtst")
needs_gmap = pytest.mark.skipif(GMAP is None, reason="Scotch (Debian package scotch) is not installed")


def scrambled(pat, seed):
    perm = np.random.default_rng(seed).permutation(pat.n)
    return tm.Pattern.from_edges(perm[pat.senders()], perm[pat.indices], pat.bytes, n=pat.n)


# ---------------------------------------------------------------- targets (more in test_scotch_targets.py)

@needs_gmap
def test_graph_target_through_amk_grf(tmp_path):
    alloc = tm.machine("dragonfly:g=5,a=2,h=2,p=2/2").allocate(12, policy="random", seed=1)
    text, terms, unit = sm.target(alloc, str(tmp_path))
    assert unit == "node" and text.startswith("deco\n1\n") and terms.tolist() == sorted(alloc.nodes().tolist())


@needs_gmap
@pytest.mark.parametrize("deco2_above", [4096, 4])
def test_graph_targets_map_end_to_end(monkeypatch, deco2_above):
    """deco 1 (gmap names terminals by node id) and, above the threshold, deco 2 (by index)."""
    monkeypatch.setattr(sm_target, "DECO2_ABOVE", deco2_above)
    alloc = tm.machine("dragonfly:g=5,a=2,h=2,p=2/2").allocate(12, policy="random", seed=1)
    pat = scrambled(tm.generators.stencil_2d((4, 6)), 1)
    mp = tm.map(pat, alloc, method="scotch", capacity=2)
    assert np.bincount(mp.pe_of, minlength=alloc.machine.npes)[alloc.pes].tolist() == [2] * 12
    block = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block", capacity=2))
    assert tm.evaluate(pat, alloc, mp).hop_bytes < block.hop_bytes


def test_missing_amk_grf_names_the_package(tmp_path, monkeypatch):
    monkeypatch.setattr(sm.shutil, "which", lambda name: None)
    with pytest.raises(MappingError, match="apt-get install scotch"):
        sm.target(tm.machine("dragonfly:g=5,a=2,h=2,p=2/2").allocate(8), str(tmp_path))


# ---------------------------------------------------------------- back to PEs

def test_translation_keeps_capacities_and_repairs_to_the_nearest_slot():
    alloc = tm.machine("hierarchy:2:2:2/1:10:100").allocate(8)
    terms = np.arange(8)
    # Scotch put processes 0..2 on PE 1 and 3 on PE 6: with capacity 2 the
    # third goes to the nearest free slot, PE 0 (same node)
    pe_of = sm._to_pes(alloc, np.array([1, 1, 1, 6]), terms, "pe", 2)
    assert pe_of.tolist() == [1, 1, 0, 6]
    pe_of = sm._to_pes(alloc, np.array([1, 1, 1, 1, 1]), terms, "pe", 1)
    assert pe_of.tolist()[0] == 1 and sorted(pe_of.tolist()) == [0, 1, 2, 3, 4]
    # node terminals: a node's processes take its PEs in allocation order, capacity each
    # (a third process for node 1 goes to PE 1 on node 0, one hop away; node 2 is two)
    nodes = tm.machine("torus:2x2/2").allocation([3, 2, 0, 1, 4, 5])
    pe_of = sm._to_pes(nodes, np.array([1, 1, 1, 0, 2]), np.array([0, 1, 2]), "node", 1)
    assert pe_of.tolist() == [3, 2, 1, 0, 4]
    # terminals in any node order (a deco target's), capacity 2: node 2's four slots on PEs 4, 5
    pe_of = sm._to_pes(nodes, np.array([0, 0, 0, 0, 1, 2]), np.array([2, 0, 1]), "node", 2)
    assert pe_of.tolist() == [4, 4, 5, 5, 0, 3]


def test_translation_at_scale_is_fast():
    """10^6 processes on 64,000 nodes, 500 of them one process over: linear work, not per node."""
    alloc = tm.machine("torus:40x40x40/16").allocate(1_024_000)
    term = np.repeat(np.arange(64_000), 16)
    term[np.arange(500) * 2048] = 7          # node 7 gets 500 extra processes, 500 nodes lack one
    start = time.process_time()
    pe_of = sm._to_pes(alloc, term, np.arange(64_000), "node", 1)
    assert time.process_time() - start < 20
    assert np.bincount(pe_of, minlength=alloc.machine.npes).max() == 1
    moved = np.flatnonzero(pe_of // 16 != term)
    assert moved.size == 500 and (pe_of[moved] // 16 != 7).all()
    # 5,000 homes one process over each (Scotch left 4,748 at 10^6): one distance array at a time
    term = np.repeat(np.arange(64_000), 16)
    term[np.arange(5000) * 16 + 16 * 10_000] = np.arange(5000) * 2
    start = time.process_time()
    pe_of = sm._to_pes(alloc, term, np.arange(64_000), "node", 1)
    assert time.process_time() - start < 60
    assert np.bincount(pe_of, minlength=alloc.machine.npes).max() == 1


# ---------------------------------------------------------------- malformed output

@pytest.mark.parametrize("text, what", [
    ("3\n0 1\n1 1\n", "holds 5 numbers"),                     # truncated
    ("3\n0 1\n1 x\n2 0\n", "cannot read gmap's mapping file"),  # not a number
    ("2\n0 1\n1 1\n2 0\n", "starting \\[2\\]"),               # wrong count
    ("3\n0 1\n0 1\n2 0\n", "each of the 3 processes once"),  # a process twice
    ("3\n0 1\n1 4\n2 0\n", "outside the 4 terminals"),
    ("3\n0 1\n1 -1\n2 0\n", "outside the 4 terminals"),
])
def test_malformed_mapping_files_are_clear_errors(tmp_path, text, what):
    path = tmp_path / "out.map"
    path.write_text(text)
    with pytest.raises(MappingError, match=what):
        sm._read_map(str(path), 3, 4)
    with pytest.raises(MappingError, match="cannot read gmap's mapping file"):
        sm._read_map(str(tmp_path / "missing.map"), 3, 4)


def test_a_program_that_writes_garbage_fails_clearly(tmp_path, monkeypatch):
    fake = tmp_path / "gmap"
    fake.write_text("#!/bin/sh\necho 'mapping done' > \"$5\"\n")   # argv: -Cd -b src tgt out
    fake.chmod(0o755)
    monkeypatch.setattr(sm, "gmap_program", lambda: str(fake))
    alloc = tm.machine("fattree:k=2,levels=2/2").allocate(8)
    with pytest.raises(MappingError, match="cannot read gmap's mapping file"):
        tm.map(tm.generators.stencil_2d((4, 2)), alloc, method="scotch")


# ---------------------------------------------------------------- the real program

@needs_gmap
@pytest.mark.parametrize("spec, n, capacity", [
    ("hierarchy:4:4:2/1:10:100", 32, 1), ("hierarchy:4:4:2/1:10:100", 40, 2), ("hierarchy:2:3:2/1:5:9", 9, 1),
    ("torus:4x4/2", 24, 1), ("mesh:4x2/4", 32, 2), ("fattree:k=4,levels=2/2", 12, 1),
    ("fattree:k=4,levels=2/4", 64, 1), ("fattree:k=4,levels=2/4", 60, 2), ("torus:4x4x2/4", 128, 1),
    ("torus:4x4x2/4", 100, 3), ("hypercube:4/2", 24, 2), ("dragonfly:g=5,a=2,h=2,p=2/2", 30, 2),
])
def test_valid_mappings(spec, n, capacity):
    m = tm.machine(spec)
    pat = scrambled(tm.generators.stencil_2d((n // 4, 4)) if n % 4 == 0 else tm.generators.stencil_2d((n // 3, 3)), 2)
    alloc = m.allocate(-(-n // capacity), policy="random", seed=3)
    mp = tm.map(pat, alloc, method="scotch", capacity=capacity)   # tm.map checks PEs and capacity
    assert mp.n == n and set(mp.pe_of.tolist()) <= set(alloc.pes.tolist())
    assert np.bincount(mp.pe_of).max() <= capacity
    again = tm.map(pat, alloc, method="scotch", capacity=capacity)
    assert np.array_equal(mp.pe_of, again.pe_of)                  # gmap -Cd is deterministic


@needs_gmap
def test_fat_tree_of_ten_thousand_beats_block_clearly():
    """Issue 20: on a fat tree the method was 0.95-1.00 x block in hop-bytes (a graph target)."""
    pat = tm.generators.stencil_3d((36, 18, 18))
    alloc = tm.machine("fattree:k=9,levels=3/16").allocate(pat.n)
    ours = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="scotch"))
    block = tm.evaluate(pat, alloc, tm.map(pat, alloc, method="block"))
    assert ours.hop_bytes < 0.6 * block.hop_bytes
    assert ours.max_congestion < block.max_congestion


@needs_gmap
@pytest.mark.skipif(GMTST is None, reason="Scotch's gmtst is not installed")
def test_round_trip_matches_gmap_and_gmtst(tmp_path):
    m = tm.machine("hierarchy:4:4:2/1:10:100")
    pat = scrambled(tm.generators.stencil_2d((8, 4), weights=(3, 1)), 4)
    alloc = m.allocate(32)
    ours = tm.map(pat, alloc, method="scotch").pe_of
    src, tgt, out = tmp_path / "p.grf", tmp_path / "t.tgt", tmp_path / "o.map"
    sm._write_source_graph(pat, str(src))
    tgt.write_text(sm.target(alloc, str(tmp_path))[0])
    subprocess.run([GMAP, "-Cd", "-b0.03", str(src), str(tgt), str(out)], check=True, capture_output=True)
    fields = np.array(out.read_text().split(), dtype=np.int64)[1:].reshape(-1, 2)
    direct = np.empty(pat.n, dtype=np.int64)
    direct[fields[:, 0]] = fields[:, 1]
    assert ours.tolist() == direct.tolist()        # terminals of the full tleaf are the PEs
    log = subprocess.run([GMTST, str(src), str(tgt), str(out)], check=True, capture_output=True, text=True).stdout
    expan = int(re.search(r"CommExpan=\S+\s+\((\d+)\)", log).group(1))
    assert expan == tm.evaluate(pat, alloc, ours).qap   # edge loads of C + C^T: each direction counted


@needs_gmap
def test_strategy_timeout_and_failures():
    alloc = tm.machine("hierarchy:4:4:2/1:10:100").allocate(32)
    pat = tm.generators.stencil_2d((8, 4))
    plain = tm.map(pat, alloc, method="scotch", strategy="r").pe_of   # a valid Scotch strategy string
    assert sorted(plain.tolist()) == list(range(32))
    with pytest.raises(MappingError, match="scotch: .* failed"):
        tm.map(pat, alloc, method="scotch", strategy="m{type=0}")


def test_timeout_and_cancellation_stop_the_program():
    """What tm.map(method="scotch") runs gmap with, on a program that sleeps."""
    sleeper = [sys.executable, "-c", "import time; time.sleep(30)"]
    start = time.monotonic()
    with pytest.raises(MappingError, match="did not finish within the timeout of 0.1 s"):
        sm._run(sleeper, 0.1, None)
    calls = []

    def stop(fraction):
        calls.append(fraction)
        return len(calls) == 2
    with pytest.raises(tm.Cancelled, match="scotch cancelled by the progress callback at 0%"):
        sm._run(sleeper, 30.0, stop)
    assert len(calls) == 2 and 0 < calls[0] <= calls[1] < 0.1
    assert time.monotonic() - start < 10          # the sleeping children were killed, not waited for
    with pytest.raises(MappingError, match=r"failed \(exit 3\): boom"):
        sm._run([sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"], 10.0, None)


def test_missing_program_names_the_debian_package(monkeypatch):
    monkeypatch.setattr(sm, "gmap_program", lambda: None)
    alloc = tm.machine("hierarchy:2:2/1:10").allocate(4)
    with pytest.raises(MappingError, match=r"apt-get install scotch"):
        tm.map(tm.generators.stencil_2d((2, 2)), alloc, method="scotch")


@pytest.mark.parametrize("option, value", [
    ("strategy", 3), ("strategy", "a b"), ("imbalance", -0.5), ("imbalance", float("inf")), ("timeout", 0),
    ("timeout", "10"),
])
def test_options_out_of_range(option, value):
    alloc = tm.machine("hierarchy:2:2/1:10").allocate(4)
    with pytest.raises(MappingError, match=f"option {option}"):
        tm.map(tm.generators.stencil_2d((2, 2)), alloc, method="scotch", **{option: value})


def test_registered_with_its_options():
    info = tm.methods()["scotch"]
    assert set(info.options) == {"strategy", "imbalance", "timeout"} and "Scotch" in info.source


@pytest.mark.parametrize("weights, factor", [
    (np.arange(1.0, 40000.0), 2.0),                           # integral: unchanged (doubled)
    (np.random.default_rng(0).random(50000) * 1e6, 1.0),      # fractional: scaled to about 2^30
    (np.array([1e300, 1e-300, 5.0]), 2.0),                    # extremes: finite, at least 1
    (np.full(10, 2.0**30), 2.0),                              # integral but summing past 2^31
])
def test_edge_loads_block_by_block_follow_metis_ints(weights, factor):
    """The source graph's loads, computed a block at a time, are partition._metis_ints' (C + C^T)."""
    from topomap.partition import _metis_ints
    loads = sm._integer_loads(weights, factor)
    whole = _metis_ints(weights * factor, 1)
    assert np.array_equal(np.concatenate([loads(lo, min(lo + 777, weights.size))
                                          for lo in range(0, weights.size, 777)]), whole)
