"""A rankfile written by topomap places ranks where it says, in a real Open MPI run (tests/mpi/prog_where.py).

The file formats themselves are checked against their documented syntax in tests/test_mpi_units.py.
Fake host names cannot be tried for real here: Open MPI would have to start daemons on them, and its
simulated nodes (ras_simulator with --do-not-launch) refuse rankfile bindings, so the run uses this
host's real name and reverses the two cores.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

import topomap as tm
from topomap.mpi import launcher_file, mpi_library

sys.path.insert(0, str(Path(__file__).parent / "mpi"))
from harness import results, run  # noqa: E402


def test_open_mpi_runs_ranks_where_the_rankfile_says(tmp_path):
    pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install 'topomap-hpc[mpi]'")
    lib = mpi_library()
    if lib.vendor != "Open MPI":
        pytest.skip(f"rankfiles are Open MPI's; mpi4py loads {lib.version}")
    tree = tm.NodeTree.discover(pe="core")
    if tree.npes < 2 or tree.os_index is None:
        pytest.skip("needs two cores with known OS indices")
    alloc = tm.Machine(tm.SingleNode(), tree).allocate(2)
    pe_of = [1, 0]                                   # rank 0 on the second core, rank 1 on the first
    path = tmp_path / "rankfile"
    path.write_text(launcher_file("rankfile", pe_of, alloc, hosts=[socket.gethostname()]))
    flag = ("--map-by", f"rankfile:file={path}") if "v5" in lib.version or "v6" in lib.version \
        else ("--rankfile", str(path))
    rows = results(run(2, "prog_where.py", launcher_args=flag, oversubscribe=False))
    assert [r["rank"] for r in rows] == [0, 1]
    for r in rows:
        assert r["host"] == socket.gethostname()
        assert min(r["cpus"]) == int(tree.os_index[pe_of[r["rank"]]]), rows
