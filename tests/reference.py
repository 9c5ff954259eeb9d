"""Slow, literal pure-Python reference for topomap's evaluator.

Written only from the written definitions of the machine model and the
metrics, never from the C sources, so that disagreements between the two
point at a real bug rather than a shared misreading.  Every quantity is
computed the most direct way possible; speed is irrelevant here.
"""

import itertools
import math


# ---------------------------------------------------------------- machine model

def num_levels(desc):
    """Number L of intra-node levels."""
    return len(desc["node_groups"])


def node_of(desc, pe):
    return pe // desc["P"]


def local_of(desc, pe):
    return pe % desc["P"]


def _tree_counts(desc):
    """Entity counts for tree levels 0..m (level 0 = nodes, level m = root)."""
    arities = desc["network"]["arities"]
    counts = [desc["nnodes"]]
    for b in arities:
        counts.append(counts[-1] // b)
    return counts


def _tree_offsets(desc):
    """Edge-id offset of each tree level 0..m-1 (the root has no edge)."""
    counts = _tree_counts(desc)
    offsets = [0]
    for level in range(len(desc["network"]["arities"]) - 1):
        offsets.append(offsets[-1] + counts[level])
    return offsets


def num_links(desc):
    net = desc["network"]
    kind = net["kind"]
    if kind == "none":
        return 0
    if kind == "torus":
        return desc["nnodes"] * len(net["dims"]) * 2
    if kind == "tree":
        counts = _tree_counts(desc)
        return 2 * sum(counts[:len(net["arities"])])
    raise ValueError("unknown network kind %r" % kind)


def validate(desc):
    """Reject descriptions that the definitions do not cover, so a malformed
    test fixture fails loudly instead of producing plausible numbers."""
    P = desc["P"]
    L = num_levels(desc)
    if P < 1 or desc["nnodes"] < 1 or L < 1:
        raise ValueError("need P >= 1, nnodes >= 1 and at least one level")
    if len(desc["node_costs"]) != L:
        raise ValueError("node_costs must have one entry per level")
    for groups in desc["node_groups"]:
        if len(groups) != P:
            raise ValueError("each node_groups level must have P entries")
    if any(g != 0 for g in desc["node_groups"][L - 1]):
        raise ValueError("top intra-node level must be the node root (all 0)")
    net = desc["network"]
    kind = net["kind"]
    if kind == "none":
        if desc["nnodes"] != 1:
            raise ValueError("network 'none' requires a single node")
    elif kind == "torus":
        if len(net["wrap"]) != len(net["dims"]):
            raise ValueError("wrap needs one flag per dimension")
        if math.prod(net["dims"]) != desc["nnodes"]:
            raise ValueError("torus dims do not multiply to nnodes")
    elif kind == "tree":
        if len(net["costs"]) != len(net["arities"]) or not net["arities"]:
            raise ValueError("tree needs one cost per level, at least one level")
        if math.prod(net["arities"]) != desc["nnodes"]:
            raise ValueError("tree arities do not multiply to nnodes")
    else:
        raise ValueError("unknown network kind %r" % kind)
    if len(desc.get("capacity", [])) != num_links(desc):
        raise ValueError("capacity must have one entry per directed link")


def torus_coords(desc, node):
    """Coordinates of a node, first coordinate varying fastest."""
    coords = []
    for size in desc["network"]["dims"]:
        coords.append(node % size)
        node //= size
    return coords


def torus_node(desc, coords):
    node = 0
    for c, size in reversed(list(zip(coords, desc["network"]["dims"]))):
        node = node * size + c
    return node


def torus_link(desc, node, dim, direction):
    return (node * len(desc["network"]["dims"]) + dim) * 2 + direction


def _torus_route(desc, a, b):
    net = desc["network"]
    cur = torus_coords(desc, a)
    target = torus_coords(desc, b)
    links = []
    for dim, (size, wrap) in enumerate(zip(net["dims"], net["wrap"])):
        ca, cb = cur[dim], target[dim]
        if wrap:
            delta = (cb - ca) % size
            if delta == 0:
                steps, direction = 0, 0
            elif 2 * delta <= size:
                steps, direction = delta, 0
            else:
                steps, direction = size - delta, 1
        elif cb > ca:
            steps, direction = cb - ca, 0
        else:
            steps, direction = ca - cb, 1
        for _ in range(steps):
            # The link belongs to the node being left, so record it before moving.
            links.append(torus_link(desc, torus_node(desc, cur), dim, direction))
            if direction == 0:
                cur[dim] = cur[dim] + 1
            else:
                cur[dim] = cur[dim] - 1
            if wrap:
                cur[dim] %= size
            elif not 0 <= cur[dim] < size:
                raise AssertionError("mesh route left the mesh")
    if torus_node(desc, cur) != b:
        raise AssertionError("torus route did not reach its target")
    return links


def _tree_climb(desc, a, b):
    """Return (h, up_links, down_links_bottom_up) for nodes a != b."""
    arities = desc["network"]["arities"]
    offsets = _tree_offsets(desc)
    ea, eb = a, b
    level = 0
    ups, downs = [], []
    while ea != eb:
        ups.append(2 * (offsets[level] + ea))
        downs.append(2 * (offsets[level] + eb) + 1)
        ea //= arities[level]
        eb //= arities[level]
        level += 1
    return level, ups, downs


def route(desc, node_a, node_b):
    """Directed link ids used by a message from node_a to node_b, in order."""
    if node_a == node_b:
        return []
    kind = desc["network"]["kind"]
    if kind == "torus":
        return _torus_route(desc, node_a, node_b)
    if kind == "tree":
        _, ups, downs = _tree_climb(desc, node_a, node_b)
        return ups + downs[::-1]
    raise ValueError("no route between distinct nodes on network %r" % kind)


def _intra_lca(desc, pe_a, pe_b):
    """1-based intra-node LCA level of two distinct PEs on the same node."""
    ia, ib = local_of(desc, pe_a), local_of(desc, pe_b)
    for k, groups in enumerate(desc["node_groups"]):
        if groups[ia] == groups[ib]:
            return k + 1
    raise AssertionError("node root level does not join all PEs")


def level_of(desc, pe_a, pe_b):
    if pe_a == pe_b:
        return 0
    na, nb = node_of(desc, pe_a), node_of(desc, pe_b)
    if na == nb:
        return _intra_lca(desc, pe_a, pe_b)
    L = num_levels(desc)
    kind = desc["network"]["kind"]
    if kind == "torus":
        return L + 1
    if kind == "tree":
        h, _, _ = _tree_climb(desc, na, nb)
        return L + h
    raise ValueError("distinct nodes on network %r" % kind)


def distance(desc, pe_a, pe_b):
    if pe_a == pe_b:
        return 0.0
    na, nb = node_of(desc, pe_a), node_of(desc, pe_b)
    if na == nb:
        return float(desc["node_costs"][_intra_lca(desc, pe_a, pe_b) - 1])
    kind = desc["network"]["kind"]
    if kind == "torus":
        return float(len(route(desc, na, nb)))
    if kind == "tree":
        h, _, _ = _tree_climb(desc, na, nb)
        return float(desc["network"]["costs"][h - 1])
    raise ValueError("distinct nodes on network %r" % kind)


def num_level_slots(desc):
    """Length of the level_bytes histogram."""
    L = num_levels(desc)
    if desc["network"]["kind"] == "tree":
        return L + 1 + len(desc["network"]["arities"])
    # torus and none both reserve one network slot (always 0 for none).
    return L + 2


# ---------------------------------------------------------------- metrics

def metrics(desc, src, dst, w, pe_of, weights=(1, 1, 1, 1), msgs=None):
    """Every metric of a placement; ``msgs`` (messages per entry) default to one per entry."""
    validate(desc)
    msgs = [1] * len(src) if msgs is None else list(msgs)
    if not len(src) == len(dst) == len(w):
        raise ValueError("src, dst and w must have equal length")
    seen = set()
    for s, d, x in zip(src, dst, w):
        if s == d or not x > 0:
            raise ValueError("messages must have src != dst and positive bytes")
        if (s, d) in seen:
            raise ValueError("duplicate message %d -> %d" % (s, d))
        seen.add((s, d))

    nlinks = num_links(desc)
    link_load = [0.0] * nlinks
    link_msgs = [0] * nlinks
    level_bytes = [0.0] * num_level_slots(desc)
    hop_bytes = 0.0
    dilation = 0
    max_dilation = 0
    total_bytes = 0.0
    qap = 0.0
    edge_cut = 0.0
    edge_cut_messages = 0

    for s, d, x, c in zip(src, dst, w, msgs):
        a, b = pe_of[s], pe_of[d]
        na, nb = node_of(desc, a), node_of(desc, b)
        links = route(desc, na, nb)
        hops = len(links)
        for link in links:
            link_load[link] += x
            link_msgs[link] += 1
        hop_bytes += x * hops
        dilation += hops
        max_dilation = max(max_dilation, hops)
        total_bytes += x
        qap += x * distance(desc, a, b)
        level_bytes[level_of(desc, a, b)] += x
        if na != nb:
            edge_cut += x
            edge_cut_messages += c

    capacity = desc["capacity"]
    congestion = [0.0] * nlinks
    for link in range(nlinks):
        if link_msgs[link]:
            congestion[link] = link_load[link] / capacity[link]
    used = [congestion[link] for link in range(nlinks) if link_msgs[link]]
    if used:
        max_congestion = max(used)
        nz_avg = sum(used) / len(used)
        nz_var = sum((c - nz_avg) ** 2 for c in used) / len(used)
    else:
        max_congestion = nz_avg = nz_var = 0.0

    pairs = len(src)
    return {
        "hop_bytes": hop_bytes,
        "dilation": dilation,
        "avg_dilation": dilation / pairs if pairs else 0.0,
        "max_dilation": max_dilation,
        "pairs": pairs,
        "messages": sum(msgs),
        "total_bytes": total_bytes,
        "qap": qap,
        "link_load": link_load,
        "congestion": congestion,
        "max_congestion": max_congestion,
        "nz_links": len(used),
        "nz_congestion_avg": nz_avg,
        "nz_congestion_var": nz_var,
        "hybrid": (weights[0] * hop_bytes + weights[1] * max_congestion
                   + weights[2] * nz_avg + weights[3] * nz_var),
        "edge_cut": edge_cut,
        "edge_cut_messages": edge_cut_messages,
        "level_bytes": level_bytes,
    }


def brute_force_best(desc, src, dst, w, pes, key, n=None):
    """Exhaustively minimise metrics(...)[key] over injective maps of the n
    processes onto `pes`.  n defaults to 1 + the largest process id in the
    pattern.  Ties keep the first assignment in itertools.permutations order,
    so the result is deterministic."""
    if n is None:
        n = 1 + max(itertools.chain(src, dst), default=-1)
    if n > 8:
        raise ValueError("brute force is limited to n <= 8 processes")
    if len(set(pes)) != len(pes) or len(pes) < n:
        raise ValueError("need at least n distinct PEs")
    best_value, best_pe_of = None, None
    for perm in itertools.permutations(pes, n):
        value = metrics(desc, src, dst, w, list(perm))[key]
        if best_value is None or value < best_value:
            best_value, best_pe_of = value, list(perm)
    return best_value, best_pe_of
