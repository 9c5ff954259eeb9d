"""Sphinx configuration of the topomap documentation.

Build: ``sphinx-build -W -b html docs docs/_build/html`` (``pip install
'topomap-hpc[docs]'``).  Why Sphinx: the docstrings already use Sphinx roles
(``:class:``, ``:func:``) and numpydoc sections, which autodoc + napoleon
render as written; it is one pip package with a built-in theme and builds
offline.  The CLI reference, the API pages and the per-algorithm pages are
generated at build time (``_ext/topomap_docs.py``) so they never go stale.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "_ext"))

import topomap  # noqa: E402

project = "topomap"
author = "topomap developers"
copyright = "topomap developers, BSD-3-Clause"
release = version = topomap.__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax", "topomap_docs"]

napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
# Types stay text ("mapping, optional"): as cross-references a plain word would link to
# whatever attribute has that name (Sphinx >= 8 warns that "mapping" is ambiguous).
napoleon_use_param = False
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
# optional dependencies must not be needed to build the docs
autodoc_mock_imports = ["mpi4py", "otf2", "pymetis"]

exclude_patterns = ["_build", "algorithms/notes"]
smartquotes = False  # prose names options ("--no-resume") and specs: "--" must not become a dash
html_theme = "alabaster"
html_title = f"topomap {release}"
html_theme_options = {"description": "Topology-aware process mapping for HPC", "fixed_sidebar": True}
templates_path: list = []
html_static_path: list = []
