"""The profiler's error type."""

from __future__ import annotations

from ..errors import TopomapError

__all__ = ["ProfilerError"]


class ProfilerError(TopomapError, RuntimeError):
    """Building or running the PMPI profiler failed; the message says what to fix."""
