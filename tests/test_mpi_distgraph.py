"""Dist-graphs on reordered communicators, handover and the ask-MPI baseline (tests/mpi/prog_distgraph.py).

The program checks every delivery itself (each block carries its old sender and receiver), on every
rank, and aborts the job on any mismatch; here we check what it reports.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "mpi"))
from harness import results, run  # noqa: E402


def test_neighbour_exchange_on_translated_dist_graph_and_ask_mpi():
    out = results(run(6, "prog_distgraph.py", "5"))
    graphs = {r["graph"]: r for r in out if "graph" in r}
    assert set(graphs) == {"random", "stencil"}
    for g in graphs.values():
        assert not g["identity"], "the ranks must really move for the translation to matter"
        assert sorted(g["new_rank"]) == list(range(6))
    ask = next(r["ask_mpi"] for r in out if "ask_mpi" in r)
    assert ask["identity"] == (ask["new_rank"] == list(range(6)))
    assert ask["neighbours"] in ("identity", "roles", "processes", "neither")
    assert ask["library"]
    if ask["identity"]:
        assert ask["after"] == ask["before"]
