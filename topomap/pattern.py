"""The communication pattern: who sends how many bytes to whom.

A :class:`Pattern` is a directed weighted graph over ``n`` processes in CSR form
(``indptr`` int64, ``indices`` int32, ``bytes`` float64, optional ``msgs``
float64).  Rows are senders, columns receivers.

Rules applied by every constructor (documented once, here):

* Self-messages ``p -> p`` are dropped: they never leave the process, so no
  metric counts them.  Their bytes are recorded in
  ``provenance["dropped_self_bytes"]``.
* Entries with zero bytes are dropped (zero-byte messages load no link and are
  not modelled).
* Duplicate ``(src, dst)`` entries are summed; finite entries whose sum passes
  the largest double (two of 1e308) raise :class:`~topomap.errors.PatternError`
  naming the pair and the entries, never a volume of ``inf``.
* Negative, NaN or infinite weights, indices out of range and non-integer
  indices raise :class:`~topomap.errors.PatternError` naming the offending entry.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping as TMapping

import numpy as np

from . import _core
from .errors import MissingDependencyError, PatternError

__all__ = ["Pattern"]


def _as_index_array(values: Any, what: str, copy: bool = True) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise PatternError(f"{what} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise PatternError(f"{what} must hold integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise PatternError(f"{what}[{i}] = {arr[i]!r} is not an integer")
    return arr.astype(np.int64, copy=copy)


def _as_weight_array(values: Any, what: str, size: int, copy: bool = True) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim == 0:
        arr = np.full(size, arr)
    if arr.shape != (size,):
        raise PatternError(f"{what} has shape {arr.shape}, expected ({size},)")
    if arr.size and (arr.dtype.kind == "b" or arr.dtype.kind not in "iuf"):
        raise PatternError(f"{what} must be numeric, got dtype {arr.dtype}")
    arr = arr.astype(np.float64, copy=copy)
    i = _core.first_bad_weight(arr) if arr.size else -1
    if i >= 0:
        raise PatternError(f"{what}[{i}] = {arr[i]!r} is negative, NaN or infinite")
    return arr


def _overflowed(built: tuple) -> bool:
    """Some pair's summed bytes or messages are infinite: finite entries overflowed the double range."""
    return any(a is not None and a.size and _core.first_bad_weight(a) >= 0 for a in built[2:4])


