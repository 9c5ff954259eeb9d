"""Machine spec strings: one grammar, accepted everywhere a machine is expected.

Grammar (``NODE`` is an integer number of PEs per node, default 1, or an
hwloc synthetic string such as ``pack:2 core:8``):

============================================ =====================================================
``torus:8x8x8/16``                           3-D torus of 512 nodes with 16 PEs each
``mesh:16x16/4``                             2-D mesh (no wrap-around)
``torus:8x8x8/pack:2 core:8``                torus of nodes with a 2-level node tree
``hierarchy:4:8:8/1:10:100``                 KaHIP/VieM/Scotch ``tleaf`` model: 4 PEs per
                                             lowest group, 8 groups per level-2 group, 8 of those;
                                             distance 1, 10, 100 by lowest common level.  One
                                             lowest group is one compute node; append
                                             ``,node_levels=2`` to put two levels inside a node.
``tree:pack:2 numa:2 core:8 pu:2``           one node with that hwloc synthetic tree
``xml:topo.xml``                             one node from an hwloc XML file
``gpu:clusterA``                             one GPU node (preset, ``discover`` or file); as a
                                             node suffix, e.g. ``fattree:k=4,levels=2/gpu:dgx``
``discover``                                 one node: this machine (hwloc, lstopo or sysfs)
============================================ =====================================================

Distances: inside a node, a torus/mesh machine uses node-tree costs of 0 (the
QAP distance then equals network hops) unless the node tree is given costs
explicitly through the Python API; ``hierarchy`` uses the given distances
(default ``1:10:100:...``); ``tree``/``xml``/``discover`` use the level depth
(1, 2, ...), like a Scotch ``tleaf`` with unit link costs.
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np

from ..errors import MachineError
from ..machine import Machine
from ..node.gpu_presets import gpu_node
from ..node.nodetree import NodeTree
from .base import Network
from .single import SingleNode
from .tree import TreeNetwork

__all__ = ["machine", "parse_node", "register_spec", "spec_int", "spec_float", "grid"]

Parser = Callable[[str, str, str], "tuple[Network, NodeTree]"]
_KINDS: dict[str, Parser] = {}
_BARE: set[str] = set()


def register_spec(*kinds: str, bare: bool = False) -> Callable:
    """Decorator: ``parser(kind, body, spec) -> (network, node tree)`` handles ``KIND:BODY`` specs.

    With ``bare=True`` the kind also stands alone, as ``KIND`` or ``KIND/NODE``
    (a preset such as ``gpc/8``); its parser then gets ``""`` or ``"/NODE"``.
    """
    def deco(parser: Parser) -> Parser:
        for kind in kinds:
            if kind in _KINDS:
                raise ValueError(f"machine spec kind {kind!r} is registered twice")
            _KINDS[kind] = parser
            if bare:
                _BARE.add(kind)
        return parser
    return deco

_MAX_PES = 2**31 - 1


def spec_int(token: str, what: str, spec: str) -> int:
    if not re.fullmatch(r"\d+", token.strip()):
        raise MachineError(f"{what} {token!r} in machine spec {spec!r} is not a positive integer")
    value = int(token)
    if value < 1:
        raise MachineError(f"{what} must be >= 1 in machine spec {spec!r}, got {value}")
    return value


def spec_float(token: str, what: str, spec: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise MachineError(f"{what} {token!r} in machine spec {spec!r} is not a number") from None
    if not np.isfinite(value) or value < 0:
        raise MachineError(f"{what} must be finite and >= 0 in machine spec {spec!r}, got {token!r}")
    return value


def parse_node(text: str, spec: str, cost: float | None = 0.0) -> NodeTree:
    """Node tree of a ``/NODE`` suffix: a PE count, an hwloc synthetic string, or ``gpu:DESCRIPTION``
    (a GPU node: preset, ``discover`` or file, see :func:`topomap.node.gpu_presets.gpu_node`).

    ``cost`` (when not None) replaces every level cost.
    """
    text = text.strip()
    if text.lower().startswith("gpu:"):
        tree = gpu_node(text[4:]).node_tree()
    elif re.fullmatch(r"\d+", text):
        tree = NodeTree.flat(spec_int(text, "PEs per node", spec))
    elif ":" in text or " " in text:
        tree = NodeTree.from_synthetic(text)
    else:
        raise MachineError(f"node description {text!r} in machine spec {spec!r} is neither a PE count nor a synthetic tree")
    return tree if cost is None else tree.with_costs(np.full(len(tree.levels), cost))


def grid(body: str, spec: str) -> tuple[int, ...]:
    dims = tuple(spec_int(t, "dimension", spec) for t in body.split("x"))
    if int(np.prod(dims, dtype=object)) > _MAX_PES:
        raise MachineError(f"machine spec {spec!r} has more than 2^31 nodes")
    return dims


@register_spec("hierarchy")
def _hierarchy(kind: str, body: str, spec: str) -> tuple[Network, NodeTree]:
    opts = body.split(",")
    main, extra = opts[0], opts[1:]
    node_levels = 1
    for opt in extra:
        key, _, value = opt.partition("=")
        if key.strip() != "node_levels":
            raise MachineError(f"unknown hierarchy option {opt!r} in machine spec {spec!r}")
        node_levels = spec_int(value, "node_levels", spec)
    arity_text, _, dist_text = main.partition("/")
    arities = [spec_int(t, "hierarchy arity", spec) for t in arity_text.split(":")]
    if dist_text:
        dists = [spec_float(t, "hierarchy distance", spec) for t in dist_text.split(":")]
        if len(dists) != len(arities):
            raise MachineError(f"machine spec {spec!r} has {len(arities)} arities but {len(dists)} distances")
    else:
        dists = [10.0**k for k in range(len(arities))]
    for a, b in zip(dists, dists[1:]):
        if b < a:
            raise MachineError(f"hierarchy distances must not decrease in machine spec {spec!r} "
                               f"({b:g} follows {a:g})")
    if node_levels > len(arities):
        raise MachineError(f"node_levels={node_levels} exceeds the {len(arities)} levels of {spec!r}")
    if int(np.prod(arities, dtype=object)) > _MAX_PES:
        raise MachineError(f"machine spec {spec!r} has more than 2^31 PEs")
    # Node tree arities are top-down; the hierarchy lists them bottom-up.
    # Names top-down, the last being the PE type; the root is "Node".  The lowest group
    # (distance d1) is "level1", so level_names[k] matches the k-th distance.
    node = NodeTree.from_arities(arities[:node_levels][::-1], costs=dists[:node_levels],
                                 names=[f"level{i}" for i in range(node_levels - 1, 0, -1)] + ["PE"])
    up = arities[node_levels:]
    net = TreeNetwork(tuple(up), tuple(dists[node_levels:])) if up else SingleNode()
    return net, node


@register_spec("tree")
def _tree(kind: str, body: str, spec: str) -> tuple[Network, NodeTree]:
    return SingleNode(), parse_node(body, spec, cost=None)


@register_spec("gpu")
def _gpu(kind: str, body: str, spec: str) -> tuple[Network, NodeTree]:
    return SingleNode(), parse_node(f"gpu:{body}", spec, cost=None)


@register_spec("xml")
def _xml(kind: str, body: str, spec: str) -> tuple[Network, NodeTree]:
    return SingleNode(), NodeTree.from_hwloc_xml(body)


def machine(spec: "str | Machine") -> Machine:
    """Build a :class:`~topomap.Machine` from a spec string (see the module docstring).

    Examples
    --------
    >>> import topomap as tm
    >>> tm.machine("hierarchy:4:8:8/1:10:100").npes
    256
    >>> tm.machine("mesh:3x3").summary()["diameter"]
    4
    """
    if isinstance(spec, Machine):
        return spec
    if not isinstance(spec, str):
        raise MachineError(f"a machine spec must be a string, got {type(spec).__name__}")
    spec = spec.strip()
    kind, sep, body = spec.partition(":")
    kind = kind.lower()
    if kind == "discover" and not sep:
        return Machine(SingleNode(), NodeTree.discover(), spec=spec)
    head, slash, rest = spec.partition("/")
    if not sep and head.lower() in _BARE:
        kind, body = head.lower(), slash + rest
    elif not sep or not body.strip():
        raise MachineError(f"machine spec {spec!r} needs the form KIND:PARAMETERS (e.g. torus:8x8x8/16)")
    if kind not in _KINDS:
        raise MachineError(f"unknown machine kind {kind!r} in spec {spec!r}; known: "
                           f"{', '.join(sorted([*_KINDS, 'discover']))}")
    try:
        network, node = _KINDS[kind](kind, body, spec)
        return Machine(network, node, spec=spec)
    except MachineError as exc:
        if spec in str(exc):
            raise
        # the core's size limits and kind-level checks: say which spec hit them
        raise MachineError(f"machine spec {spec!r}: {exc}") from None
