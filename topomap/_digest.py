"""One content digest for arrays and plain values.

Used where two things must be shown to be the same input: a resumed
experiment grid's labels (:mod:`topomap.experiments`) and every rank's
arguments of a collective call (:mod:`topomap.mpi`).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np


def digest(*parts: Any) -> str:
    """SHA-1 hex digest of arrays (their C-order bytes) and other values (their repr), in order.

    Examples
    --------
    >>> import numpy as np
    >>> digest(np.arange(3), "x") == digest(np.arange(3), "x") != digest(np.arange(4), "x")
    True
    """
    h = hashlib.sha1()
    for part in parts:
        h.update(part.tobytes() if isinstance(part, np.ndarray) else repr(part).encode())
    return h.hexdigest()
