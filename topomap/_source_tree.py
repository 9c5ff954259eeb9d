"""Why ``import topomap`` failed to find the C extension, in words a user can act on.

The usual case: ``pip install .`` built ``topomap._core`` into site-packages,
and Python started in the repository root imports the ``topomap/`` folder of
the checkout instead, which has no extension (NumPy says "you should not try
to import numpy from its source directory" for the same reason).
"""

from __future__ import annotations

import os


def explain(package_dir: str, error: ImportError) -> str:
    """The message for an ImportError of ``topomap._core`` raised in ``package_dir``."""
    root = os.path.dirname(os.path.abspath(package_dir))
    if os.path.exists(os.path.join(root, "setup.py")) and os.path.isdir(os.path.join(root, "csrc")):
        return (f"topomap is being imported from its source tree ({package_dir}), where the C extension "
                f"topomap._core is not built. Start Python outside {root} to use the installed topomap, "
                "or build it here with: pip install -e .")
    return (f"topomap's C extension topomap._core cannot be loaded from {package_dir}: {error}. "
            "Reinstall topomap-hpc (pip install --force-reinstall topomap-hpc) so that it is built for this Python.")
