"""Predicted allgather latency, naive against combined (topomap.neighborhood.latency)."""

import numpy as np
import pytest

import topomap as tm
import topomap.neighborhood as nb
from topomap.neighborhood.latency import allgather_stages, predict_latency
from topomap.timemodel import TimeModel


@pytest.mark.parametrize("graph", [nb.moore_graph((6, 6), 2), nb.random_graph(40, 0.7, seed=3)])
def test_combined_stages_carry_every_edge_once(graph):
    t = nb.combine(graph)
    stages = allgather_stages(graph, t, 10)
    selfloops = sum(int(p in graph.destinations(p)) for p in range(graph.n))
    friend = sum(float(s.bytes.sum()) for s in stages[0:-1:2])
    data = sum(float(s.bytes.sum()) for s in stages[1:-1:2]) + float(stages[-1].bytes.sum())
    # a combined message of 20 bytes carries two edges; friend exchanges carry none
    assert friend == 10 * t.step_iter.size
    assert data == pytest.approx(10 * (graph.edges - selfloops) - 10 * _selfloops_combined(graph, t))
    assert float(allgather_stages(graph, None, 10)[0].bytes.sum()) == 10 * (graph.edges - selfloops)


def _selfloops_combined(graph, t):
    """Combined messages a rank sends to itself vanish from the pattern (20 bytes = 2 edges)."""
    owner = np.repeat(np.arange(graph.n), np.diff(t.step_ptr))
    return 2 * sum(int(owner[s] in t.on_idx[t.on_ptr[s]:t.on_ptr[s + 1]]) for s in range(owner.size))


def test_hand_worked_two_friends():
    # Hockney, alpha = 1 s, 1 byte/s, everything on the network of a 6-node ring (one rank per
    # node): naive = the slowest of 8 parallel 1-byte messages = alpha + 1 = 2 s (no sharing
    # by "hockney"); combined = friend exchange (2 s) + a 2-byte combined message (3 s) = 5 s
    g = nb.NeighborGraph.from_lists([[2, 3, 4, 5], [2, 3, 4, 5], [], [], [], []])
    model = TimeModel({"PE": (1.0, 1.0), "intra-node": (1.0, 1.0), "network": (1.0, 1.0)}, link_bandwidth=1e9,
                      hop_latency=0)
    r = predict_latency(g, nb.combine(g), tm.machine("torus:6/1"), list(range(6)), sizes=[1], model=model,
                        method="hockney")
    assert r["naive"].tolist() == pytest.approx([2.0]) and r["combined"].tolist() == pytest.approx([5.0])
    assert r["crossover"] == 1


def test_moore_gain_shrinks_with_size_and_crosses_over():
    g = nb.moore_graph((12, 12), 2)
    r = predict_latency(g, nb.combine(g), tm.machine("torus:6x6/4"), list(range(144)))
    assert r["reduction"][0] > 0.2
    assert r["reduction"][-1] < r["reduction"][0]
    assert r["crossover"] is not None and 1024 <= r["crossover"] <= 65536
