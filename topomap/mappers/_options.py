"""What the mappers' Python wrappers share: option type predicates, the
translation of C core errors into MappingError and the call of a C mapper.

Each mapper keeps its own messages (they name the method and option); only
the type rules and the error translation live here, so that "an integer"
or "a flag" means the same for every mapper.
"""

from __future__ import annotations

import numbers
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from ..errors import CoreError, CoreInputError, CoreNotSupported, MappingError, NotApplicable

if TYPE_CHECKING:
    from ..machine import Allocation
    from ..pattern import Pattern


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
    """Re-raise the C core's errors as MappingError (NotApplicable where the core does not support
    the machine kind), prefixed ``"method: "`` (None: no prefix)."""
    try:
        yield
    except CoreNotSupported as exc:
        raise NotApplicable(f"{method}: {exc}" if method else str(exc)) from None
    except (CoreError, CoreInputError) as exc:
        raise MappingError(f"{method}: {exc}" if method else str(exc)) from None


def core_map(method: str | None, func: Callable[..., Any], pattern: Pattern, allocation: Allocation, seed: int,
             capacity: int, progress: Callable[[float], Any] | None, **options: Any) -> Any:
    """Call the ``topomap._core`` mapper ``func`` with the arguments every one takes.

    Those are the machine, the pattern's CSR arrays, the allocation, the
    capacity, the seed (as the core's uint64) and ``progress``, which the
    glue handles for all of them (a true return raises
    :class:`~topomap.Cancelled`); the core's errors come back as
    :class:`~topomap.MappingError` as :func:`core_errors` says.
    """
    with core_errors(method):
        return func(allocation.machine._core, pattern.indptr, pattern.indices, pattern.bytes, allocation.pes,
                    capacity, seed % 2**64, progress=progress, **options)
