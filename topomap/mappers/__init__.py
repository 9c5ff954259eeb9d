"""Mappers; importing this package registers them all."""
from . import baselines  # noqa: F401
