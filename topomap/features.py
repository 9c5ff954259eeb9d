"""What this build of topomap can do."""

from __future__ import annotations

import importlib.util
import shutil

from . import _core
from ._version import __version__

__all__ = ["features"]


def features() -> dict:
    """Compiled-in libraries and optional Python packages that are importable.

    Examples
    --------
    >>> import topomap as tm
    >>> sorted(tm.features())[:3]
    ['compiler', 'hwloc', 'hwloc_request']
    """
    out = dict(_core.features())
    out["version"] = __version__
    out["lstopo"] = bool(shutil.which("lstopo-no-graphics") or shutil.which("lstopo"))
    for mod in ("scipy", "networkx", "pandas", "matplotlib", "mpi4py", "pymetis", "tqdm"):
        out[mod] = importlib.util.find_spec(mod) is not None
    return out
