"""Invariants every network kind's routing oracle must keep.

Each new kind adds representative specs to SPECS (small enough for all node
pairs).  Checked for every pair of nodes: a route is a connected walk over
real links from the source node to the destination node, its length is
route_count, it stays within max_route, same-node routes are empty, the
distance is symmetric in its inputs only where the kind says so, and link
ends/vertices are consistent.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import topomap as tm
from conftest import machines

SPECS = [
    "torus:4x3x2",
    "torus:2x2",
    "mesh:3x4",
    "torus:5/2",
    "hierarchy:2:3:2/1:10:100",
    "hierarchy:2:2:3:1/1:10:100:1000",
    "tree:pack:2 core:2",
    "dragonfly:g=3,a=2,h=1,p=2",
    "dragonfly:g=4,a=2,h=2,p=1,arrangement=relative",
    "dragonfly:g=5,a=2,h=2,p=1,arrangement=circulant/2",
    "hypercube:4/2",
    "xgft:m=2x4,w=1x2",
    "xgft:m=3x2x2,w=2x3x1,p=1x2x2,routing=shortest/2",
    "fattree:ports=4,levels=3,taper=2",
    "fattree:k=3,levels=2,block=2,routing=shortest",
    "circulant:12:1,5",
    "circulant:8/2",
    "shortcut:n=16,d=5,seed=3",
    f"file:{__file__.rsplit('/', 1)[0]}/data/fabric/example.json,routing=dmodk/2",
    f"file:{__file__.rsplit('/', 1)[0]}/data/fabric/topology.conf",
    f"file:{__file__.rsplit('/', 1)[0]}/data/fabric/ibnetdiscover_small.txt,routing=dmodk/2",
    f"file:{__file__.rsplit('/', 1)[0]}/data/fabric/ibnetdiscover_small.txt,"
    f"routes={__file__.rsplit('/', 1)[0]}/data/fabric/routes_full.txt",
]


def check_all_routes(m: tm.Machine) -> None:
    g = m.links()
    ends = {int(l): (int(s), int(d)) for l, s, d in zip(g["link"], g["src"], g["dst"])}
    assert all(0 <= s < m.nvertices and 0 <= d < m.nvertices and s != d for s, d in ends.values())
    longest = 0
    for a in range(m.nnodes):
        for b in range(m.nnodes):
            r = m.route(a, b).tolist()
            assert len(r) == int(m.hops(a, b))
            if a == b:
                assert r == []
                continue
            assert r, f"no route {a}->{b}"
            at = a
            for link in r:
                assert link in ends, f"route {a}->{b} uses link {link}, which does not exist"
                s, d = ends[link]
                assert s == at, f"route {a}->{b} jumps from vertex {at} to link {link} leaving {s}"
                at = d
            assert at == b, f"route {a}->{b} ends at vertex {at}"
            longest = max(longest, len(r))
    assert longest <= m.max_route
    if m.nnodes > 1:
        assert longest == m.summary()["diameter"]


@pytest.mark.parametrize("spec", SPECS)
def test_routes_are_connected_walks(spec):
    check_all_routes(tm.machine(spec))


@given(machines())
def test_routes_are_connected_walks_on_random_machines(m):
    if m.nnodes <= 64:
        check_all_routes(m)


@pytest.mark.parametrize("spec", SPECS)
def test_link_capacities_are_per_link(spec):
    m = tm.machine(spec)
    g = m.links()
    if g["link"].size:
        caps = np.ones(m.nlinks)
        caps[g["link"][0]] = 7.0
        m.set_capacities(caps)
        assert m.links()["capacity"][0] == 7.0
