"""pytest from the repository root: the package's doctests skip, with the extra to install, where
their examples need a part the ``test`` extra does not bring."""

from __future__ import annotations

import importlib.util

import pytest
from _pytest.doctest import DoctestItem

# module -> (what in an example's code needs it, the reason shown)
_NEEDS = {"mpi4py": (("mpi4py", "mpi_library(", "mpiexec_command("),
                     "this example needs mpi4py: pip install 'topomap-hpc[mpi]'")}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = {module: need for module, need in _NEEDS.items() if importlib.util.find_spec(module) is None}
    for item in items:
        if not isinstance(item, DoctestItem) or item.dtest is None:
            continue
        code = "\n".join(example.source for example in item.dtest.examples)
        for words, reason in missing.values():
            if any(word in code for word in words):
                item.add_marker(pytest.mark.skip(reason=reason))
