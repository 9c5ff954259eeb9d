"""Patterns and stage-by-stage schedules as LogGOPSim GOAL text.

GOAL (Group Operation Assembly Language) is the schedule format of
LogGOPSim (T. Hoefler, T. Schneider, A. Lumsdaine, "LogGOPSim - Simulating
Large-Scale Applications in the LogGOPS Model", LSAP 2010;
github.com/spcl/LogGOPSim).  The grammar written here is the one its
``txt2bin`` reads (``src/LogGOPSim/txt2bin.re``) and its example schedules
use (``binary_tree_16.goal``)::

    num_ranks N
    rank R {
    lK: send Sb to Q tag T
    lK: recv Sb from P tag T
    lK: calc C
    lA requires lB
    }

A label is ``[a-zA-Z][a-zA-Z0-9_]*``, sizes and tags are unsigned integers,
``lA requires lB`` makes operation ``A`` start after ``B`` has completed.
Receives match sends by source and tag, first posted first matched.

What is written
---------------
* Every message ``p -> q`` of ``b`` bytes in stage ``s`` of iteration ``i``
  is a send on rank ``p`` and a receive on rank ``q``, both with tag
  ``i * S + s`` (``S`` stages), so messages of different stages or
  iterations can never match each other.
* The dependencies are those of the time model's RANKS mode
  (:mod:`topomap.timemodel`): rank ``r`` starts stage ``s`` once every
  message it receives in an earlier stage (of this or an earlier iteration)
  has arrived; its sends of stage ``s`` wait for that, its receives are
  posted at the start and wait for nothing.  Iteration ``i + 1`` follows
  iteration ``i``.  A send depends on one operation: the receive it waits
  for when there is a single one, else a zero-time ``calc 0`` that requires
  all of them (and the previous such join), so the file grows linearly
  with the number of messages.
* A pattern is one stage.  Where an entry carries a message count ``k``
  (:attr:`Pattern.msgs`) it becomes ``k`` messages of ``floor(b/k)`` or
  ``ceil(b/k)`` bytes (the larger ones first) that sum to ``b``, unless
  ``split=False`` asks for one message per entry.
* GOAL sizes are whole bytes: a volume or a message count that is not a
  whole number is refused (scale the pattern first), never rounded.

Examples
--------
>>> import topomap as tm
>>> from topomap.export.goal import goal
>>> print(goal(tm.Pattern.from_edges([0], [1], [8], n=2)), end="")
num_ranks 2
<BLANKLINE>
rank 0 {
l0: send 8b to 1 tag 0
}
<BLANKLINE>
rank 1 {
l0: recv 8b from 0 tag 0
}
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..errors import PatternError
from ..io.atomic import atomic_write
from ..pattern import Pattern
from ..timemodel.predict import stages_of

__all__ = ["goal", "write_goal"]

def _whole(values: np.ndarray, what: str, stage: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """``values`` as int64, refusing any that is not a whole number below 2^63 (named by stage and pair)."""
    bad = (values != np.floor(values)) | (values >= 2.0**63)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise PatternError(f"stage {stage}, message {src[i]} -> {dst[i]}: {what} {float(values[i]):g} is not a whole "
                           f"number below 2^63; GOAL sizes are whole bytes (scale the pattern)")
    return values.astype(np.int64)


def _messages(st: Pattern, k: int, split: bool) -> list[tuple[int, int, int]]:
    """(src, dst, bytes) of every message of stage ``k``, entries split by their message counts if asked."""
    src = st.senders().astype(np.int64)
    dst = st.indices.astype(np.int64)
    byts = _whole(st.bytes, "bytes", k, src, dst)
    if st.msgs is None or not split:
        return list(zip(src.tolist(), dst.tolist(), byts.tolist()))
    counts = _whole(st.msgs, "message count", k, src, dst)
    out = []
    for p, q, b, c in zip(src.tolist(), dst.tolist(), byts.tolist(), counts.tolist()):
        if c < 1:
            raise PatternError(f"stage {k}, message {p} -> {q}: message count {c} for {b} bytes; "
                               f"an entry with bytes needs at least one message")
        base, extra = divmod(b, c)
        out.extend((p, q, base + (j < extra)) for j in range(c))
    return out


def goal(work: Any, iterations: int = 1, split: bool = True) -> str:
    """The GOAL schedule of a pattern (one stage) or a stage-by-stage schedule.

    Parameters
    ----------
    work : Pattern, Schedule or sequence of Pattern
        What :func:`topomap.timemodel.predict` takes: one phase, or stages
        (a :class:`~topomap.collectives.schedules.Schedule`) run in order
        with the RANKS-mode dependencies of the module docstring.
    iterations : int
        How many times the stages repeat (``>= 1``).
    split : bool
        Write an entry with a message count ``k`` as ``k`` messages (default)
        or as one message of all its bytes (traces can count millions).

    Returns
    -------
    str
        ``num_ranks`` line, then one ``rank r { ... }`` block per rank.

    Raises
    ------
    PatternError
        A volume or message count that is not a whole number, ``iterations < 1``.
    TimeModelError
        Stages of different sizes, a schedule without stages, something
        that is not a pattern.

    Examples
    --------
    A 3-rank ring allgather of 4-byte blocks: rank 1's second send waits
    for its first receive.

    >>> from topomap.collectives.schedules import ring_allgather
    >>> text = goal(ring_allgather(3, bytes=4))
    >>> print(text[text.index("rank 1"):text.index("rank 2")], end="")
    rank 1 {
    l0: send 4b to 2 tag 0
    l1: recv 4b from 0 tag 0
    l2: send 4b to 2 tag 1
    l2 requires l1
    l3: recv 4b from 0 tag 1
    }
    <BLANKLINE>
    """
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise PatternError(f"iterations = {iterations!r} must be an integer >= 1")
    stages = stages_of(work)
    n = stages[0].n
    msgs = [_messages(st, k, bool(split)) for k, st in enumerate(stages)]
    # per rank: its lines, the next label number, the join its sends wait for, receives not yet joined
    lines: list[list[str]] = [[] for _ in range(n)]
    label = [0] * n
    join: list[int | None] = [None] * n
    pending: list[list[int]] = [[] for _ in range(n)]

    def op(r: int, text: str) -> int:
        lab = label[r]
        label[r] += 1
        lines[r].append(f"l{lab}: {text}")
        return lab

    def ready(r: int) -> int | None:
        """The operation rank r's sends wait for (joining the receives that arrived since)."""
        if pending[r]:
            deps = ([join[r]] if join[r] is not None else []) + pending[r]
            if len(deps) == 1:
                join[r] = deps[0]
            else:
                join[r] = op(r, "calc 0")
                lines[r].extend(f"l{join[r]} requires l{d}" for d in deps)
            pending[r] = []
        return join[r]

    for it in range(int(iterations)):
        for k, stage_msgs in enumerate(msgs):
            tag = it * len(stages) + k
            for p, q, b in stage_msgs:
                after = ready(p)
                lab = op(p, f"send {b}b to {q} tag {tag}")
                if after is not None:
                    lines[p].append(f"l{lab} requires l{after}")
            # after all sends of the stage, so that none of them waits for a receive of its own stage
            for p, q, b in stage_msgs:
                pending[q].append(op(q, f"recv {b}b from {p} tag {tag}"))
    out = [f"num_ranks {n}", ""]
    for r in range(n):
        out += [f"rank {r} {{", *lines[r], "}", ""]
    return "\n".join(out)


def write_goal(work: Any, path: "str | os.PathLike[str]", iterations: int = 1, split: bool = True) -> None:
    """Write :func:`goal` to ``path`` (atomically: a failed write leaves the old file).

    Examples
    --------
    >>> import os, tempfile
    >>> from topomap.collectives.schedules import binomial_bcast
    >>> path = os.path.join(tempfile.mkdtemp(), "bcast.goal")
    >>> write_goal(binomial_bcast(4, bytes=16), path, iterations=2)
    >>> open(path).read().count("send 16b")
    6
    """
    text = goal(work, iterations, split)
    with atomic_write(path) as fh:
        fh.write(text)
