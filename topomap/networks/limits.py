"""Size limits checked from a description before a network is built.

A spec string or a fabric file of a few bytes can describe a network whose
construction takes minutes and gigabytes (``shortcut:n=1000000``, a Slurm
line ``Nodes=rack[0-1048575]``).  Every builder whose cost grows with the
size it is asked for therefore estimates that size from the description
first and refuses it here, in microseconds, with a message that names the
limit and how to change it:

* :data:`MAX_TABLE_BYTES`: the forwarding tables of a ``shortest``/``dmodk``
  routed graph network take ``vertices x nodes`` entries of one byte (two
  when a vertex has more than 255 outgoing links).  The C core refuses tables
  above ``TOPOMAP_GRAPH_MAX_TABLE`` (1 GiB, ``csrc/include/topomap/graph.h``)
  only after the graph was built; this module refuses them before.
  Lowering the constant tightens the check; raising it past the core's limit
  only moves the refusal back to the core.  A ``routing="table"`` network
  (explicit routes) has no forwarding tables.
* :data:`MAX_ROUTE_WORK`: those tables are built by one breadth-first
  search per node, ``nodes x (vertices + links)`` steps of about 3 ns on
  one core (threaded over nodes): ``circulant:25664`` is within the table
  limit but takes two minutes on one core.  The default, ``2**33`` (about
  25 s on one core), admits fabrics of 30 000 nodes and 200 000 links.
* :data:`MAX_GRAPH_LINKS`: directed links of a graph network generated from
  a spec (``circulant``, ``shortcut``); these are built link by link in
  Python, about 0.3 kB and 2 us per link.

Set either as a module attribute (``topomap.networks.limits.MAX_GRAPH_LINKS
= 2**24``); the checks read it at call time.
"""

from __future__ import annotations

from ..errors import MachineError

__all__ = ["MAX_TABLE_BYTES", "MAX_ROUTE_WORK", "MAX_GRAPH_LINKS", "check_tables", "check_links", "table_bytes"]

MAX_TABLE_BYTES = 2**30
MAX_ROUTE_WORK = 2**33
MAX_GRAPH_LINKS = 2**22


def table_bytes(nvertices: int, nnodes: int, max_out_links: int) -> int:
    """Bytes of the forwarding tables of a graph network (the C core's formula).

    Examples
    --------
    >>> table_bytes(100_000, 100_000, 33) >> 20
    9536
    """
    return nvertices * nnodes * (1 if max_out_links <= 255 else 2)


def check_tables(nvertices: int, nnodes: int, nlinks: int, max_out_links: int, what: str) -> None:
    """Refuse a ``shortest``/``dmodk`` graph network whose forwarding tables exceed
    :data:`MAX_TABLE_BYTES` or take more than :data:`MAX_ROUTE_WORK` search steps
    to build, before it is built.  ``what`` (the network, may be empty) starts the message.

    Examples
    --------
    >>> check_tables(1000, 1000, 8000, 8, "circulant:1000")
    >>> check_tables(25664, 25664, 744256, 29, "shortcut:n=25664")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    topomap.errors.MachineError: shortcut:n=25664: building the forwarding tables takes 25664 nodes x (25664 vertices + 744256 links) = 19759226880 search steps, above the limit of 8589934592 ...
    >>> check_tables(100_000, 100_000, 3_300_000, 33, "shortcut:n=100000")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    topomap.errors.MachineError: shortcut:n=100000: forwarding tables of 100000 vertices x 100000 nodes need 9536 MiB, above the 1024 MiB limit (topomap.networks.limits.MAX_TABLE_BYTES...
    """
    what = f"{what}: " if what else ""
    need = table_bytes(nvertices, nnodes, max_out_links)
    if need > MAX_TABLE_BYTES:
        raise MachineError(
            f"{what}forwarding tables of {nvertices} vertices x {nnodes} nodes need {need >> 20} MiB, "
            f"above the {MAX_TABLE_BYTES >> 20} MiB limit (topomap.networks.limits.MAX_TABLE_BYTES, at most "
            f"the C core's TOPOMAP_GRAPH_MAX_TABLE; explicit routes, routing='table', need no tables)")
    work = nnodes * (nvertices + nlinks)
    if work > MAX_ROUTE_WORK:
        raise MachineError(
            f"{what}building the forwarding tables takes {nnodes} nodes x ({nvertices} vertices + {nlinks} links) "
            f"= {work} search steps, above the limit of {MAX_ROUTE_WORK} (topomap.networks.limits.MAX_ROUTE_WORK; "
            f"about 3 ns a step on one core)")


def check_links(nlinks: int, what: str) -> None:
    """Refuse a generated graph network of more than :data:`MAX_GRAPH_LINKS` directed links.

    Examples
    --------
    >>> check_links(2**23, "shortcut:n=32768,d=256")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    topomap.errors.MachineError: shortcut:n=32768,d=256: 8388608 directed links, above the limit of 4194304 ...
    """
    if nlinks > MAX_GRAPH_LINKS:
        raise MachineError(f"{what}: {nlinks} directed links, above the limit of {MAX_GRAPH_LINKS} "
                           f"(topomap.networks.limits.MAX_GRAPH_LINKS)")
