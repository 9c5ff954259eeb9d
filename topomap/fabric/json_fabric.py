"""topomap's own JSON fabric description (schema below; example: tests/data/fabric/example.json).

Schema (version 1).  Unknown keys are refused, so a typo such as
``"capcity"`` is an error naming its line rather than a silent default::

    {
      "format": "topomap-fabric",          optional; if present exactly this
      "version": 1,                        optional; if present exactly 1
      "description": "free text",          optional
      "nodes":    ["n0", "n1", ...],       compute nodes: node ids in this order
      "switches": ["s0", ...],             switches: vertex ids after the nodes
      "aliases":  {"other-name": "n0"},    optional extra names for vertices
      "links": [                           cables, in link-id order
        {"a": "n0", "b": "s0"},
        {"a": "s0", "b": "s1", "capacity": 4.0, "count": 2},
        {"a": "s1[7]", "b": "s2[1]"},
        {"a": "s2", "b": "n1", "bidirectional": false}
      ],
      "routes": [                          optional explicit routes, one per ordered node pair
        ["n0", "s0", "s1[7]", "s2", "n1"]
      ]
    }

Links: ``a`` and ``b`` name declared vertices, optionally with the port the
cable uses at that end (``"s1[7]"``; a vertex's ports are all given or all
implicit, see :mod:`topomap.fabric.model`).  ``capacity`` (default 1, any
consistent unit) applies to each direction; ``count`` (default 1) repeats
the cable, for parallel cables; ``bidirectional`` (default true) makes the
cable two directed links ``a -> b`` and ``b -> a`` with consecutive ids,
false only ``a -> b``.

Routes: the hops of one route, from its source node to its destination node
through switches; ``"s1[7]"`` leaves ``s1`` through port 7 (needed only to
pick one of several parallel cables).  Routes make ``"table"`` routing the
default of :meth:`Fabric.to_network`; pairs without a route are an error when
a table-routed machine is asked for them.

Errors are :class:`~topomap.FormatError` naming ``file:line`` of the value at
fault (JSON syntax, unknown keys, wrong types, duplicate keys or names,
links to undeclared vertices, bad numbers, routes that do not connect).
"""

from __future__ import annotations

import bisect
import json
import json.decoder
import json.scanner
import os
from typing import Any, Callable

import numpy as np

from ..errors import FormatError, MachineError
from ..io.atomic import atomic_write
from .model import Fabric, FabricBuilder, parse_hop, read_text

__all__ = ["read_json", "loads", "dumps", "write_json"]

_TOP_KEYS = {"format", "version", "description", "nodes", "switches", "aliases", "links", "routes"}
_LINK_KEYS = {"a", "b", "capacity", "count", "bidirectional"}
_MAX_DEPTH = 32


class _Str(str):
    """A JSON string that knows its offset (``.pos``)."""


class _Int(int):
    """A JSON integer that knows its offset."""


class _Float(float):
    """A JSON number that knows its offset."""


class _Dict(dict):
    """A JSON object that knows its offset."""


class _List(list):
    """A JSON array that knows its offset."""


_TAGS: dict[type, type] = {str: _Str, int: _Int, float: _Float, _Dict: _Dict, list: _List}


class _DuplicateKey(Exception):
    pass


class _Located(Exception):
    def __init__(self, pos: int, message: str):
        super().__init__(message)
        self.pos, self.message = pos, message


def _pairs(pairs: list[tuple[str, Any]]) -> _Dict:
    out = _Dict()
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


