"""The Scotch target the ``scotch`` method picks for each machine kind (scotch_target.choose).

The texts are worked by hand from the machines; where Scotch is installed,
its own gmtst measures a one-process-per-terminal mapping on the chosen
target, and that cost must be topomap's J of the same mapping (or the affine
image of J the module docstring states for scaled or shifted distances):
this checks the terminal numbering and the distances together.
"""

import re
import shutil
import subprocess

import numpy as np
import pytest

import topomap as tm
from topomap.errors import NotApplicable
from topomap.mappers import scotch as sm
from topomap.mappers.scotch_target import choose

AMK = shutil.which("amk_grf")
GMTST = shutil.which("gmtst")
needs_scotch = pytest.mark.skipif(not (AMK and GMTST), reason="Scotch (Debian package scotch) is not installed")


def pick(spec, pes=None, n=None):
    m = tm.machine(spec)
    alloc = m.allocation(pes) if pes is not None else m.allocate(n or m.npes)
    return alloc, choose(alloc, "/nonexistent", None)


@pytest.mark.parametrize("spec, pes, text, unit, kind", [
    # fat trees: node terminals at hop distances 2, 4, 6 (differenced: 2 per level)
    ("fattree:k=4,levels=3/16", None, "tleaf 3 4 2 4 2 4 2\n", "node", "tleaf"),
    # a 2x taper at the top: those links cost 2 x 2 hops
    ("fattree:k=4,levels=3,taper=2/16", None, "tleaf 3 4 4 4 2 4 2\n", "node", "tleaf"),
    # blocking 2:1 leaves: 8 nodes share 4 up-links
    ("fattree:k=4,levels=2,block=2/2", None, "tleaf 2 4 4 8 2\n", "node", "tleaf"),
    # unequal nodes: PE terminals, distances 0, 2, 4 shifted to 1, 3, 5
    ("fattree:k=4,levels=2/2", [0, 1, 2, 5], "sub 4 0 1 2 5 tleaf 3 4 2 4 2 2 1\n", "pe", "tleaf"),
    # a hierarchy with distance inside the node keeps PE terminals
    ("hierarchy:4:16:16/1:10:100", None, "tleaf 3 16 90 16 9 4 1\n", "pe", "tleaf"),
    ("hierarchy:2:2/1:10", [3, 0, 2], "sub 3 0 2 3 tleaf 2 2 9 2 1\n", "pe", "tleaf"),
    # fractional distances are scaled: 0.5, 1.5 -> 1, 3
    ("hierarchy:2:2/0.5:1.5", None, "tleaf 2 2 2 2 1\n", "pe", "tleaf"),
    ("torus:4x4x2/16", None, "torus3D 4 4 2\n", "node", "torus"),
    ("mesh:3x5", None, "mesh2D 3 5\n", "node", "mesh"),
    ("hypercube:4/2", None, "hcub 4\n", "node", "hcub"),
    ("hypercube:4/2", list(range(8)), "sub 4 0 1 2 3 hcub 4\n", "node", "hcub"),
    # a row of a torus: the full ring in x
    ("torus:4x4/2", list(range(8)), "torus2D 4 1\n", "node", "torus"),
    # a 2x2 box inside a 6x6 torus, wrapping around x = 5 -> 0: a mesh, numbered x fastest
    ("torus:6x6", [5, 0, 6, 11], "mesh2D 2 2\n", "node", "mesh"),
    # an L of three nodes is no box: the full torus restricted to it
    ("torus:4x4", [0, 1, 4], "sub 3 0 1 4 torus2D 4 4\n", "node", "torus"),
    # 4 of 6 positions of a ring: 3 steps apart at most, as on a mesh; 5 of 7 are not
    ("torus:6x1", [0, 1, 2, 3], "mesh2D 4 1\n", "node", "mesh"),
    ("torus:7x1", [0, 1, 2, 3, 4], "sub 5 0 1 2 3 4 torus2D 7 1\n", "node", "torus"),
])
def test_target_of_each_machine_kind(spec, pes, text, unit, kind):
    alloc, t = pick(spec, pes)
    assert (t.text, t.unit, t.kind) == (text, unit, kind)
    want = np.unique(alloc.pes) if unit == "pe" else np.unique(alloc.pes // alloc.machine.pes_per_node)
    assert sorted(t.terms.tolist()) == want.tolist()


def test_box_terminals_in_scotch_order():
    _, t = pick("torus:6x6", [5, 0, 6, 11])
    assert t.terms.tolist() == [5, 0, 11, 6]       # (x, y) = (5,0), (0,0), (5,1), (0,1)


@pytest.mark.parametrize("spec, pes", [
    ("dragonfly:g=5,a=2,h=2,p=2/2", None),          # no coded target
    ("torus:4x4/2", list(range(15))),              # node 7 holds one PE, the others two
    ("mesh:2x2x2x2", None),                         # Scotch 7.0.3's meshXD wraps around
])
def test_graph_target_only_where_nothing_else_fits(spec, pes):
    m = tm.machine(spec)
    alloc = m.allocation(pes) if pes is not None else m.allocate(m.npes)
    with pytest.raises(NotApplicable, match="amk_grf, which is not installed"):
        choose(alloc, "/nonexistent", None)


@needs_scotch
def test_deco_weights_the_nodes_by_their_pes(tmp_path):
    alloc = tm.machine("torus:4x4/2").allocation(list(range(15)))
    t = choose(alloc, str(tmp_path), AMK)
    assert t.kind == "deco" and t.text.startswith("deco\n1\n") and t.labelled and t.terms.tolist() == list(range(8))
    # the graph handed to amk_grf: node 7 (one PE) has load 1, the others 2, edges unit
    lines = (tmp_path / "net.grf").read_text().splitlines()
    assert lines[2] == "0 001" and [int(row.split()[0]) for row in lines[3:]] == [2] * 7 + [1] + [1] * 8


def gmtst_cost(tmp_path, pat, text, part):
    src, tgt, out = tmp_path / "p.grf", tmp_path / "t.tgt", tmp_path / "given.map"
    sm._write_source_graph(pat, str(src))
    tgt.write_text(text)
    out.write_text(f"{part.size}\n" + "".join(f"{p} {t}\n" for p, t in enumerate(part.tolist())))
    log = subprocess.run([GMTST, str(src), str(tgt), str(out)], check=True, capture_output=True, text=True).stdout
    return int(re.search(r"CommExpan=\S+\s+\((\d+)\)", log).group(1))


@needs_scotch
@pytest.mark.parametrize("spec, pes, scale, shift", [
    ("fattree:k=4,levels=2/2", None, 1, 0),
    ("fattree:k=3,levels=3", None, 1, 0),
    ("fattree:k=4,levels=2/2", [0, 1, 2, 5, 6, 7, 9, 12], 1, 1),   # PE terminals, +1 on distinct PEs
    ("hierarchy:2:3:2/0.5:1.5:4", None, 2, 0),
    ("torus:4x3x2/4", None, 1, 0),
    ("torus:6x6", [5, 0, 6, 11, 4, 10], 1, 0),                       # a 3x2 box around the seam
    ("torus:5x5", [0, 1, 5, 7, 12], 1, 0),                           # sub
    ("hypercube:4", None, 1, 0),
    ("hypercube:4/2", [2, 3, 4, 5, 8, 9, 30, 31], 1, 0),
])
def test_scotch_measures_topomaps_distances(tmp_path, spec, pes, scale, shift):
    alloc, t = pick(spec, pes)
    k = t.terms.size
    rng = np.random.default_rng(k)
    src, dst = rng.integers(0, k, (2, 4 * k))
    keep = src != dst
    pat = tm.Pattern.from_edges(src[keep], dst[keep], rng.integers(1, 9, keep.sum()), n=k)
    ppn = alloc.machine.pes_per_node
    first_pe = {int(p) // ppn: int(p) for p in alloc.pes[::-1]}    # a node's first allocated PE
    for seed in range(3):
        part = np.random.default_rng(seed).permutation(k)   # process p on terminal part[p]
        pe = t.terms[part] if t.unit == "pe" else np.array([first_pe[v] for v in t.terms[part].tolist()])
        j = tm.evaluate(pat, alloc.machine, pe).qap
        assert gmtst_cost(tmp_path, pat, t.text, part) == scale * j + shift * pat.bytes.sum()


def test_export_writes_fat_trees_as_tleaf():
    """topomap export --format tleaf: a fat tree of one PE per node, at its hop distances."""
    from topomap.export import scotch as export
    assert export.tleaf(tm.machine("fattree:k=4,levels=3")) == "tleaf 3 4 2 4 2 4 2\n"
    with pytest.raises(tm.MachineError, match="level 'Node' .* has distance 0"):
        export.tleaf(tm.machine("fattree:k=4,levels=3/16"))   # exact export: Scotch has no distance 0
