"""examples/jacobi3d.py gains topomap by a few lines and computes bit for bit the same result."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "mpi"))
from harness import ROOT, run  # noqa: E402

EXAMPLE = ROOT / "examples" / "jacobi3d.py"


def solve(*args: str, env: dict | None = None) -> str:
    return run(4, EXAMPLE, "--n", "16", "--iters", "20", *args, env=env, timeout=180).stdout


def test_jacobi_bit_identical_with_and_without_reordering():
    plain = solve()
    reordered = solve("--topomap", "random", "--seed", "3", env={"TOPOMAP_MPI_HOSTS": "a*2,b*2"})
    moved = re.search(r"new_rank (\[.*?\])", reordered)
    assert moved and moved.group(1) != str(list(range(4))), reordered      # ranks really moved
    result = re.compile(r"residual (\S+) sha256 ([0-9a-f]{64})")
    assert result.search(plain) and result.search(plain).groups() == result.search(reordered).groups()
