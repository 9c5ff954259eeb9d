"""pytest from the repository root: the package's doctests skip, with the extra to install, where
their examples need a part the ``test`` extra does not bring."""

from __future__ import annotations

import importlib.util

import pytest
from _pytest.doctest import DoctestItem

# module prefix -> (what the examples import, the reason shown)
_NEEDS = {"topomap.mpi": ("mpi4py", "the mpi4py layer's examples need mpi4py: pip install 'topomap-hpc[mpi]'")}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = {prefix: reason for prefix, (module, reason) in _NEEDS.items() if importlib.util.find_spec(module) is None}
    for item in items:
        if not isinstance(item, DoctestItem):
            continue
        for prefix, reason in missing.items():
            if item.name == prefix or item.name.startswith(prefix + "."):
                item.add_marker(pytest.mark.skip(reason=reason))
