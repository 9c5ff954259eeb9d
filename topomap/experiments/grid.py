"""Run a grid of patterns x machines x allocations x seeds x methods."""

from __future__ import annotations

import datetime
import json
import os
import platform
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping as MappingABC, Sequence

import numpy as np

from .._digest import digest
from .._version import __version__
from ..errors import MachineError, MappingError
from ..machine import Allocation, Machine
from ..metrics import as_pattern, evaluate
from ..pattern import Pattern
from ..registry import map as run_mapper
from ..registry import methods as registered
from ..timemodel import TimeModel, as_time_model, predict
from ..networks.spec import machine as build_machine
from .progress import progress_bar
from .results import KEY, STRING_COLUMNS, file_format, load, normalize, pandas, save

__all__ = ["run_grid", "GridInterrupted", "GridRunsFailed", "MethodSpec", "AllocationSpec"]

_POLICIES = ("contiguous", "random", "fragmented")
_ALLOC_DEFAULTS = {"seed": 0, "runs": 4}
_SAVE_EVERY = 2.0  # seconds between intermediate saves: rewriting the file after every fast run would dominate


class GridRunsFailed(UserWarning):
    """:func:`run_grid` finished with runs whose rows have ``status == "error"``."""


class GridInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a grid; ``results`` holds the rows finished before it.

    It is a :class:`KeyboardInterrupt`, so scripts stop as usual; when the
    grid had an ``out`` file the finished rows are in it and running the same
    grid again resumes.
    """

    def __init__(self, results: Any, saved_to: str | None):
        self.results, self.saved_to = results, saved_to
        where = f"; saved to {saved_to}" if saved_to else ""
        super().__init__(f"grid interrupted after {len(results)} runs{where}")


@dataclass(frozen=True)
class MethodSpec:
    """A mapper and the options it runs with, under a label (the ``method`` column)."""

    label: str
    name: str
    options: dict = field(default_factory=dict)

    @property
    def options_json(self) -> str:
        """The options as canonical JSON (the ``options`` column, part of the key)."""
        return json.dumps(self.options, sort_keys=True, default=str)

    @classmethod
    def parse(cls, item: Any, label: str | None = None) -> "MethodSpec":
        """From ``"name"``, ``("name", {options})`` or ``{"method": name, **options}``."""
        if isinstance(item, MethodSpec):
            return item if label is None else cls(label, item.name, dict(item.options))
        if isinstance(item, str):
            name, options = item, {}
        elif isinstance(item, MappingABC):
            if "method" not in item:
                raise ValueError(f"a method given as a dict needs a 'method' key, got {dict(item)!r}")
            options = {k: v for k, v in item.items() if k not in ("method", "label")}
            name, label = item["method"], label or item.get("label")
        elif isinstance(item, (tuple, list)) and len(item) == 2 and isinstance(item[1], MappingABC):
            name, options = item[0], dict(item[1])
        else:
            raise ValueError(f"cannot read {item!r} as a method: give 'name', ('name', {{options}}) "
                             "or {'method': name, option: value}")
        reg = registered()
        if name not in reg:
            raise MappingError(f"unknown mapping method {name!r}; registered: {', '.join(reg)}")
        unknown = sorted(set(options) - set(reg[name].options))
        if unknown:
            raise MappingError(f"method {name!r} has no option {unknown[0]!r}; "
                               f"its options: {', '.join(reg[name].options) or 'none'}")
        if label is None:
            label = name if not options else \
                f"{name}({','.join(f'{k}={json.dumps(v, default=str)}' for k, v in sorted(options.items()))})"
        return cls(str(label), name, dict(options))


@dataclass(frozen=True)
class AllocationSpec:
    """Which PEs a job gets: ``Machine.allocate(n, policy, seed, runs)`` under a label."""

    policy: str = "contiguous"
    seed: int = 0
    runs: int = 4

    @property
    def label(self) -> str:
        """``policy`` plus the non-default parameters, e.g. ``fragmented:runs=2,seed=1``."""
        extra = [f"{k}={getattr(self, k)}" for k in sorted(_ALLOC_DEFAULTS) if getattr(self, k) != _ALLOC_DEFAULTS[k]]
        return self.policy + (":" + ",".join(extra) if extra else "")

    @classmethod
    def parse(cls, item: Any) -> "AllocationSpec":
        """From ``"policy"``, ``"policy:seed=1,runs=2"`` or ``{"policy": ..., "seed": ..., "runs": ...}``."""
        if isinstance(item, AllocationSpec):
            return item
        if isinstance(item, str):
            policy, _, rest = item.partition(":")
            params: dict[str, Any] = {}
            for token in filter(None, (t.strip() for t in rest.split(","))):
                key, eq, value = token.partition("=")
                if not eq or not value.strip().lstrip("-").isdigit():
                    raise MachineError(f"allocation {item!r}: bad token {token!r} (expected seed=INT or runs=INT)")
                params[key.strip()] = int(value)
        elif isinstance(item, MappingABC):
            params = dict(item)
            policy = params.pop("policy", "contiguous")
        else:
            raise MachineError(f"cannot read {item!r} as an allocation: give 'policy[:seed=S,runs=R]' or a dict")
        policy = str(policy).strip()
        if policy not in _POLICIES:
            raise MachineError(f"unknown allocation policy {policy!r} in {item!r}; "
                               f"choose one of {', '.join(_POLICIES)}")
        unknown = sorted(set(params) - set(_ALLOC_DEFAULTS))
        if unknown:
            raise MachineError(f"allocation {item!r} has no parameter {unknown[0]!r}; it takes seed and runs")
        for k, v in params.items():
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < (1 if k == "runs" else 0):
                raise MachineError(f"allocation {item!r}: {k} must be an integer >= {1 if k == 'runs' else 0}, "
                                   f"got {v!r}")
        return cls(policy, **{k: int(v) for k, v in params.items()})

    def allocate(self, machine: Machine, n: int) -> Allocation:
        return machine.allocate(n, policy=self.policy, seed=self.seed, runs=self.runs)


def _items(things: Any, kinds: tuple) -> list[tuple[str | None, Any]]:
    """(label or None, object) pairs from a dict, one object or a sequence."""
    if isinstance(things, MappingABC):
        return [(str(k), v) for k, v in things.items()]
    if isinstance(things, kinds):
        return [(None, things)]
    return [(None, t) for t in things]


def _unique(labels: list[str], what: str) -> None:
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise ValueError(f"two {what} have the label {label!r}; give them distinct labels in a dict")
        seen.add(label)


def _pattern_label(obj: Any, i: int) -> str:
    if isinstance(obj, (str, os.PathLike)):
        return os.fspath(obj)
    prov = getattr(obj, "provenance", None) or {}
    if "generator" in prov:
        dims = prov.get("dims")
        return prov["generator"] + (":" + "x".join(map(str, dims)) if dims else "")
    if "file" in prov:
        return os.path.basename(str(prov["file"]))
    return f"pattern{i}"


def _load_pattern(obj: Any) -> Pattern:
    if isinstance(obj, (str, os.PathLike)):
        from ..cli.common import load_pattern  # file path, else generator spec: the CLI's rule
        return load_pattern(os.fspath(obj))
    return as_pattern(obj)


def _digest(*parts: Any) -> str:
    """The digest stored with a label (16 hex digits: files written before stay resumable)."""
    return digest(*parts)[:16]


class _Lazy:
    """Build each pattern or machine once, on first use; remember a failure as the error."""

    def __init__(self, build: Any):
        self.build, self.cache = build, {}

    def get(self, label: str, obj: Any) -> tuple[Any, BaseException | None]:
        if label not in self.cache:
            try:
                self.cache[label] = (self.build(obj), None)
            except Exception as exc:  # recorded in the rows of this pattern/machine
                self.cache[label] = (None, exc)
        return self.cache[label]


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def run_grid(patterns: Any, machines: Any, methods: Any = None, *, seeds: "int | Iterable[int]" = (0,),
             allocations: Any = ("contiguous",), baseline: Any = "block", capacity: int = 1,
             weights: Sequence[float] = (1.0, 1.0, 1.0, 1.0), out: "str | os.PathLike[str] | None" = None,
             resume: bool = True, progress: bool = True, fail_fast: bool = False,
             time: "bool | TimeModel" = False, bytes_scale: float = 1.0) -> Any:
    """Map every pattern on every machine, allocation and seed with every method.

    One row per run, with every metric of :func:`topomap.evaluate`, each
    metric of :data:`topomap.compare.NORMALIZED` also normalised by the
    baseline run of the same pattern, machine, allocation and seed
    (``<metric>_norm``), the mapping time and what is needed to trust and
    repeat the run.

    Parameters
    ----------
    patterns : dict, sequence or single item
        ``{label: pattern}`` or a list of patterns.  A pattern is a
        :class:`~topomap.Pattern` (or anything :func:`topomap.evaluate`
        accepts), a file path or a generator spec such as
        ``"stencil2d:32x32"``.  Without a dict a string labels itself and a
        generated pattern is labelled from its provenance.
    machines : dict, sequence or single item
        ``{label: machine}`` or a list of :class:`~topomap.Machine` objects or
        spec strings (a spec labels itself, a Machine by ``machine.spec``).
    methods : sequence or dict, optional
        Mapper names, ``("name", {option: value})`` pairs or
        ``{"method": name, option: value}`` dicts (or ``{label: any of
        those}``); default: every registered method.  A method with options
        is labelled ``name(option=value,...)``.
    seeds : int or iterable of int
        Mapper seeds; every (pattern, machine, allocation) cell runs each.
    allocations : sequence
        ``"contiguous"``, ``"random"``, ``"fragmented"``, optionally with
        parameters: ``"fragmented:seed=1,runs=2"`` or
        ``{"policy": "random", "seed": 3}`` (see :meth:`Machine.allocate`).
    baseline : str, tuple or dict, optional
        The method every row is normalised by; it runs in every cell even when
        not among ``methods``.  None: no ``_norm`` columns.
    capacity : int
        Processes per PE (n-to-1 mapping when > 1); the allocation then has
        ``ceil(n / capacity)`` PEs.
    weights : 4 floats
        Hybrid metric weights (HB, MC, NZCA, NZCV).
    out : path, optional
        ``.csv`` or ``.parquet`` file (Parquet needs pyarrow).  Rows are saved
        every few seconds, at the end, on Ctrl-C and on a fail-fast error.
        The file keeps rows of other grids it already held.
    resume : bool
        With ``out`` existing: reuse its successful rows whose key
        (:data:`~topomap.experiments.KEY`: pattern, machine, allocation,
        method, options, seed, capacity, weights) this grid would run, and
        run only the rest (failed rows run again).  False: start afresh and
        overwrite the file.
    progress : bool
        Show a progress bar (tqdm when installed, else a line on stderr).
    fail_fast : bool
        Raise the first error instead of recording it in the row's ``status``
        (``"ok"`` or ``"error"``) and ``error`` columns.
    time : bool or TimeModel
        Also predict one phase of each pattern in seconds
        (:func:`topomap.timemodel.predict`; True = the default model): a
        ``predicted_time`` column, normalised like the metrics, and a
        ``time_model`` column (the model's JSON and ``bytes_scale``) so that
        a resumed grid reuses only rows predicted with the same model.
    bytes_scale : float
        Multiplies every message's bytes for the prediction.

    Returns
    -------
    pandas.DataFrame
        One row per run of this grid, in grid order.  When some runs failed,
        a :class:`GridRunsFailed` warning says how many and names the first.

    Raises
    ------
    GridInterrupted
        On Ctrl-C (a KeyboardInterrupt carrying the finished rows).
    ValueError
        When a label names a different pattern or machine than the rows
        of ``out`` with that label (compared by content digest).

    Examples
    --------
    >>> import topomap as tm
    >>> from topomap.experiments import run_grid
    >>> df = run_grid({"halo": "stencil2d:8x8"}, ["torus:4x4/4"], ["block", "random"],
    ...               seeds=[0, 1], progress=False)
    >>> len(df), sorted(set(df["method"]))
    (4, ['block', 'random'])
    >>> float(df.groupby("method")["hop_bytes_norm"].max()["block"])
    1.0
    """
    pd = pandas()
    pats = _items(patterns, (str, os.PathLike, Pattern))
    pats = [(label or _pattern_label(obj, i), obj) for i, (label, obj) in enumerate(pats)]
    machs = [(label or (obj if isinstance(obj, str) else getattr(obj, "spec", f"machine{i}")), obj)
             for i, (label, obj) in enumerate(_items(machines, (str, Machine)))]
    if methods is None:
        methods = list(registered())
    meths = [MethodSpec.parse(obj, label) for label, obj in _items(methods, (str, MethodSpec))]
    base = None if baseline is None else MethodSpec.parse(baseline)
    if base is not None and base.label not in {m.label for m in meths}:
        meths.insert(0, base)
    allocs = [AllocationSpec.parse(a) for a in ([allocations] if isinstance(allocations, (str, MappingABC))
                                                 else allocations)]
    seed_list = [seeds] if isinstance(seeds, (int, np.integer)) else list(seeds)
    for s in seed_list:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s < 2**64:
            raise MappingError(f"seeds must be integers in [0, 2**64), got {s!r}")
    for what, labels in (("patterns", [p for p, _ in pats]), ("machines", [m for m, _ in machs]),
                         ("methods", [m.label for m in meths]), ("allocations", [a.label for a in allocs])):
        if not labels:
            raise ValueError(f"the grid has no {what}")
        _unique(labels, what)
    if not seed_list:
        raise ValueError("the grid has no seeds")
    if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 1:
        raise MappingError(f"capacity must be a positive integer, got {capacity!r}")
    given = weights
    try:
        weights = tuple(float(w) for w in weights)
    except (TypeError, ValueError):
        weights = ()
    if len(weights) != 4 or not all(np.isfinite(w) and w >= 0 for w in weights):
        raise MappingError(f"weights must be 4 finite non-negative numbers (HB, MC, NZCA, NZCV), got {given!r}")
    weights_text = ",".join(f"{w:g}" for w in weights)
    model = as_time_model(time)
    if model is not None and (not np.isfinite(bytes_scale) or bytes_scale <= 0):
        raise MappingError(f"bytes_scale must be a positive finite number, got {bytes_scale!r}")
    time_text = None if model is None else json.dumps({"model": model.to_dict(), "bytes_scale": float(bytes_scale)},
                                                      sort_keys=True)

    out_path = None if out is None else os.fspath(out)
    if out_path is not None:
        file_format(out_path)  # a Parquet file without pyarrow fails now, not after the runs
    previous = load(out_path) if out_path and resume and os.path.exists(out_path) else None
    done: dict[tuple, dict] = {}
    if previous is not None and len(previous):
        for row in previous.to_dict("records"):
            if row.get("status") == "ok" and (time_text is None or row.get("time_model") == time_text):
                done[_key(row)] = row

    grid = _Grid(pd, previous, out_path, base)
    total = len(pats) * len(machs) * len(allocs) * len(seed_list) * len(meths)
    bar = progress_bar(total, progress)
    pattern_cache, machine_cache = _Lazy(_load_pattern), _Lazy(build_machine)
    interrupted = False
    try:
        for plabel, pobj in pats:
            pat, perr = pattern_cache.get(plabel, pobj)
            pinfo = {} if pat is None else {"n": pat.n, "pattern_digest": _digest(pat.n, pat.indptr, pat.indices,
                                                                                  pat.bytes)}
            grid.check_label("pattern", plabel, pinfo.get("pattern_digest"))
            for mlabel, mobj in machs:
                mach, merr = machine_cache.get(mlabel, mobj)
                minfo = {} if mach is None else {
                    "machine_spec": mach.spec, "npes": mach.npes,
                    "machine_digest": _digest(mach.spec, mach.npes, mach.nnodes, mach.nlinks, mach.level_names,
                                              mach.capacities())}
                grid.check_label("machine", mlabel, minfo.get("machine_digest"))
                for aspec in allocs:
                    alloc, aerr = None, perr or merr
                    if aerr is None:
                        try:
                            alloc = aspec.allocate(mach, -(-pat.n // capacity))  # n-to-1: fewer PEs
                        except Exception as exc:  # e.g. more processes than PEs: this cell's rows say so
                            aerr = exc
                    for seed in seed_list:
                        for meth in meths:
                            row = {"pattern": plabel, "machine": mlabel, "allocation": aspec.label,
                                   "method": meth.label, "options": meth.options_json, "seed": int(seed),
                                   "capacity": int(capacity), "weights": weights_text, "method_name": meth.name,
                                   **pinfo, **minfo, **({} if time_text is None else {"time_model": time_text})}
                            bar.set_postfix_str(f"{plabel} {mlabel} {aspec.label} {meth.label} seed={seed}")
                            key = _key(row)
                            if key in done:
                                grid.add(done[key])
                            else:
                                if aerr is not None and fail_fast:
                                    raise aerr
                                grid.add(_run(row, pat, alloc, meth, aerr, weights, fail_fast, model,
                                              float(bytes_scale)))
                            bar.update()
                            grid.maybe_save()
    except KeyboardInterrupt:
        interrupted = True
    except BaseException:
        grid.finish()
        raise
    finally:
        bar.close()
    result = grid.finish()
    if interrupted:
        raise GridInterrupted(result, out_path) from None
    failed = result[result["status"] == "error"] if len(result) else result
    if len(failed):
        first = failed.iloc[0]
        warnings.warn(f"{len(failed)} of {len(result)} runs failed (their rows have status 'error'); the first: "
                      f"{first['method']} on {first['pattern']} / {first['machine']} / {first['allocation']}: "
                      f"{first['error']}", GridRunsFailed, stacklevel=2)
    return result


def _key(row: MappingABC) -> tuple:
    return tuple(str(row[k]) if k in ("options", "weights") else row[k] for k in KEY)


def _run(row: dict, pat: Pattern | None, alloc: Allocation | None, meth: MethodSpec, setup_error: Any,
         weights: tuple, fail_fast: bool, model: TimeModel | None, bytes_scale: float) -> dict:
    row = dict(row)
    if alloc is not None:
        row["nodes"] = len(alloc.nodes())
    try:
        if setup_error is not None:
            raise setup_error
        mp = run_mapper(pat, alloc, method=meth.name, seed=row["seed"], capacity=row["capacity"], **meth.options)
        met = evaluate(pat, alloc, mp, weights=weights)
        row.update(status="ok", error="", seconds=mp.seconds,
                   method_options=json.dumps(mp.options, sort_keys=True, default=str), **met.to_dict())
        if model is not None:
            row["predicted_time"] = predict(pat, alloc, mp, model, bytes_scale=bytes_scale).makespan
    except Exception as exc:
        if fail_fast:
            raise
        row.update(status="error", error=_error_text(exc))
    row.update(topomap_version=__version__, numpy_version=np.__version__, python_version=platform.python_version(),
               timestamp=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    return row


class _Grid:
    """The rows of this grid and the output file they go to."""

    def __init__(self, pd: Any, previous: Any, out_path: str | None, base: MethodSpec | None):
        self.pd, self.previous, self.out_path, self.base = pd, previous, out_path, base
        self.rows: list[dict] = []
        self.last_save = time.monotonic()
        self.digests: dict[tuple[str, str], set] = {}
        if previous is not None and len(previous):
            for what in ("pattern", "machine"):
                col = f"{what}_digest"
                if col in previous.columns:
                    for label, seen in zip(previous[what], previous[col]):
                        if isinstance(seen, str) and seen:
                            self.digests.setdefault((what, label), set()).add(seen)

    def check_label(self, what: str, label: str, digest: str | None) -> None:
        known = self.digests.get((what, label), set())
        if digest is not None and known and digest not in known:
            raise ValueError(f"{what} label {label!r} named a different {what} in {self.out_path} "
                             f"(digest {sorted(known)[0]}, now {digest}); give it another label or use another "
                             "output file")

    def add(self, row: dict) -> None:
        self.rows.append(row)

    def frame(self) -> Any:
        df = self.pd.DataFrame(self.rows)
        for col in KEY:
            if col not in df.columns:
                df[col] = self.pd.Series(dtype=object)
        for col in STRING_COLUMNS:  # a failed run has no digest or options: "" as the file will say
            if col in df.columns:
                df[col] = df[col].fillna("")
        if self.base is not None:
            df = normalize(df, self.base.label)
        first = [c for c in (*KEY, "method_name", "status", "error", "n", "nodes", "npes", "seconds")
                 if c in df.columns]
        last = [c for c in STRING_COLUMNS if c in df.columns and c not in first]
        middle = [c for c in df.columns if c not in first and c not in last]
        return df[first + middle + last]

    def save(self, df: Any) -> None:
        if self.out_path is None:
            return
        if self.previous is not None and len(self.previous):
            mine = {_key(r) for r in self.rows}
            keep = self.previous[[_key(r) not in mine for r in self.previous.to_dict("records")]]
            df = self.pd.concat([keep, df], ignore_index=True) if len(keep) else df
        save(df, self.out_path)
        self.last_save = time.monotonic()

    def maybe_save(self) -> None:
        if self.out_path is not None and time.monotonic() - self.last_save >= _SAVE_EVERY:
            self.save(self.frame())

    def finish(self) -> Any:
        df = self.frame()
        self.save(df)
        return df