class _Decoder(json.JSONDecoder):
    """A JSON decoder whose values remember their character offset (``.pos``).

    Python's pure scanner hands ``parse_object``/``parse_array`` the function
    that scans nested values; wrapping it tags every value with where it
    started, which the C scanner cannot do.  Fabric files are small, so the
    slower pure scanner is fine.
    """

    def __init__(self) -> None:
        super().__init__(object_pairs_hook=_pairs)
        self._depth = 0
        self.parse_object = self._object
        self.parse_array = self._array
        self.scan_once = self._tagging(json.scanner.py_make_scanner(self))

    def _tagging(self, scan: Callable) -> Callable:
        def scan_once(s: str, idx: int) -> tuple[Any, int]:
            try:
                value, end = scan(s, idx)
            except _DuplicateKey as err:
                raise _Located(idx, f"key {err.args[0]!r} appears twice in this object") from None
            except ValueError as err:
                if isinstance(err, json.JSONDecodeError):
                    raise
                raise _Located(idx, str(err)) from None
            tag = _TAGS.get(type(value))
            if tag is not None:
                value = value if tag is _Dict else tag(value)
                value.pos = idx
            return value, end
        return scan_once

    def _nested(self, parse: Callable, s_and_end: tuple[str, int], *args: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > _MAX_DEPTH:
                raise _Located(s_and_end[1] - 1, f"JSON nested deeper than {_MAX_DEPTH} levels")
            return parse(s_and_end, *args)
        finally:
            self._depth -= 1

    def _object(self, s_and_end: tuple[str, int], strict: bool, scan: Callable, *rest: Any) -> Any:
        return self._nested(json.decoder.JSONObject, s_and_end, strict, self._tagging(scan), *rest)

    def _array(self, s_and_end: tuple[str, int], scan: Callable) -> Any:
        return self._nested(json.decoder.JSONArray, s_and_end, self._tagging(scan))


class _Lines:
    """``file:line`` of a character offset."""

    def __init__(self, text: str, label: str):
        self.label = label
        self.starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def __call__(self, value: Any, fallback: Any = None) -> str:
        pos = getattr(value, "pos", None)
        if pos is None:
            pos = getattr(fallback, "pos", 0)
        return f"{self.label}:{bisect.bisect_right(self.starts, pos)}"


def loads(text: str, name: str = "<string>", max_nodes: int | None = None) -> Fabric:
    """Parse a JSON fabric description (schema in the module docstring); more than
    ``max_nodes`` compute nodes raise :class:`~topomap.fabric.model.NodeLimit`.

    Examples
    --------
    >>> from topomap.fabric import json_fabric
    >>> fab = json_fabric.loads('''{"nodes": ["n0", "n1"], "switches": ["s0"],
    ...   "links": [{"a": "n0", "b": "s0"}, {"a": "n1", "b": "s0", "capacity": 2}]}''')
    >>> fab.nnodes, fab.nlinks, fab.capacity.tolist()
    (2, 4, [1.0, 1.0, 2.0, 2.0])
    >>> json_fabric.loads('{"nodes": ["n0", "n1"], "switches": ["s0"], "links": [{"a": "n0", "b": "s9"}]}')
    Traceback (most recent call last):
    ...
    topomap.errors.FormatError: <string>:1: link to nowhere: 's9' is not a declared node or switch
    """
    where = _Lines(text, name)
    try:
        doc = _Decoder().decode(text)
    except json.JSONDecodeError as err:
        raise FormatError(f"{name}:{err.lineno}: not valid JSON: {err.msg} (column {err.colno})") from None
    except _Located as err:
        raise FormatError(f"{name}:{bisect.bisect_right(where.starts, err.pos)}: {err.message}") from None
    return _build(doc, where, max_nodes)


def read_json(path: "str | os.PathLike[str]", max_nodes: int | None = None) -> Fabric:
    """Read a JSON fabric file (schema in the module docstring).

    Parameters
    ----------
    path : path-like
        The file; faults raise :class:`~topomap.FormatError` naming ``path:line``.
    max_nodes : int, optional
        Refuse a fabric of more compute nodes as soon as one more is declared.

    Examples
    --------
    >>> import os, tempfile
    >>> from topomap.fabric import read_json
    >>> path = os.path.join(tempfile.mkdtemp(), "fabric.json")
    >>> _ = open(path, "w").write('{"nodes": ["a", "b"], "links": [{"a": "a", "b": "b", "count": 2}]}')
    >>> read_json(path).nlinks
    4
    """
    label = os.fspath(path)
    text = read_text(label)
    return loads(text, label, max_nodes)


def _build(doc: Any, where: _Lines, max_nodes: int | None) -> Fabric:
    def need(value: Any, kind: type, what: str, at: Any) -> Any:
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise FormatError(f"{where(value, at)}: {what} must be {_KIND_NAMES[kind]}, got {_json_type(value)}")
        return value

    need(doc, dict, "a fabric description", doc)
    unknown = sorted(set(doc) - _TOP_KEYS)
    if unknown:
        raise FormatError(f"{where(doc)}: unknown key {unknown[0]!r}; known: {', '.join(sorted(_TOP_KEYS))}")
    if "format" in doc and doc["format"] != "topomap-fabric":
        raise FormatError(f"{where(doc['format'], doc)}: format must be 'topomap-fabric', got {doc['format']!r}")
    if "version" in doc and (isinstance(doc["version"], bool) or doc["version"] != 1):
        raise FormatError(f"{where(doc['version'], doc)}: only version 1 is known, got {doc['version']!r}")
    for key in ("nodes", "links"):
        if key not in doc:
            raise FormatError(f"{where(doc)}: the fabric has no {key!r} list")
    b = FabricBuilder(where.label, max_nodes)
    for key, declare in (("nodes", b.node), ("switches", b.switch)):
        for name in need(doc.get(key, _List()), list, f"{key!r}", doc):
            declare(need(name, str, f"a name in {key!r}", doc[key]), where(name, doc[key]))
    aliases = need(doc.get("aliases", _Dict()), dict, "'aliases'", doc)
    for alias, name in aliases.items():
        b.alias(alias, need(name, str, f"alias {alias!r}", aliases), where(name, aliases))
    for link in need(doc["links"], list, "'links'", doc):
        need(link, dict, "a link", doc["links"])
        at = where(link)
        unknown = sorted(set(link) - _LINK_KEYS)
        if unknown:
            raise FormatError(f"{at}: unknown link key {unknown[0]!r}; known: {', '.join(sorted(_LINK_KEYS))}")
        ends = []
        for key in ("a", "b"):
            if key not in link:
                raise FormatError(f"{at}: the link has no {key!r} end")
            try:
                ends.append(parse_hop(need(link[key], str, f"link end {key!r}", link)))
            except MachineError as err:
                raise FormatError(f"{where(link[key], link)}: {err}") from None
        cap = link.get("capacity", 1.0)
        if not isinstance(cap, (int, float)) or isinstance(cap, bool):
            raise FormatError(f"{where(cap, link)}: capacity must be a number, got {_json_type(cap)}")
        count = need(link.get("count", _Int(1)), int, "count", link)
        both = need(link.get("bidirectional", True), bool, "bidirectional", link)
        (a, ap), (bn, bp) = ends
        b.cable(a, bn, at, capacity=cap, count=int(count), both=both, a_port=ap, b_port=bp)
    for route in need(doc.get("routes", _List()), list, "'routes'", doc):
        need(route, list, "a route", doc["routes"])
        b.route([need(h, str, "a route hop", route) for h in route], where(route))
    return b.build()


_KIND_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer", bool: "true or false"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    for kind, text in ((str, "a string"), (int, "an integer"), (float, "a number"), (dict, "an object"),
                       (list, "a list")):
        if isinstance(value, kind):
            return f"{text} {value!r}" if kind in (str, int, float) else text
    return type(value).__name__


