"""Collective operations as stage-by-stage schedules of unicasts.

:mod:`~topomap.collectives.schedules` builds binomial broadcast and gather,
recursive doubling, ring and Bruck schedules (also ``topomap.generators_collective``);
each stage is a :class:`~topomap.Pattern` and ``schedule.total`` their sum, so
every mapper and metric accepts them.
"""

from . import schedules

__all__ = ["schedules"]
