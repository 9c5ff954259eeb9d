"""Shared fixtures and hypothesis strategies: random machines, patterns, mappings."""

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import topomap as tm

# tests/mpi holds programs that tests run under mpiexec (through tests/mpi/harness.py), not tests
collect_ignore_glob = ["mpi/*.py"]

settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile("ci")


def machine_desc(m: tm.Machine) -> dict:
    """The reference evaluator's description of a topomap Machine."""
    net = m.network
    if isinstance(net, tm.Torus):
        network = {"kind": "torus", "dims": list(net.dims), "wrap": list(net.wrap)}
    elif isinstance(net, tm.TreeNetwork):
        network = {"kind": "tree", "arities": list(net.arities), "costs": list(net.costs)}
    else:
        network = {"kind": "none"}
    return {
        "P": m.pes_per_node,
        "nnodes": m.nnodes,
        "node_groups": [list(map(int, row)) for row in m.node.groups],
        "node_costs": [float(c) for c in m.node.costs],
        "network": network,
        "capacity": [float(c) for c in m.capacities()],
    }


@st.composite
def node_trees(draw):
    """Small node trees, regular or built from random arities, with random costs."""
    arities = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    tree = tm.NodeTree.from_arities(arities)
    costs = np.cumsum(draw(st.lists(st.floats(0, 5, allow_nan=False), min_size=len(tree.levels),
                                    max_size=len(tree.levels))))
    return tree.with_costs(costs)


@st.composite
def machines(draw):
    node = draw(node_trees())
    kind = draw(st.sampled_from(["torus", "mesh", "mixed", "tree", "single"]))
    if kind == "single":
        m = tm.Machine(tm.SingleNode(), node)
    elif kind == "tree":
        ar = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
        costs = tuple(np.cumsum(draw(st.lists(st.floats(0, 50, allow_nan=False), min_size=len(ar),
                                              max_size=len(ar)))).tolist())
        m = tm.Machine(tm.TreeNetwork(ar, costs), node)
    else:
        dims = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
        if kind == "torus":
            wrap = (True,) * len(dims)
        elif kind == "mesh":
            wrap = (False,) * len(dims)
        else:
            wrap = tuple(draw(st.lists(st.booleans(), min_size=len(dims), max_size=len(dims))))
        m = tm.Machine(tm.Torus(dims, wrap), node)
    if m.nlinks and draw(st.booleans()):
        caps = draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), min_size=m.nlinks, max_size=m.nlinks))
        m.set_capacities(caps)
    return m


@st.composite
def cases(draw, max_n=12):
    """(machine, pattern, pe_of): a random pattern and an n-to-1 mapping onto the machine."""
    m = draw(machines())
    n = draw(st.integers(2, max_n))
    density = draw(st.floats(0.05, 1.0))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dense = (rng.random((n, n)) < density) * rng.choice([1.0, 2.0, 3.5, 10.0], size=(n, n))
    np.fill_diagonal(dense, 0)
    if not dense.any():
        dense[0, 1] = 1.0
    pat = tm.Pattern.from_dense(dense)
    if draw(st.booleans()):  # a pattern that counts its messages (0 to 3 per entry)
        pat = tm.Pattern.from_edges(pat.senders(), pat.indices, pat.bytes, msgs=rng.integers(0, 4, pat.nnz), n=n)
    pe_of = rng.integers(0, m.npes, n).astype(np.int32)
    return m, pat, pe_of


@pytest.fixture
def torus2x2():
    return tm.machine("torus:2x2")