def dumps(fabric: Fabric) -> str:
    """The fabric as JSON text in this module's schema; :func:`loads` gives it back unchanged.

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.fabric import json_fabric
    >>> fab = tm.fabric.Fabric(["n0", "n1"], ["s0"], [0, 2, 1, 2], [2, 0, 2, 1])
    >>> json_fabric.loads(json_fabric.dumps(fab)) == fab
    True
    """
    names, src, dst, port, cap = fabric.names, fabric.src, fabric.dst, fabric.port, fabric.capacity
    explicit = _explicit_port_vertices(fabric)

    def end(v: int, link: int | None) -> str:
        return f"{names[v]}[{port[link]}]" if link is not None and explicit[v] else names[v]

    entries: list[dict[str, Any]] = []
    i, n = 0, fabric.nlinks
    while i < n:
        u, v = int(src[i]), int(dst[i])
        both = i + 1 < n and src[i + 1] == v and dst[i + 1] == u and cap[i + 1] == cap[i]
        step = 2 if both else 1
        entry: dict[str, Any] = {"a": end(u, i), "b": end(v, i + 1 if both else None)}
        if cap[i] != 1.0:
            entry["capacity"] = float(cap[i])
        if not both:
            entry["bidirectional"] = False
        count = 1
        if not (explicit[u] or explicit[v]):
            while (i + step * (count + 1) <= n
                   and all(src[i + step * count + k] == src[i + k] and dst[i + step * count + k] == dst[i + k]
                           and cap[i + step * count + k] == cap[i] for k in range(step))):
                count += 1
        if count > 1:
            entry["count"] = count
        entries.append(entry)
        i += step * count
    lines = ['{', '  "format": "topomap-fabric",', '  "version": 1,',
             f'  "nodes": {json.dumps(list(fabric.nodes))},', f'  "switches": {json.dumps(list(fabric.switches))},']
    if fabric.aliases:
        lines.append(f'  "aliases": {json.dumps({a: names[v] for a, v in fabric.aliases.items()})},')
    body = [("links", entries)]
    if fabric.routes:
        body.append(("routes", [fabric.route_hops(r) for r in fabric.routes.values()]))
    for k, (key, items) in enumerate(body):
        lines.append(f'  "{key}": [')
        lines.extend(f"    {json.dumps(item)}{',' if j + 1 < len(items) else ''}" for j, item in enumerate(items))
        lines.append("  ]" + ("," if k + 1 < len(body) else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_json(fabric: Fabric, path: "str | os.PathLike[str]") -> None:
    """Write the fabric as a JSON file (see :func:`dumps`).

    Examples
    --------
    >>> import os, tempfile
    >>> from topomap.fabric import parse_slurm, read_json, write_json
    >>> fab = parse_slurm("SwitchName=s0 Nodes=n[0-3] LinkSpeed=4")
    >>> path = os.path.join(tempfile.mkdtemp(), "fabric.json")
    >>> write_json(fab, path)
    >>> read_json(path) == fab
    True
    """
    with atomic_write(path) as handle:
        handle.write(dumps(fabric))


def _explicit_port_vertices(fabric: Fabric) -> np.ndarray:
    """Vertices whose ports differ from the implicit 1, 2, ... numbering, so must be written out."""
    order = np.argsort(fabric.src, kind="stable")
    s = fabric.src[order]
    starts = np.r_[0, np.flatnonzero(s[1:] != s[:-1]) + 1] if s.size else np.zeros(0, np.int64)
    auto = np.empty(fabric.nlinks, np.int64)
    auto[order] = np.arange(s.size) - np.repeat(starts, np.diff(np.r_[starts, s.size])) + 1
    explicit = np.zeros(fabric.nvertices, bool)
    explicit[fabric.src[auto != fabric.port]] = True
    return explicit
