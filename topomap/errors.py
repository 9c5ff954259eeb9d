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


class FormatError(TopomapError, ValueError):
    """An input file is malformed; the message names the file and line."""


class MissingDependencyError(TopomapError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""


class CoreError(TopomapError, RuntimeError):
    """The C core reported an internal failure."""


class CoreInputError(TopomapError, ValueError):
    """The C core rejected an argument; the message names it."""
