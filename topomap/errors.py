"""Exceptions raised by topomap.

Every error a user can cause derives from :class:`TopomapError` and names the
file, line, process or PE at fault.
"""

from __future__ import annotations


class TopomapError(Exception):
    """Base class of all topomap errors."""


class PatternError(TopomapError, ValueError):
    """A communication pattern is malformed (shape, weights, indices)."""


class MachineError(TopomapError, ValueError):
    """A machine description or machine spec string is malformed."""


class MappingError(TopomapError, ValueError):
    """A mapping or allocation is invalid for the machine or pattern."""


class NotApplicable(MappingError):
    """A mapping method does not apply here: the machine kind lacks what it follows (levels,
    coordinates, a hierarchy), or an external program it runs is not installed.

    :func:`topomap.compare` with its default methods skips such methods and lists them.
    """


class FormatError(TopomapError, ValueError):
    """An input file is malformed; the message names the file and line."""


class TimeModelError(TopomapError, ValueError):
    """A time model or the work given to it is unusable (a negative latency,
    a link class the machine needs and the model lacks, stages of the wrong size)."""


class MissingDependencyError(TopomapError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""


class CoreError(TopomapError, RuntimeError):
    """The C core reported an internal failure."""


class CoreInputError(TopomapError, ValueError):
    """The C core rejected an argument; the message names it."""


class CoreNotSupported(CoreError):
    """The C core does not support this input for this machine kind (``TOPOMAP_ENOTSUP``)."""


class Cancelled(TopomapError):
    """A long call stopped because its progress callable returned something true.

    The rule for every call that takes ``progress`` (:func:`topomap.map`
    with any method, :func:`topomap.partition`, distributed PTRAM): a true
    return raises :class:`Cancelled`; an exception raised by the callable
    propagates unchanged; Ctrl-C raises :class:`KeyboardInterrupt`, as
    everywhere in Python.  ``fraction`` is the last fraction reported
    (None when the C core stopped on its own).

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("torus:4x4/4").allocate(64)
    >>> try:
    ...     tm.map(tm.generators.stencil_2d((8, 8)), alloc, method="ptram", progress=lambda f: f >= 0.5)
    ... except tm.Cancelled as exc:
    ...     print(exc.fraction >= 0.5, "ptram cancelled" in str(exc))
    True True
    """

    def __init__(self, message: str, fraction: float | None = None):
        super().__init__(message)
        self.fraction = fraction

    def __reduce__(self) -> tuple:
        return type(self), (str(self), self.fraction)

    @classmethod
    def by_progress(cls, what: str, fraction: float) -> "Cancelled":
        """The exception for ``what`` stopped by its progress callable at ``fraction``."""
        return cls(f"{what} cancelled by the progress callback at {fraction:.0%}", float(fraction))