def _overflowing_entries(src: np.ndarray, dst: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Indices of the entries of the first ``(src, dst)`` pair (not a self-message) whose
    ``weights`` sum past the largest double, in entry order; empty when no sum overflows."""
    s, d = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 0:
        w = np.full(s.size, float(w))
    kept = np.flatnonzero(s != d)
    if not kept.size:
        return kept
    key = s[kept] * (int(max(s.max(), d.max())) + 1) + d[kept]
    by_key = np.argsort(key, kind="stable")
    order, sorted_key = kept[by_key], key[by_key]
    starts = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
    with np.errstate(over="ignore"):
        sums = np.add.reduceat(w[order], starts)
    bad = np.flatnonzero(np.isinf(sums))
    if not bad.size:
        return bad
    stop = starts[bad[0] + 1] if bad[0] + 1 < starts.size else order.size
    return np.sort(order[starts[bad[0]]:stop])


def _overflow_message(src: np.ndarray, dst: np.ndarray, byts: np.ndarray, msgs: np.ndarray | None,
                     label: Callable[[int], str] = "entry {}".format) -> str | None:
    """What overflowed: the pair, the column, and the entries whose sum passes the largest
    double, each named by ``label(index)`` (a reader names its lines); None when no sum does."""
    for what, w in (("bytes", byts), ("msgs", msgs)):
        if w is None:
            continue
        e = _overflowing_entries(src, dst, w)
        if e.size:
            values = np.broadcast_to(np.asarray(w, dtype=np.float64), np.shape(src))[e]
            shown = ", ".join(f"{label(int(i))} ({float(v)!r})" for i, v in zip(e[:4], values[:4]))
            more = f" and {e.size - 4} more" if e.size > 4 else ""
            return (f"the {what} of {int(np.asarray(src)[e[0]])} -> {int(np.asarray(dst)[e[0]])} overflow: "
                    f"{shown}{more} sum past the largest double ({np.finfo(np.float64).max:.4g}); "
                    "scale the volumes down")
    return None


def _exact(arr: Any, dtype: type, shape: tuple[int, ...]) -> bool:
    """``arr`` is an ndarray of exactly this dtype and shape (the canonical-input fast path)."""
    return type(arr) is np.ndarray and arr.dtype == dtype and arr.shape == shape


@dataclass(frozen=True, eq=False)
class Pattern:
    """Directed communication pattern over ``n`` processes, in CSR form.

    Build it with :meth:`from_dense`, :meth:`from_sparse`, :meth:`from_networkx`
    or :meth:`from_edges`; the constructor itself expects canonical CSR
    (sorted, no duplicates, no self loops, positive bytes) and validates it.

    Attributes
    ----------
    n : int
        Number of processes.
    indptr, indices, bytes : numpy.ndarray
        CSR arrays: the messages of process ``p`` go to
        ``indices[indptr[p]:indptr[p+1]]`` with volumes ``bytes[...]``.
    msgs : numpy.ndarray or None
        Message counts per entry, when the source counted them.
    provenance : dict
        Where the pattern came from (generator and parameters, or file).

    Examples
    --------
    >>> import numpy as np, topomap as tm
    >>> pat = tm.Pattern.from_dense(np.array([[0, 5], [3, 0]]))
    >>> pat.n, pat.nnz, pat.total_bytes
    (2, 2, 8.0)
    """

    n: int
    indptr: np.ndarray
    indices: np.ndarray
    bytes: np.ndarray
    msgs: np.ndarray | None = None
    provenance: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = self.n
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
            raise PatternError(f"a pattern needs at least one process, got n={n!r}")
        if n >= 2**31:
            raise PatternError(f"n={n} exceeds the int32 process id range")
        object.__setattr__(self, "n", int(n))
        if self._adopt_canonical():
            return
        # Validate before casting: a float index or one beyond int32 must not be truncated silently.
        indptr = np.ascontiguousarray(_as_index_array(self.indptr, "indptr"), dtype=np.int64)
        indices = _as_index_array(self.indices, "indices")
        if indices.size and (indices.min() < 0 or indices.max() >= n):
            i = int(np.flatnonzero((indices < 0) | (indices >= n))[0])
            raise PatternError(f"receiver {indices[i]} of entry {i} is out of range [0, {n})")
        indices = np.ascontiguousarray(indices, dtype=np.int32)
        # a copy: making the caller's own array read-only would be a surprising side effect
        byts = np.array(self.bytes, order="C", copy=True)
        if byts.size and (byts.dtype.kind == "b" or byts.dtype.kind not in "iuf"):
            raise PatternError(f"bytes must be numeric, got dtype {byts.dtype}")
        byts = byts.astype(np.float64, copy=False)
        if indptr.shape != (n + 1,) or indptr[0] != 0 or np.any(np.diff(indptr) < 0):
            raise PatternError("indptr must have length n+1, start at 0 and be non-decreasing")
        nnz = int(indptr[-1])
        if indices.shape != (nnz,) or byts.shape != (nnz,):
            raise PatternError(f"indices and bytes must have length indptr[-1] = {nnz}")
        if nnz:
            bad = ~np.isfinite(byts) | (byts <= 0)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise PatternError(f"bytes[{i}] = {byts[i]!r} must be positive and finite")
            rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
            if np.any(rows == indices):
                i = int(np.flatnonzero(rows == indices)[0])
                raise PatternError(f"self-message of process {rows[i]} in canonical CSR")
            key = rows * n + indices
            if np.any(np.diff(key) <= 0):
                raise PatternError("CSR columns must be sorted and unique within each row")
        object.__setattr__(self, "indptr", indptr)
        object.__setattr__(self, "indices", indices)
        object.__setattr__(self, "bytes", byts)
        if self.msgs is not None:
            msgs = _as_weight_array(self.msgs, "msgs", nnz)
            object.__setattr__(self, "msgs", np.ascontiguousarray(msgs))
        for arr in (self.indptr, self.indices, self.bytes) + ((self.msgs,) if self.msgs is not None else ()):
            arr.setflags(write=False)
        object.__setattr__(self, "provenance", dict(self.provenance))

    def _adopt_canonical(self) -> bool:
        """Copy in arrays that are canonical CSR of the final dtypes, checked in one C pass;
        False when anything needs the checks above (which then name the fault)."""
        n, indptr, indices, byts, msgs = self.n, self.indptr, self.indices, self.bytes, self.msgs
        if not (_exact(indptr, np.int64, (n + 1,)) and type(indices) is np.ndarray and indices.ndim == 1):
            return False
        nnz = indices.size
        if not (_exact(indices, np.int32, (nnz,)) and _exact(byts, np.float64, (nnz,))
                and (msgs is None or _exact(msgs, np.float64, (nnz,)))):
            return False
        if not _core.pattern_is_canonical(n, indptr, indices, byts):
            return False
        if msgs is not None and nnz and _core.first_bad_weight(msgs) >= 0:
            return False
        # copies: making the caller's own arrays read-only would be a surprising side effect
        arrays = {"indptr": indptr, "indices": indices, "bytes": byts, "msgs": msgs}
        for name, arr in arrays.items():
            if arr is not None:
                arr = np.array(arr, order="C", copy=True)
                arr.setflags(write=False)
                object.__setattr__(self, name, arr)
        object.__setattr__(self, "provenance", dict(self.provenance))
        return True

    @classmethod
    def _canonical(cls, n: int, indptr: np.ndarray, indices: np.ndarray, byts: np.ndarray,
                   msgs: np.ndarray | None, provenance: dict) -> "Pattern":
        """A pattern made of canonical CSR arrays built here, taken as they are (no checks, no copies)."""
        self = object.__new__(cls)
        for name, value in (("n", int(n)), ("indptr", indptr), ("indices", indices), ("bytes", byts),
                            ("msgs", msgs), ("provenance", provenance)):
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
            object.__setattr__(self, name, value)
        return self

    @classmethod
    def _adopt(cls, n: int, src: np.ndarray | None, dst: np.ndarray, byts: np.ndarray, msgs: np.ndarray | None,
               provenance: dict, row_ptr: np.ndarray | None = None) -> "Pattern | None":
        """The pattern of entries a file reader gives away (the arrays may become the pattern's).

        Entry ``k`` is ``src[k] -> dst[k]`` (or, with ``row_ptr``, the entries of
        row ``i`` are ``row_ptr[i]:row_ptr[i+1]``); duplicates are summed,
        self-messages and zero-byte entries dropped, as :meth:`from_edges` does.
        None when an id is outside ``[0, n)`` or a weight is negative, NaN or
        infinite: the reader then finds the fault to report.
        """
        built = _core.pattern_build(n, src, dst, byts, msgs, row_ptr, True)
        if isinstance(built, int) or _overflowed(built):
            return None
        return cls._from_built(n, built, src, dst, byts, row_ptr, provenance)

    @classmethod
    def _from_built(cls, n: int, built: tuple, src: np.ndarray | None, dst: np.ndarray, byts: Any,
                    row_ptr: np.ndarray | None, provenance: dict) -> "Pattern":
        indptr, indices, wsum, msum, self_entries = built
        self_bytes = 0.0
        if self_entries:
            if src is None:
                src = np.repeat(np.arange(n, dtype=np.int64), np.diff(row_ptr))
            self_bytes = float(np.asarray(byts, dtype=np.float64)[np.asarray(src) == np.asarray(dst)].sum())
        prov = dict(provenance)
        prov["dropped_self_bytes"] = float(prov.get("dropped_self_bytes", 0.0)) + self_bytes
        return cls._canonical(n, indptr, indices, wsum, msum, prov)

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_edges(
        cls,
        src: Any,
        dst: Any,
        bytes: Any,
        msgs: Any = None,
        *,
        n: int | None = None,
        provenance: TMapping[str, Any] | None = None,
    ) -> "Pattern":
        """Build a pattern from parallel arrays of messages ``src -> dst``.

        Duplicates are summed, self-messages and zero-byte entries dropped.

        Parameters
        ----------
        src, dst : array_like of int
            Sender and receiver of each entry.
        bytes : array_like of float or scalar
            Volume of each entry (a scalar applies to all).
        msgs : array_like of float, optional
            Message count of each entry.
        n : int, optional
            Number of processes; defaults to ``max(src, dst) + 1``.
        provenance : mapping, optional
            Recorded in :attr:`provenance`.

        Examples
        --------
        >>> import topomap as tm
        >>> pat = tm.Pattern.from_edges([0, 1, 1], [1, 0, 0], [4.0, 1.0, 2.0])
        >>> pat.to_dense().tolist()
        [[0.0, 4.0], [3.0, 0.0]]
        """
        s = _as_index_array(src, "src", copy=False)
        d = _as_index_array(dst, "dst", copy=False)
        if s.shape != d.shape:
            raise PatternError(f"src has {s.size} entries but dst has {d.size}")
        w = _as_weight_array(bytes, "bytes", s.size, copy=False)
        m = None if msgs is None else _as_weight_array(msgs, "msgs", s.size, copy=False)
        if n is None:
            if s.size == 0:
                raise PatternError("empty edge list: give n to build a pattern without messages")
            n = int(max(s.max(), d.max())) + 1
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
            raise PatternError(f"n must be a positive integer, got {n!r}")
        if n >= 2**31:
            raise PatternError(f"n={n} exceeds the int32 process id range")
        for name, a in (("src", s), ("dst", d)):
            i = _core.first_outside(a, 0, n) if a.size else -1
            if i >= 0:
                raise PatternError(f"{name}[{i}] = {a[i]} is out of range [0, {n})")
        prov = dict(provenance or {})
        # One C pass when the entries are already canonical (files written in order), else a
        # stable counting sort by sender and a sort of each row; duplicates summed in the order
        # np.add.reduceat sums them, so the doubles are those of a NumPy argsort/unique/reduceat.
        built = _core.pattern_build(int(n), s, d, w, m, None, False)
        if _overflowed(built):
            raise PatternError(_overflow_message(s, d, w, m) or "a summed volume overflows the largest double")
        return cls._from_built(int(n), built, s, d, w, None, prov)

    @classmethod
    def from_dense(
        cls, matrix: Any, msgs: Any = None, *, provenance: TMapping[str, Any] | None = None
    ) -> "Pattern":
        """Build a pattern from a dense ``n x n`` matrix of bytes (row sends to column).

        Examples
        --------
        >>> import numpy as np, topomap as tm
        >>> tm.Pattern.from_dense(np.ones((3, 3))).nnz   # the diagonal is dropped
        6
        """
        c = np.asarray(matrix)
        if c.ndim != 2 or c.shape[0] != c.shape[1]:
            raise PatternError(f"a communication matrix must be square, got shape {c.shape}")
        if c.shape[0] == 0:
            raise PatternError("a communication matrix needs at least one process")
        if c.dtype.kind == "b" or c.dtype.kind not in "iuf":
            raise PatternError(f"a communication matrix must be numeric, got dtype {c.dtype}")
        cf = c.astype(np.float64)
        bad = ~np.isfinite(cf) | (cf < 0)
        if bad.any():
            i, j = map(int, np.argwhere(bad)[0])
            raise PatternError(f"matrix[{i}, {j}] = {c[i, j]!r} is negative, NaN or infinite")
        m = None
        if msgs is not None:
            m = np.asarray(msgs)
            if m.dtype.kind == "b" or m.dtype.kind not in "iuf":
                raise PatternError(f"msgs must be numeric, got dtype {m.dtype}")
            m = m.astype(np.float64)
            if m.shape != c.shape:
                raise PatternError(f"msgs has shape {m.shape}, bytes has {c.shape}")
        s, d = np.nonzero(cf)
        return cls.from_edges(
            s, d, cf[s, d], None if m is None else m[s, d], n=c.shape[0],
            provenance={"source": "dense", **(provenance or {})},
        )

    @classmethod
    def from_sparse(cls, matrix: Any, *, provenance: TMapping[str, Any] | None = None) -> "Pattern":
        """Build a pattern from a square ``scipy.sparse`` matrix of bytes.

        Examples
        --------
        >>> import scipy.sparse as sp, topomap as tm
        >>> tm.Pattern.from_sparse(sp.csr_matrix([[0, 2], [0, 0]])).total_bytes
        2.0
        """
        if not hasattr(matrix, "tocoo"):
            raise PatternError(f"expected a scipy.sparse matrix, got {type(matrix).__name__}")
        coo = matrix.tocoo()
        if coo.shape[0] != coo.shape[1]:
            raise PatternError(f"a communication matrix must be square, got shape {coo.shape}")
        if coo.shape[0] == 0:
            raise PatternError("a communication matrix needs at least one process")
        return cls.from_edges(
            coo.row, coo.col, coo.data, n=coo.shape[0],
            provenance={"source": "scipy.sparse", **(provenance or {})},
        )

    @classmethod
    def from_networkx(
        cls, graph: Any, weight: str = "weight", *, default: float = 1.0,
        provenance: TMapping[str, Any] | None = None,
    ) -> "Pattern":
        """Build a pattern from a networkx graph whose nodes are ``0..n-1``.

        An undirected edge becomes two messages (one each way), each with the
        edge's ``weight`` attribute (``default`` when absent).

        Examples
        --------
        >>> import networkx as nx, topomap as tm
        >>> tm.Pattern.from_networkx(nx.path_graph(3)).nnz
        4
        """
        if not (hasattr(graph, "nodes") and hasattr(graph, "edges") and hasattr(graph, "is_directed")):
            raise PatternError(f"expected a networkx graph, got {type(graph).__name__}")
        nodes = list(graph.nodes)
        n = len(nodes)
        if n == 0:
            raise PatternError("the graph has no nodes")
        if sorted(nodes) != list(range(n)):
            raise PatternError("graph nodes must be the integers 0..n-1 (relabel with networkx.convert_node_labels_to_integers)")
        src, dst, w = [], [], []
        for u, v, data in graph.edges(data=True):
            val = data.get(weight, default)
            if isinstance(val, (bool, np.bool_)) or not isinstance(val, numbers.Real):
                raise PatternError(f"edge ({u}, {v}) has {weight}={val!r}, which is not a number")
            src.append(u); dst.append(v); w.append(val)
            if not graph.is_directed() and u != v:  # a self-loop is one message, not two
                src.append(v); dst.append(u); w.append(val)
        return cls.from_edges(
            np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
            np.array(w, dtype=np.float64), n=n,
            provenance={"source": "networkx", **(provenance or {})},
        )

    # ------------------------------------------------------------------ views
    @property
    def nnz(self) -> int:
        """Number of (sender, receiver) pairs that communicate."""
        return int(self.indptr[-1])

    @property
    def total_bytes(self) -> float:
        """Sum of all bytes sent."""
        return float(self.bytes.sum())

    def senders(self) -> np.ndarray:
        """Sender of every CSR entry (the row index expanded)."""
        return np.repeat(np.arange(self.n, dtype=np.int32), np.diff(self.indptr))

    def to_dense(self) -> np.ndarray:
        """Dense ``n x n`` float64 matrix of bytes."""
        out = np.zeros((self.n, self.n))
        out[self.senders(), self.indices] = self.bytes
        return out

    def to_scipy(self) -> Any:
        """The bytes as a ``scipy.sparse.csr_matrix``."""
        try:
            import scipy.sparse as sp
        except ImportError as exc:  # pragma: no cover - depends on environment
            raise MissingDependencyError("to_scipy needs scipy: pip install 'topomap-hpc[test]'") from exc
        return sp.csr_matrix((self.bytes, self.indices, self.indptr), shape=(self.n, self.n))

    def symmetric(self) -> "Pattern":
        """Undirected view: ``C + C^T`` (each pair carries the traffic of both directions).

        Examples
        --------
        >>> import topomap as tm
        >>> tm.Pattern.from_edges([0], [1], [5.0]).symmetric().to_dense().tolist()
        [[0.0, 5.0], [5.0, 0.0]]
        """
        s = self.senders()
        src, dst = np.concatenate([s, self.indices]), np.concatenate([self.indices, s])
        byts = np.concatenate([self.bytes, self.bytes])
        msgs = None if self.msgs is None else np.concatenate([self.msgs, self.msgs])
        try:
            return Pattern.from_edges(src, dst, byts, msgs, n=self.n, provenance={**self.provenance, "symmetric": True})
        except PatternError:  # only a sum can fail: name the two directions summed
            def direction(i: int) -> str:
                return f"{src[i]} -> {dst[i]}" if i < self.nnz else f"{dst[i]} -> {src[i]}"
            raise PatternError(f"symmetric(): {_overflow_message(src, dst, byts, msgs, direction)}") from None

    def quotient(self, part: Any, nparts: int | None = None) -> "Pattern":
        """Pattern between groups: process ``p`` belongs to group ``part[p]``.

        Traffic inside a group disappears (recorded as ``dropped_self_bytes``).

        Examples
        --------
        >>> import topomap as tm
        >>> pat = tm.Pattern.from_edges([0, 1, 2], [1, 2, 3], 1.0)
        >>> pat.quotient([0, 0, 1, 1]).to_dense().tolist()
        [[0.0, 1.0], [0.0, 0.0]]
        """
        p = _as_index_array(part, "part")
        if p.shape != (self.n,):
            raise PatternError(f"part has {p.size} entries, the pattern has {self.n} processes")
        if p.size and p.min() < 0:
            i = int(np.flatnonzero(p < 0)[0])
            raise PatternError(f"part[{i}] = {p[i]} is negative")
        k = int(p.max()) + 1 if nparts is None else int(nparts)
        if p.max() >= k:
            i = int(np.flatnonzero(p >= k)[0])
            raise PatternError(f"part[{i}] = {p[i]} is out of range [0, {k})")
        return Pattern.from_edges(
            p[self.senders()], p[self.indices], self.bytes, self.msgs, n=k,
            provenance={"source": "quotient", "of": dict(self.provenance), "nparts": k},
        )

    def __repr__(self) -> str:
        src = self.provenance.get("generator") or self.provenance.get("source", "?")
        return f"Pattern(n={self.n}, nnz={self.nnz}, total_bytes={self.total_bytes:g}, source={src!r})"
