"""The per-rank files of one run (``prof.3.prof``, ``dumpi-...-0003.txt``).

A run is written as one file per MPI rank whose name carries the rank as its
last run of digits.  Given one of those files, or the prefix Open MPI's
``pml_monitoring_filename`` was set to, or an explicit list, this finds the
whole set and checks it is exactly ranks ``0..N-1``.
"""

from __future__ import annotations

import os
import re
from typing import Sequence

import numpy as np

from ..errors import FormatError

_LAST_NUMBER = re.compile(r"^(.*?)([0-9]+)([^0-9]*)$")


def rank_of(path: str) -> int:
    """The rank in a per-rank file name: its last run of digits."""
    m = _LAST_NUMBER.match(os.path.basename(path))
    if m is None:
        raise FormatError(f"{path}: no rank number in the file name")
    return int(m.group(2))


def rank_files(paths: "str | os.PathLike[str] | Sequence[str | os.PathLike[str]]",
               prefix_suffix: str | None = None) -> tuple[list[str], str]:
    """Files of one run ordered by rank, and a name for the set (``dir/prof.*.prof``).

    ``paths`` is one file of the run (its siblings are found: same name with
    any number in place of the last digits), a prefix completed by
    ``prefix_suffix`` (``"prof"`` + ``".0.prof"``), or a sequence of files.
    """
    if isinstance(paths, (str, os.PathLike)):
        one = os.fspath(paths)
        if not os.path.exists(one) and prefix_suffix is not None and os.path.exists(one + prefix_suffix):
            one += prefix_suffix
        files, label, ranks = _siblings(one)
        if ranks is not None:
            order = np.argsort(ranks, kind="stable")
            if (ranks[order] == np.arange(ranks.size)).all():  # exactly 0..N-1: nothing to report
                return [files[i] for i in order.tolist()], label
    else:
        files = [os.fspath(p) for p in paths]
        if not files:
            raise FormatError("no per-rank files given")
        label = files[0] if len(files) == 1 else f"{files[0]} ... ({len(files)} files)"
    by_rank: dict[int, str] = {}
    for f in files:
        r = rank_of(f)
        if r in by_rank:
            raise FormatError(f"{by_rank[r]} and {f} both hold rank {r}")
        by_rank[r] = f
    missing = sorted(set(range(len(by_rank))) - set(by_rank))
    if missing:
        raise FormatError(f"{label}: {len(by_rank)} per-rank files but rank {missing[0]} has none "
                          f"(ranks run up to {max(by_rank)}; missing or extra files?)")
    return [by_rank[r] for r in range(len(by_rank))], label


def _siblings(one: str) -> tuple[list[str], str, "np.ndarray | None"]:
    """The files of the run of ``one``, a name for the set, and their ranks when read cheaply.

    Why not a loop over the names: a run of 10^5 ranks spent more time here than in reading
    its files; one regular expression over all the names finds the run and its numbers."""
    directory, base = os.path.split(one)
    m = _LAST_NUMBER.match(base)
    if m is None:
        raise FormatError(f"{one}: no rank number in the file name")
    if not os.path.isfile(one):
        raise FormatError(f"{one}: cannot open (No such file)")
    prefix, suffix = m.group(1), m.group(3)
    label = os.path.join(directory, f"{prefix}*{suffix}")
    try:
        names = os.listdir(directory or ".")
    except OSError as exc:
        raise FormatError(f"{directory}: cannot list ({exc.strerror})") from None
    listing = "\n".join(names)
    if listing.count("\n") == len(names) - 1:  # no name holds a newline
        digits = re.findall("(?m)^" + re.escape(prefix) + "([0-9]+)" + re.escape(suffix) + "$", listing)
        start = os.path.join(directory, prefix)
        files = [start + d + suffix for d in digits]
        if all(len(d) <= 18 for d in digits):
            return files, label, np.array([int(d) for d in digits], dtype=np.int64)
        return files, label, None
    same_run = re.compile(re.escape(prefix) + r"[0-9]+" + re.escape(suffix))
    return [os.path.join(directory, name) for name in names if same_run.fullmatch(name)], label, None
