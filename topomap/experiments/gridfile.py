"""Grid files for ``topomap experiment``: the arguments of :func:`run_grid` as YAML or JSON.

A grid file is a mapping with these keys (only ``patterns`` and ``machines``
are required)::

    patterns:                    # {label: spec or file} or a list
      halo: stencil2d:32x32
      app: traces/app.mtx        # relative paths are relative to the grid file
    machines: [torus:8x8/4, "hierarchy:4:8:8/1:10:100"]
    methods: [block, cyclic, {method: random, label: shuffled}]
    seeds: [0, 1, 2]
    allocations: [contiguous, "fragmented:seed=1"]
    baseline: block
    capacity: 1
    weights: [1, 1, 1, 1]
    out: results.csv             # relative to the grid file; -o overrides
    fail_fast: false

YAML needs PyYAML (extra ``experiments``); JSON works everywhere.  The
format comes from the suffix (``.yaml``/``.yml`` or ``.json``), else from
the first character (``{`` means JSON).
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..errors import FormatError, MissingDependencyError

__all__ = ["read_grid", "GRID_KEYS"]

#: Keys a grid file may have (the keyword arguments of :func:`run_grid` it sets).
GRID_KEYS = ("patterns", "machines", "methods", "seeds", "allocations", "baseline", "capacity", "weights", "out",
             "fail_fast")


def _parse(path: str, text: str) -> Any:
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".json" or (suffix not in (".yaml", ".yml") and text.lstrip().startswith("{")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    try:
        import yaml
    except ImportError:
        raise MissingDependencyError(f"{path}: reading YAML grid files needs PyYAML: "
                                     "pip install 'topomap-hpc[experiments]' (or write the grid as JSON)") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise FormatError(f"{path}{line}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None


def _relative(value: Any, base: str) -> Any:
    """A pattern string that names a file next to the grid file becomes that file's path."""
    if isinstance(value, str) and not os.path.isabs(value):
        candidate = os.path.join(base, value)
        if os.path.exists(candidate):
            return candidate
    return value


def read_grid(path: "str | os.PathLike[str]") -> dict:
    """Read a grid file into keyword arguments for :func:`run_grid`.

    Relative pattern files and the ``out`` file are taken relative to the
    grid file's folder.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from topomap.experiments import read_grid
    >>> path = os.path.join(tempfile.mkdtemp(), "grid.json")
    >>> _ = open(path, "w").write(json.dumps({"patterns": ["stencil2d:8x8"], "machines": ["torus:4x4/4"]}))
    >>> sorted(read_grid(path))
    ['machines', 'patterns']
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise FormatError(f"{path}: cannot read the grid file ({exc.strerror})") from None
    data = _parse(path, text)
    if not isinstance(data, dict):
        raise FormatError(f"{path}: a grid file is a mapping with keys {', '.join(GRID_KEYS)}")
    unknown = [k for k in data if k not in GRID_KEYS]
    if unknown:
        raise FormatError(f"{path}: unknown key {unknown[0]!r}; a grid file has {', '.join(GRID_KEYS)}")
    for key in ("patterns", "machines"):
        if key not in data:
            raise FormatError(f"{path}: the grid needs {key!r}")
    base = os.path.dirname(os.path.abspath(path))
    patterns = data["patterns"]
    if isinstance(patterns, dict):
        data["patterns"] = {str(k): _relative(v, base) for k, v in patterns.items()}
    elif isinstance(patterns, list):
        # keep the label the user wrote: a resolved absolute path would change with the folder
        data["patterns"] = {str(v): _relative(v, base) for v in patterns}
    else:
        raise FormatError(f"{path}: 'patterns' must be a list or a mapping of label: spec or file")
    for key in ("machines", "methods", "allocations"):
        if key in data and not isinstance(data[key], (list, dict, str)):
            raise FormatError(f"{path}: {key!r} must be a list or a mapping")
    if isinstance(data.get("out"), str):
        data["out"] = os.path.join(base, data["out"])
    return data
