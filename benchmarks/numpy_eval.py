"""The same metrics as topomap's C evaluator for torus/mesh machines with flat
nodes, written the way a NumPy user would: vectorised over all messages, one
``bincount`` per route step.  The benchmark's comparison point, and a second
independent implementation it checks the C results against."""

from __future__ import annotations

import numpy as np


def numpy_evaluate(src, dst, w, pe_of, dims, wrap, pes_per_node, capacity=None):
    dims = np.asarray(dims, dtype=np.int64)
    nd = dims.size
    nnodes = int(dims.prod())
    nlinks = nnodes * nd * 2
    na = pe_of[src].astype(np.int64) // pes_per_node
    nb = pe_of[dst].astype(np.int64) // pes_per_node
    strides = np.concatenate([[1], np.cumprod(dims)[:-1]])
    load = np.zeros(nlinks)
    hops = np.zeros(src.size, dtype=np.int64)
    cur = na.copy()
    for d in range(nd):
        size, st = int(dims[d]), int(strides[d])
        ca, cb = (na // st) % size, (nb // st) % size
        if wrap[d]:
            delta = (cb - ca) % size
            delta = np.where(2 * delta <= size, delta, delta - size)
        else:
            delta = cb - ca
        steps = np.abs(delta)
        hops += steps
        neg = delta < 0
        idx = np.flatnonzero(steps)
        for s in range(int(steps.max(initial=0))):
            idx = idx[steps[idx] > s]
            c = cur[idx]
            load += np.bincount((c * nd + d) * 2 + neg[idx], weights=w[idx], minlength=nlinks)
            coord = (c // st) % size
            nxt = np.where(neg[idx], (coord - 1) % size, (coord + 1) % size)
            cur[idx] = c + (nxt - coord) * st
    cong = load if capacity is None else load / capacity
    nz = cong[load > 0]
    return {
        "hop_bytes": float((w * hops).sum()),
        "dilation": float(hops.sum()),
        "max_dilation": int(hops.max(initial=0)),
        "edge_cut": float(w[na != nb].sum()),
        "max_congestion": float(nz.max(initial=0.0)),
        "nz_links": int(nz.size),
        "nz_congestion_avg": float(nz.mean()) if nz.size else 0.0,
        "nz_congestion_var": float(nz.var()) if nz.size else 0.0,
    }
