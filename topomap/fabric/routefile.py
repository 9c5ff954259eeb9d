"""ibtracert-style route files: one explicit route per ordered node pair.

Source: Mirsadeghi's thesis (000 notes section 1.2, features item 4): a
modified ``ibtracert`` writes the route between every ordered pair of end
nodes as a sequence of switches and ports, giving a routing file of N^2
lines; each PTRAM leader loads only the routes from and to its own node, so
it holds O(N) of them.  The thesis does not give its line format; ours is::

    # comments and blank lines are ignored
    node001 S-0002c903004a1a00[31] S-0002c903004a1c00[3] S-0002c903004a1b00 node005
    node001[1] S-0002c903004a1a00 node002

One route per line: the hops from the source node to the destination node,
separated by blanks, each a vertex name or alias of the fabric (node names,
switch names, ``ibnetdiscover`` ids).  ``NAME[PORT]`` says the route leaves
that vertex through ``PORT`` (the ``[31]`` of ibtracert's ``[31] -> switch
port ...`` lines); without a port the lowest-id link to the next hop is
taken, which is only ambiguous where parallel cables exist.  The first and
last hops must be compute nodes and the ones between switches.

:func:`read_routes` streams the file and resolves only the routes wanted
(``among`` a set of nodes, or ``touching`` one, as a PTRAM leader does); it
still checks the two end names of every line, so a truncated last line or a
file written for another fabric is noticed.  Routes become ``"table"``
routing with :meth:`Fabric.with_routes`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from ..errors import FormatError, MachineError
from ..io.atomic import atomic_write
from .model import Fabric, parse_hop, text_lines

if TYPE_CHECKING:
    from ..machine import Machine

__all__ = ["read_routes", "write_routes"]


def read_routes(path: "str | os.PathLike[str]", fabric: Fabric, among: Iterable[Any] | None = None,
                touching: Iterable[Any] | None = None,
                complete: bool = False) -> dict[tuple[int, int], tuple[int, ...]]:
    """Stream a route file and return ``{(src node, dst node): link ids}`` for the pairs wanted.

    Parameters
    ----------
    path : path-like
        The route file (format in the module docstring).
    fabric : Fabric
        The fabric the routes run on (names, ports and link ids).
    among : iterable of node ids or names, optional
        Keep only routes whose two ends are both in this set (an allocation).
    touching : iterable of node ids or names, optional
        Keep only routes that start or end in this set (one PTRAM leader
        loads ``touching=[its node]``: O(N) routes).
    complete : bool
        Require a route for every ordered pair of distinct nodes of the kept
        set (``among``, or all nodes); a missing one is an error naming it.

    Examples
    --------
    >>> import os, tempfile, topomap as tm
    >>> from topomap.fabric import Fabric, read_routes
    >>> fab = Fabric(["a", "b", "c"], ["s"], [0, 3, 1, 3, 2, 3], [3, 0, 3, 1, 3, 2])
    >>> path = os.path.join(tempfile.mkdtemp(), "routes.txt")
    >>> _ = open(path, "w").write("a s b\\na s c\\nb s a\\nc s b\\n")
    >>> read_routes(path, fab, touching=["b"])
    {(0, 1): (0, 3), (1, 0): (2, 1), (2, 1): (4, 3)}
    """
    label = os.fspath(path)
    nodes = {name: v for v, name in enumerate(fabric.nodes)}
    nodes.update((a, v) for a, v in fabric.aliases.items() if v < fabric.nnodes)
    keep_among = None if among is None else {fabric.node(x) for x in among}
    keep_touch = None if touching is None else {fabric.node(x) for x in touching}
    routes: dict[tuple[int, int], tuple[int, ...]] = {}
    seen_at: dict[tuple[int, int], int] = {}
    for no, raw in text_lines(label):
        text = raw.split("#", 1)[0]
        hops = text.split()
        if not hops:
            continue
        ends = []
        for hop in (hops[0], hops[-1]):
            try:
                name, _ = parse_hop(hop)
            except MachineError as err:
                raise FormatError(f"{label}:{no}: {err}") from None
            if name not in nodes:
                what = "a switch" if name in fabric.names or name in fabric.aliases else "not a node of the fabric"
                raise FormatError(f"{label}:{no}: a route must start and end at compute nodes; {name!r} is {what}")
            ends.append(nodes[name])
        a, b = ends
        if (keep_among is not None and not (a in keep_among and b in keep_among)) or \
                (keep_touch is not None and not (a in keep_touch or b in keep_touch)):
            continue
        if a == b:
            raise FormatError(f"{label}:{no}: a route from {fabric.nodes[a]!r} to itself")
        if (a, b) in routes:
            raise FormatError(f"{label}:{no}: a second route {fabric.nodes[a]} -> {fabric.nodes[b]} "
                              f"(the first is at line {seen_at[(a, b)]})")
        try:
            routes[(a, b)] = fabric.resolve_route(hops)
        except MachineError as err:
            raise FormatError(f"{label}:{no}: {err}") from None
        seen_at[(a, b)] = no
    if complete:
        want = sorted(keep_among) if keep_among is not None else range(fabric.nnodes)
        for a in want:
            for b in want:
                if a != b and (a, b) not in routes and (keep_touch is None or a in keep_touch or b in keep_touch):
                    raise FormatError(f"{label}: no route from {fabric.nodes[a]!r} to {fabric.nodes[b]!r}")
    return routes


def write_routes(path: "str | os.PathLike[str]", fabric: Fabric,
                 routes: "Mapping[tuple[int, int], Sequence[int]] | Machine | None" = None,
                 among: Iterable[Any] | None = None) -> int:
    """Write a route file with one line per ordered pair of distinct nodes; returns the line count.

    ``routes`` is a ``{(a, b): link ids}`` mapping, a :class:`~topomap.Machine`
    built from this fabric (its routing oracle is asked for every pair), or
    None for the fabric's own routes.  ``among`` restricts the pairs.

    Examples
    --------
    >>> import os, tempfile
    >>> from topomap.fabric import Fabric, read_routes, write_routes
    >>> fab = Fabric(["a", "b"], ["s"], [0, 2, 1, 2], [2, 0, 2, 1]).with_routes({(0, 1): [0, 3], (1, 0): [2, 1]})
    >>> path = os.path.join(tempfile.mkdtemp(), "routes.txt")
    >>> write_routes(path, fab), open(path).read().splitlines()[-1]
    (2, 'b s a')
    """
    if routes is None:
        if not fabric.routes:
            raise MachineError("the fabric has no routes to write; pass routes or a machine")
        routes = fabric.routes
    from ..machine import Machine

    table = routes
    ask = table.route if isinstance(table, Machine) else lambda a, b: table[(a, b)]
    nodes = range(fabric.nnodes) if among is None else [fabric.node(x) for x in among]
    count = 0
    with atomic_write(path) as out:
        out.write("# topomap route file: one route per line, hops from the source node to the destination node\n")
        for a in nodes:
            for b in nodes:
                if a == b:
                    continue
                try:
                    links = [int(x) for x in ask(a, b)]
                except KeyError:
                    raise MachineError(f"no route from {fabric.nodes[a]!r} to {fabric.nodes[b]!r} to write") from None
                out.write(" ".join(fabric.route_hops(links)) + "\n")
                count += 1
    return count
