"""What the mappers' Python wrappers share: option type predicates and the
translation of C core errors into MappingError.

Each mapper keeps its own messages (they name the method and option); only
the type rules and the error translation live here, so that "an integer"
or "a flag" means the same for every mapper.
"""

from __future__ import annotations

import numbers
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from ..errors import CoreError, CoreInputError, MappingError


def is_int(value: Any) -> bool:
    """An integer that is not a bool (numpy integers included)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_real(value: Any) -> bool:
    """A real number that is not a bool (numpy numbers included)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def is_flag(value: Any) -> bool:
    """True or False (numpy bools included)."""
    return isinstance(value, (bool, np.bool_))


@contextmanager
def core_errors(method: str | None) -> Iterator[None]:
    """Re-raise the C core's errors as MappingError, prefixed ``"method: "`` (None: no prefix)."""
    try:
        yield
    except (CoreError, CoreInputError) as exc:
        raise MappingError(f"{method}: {exc}" if method else str(exc)) from None
