"""Predicted communication time: Hockney/LogGP per link class and max-min fair
flow-level simulation over the machine's routes (DESIGN.md, "Timing").

Examples
--------
>>> import topomap as tm
>>> alloc = tm.machine("torus:4x4/4").allocate(64)
>>> pat = tm.generators.stencil_2d((8, 8), bytes=65536)
>>> block, greedy = (tm.map(pat, alloc, method=m) for m in ("block", "greedy"))
>>> [round(tm.timemodel.predict(pat, alloc, mp).makespan * 1e6, 2) for mp in (block, greedy)]   # microseconds
[90.23, 11.59]
"""

from .model import DEFAULT_CLASSES, LinkClass, LogGP, TimeModel, as_time_model
from .calibrate import PingPong, calibrate, fit_hockney, measure
from .osu import OsuTable, read_osu, read_osu_table
from .predict import METHODS, SYNCS, TimePrediction, predict, stages_of
from .sizes import DEFAULT_SIZES, crossover, sweep

__all__ = ["TimeModel", "LinkClass", "LogGP", "DEFAULT_CLASSES", "predict", "TimePrediction", "METHODS", "SYNCS",
           "sweep", "crossover", "DEFAULT_SIZES", "as_time_model", "stages_of", "calibrate", "measure", "fit_hockney",
           "PingPong", "read_osu", "read_osu_table", "OsuTable"]
