"""The grid's progress bar: tqdm when installed, else one line of text on stderr."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO


class TextBar:
    """A minimal stand-in for ``tqdm``: ``grid: 12/40 runs (30%) label``.

    Redraws at most every ``interval`` seconds (a grid of fast runs must not
    spend its time printing) and always once at :meth:`close`.
    """

    def __init__(self, total: int, desc: str = "grid", stream: TextIO | None = None, interval: float = 0.5):
        self.total, self.desc, self.n = int(total), desc, 0
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self._postfix = ""
        self._last = float("-inf")

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.monotonic()
        if now - self._last >= self.interval:
            self._last = now
            self._draw()

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        self._postfix = text

    def _draw(self) -> None:
        pct = 100 * self.n // self.total if self.total else 100
        self.stream.write(f"\r{self.desc}: {self.n}/{self.total} runs ({pct}%) {self._postfix}\x1b[K")
        self.stream.flush()

    def close(self) -> None:
        self._draw()
        self.stream.write("\n")
        self.stream.flush()


class NoBar:
    """Progress turned off."""

    n = 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, enabled: bool, desc: str = "grid") -> Any:
    """A bar with ``update``, ``set_postfix_str`` and ``close``.

    ``tqdm.auto`` picks the notebook widget in Jupyter and the console bar
    elsewhere; without tqdm a :class:`TextBar` is used.
    """
    if not enabled:
        return NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return TextBar(total, desc)
    return tqdm(total=total, desc=desc, unit="run")
