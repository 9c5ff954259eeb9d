"""The inside of one compute node as a tree whose leaves are processing elements.

A :class:`NodeTree` stores, for every grouping level (bottom-up, the last one
being the node root), the id of each PE's ancestor at that level, plus the cost
of communicating between two PEs whose lowest common ancestor is that level.

Rules shared by every constructor (documented once, here):

* **Numbering.** PEs are in hwloc logical order (document order in the tree);
  hierarchy PE ids are mixed radix with the top level most significant.  Group
  ids are renumbered densely in order of first appearance over the PEs.
* **LCA levels.** :meth:`NodeTree.lca_level` returns 0 for the same PE and
  ``k`` in ``1..L`` when the lowest common ancestor is ``levels[k - 1]``, so
  ``distance = costs[lca - 1]``.
* **Redundant levels are merged.** A level whose partition equals the one
  directly below (for the lowest level: every PE alone) adds nothing, so it is
  merged away.  The surviving level is named ``"A+B"`` (member names bottom-up,
  ``NUMANode`` written last, hwloc's anonymous ``Group`` dropped when a named
  member remains) and keeps the cost of its lowest member.  That is the cost the
  LCA rule used before merging, so merging never changes
  :meth:`~NodeTree.distance_matrix`.  Levels merged into the PEs vanish (no two
  distinct PEs share them) and ``pe_type`` is unchanged; levels merged into the
  root take the root's name.  Caller-given costs are one per level *before*
  merging; default costs ``1..L`` are assigned *after* merging.
* **Size caps.** At most :data:`MAX_PES` (``2**16``) PEs and
  :data:`MAX_LEVELS` (128) levels, so a typo such as ``pu:100000000`` or a
  24-byte ``pack:1200 core:2400`` is refused, from the arities alone, with a
  :class:`~topomap.errors.MachineError` instead of exhausting memory (the
  largest nodes have a few thousand PUs; set
  ``topomap.node.levels.MAX_PES`` to allow more, it is read at each check).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..errors import MachineError
from . import discover as _discover
from .hwloc_xml import read_hwloc_xml
from . import levels as _levels
from .levels import MAX_LEVELS, MAX_PES, Grouping, normalize_type

__all__ = ["NodeTree", "MAX_PES", "MAX_LEVELS", "normalize_type"]

# A dense P x P float64 matrix above this many PEs would take more than 2 GiB.
_MAX_DENSE_PES = 2**14

_SYNTH_TOKEN = re.compile(
    r"\[(?P<attach>[^\[\]]*)\]|(?P<body>[^\s()\[\]]+)(?:\([^()]*\))?"
)
_ARITY = re.compile(r"[0-9]{1,18}")


def _join_names(members: Sequence[str]) -> str:
    parts = list(dict.fromkeys(p for name in members for p in name.split("+")))
    named = [p for p in parts if p not in ("Group", "NUMANode")]
    if not named and "Group" in parts and "NUMANode" not in parts:
        named = ["Group"]
    if "NUMANode" in parts:
        named.append("NUMANode")
    return "+".join(named)


def _merge_plan(names: Sequence[str], same_as_below: Sequence[bool]) -> list[tuple[int, str]]:
    """(lowest member index, merged name) of each surviving level, bottom-up.

    ``same_as_below[k]`` says level ``k`` has the partition of level ``k - 1``
    (of the PEs themselves for ``k = 0``).  The root (last level) always
    survives.
    """
    last = len(names) - 1
    start = 0
    while start < last and same_as_below[start]:
        start += 1
    runs: list[list[int]] = []
    for k in range(start, last + 1):
        if runs and same_as_below[k]:
            runs[-1].append(k)
        else:
            runs.append([k])
    return [
        (run[0], names[last] if run[-1] == last else _join_names([names[k] for k in run]))
        for run in runs
    ]


def _canonical_row(row: np.ndarray) -> np.ndarray:
    _, first, inverse = np.unique(row, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int32)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size, dtype=np.int32)
    return rank[inverse.reshape(-1)]


def _canonical_groups(groups: Any, levels: Sequence[str]) -> np.ndarray:
    try:
        arr = np.asarray(groups)
    except ValueError as err:
        raise MachineError(f"groups must be a rectangular integer array: {err}") from None
    if arr.ndim != 2 or arr.shape[0] != len(levels):
        raise MachineError(
            f"groups must have shape ({len(levels)}, P) for levels {tuple(levels)}, "
            f"got shape {arr.shape}"
        )
    if arr.shape[1] == 0:
        raise MachineError("a node tree needs at least one PE")
    if arr.shape[1] > _levels.MAX_PES:
        raise MachineError(f"{arr.shape[1]} PEs exceed the cap of {_levels.MAX_PES} PEs per node (topomap.node.levels.MAX_PES)")
    if arr.dtype.kind not in "iu":
        raise MachineError(f"groups must hold integers, got dtype {arr.dtype}")
    out = np.empty(arr.shape, dtype=np.int32)
    for k in range(arr.shape[0]):
        out[k] = _canonical_row(arr[k])
    for k in range(arr.shape[0] - 1):
        parent = np.zeros(int(out[k].max()) + 1, dtype=np.int32)
        parent[out[k]] = out[k + 1]
        bad = np.flatnonzero(parent[out[k]] != out[k + 1])
        if bad.size:
            i = int(bad[0])
            j = int(np.flatnonzero(out[k] == out[k, i])[0])
            raise MachineError(
                f"level {levels[k + 1]!r} is not a coarsening of level {levels[k]!r}: "
                f"PEs {j} and {i} share a {levels[k]!r} group but not a "
                f"{levels[k + 1]!r} group"
            )
    if out[-1].any():
        raise MachineError(f"the root level {levels[-1]!r} must hold every PE in one group")
    return out


def _check_costs(costs: Any, nlevels: int) -> np.ndarray:
    try:
        arr = np.asarray(costs, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise MachineError(f"costs must be numbers: {err}") from None
    if arr.shape != (nlevels,):
        raise MachineError(f"costs has shape {arr.shape}, expected ({nlevels},), one per level")
    bad = np.flatnonzero(~np.isfinite(arr) | (arr < 0))
    if bad.size:
        k = int(bad[0])
        raise MachineError(f"costs[{k}] = {arr[k]!r} is negative, NaN or infinite")
    drop = np.flatnonzero(np.diff(arr) < 0)
    if drop.size:
        k = int(drop[0])
        raise MachineError(
            f"costs must be non-decreasing bottom-up: costs[{k}] = {arr[k]} > "
            f"costs[{k + 1}] = {arr[k + 1]}"
        )
    return arr


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class NodeTree:
    """One compute node as a tree whose leaves are processing elements (PEs).

    Parameters
    ----------
    pe_type : str
        What a PE is, e.g. ``"PU"`` (hardware thread) or ``"Core"``.
    levels : tuple of str
        Names of the grouping levels bottom-up; the last one is the node root.
    groups : numpy.ndarray
        Integer array of shape ``(L, P)``: ``groups[k, i]`` is the id of PE
        ``i``'s ancestor at ``levels[k]``.  Stored renumbered densely in order of
        first appearance (int32); every level must coarsen the one below and the
        root row must be a single group.
    costs : numpy.ndarray, optional
        Length ``L``, finite, ``>= 0`` and non-decreasing: cost between two
        distinct PEs whose lowest common ancestor is ``levels[k]``.  ``None``
        means ``1, 2, ..., L``.
    os_index : numpy.ndarray, optional
        Length ``P``, distinct OS indices of the PEs (hwloc PU ``os_index``, used
        for CPU binding); ``None`` for abstract trees.
    source : str
        Provenance, e.g. ``"synthetic:pack:2 core:4"``, ``"xml:/path"``,
        ``"sysfs"``, ``"hwloc-library"``, ``"lstopo"``.

    Notes
    -----
    The constructor validates and renumbers but never merges levels; the
    ``from_*`` constructors merge redundant levels (see the module docstring).
    Equality compares everything except ``source``.

    Examples
    --------
    >>> t = NodeTree("PU", ("Core", "Machine"), [[0, 0, 1, 1], [0, 0, 0, 0]])
    >>> t.npes, t.costs.tolist()
    (4, [1.0, 2.0])
    >>> t.lca_level(0, 1), t.lca_level(0, 2)
    (1, 2)
    """

    pe_type: str
    levels: tuple[str, ...]
    groups: np.ndarray
    costs: np.ndarray | None = None
    os_index: np.ndarray | None = None
    source: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.pe_type, str) or not self.pe_type:
            raise MachineError(f"pe_type must be a non-empty string, got {self.pe_type!r}")
        levels = tuple(self.levels) if not isinstance(self.levels, str) else (self.levels,)
        if not levels or not all(isinstance(n, str) and n for n in levels):
            raise MachineError(f"levels must be non-empty strings, got {self.levels!r}")
        if len(levels) > MAX_LEVELS:
            raise MachineError(f"{len(levels)} levels exceed the cap of {MAX_LEVELS}")
        groups = _canonical_groups(self.groups, levels)
        costs = (
            np.arange(1, len(levels) + 1, dtype=np.float64)
            if self.costs is None
            else _check_costs(self.costs, len(levels))
        )
        os_index = None
        if self.os_index is not None:
            os_index = np.asarray(self.os_index)
            if os_index.shape != (groups.shape[1],) or (
                os_index.size and os_index.dtype.kind not in "iu"
            ):
                raise MachineError(
                    f"os_index must be {groups.shape[1]} integers, got shape "
                    f"{os_index.shape} dtype {os_index.dtype}"
                )
            os_index = os_index.astype(np.int64)
            if (os_index < 0).any():
                raise MachineError(f"os_index {int(os_index.min())} is negative")
            uniq, counts = np.unique(os_index, return_counts=True)
            if (counts > 1).any():
                raise MachineError(f"os_index {int(uniq[counts > 1][0])} is used by two PEs")
            os_index = _readonly(os_index)
        set_ = object.__setattr__
        set_(self, "levels", levels)
        set_(self, "groups", _readonly(groups))
        set_(self, "costs", _readonly(costs.copy()))
        set_(self, "os_index", os_index)
        set_(self, "source", str(self.source))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodeTree):
            return NotImplemented
        same_os = (self.os_index is None and other.os_index is None) or (
            self.os_index is not None
            and other.os_index is not None
            and np.array_equal(self.os_index, other.os_index)
        )
        return (
            self.pe_type == other.pe_type
            and self.levels == other.levels
            and np.array_equal(self.groups, other.groups)
            and np.array_equal(self.costs, other.costs)
            and same_os
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"NodeTree(pe_type={self.pe_type!r}, levels={self.levels!r}, npes={self.npes}, "
            f"costs={self.costs.tolist()!r}, source={self.source!r})"
        )

    @property
    def npes(self) -> int:
        """Number of PEs (leaves).

        Examples
        --------
        >>> NodeTree.from_synthetic("pack:2 numa:2 core:8 pu:2").npes
        64
        """
        return int(self.groups.shape[1])

    def _check_pe(self, i: Any) -> int:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise MachineError(f"PE id must be an integer, got {i!r}")
        if not 0 <= i < self.npes:
            raise MachineError(f"PE {i} is out of range 0..{self.npes - 1}")
        return int(i)

    def lca_level(self, i: int, j: int) -> int:
        """Level number of the lowest common ancestor of PEs ``i`` and ``j``.

        Parameters
        ----------
        i, j : int
            PE ids in ``0..npes-1``.

        Returns
        -------
        int
            0 if ``i == j``; otherwise ``k`` in ``1..L`` meaning the lowest
            common ancestor is at ``levels[k - 1]`` (their cost is
            ``costs[k - 1]``).

        Examples
        --------
        >>> t = NodeTree.from_synthetic("pack:2 core:2 pu:2")
        >>> t.levels
        ('Core', 'Package', 'Machine')
        >>> [t.lca_level(0, j) for j in range(8)]
        [0, 1, 2, 2, 3, 3, 3, 3]
        """
        i, j = self._check_pe(i), self._check_pe(j)
        if i == j:
            return 0
        return 1 + int(np.argmax(self.groups[:, i] == self.groups[:, j]))

    def distance_matrix(self) -> np.ndarray:
        """Dense ``P x P`` matrix of ``costs[lca_level - 1]``, 0 on the diagonal.

        Returns
        -------
        numpy.ndarray
            float64, shape ``(npes, npes)``.  Refused (``MachineError``) above
            16384 PEs, where it would exceed 2 GiB; use :meth:`lca_level`.

        Examples
        --------
        >>> NodeTree.from_arities([2, 2], costs=[1, 10]).distance_matrix()
        array([[ 0.,  1., 10., 10.],
               [ 1.,  0., 10., 10.],
               [10., 10.,  0.,  1.],
               [10., 10.,  1.,  0.]])
        """
        p = self.npes
        if p > _MAX_DENSE_PES:
            raise MachineError(
                f"a dense distance matrix of {p} PEs is too large (cap {_MAX_DENSE_PES}); "
                "use lca_level"
            )
        out = np.full((p, p), self.costs[-1])
        for k in range(len(self.levels) - 2, -1, -1):
            row = self.groups[k]
            out[row[:, None] == row[None, :]] = self.costs[k]
        np.fill_diagonal(out, 0.0)
        return out

    def with_costs(self, costs: Iterable[float]) -> "NodeTree":
        """Copy of this tree with other per-level costs.

        Parameters
        ----------
        costs : sequence of float
            One per level (bottom-up), finite, ``>= 0``, non-decreasing.

        Returns
        -------
        NodeTree

        Examples
        --------
        >>> NodeTree.from_synthetic("pack:2 core:4 pu:2").with_costs([1, 20, 20]).costs.tolist()
        [1.0, 20.0, 20.0]
        """
        return NodeTree(
            self.pe_type, self.levels, self.groups, list(costs), self.os_index, self.source
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable description; :meth:`from_dict` reads it back.

        Returns
        -------
        dict
            Keys ``pe_type``, ``levels``, ``groups`` (list of lists), ``costs``,
            ``os_index`` (list or ``None``), ``source``.

        Examples
        --------
        >>> d = NodeTree.flat(2).to_dict()
        >>> d["levels"], d["groups"], d["costs"]
        (['Node'], [[0, 0]], [1.0])
        """
        return {
            "pe_type": self.pe_type,
            "levels": list(self.levels),
            "groups": self.groups.tolist(),
            "costs": self.costs.tolist(),
            "os_index": None if self.os_index is None else self.os_index.tolist(),
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "NodeTree":
        """Inverse of :meth:`to_dict`.

        Parameters
        ----------
        data : mapping
            As produced by :meth:`to_dict` (``os_index`` and ``source`` optional).

        Returns
        -------
        NodeTree

        Examples
        --------
        >>> t = NodeTree.from_synthetic("pack:2 core:2 pu:2")
        >>> NodeTree.from_dict(t.to_dict()) == t
        True
        """
        missing = [k for k in ("pe_type", "levels", "groups", "costs") if k not in data]
        if missing:
            raise MachineError(f"node tree description lacks {', '.join(missing)}")
        return cls(
            data["pe_type"], tuple(data["levels"]), data["groups"], data["costs"],
            data.get("os_index"), data.get("source", "dict"),
        )

    @classmethod
    def from_groups(
        cls,
        groups: Any,
        levels: Sequence[str],
        pe_type: str = "PE",
        costs: Iterable[float] | None = None,
        os_index: Any = None,
        source: str = "groups",
    ) -> "NodeTree":
        """Build a tree from per-level group ids, merging redundant levels.

        Parameters
        ----------
        groups : array_like of int, shape (L, P)
            Ancestor ids per level, bottom-up; the last row is the root.
        levels : sequence of str
            The ``L`` level names.
        pe_type : str
            What a PE is.
        costs : sequence of float, optional
            One per level *before* merging; default ``1..L'`` after merging.
        os_index : array_like of int, optional
            OS index of each PE.
        source : str
            Provenance.

        Returns
        -------
        NodeTree

        Examples
        --------
        >>> t = NodeTree.from_groups(
        ...     [[0, 1, 2, 3], [0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 0, 0]],
        ...     ["Core", "L2Cache", "Package", "Machine"], "Core", costs=[1, 2, 5, 9])
        >>> t.levels, t.costs.tolist()
        (('L2Cache+Package', 'Machine'), [2.0, 9.0])
        """
        levels = tuple(levels)
        rows = _canonical_groups(groups, levels)
        counts = rows.max(axis=1) + 1
        npes = rows.shape[1]
        same = [bool(counts[0] == npes)]
        same += [bool(counts[k] == counts[k - 1]) for k in range(1, len(levels))]
        plan = _merge_plan(levels, same)
        keep = [k for k, _ in plan]
        new_costs = None if costs is None else _check_costs(list(costs), len(levels))[keep]
        return cls(pe_type, tuple(n for _, n in plan), rows[keep], new_costs, os_index, source)

    @classmethod
    def flat(cls, npes: int, cost: float = 1.0, name: str = "Node") -> "NodeTree":
        """A node whose PEs all sit directly under the root.

        Parameters
        ----------
        npes : int
            Number of PEs, ``1..MAX_PES``.
        cost : float
            Cost between any two distinct PEs.
        name : str
            Name of the single (root) level.

        Returns
        -------
        NodeTree

        Examples
        --------
        >>> t = NodeTree.flat(4, cost=3.0)
        >>> t.levels, t.distance_matrix()[0].tolist()
        (('Node',), [0.0, 3.0, 3.0, 3.0])
        """
        _check_count(npes, "npes")
        return cls("PE", (name,), np.zeros((1, npes), dtype=np.int32), [cost], None, f"flat:{npes}")

    @classmethod
    def from_arities(
        cls,
        arities: Sequence[int],
        names: Sequence[str] | None = None,
        costs: Iterable[float] | None = None,
    ) -> "NodeTree":
        """A regular tree given its arities top-down (Scotch ``tleaf``, KaHIP hierarchy).

        Parameters
        ----------
        arities : sequence of int
            Top-down: ``[2, 2, 8]`` is 2 groups of 2 groups of 8 PEs.  PE ids are
            mixed radix with the top level most significant.
        names : sequence of str, optional
            One per arity, top-down; ``names[-1]`` is the PE type.  Default
            ``Level1, Level2, ..., PE``.  The root is named ``"Node"``.
        costs : sequence of float, optional
            One per arity, **bottom-up**: ``costs[0]`` for PEs sharing the lowest
            group, ``costs[-1]`` across the root.  Default ``1..L``.

        Returns
        -------
        NodeTree

        Examples
        --------
        >>> t = NodeTree.from_arities([2, 2, 8])
        >>> t.levels, t.npes, t.lca_level(0, 8), t.lca_level(0, 16)
        (('Level2', 'Level1', 'Node'), 32, 2, 3)
        """
        arities = [_check_count(a, f"arities[{d}]") for d, a in enumerate(arities)]
        if not arities:
            raise MachineError("from_arities needs at least one arity")
        if names is None:
            names = [f"Level{d}" for d in range(1, len(arities))] + ["PE"]
        names = list(names)
        if len(names) != len(arities):
            raise MachineError(f"{len(names)} names given for {len(arities)} arities")
        source = "arities:" + ":".join(map(str, arities))
        return _tree_from_arities(arities, names[:-1], names[-1], "Node", costs, None, source)

    @classmethod
    def from_synthetic(
        cls,
        text: str,
        pe: str | None = None,
        costs: Iterable[float] | None = None,
    ) -> "NodeTree":
        """Parse an hwloc synthetic description such as ``"pack:2 numa:2 core:8 pu:2"``.

        Parameters
        ----------
        text : str
            Whitespace-separated ``type:arity`` levels top-down, or arity-only
            (``"2 3 4"``; levels are then named ``Level1, Level2, ...`` and the
            leaves ``PU``).  Types: ``pack``/``package``/``socket``,
            ``numa``/``node``/``numanode`` (at most one NUMA level), ``group``,
            ``die``, caches ``l1``..``l5`` (``l3``, ``l3cache``, ``L1iCache``...),
            ``core``, ``pu`` (last if present), case-insensitive.  Attributes in
            parentheses (``NUMANode:3(memory=16MB)``) are ignored.  A ``[numa]``
            attachment adds ``NUMANode`` to the name of the level before it, as
            hwloc attaches the memory there; it adds no level.
        pe : str, optional
            Type of the leaves (``"pu"``, ``"core"`` or any type in ``text``);
            levels below it are cut off.  Default: the last level.
        costs : sequence of float, optional
            Bottom-up, one per level above the PE level plus one for the root,
            before merging.  Default ``1..L`` after merging.

        Returns
        -------
        NodeTree
            Root named ``"Machine"``; ``os_index`` is the hwloc synthetic PU
            numbering (first PU of each PE) or ``None`` without a ``pu`` level.

        Examples
        --------
        >>> t = NodeTree.from_synthetic("pack:2 numa:2 core:8 pu:2")
        >>> t.levels, t.npes
        (('Core', 'NUMANode', 'Package', 'Machine'), 64)
        >>> c = NodeTree.from_synthetic("pack:2 numa:2 core:8 pu:2", pe="core")
        >>> c.pe_type, c.levels, c.os_index[:3].tolist()
        ('Core', ('NUMANode', 'Package', 'Machine'), [0, 2, 4])
        """
        if not isinstance(text, str):
            raise MachineError(f"synthetic description must be a string, got {type(text).__name__}")
        types, arities = _parse_synthetic(text)
        total = math.prod(arities)
        pe_at = len(types) - 1
        if pe is not None:
            want = normalize_type(pe) if isinstance(pe, str) else None
            bare = [t.split("+")[0] for t in types]
            if want not in bare:
                raise MachineError(f"pe={pe!r} is not a level of synthetic description {text!r}")
            pe_at = bare.index(want)
        below = math.prod(arities[pe_at + 1:])
        has_pu = types[-1] == "PU"
        npes = total // below
        os_index = np.arange(npes, dtype=np.int64) * below if has_pu else None
        return _tree_from_arities(
            arities[: pe_at + 1], types[:pe_at], types[pe_at].split("+")[0], "Machine",
            costs, os_index, "synthetic:" + " ".join(text.split()),
        )

    @classmethod
    def from_grouping(cls, grouping: Grouping) -> "NodeTree":
        """The tree of a reader's :class:`~topomap.node.levels.Grouping` (default costs ``1..L``)."""
        return cls.from_groups(grouping.groups, grouping.levels, grouping.pe_type, None, grouping.os_index,
                               grouping.source)

    @classmethod
    def from_hwloc_xml(
        cls, path_or_xml: str | os.PathLike[str] | bytes, pe: str = "pu", label: str | None = None
    ) -> "NodeTree":
        """Read an hwloc 1.x/2.x/3.x XML export (file path or XML text) without libhwloc.

        Parameters
        ----------
        path_or_xml : str, path-like or bytes
            A file path, or XML text (a string starting with ``<``, or bytes).
        pe : str
            Type of the leaves: ``"pu"`` (default), ``"core"``, or another CPU
            type present above every PU (``"l2"``...).  For a non-PU leaf,
            ``os_index`` is that of its first PU.  See
            :func:`topomap.node.hwloc_xml.read_hwloc_xml` for the rules and errors.
        label : str, optional
            Provenance recorded in ``source``; default ``"xml:<path>"``.

        Returns
        -------
        NodeTree
            Default costs ``1..L``.

        Examples
        --------
        >>> xml = '''<topology version="2.0">
        ...  <object type="Machine" os_index="0">
        ...   <object type="Package" os_index="0">
        ...    <object type="NUMANode" os_index="0"/>
        ...    <object type="Core" os_index="0"><object type="PU" os_index="0"/></object>
        ...    <object type="Core" os_index="1"><object type="PU" os_index="1"/></object>
        ...   </object>
        ...   <object type="Package" os_index="1">
        ...    <object type="NUMANode" os_index="1"/>
        ...    <object type="Core" os_index="2"><object type="PU" os_index="2"/></object>
        ...   </object>
        ...  </object></topology>'''
        >>> t = NodeTree.from_hwloc_xml(xml)
        >>> t.levels, t.groups.tolist(), t.os_index.tolist()
        (('Package+NUMANode', 'Machine'), [[0, 0, 1], [0, 0, 0]], [0, 1, 2])
        """
        return cls.from_grouping(read_hwloc_xml(path_or_xml, pe=pe, label=label))

    @classmethod
    def from_sysfs(cls, root: str | os.PathLike[str] = "/", pe: str = "pu") -> "NodeTree":
        """The tree Linux sysfs describes under ``root`` (online CPUs only); ``source`` is ``"sysfs"``.

        See :func:`topomap.node.discover.read_sysfs` for the levels it finds
        and the errors it raises.

        Examples
        --------
        >>> import sys
        >>> t = NodeTree.from_sysfs() if sys.platform == "linux" else NodeTree.flat(1)
        >>> t.npes >= 1
        True
        """
        return cls.from_grouping(_discover.read_sysfs(root, pe=pe))

    @classmethod
    def discover(cls, pe: str = "pu") -> "NodeTree":
        """The tree of the machine this process runs on.

        Parameters
        ----------
        pe : {"pu", "core"}
            Leaves are hardware threads (default) or cores.  Ignored by the final
            ``os.cpu_count()`` fallback, whose PEs are logical CPUs.

        Returns
        -------
        NodeTree
            From libhwloc in the C core, ``lstopo``, Linux sysfs or
            ``os.cpu_count()``, in that order of preference (``source`` says
            which); see :func:`topomap.node.discover.discover`.

        Examples
        --------
        >>> NodeTree.discover().source in ("hwloc-library", "lstopo", "sysfs", "cpu_count")
        True
        """
        return cls.from_grouping(_discover.discover(pe=pe))


def _check_count(value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise MachineError(f"{what} must be a positive integer, got {value!r}")
    if not 1 <= value <= _levels.MAX_PES:
        raise MachineError(f"{what} = {value} is outside 1..{_levels.MAX_PES} (topomap.node.levels.MAX_PES)")
    return int(value)


def _tree_from_arities(
    arities: Sequence[int],
    names_top: Sequence[str],
    pe_type: str,
    root: str,
    costs: Iterable[float] | None,
    os_index: np.ndarray | None,
    source: str,
) -> NodeTree:
    """Regular tree: ``names_top[d]`` names the objects counted by ``arities[d]``.

    Only surviving levels are materialised, so arity-1 chains cost no memory.
    """
    n = len(arities) - 1
    if len(arities) > MAX_LEVELS:
        raise MachineError(f"{len(arities)} levels exceed the cap of {MAX_LEVELS}")
    npes = 1
    for a in arities:
        npes *= a
        if npes > _levels.MAX_PES:
            raise MachineError(
                f"arities {list(arities)} describe more than {_levels.MAX_PES} PEs (the per-node cap topomap.node.levels.MAX_PES)"
            )
    names = [names_top[n - 1 - k] for k in range(n)] + [root]
    same = [arities[n - k] == 1 for k in range(n + 1)]
    plan = _merge_plan(names, same)
    keep = [k for k, _ in plan]
    new_costs = None if costs is None else _check_costs(list(costs), n + 1)[keep]
    pes = np.arange(npes, dtype=np.int64)
    rows = np.empty((len(plan), npes), dtype=np.int32)
    for r, k in enumerate(keep):
        rows[r] = pes // math.prod(arities[n - k:])
    return NodeTree(pe_type, tuple(name for _, name in plan), rows, new_costs, os_index, source)


def _synthetic_error(text: str, token: str, why: str) -> MachineError:
    return MachineError(f"synthetic description {text!r}: token {token!r}: {why}")


def _parse_synthetic(text: str) -> tuple[list[str], list[int]]:
    """Level types (hwloc names, ``+NUMANode`` for attachments) and arities, top-down."""
    types: list[str | None] = []
    arities: list[int] = []
    numa_seen = False
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            break
        m = _SYNTH_TOKEN.match(text, pos)
        end = m.end() if m else pos
        if m is None or (end < len(text) and not text[end].isspace()):
            bad = text[pos:].split()[0]
            raise _synthetic_error(text, bad, "expected 'type:arity', 'arity' or '[numa]'")
        token, pos = m.group(0), end
        if m.group("attach") is not None:
            kind = normalize_type(m.group("attach").split("(")[0].strip())
            if kind != "NUMANode":
                raise _synthetic_error(text, token, "only NUMA nodes can be attached")
            if numa_seen:
                raise _synthetic_error(text, token, "at most one NUMA level is allowed")
            numa_seen = True
            if types and types[-1] is not None:
                types[-1] += "+NUMANode"
            continue
        body = m.group("body")
        kind_text, sep, arity_text = body.rpartition(":")
        kind = None
        if sep:
            kind = normalize_type(kind_text)
            if kind is None:
                raise _synthetic_error(text, token, f"unknown object type {kind_text!r}")
            if kind == "NUMANode":
                if numa_seen:
                    raise _synthetic_error(text, token, "at most one NUMA level is allowed")
                numa_seen = True
        if not _ARITY.fullmatch(arity_text) or int(arity_text) == 0:
            raise _synthetic_error(text, token, "arity must be a positive integer")
        if arities and types[-1] is not None and types[-1].startswith("PU"):
            raise _synthetic_error(text, token, "nothing may follow the pu level")
        if arities and (types[-1] is None) != (kind is None):
            raise _synthetic_error(text, token, "typed and arity-only levels cannot be mixed")
        if len(arities) >= MAX_LEVELS:
            raise _synthetic_error(text, token, f"more than {MAX_LEVELS} levels")
        types.append(kind)
        arities.append(int(arity_text))
        if math.prod(arities) > _levels.MAX_PES:
            raise _synthetic_error(
                text, token, f"the description has more than {_levels.MAX_PES} leaves (the per-node cap topomap.node.levels.MAX_PES)"
            )
    if not arities:
        raise MachineError(f"synthetic description {text!r} has no levels")
    if types[0] is None:
        types = [f"Level{d}" for d in range(1, len(arities))] + ["PU"]
    return [t for t in types if t is not None], arities
