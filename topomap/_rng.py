"""Counter-based random numbers that never depend on the NumPy version.

NumPy's generators may change their output between releases, and a synthetic
pattern must be reproducible from its seed forever.  This module therefore
implements SplitMix64 (Steele, Lea and Flood, 2014; the reference code by
Vigna) itself, with plain 64-bit unsigned integer arithmetic, as a function of
``(seed, counter)`` rather than as a stateful stream:

``splitmix64(seed, k)`` is the ``k``-th output (counting from 0) of the
reference generator whose state was initialised to ``seed``, i.e.
``mix(seed + (k + 1) * 0x9E3779B97F4A7C15 mod 2**64)``.

Every operation is defined modulo ``2**64`` and NumPy evaluates ``uint64``
array arithmetic exactly that way on every platform, so the same seed and
counters give the same bits on any machine, operating system and NumPy
version.  Being counter-based, any subset of the stream can be evaluated in
any order or in chunks with identical results.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from .errors import PatternError

__all__ = ["splitmix64", "uniform", "stream_seed"]

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_UINT64_LIMIT = 2**64


def _check_seed(seed: Any, name: str = "seed") -> np.uint64:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise PatternError(f"{name} must be an integer, got {seed!r}")
    if not 0 <= int(seed) < _UINT64_LIMIT:
        raise PatternError(f"{name} = {seed} must lie in [0, 2**64)")
    return np.uint64(int(seed))


def _as_counters(counters: Any) -> np.ndarray:
    arr = np.asarray(counters)
    if arr.dtype == np.uint64:
        return arr
    if arr.size == 0:
        return arr.astype(np.uint64)
    if arr.dtype.kind not in "iu":
        raise PatternError(f"counters must be integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "i" and arr.min() < 0:
        raise PatternError(f"counters must be non-negative, got {arr.min()}")
    return arr.astype(np.uint64)


def splitmix64(seed: int, counters: Any) -> np.ndarray:
    """Outputs number ``counters`` of the SplitMix64 stream started at ``seed``.

    Parameters
    ----------
    seed : int
        Initial state of the generator, in ``[0, 2**64)``.
    counters : array_like of int
        Non-negative positions in the stream (any shape).

    Returns
    -------
    numpy.ndarray of uint64
        Same shape as ``counters``.  ``splitmix64(s, range(k))`` equals the
        first ``k`` outputs of the reference sequential SplitMix64 seeded with
        ``s``, on every platform and NumPy version.

    Examples
    --------
    >>> from topomap._rng import splitmix64
    >>> [hex(v) for v in splitmix64(0, [0, 1])]
    ['0xe220a8397b1dcdaf', '0x6e789e6aa1b965f4']
    """
    s = _check_seed(seed)
    c = _as_counters(counters)
    # In-place steps keep one temporary alive: callers pass chunks of ~10^6
    # counters and the cost is then dominated by arithmetic, not allocation.
    with np.errstate(over="ignore"):
        z = c.astype(np.uint64, copy=True)
        z += np.uint64(1)
        z *= _GAMMA
        z += s
        t = np.empty_like(z)
        np.right_shift(z, np.uint64(30), out=t)
        z ^= t
        z *= _MIX1
        np.right_shift(z, np.uint64(27), out=t)
        z ^= t
        z *= _MIX2
        np.right_shift(z, np.uint64(31), out=t)
        z ^= t
        return z


def uniform(seed: int, counters: Any) -> np.ndarray:
    """Uniform doubles in ``[0, 1)`` drawn at positions ``counters`` of stream ``seed``.

    The top 53 bits of :func:`splitmix64` are scaled by ``2**-53``, so every
    value is an exact multiple of ``2**-53`` and ``1.0`` is never returned.

    Parameters
    ----------
    seed : int
        Stream seed, in ``[0, 2**64)``.
    counters : array_like of int
        Non-negative positions in the stream (any shape).

    Returns
    -------
    numpy.ndarray of float64
        Same shape as ``counters``; identical on every platform and NumPy version.

    Examples
    --------
    >>> from topomap._rng import uniform
    >>> u = uniform(7, range(1000))
    >>> bool(((u >= 0) & (u < 1)).all()), round(float(u.mean()), 1)
    (True, 0.5)
    """
    z = splitmix64(seed, counters)
    z >>= np.uint64(11)
    out = z.astype(np.float64)
    out *= 2.0**-53
    return out


def stream_seed(seed: int, *labels: str | int) -> int:
    """Seed of an independent sub-stream of ``seed`` named by ``labels``.

    Two different label tuples give unrelated seeds, so a generator can draw
    several families of numbers from one user seed without the families
    sharing counters.  The derivation hashes an unambiguous byte encoding of
    ``(seed, *labels)`` with BLAKE2b, which is fixed by its specification and
    therefore platform independent (Python's ``hash`` is salted per process
    and would not be).

    Parameters
    ----------
    seed : int
        User seed, in ``[0, 2**64)``.
    *labels : str or int
        Names of the sub-stream; integers must lie in ``[0, 2**64)``.

    Returns
    -------
    int
        A seed in ``[0, 2**64)`` for :func:`splitmix64` or :func:`uniform`.

    Examples
    --------
    >>> from topomap._rng import stream_seed
    >>> stream_seed(1, "random_sparse") == stream_seed(1, "random_sparse")
    True
    >>> stream_seed(1, "a") != stream_seed(2, "a") != stream_seed(1, "b")
    True
    """
    h = hashlib.blake2b(digest_size=8, person=b"topomap-rng")
    h.update(int(_check_seed(seed)).to_bytes(8, "little"))
    for label in labels:
        if isinstance(label, str):
            data = label.encode("utf-8")
            h.update(b"s" + len(data).to_bytes(8, "little") + data)
        elif isinstance(label, (int, np.integer)) and not isinstance(label, bool):
            h.update(b"i" + int(_check_seed(label, "an integer label")).to_bytes(8, "little"))
        else:
            raise PatternError(f"stream labels must be str or int, got {label!r}")
    return int.from_bytes(h.digest(), "little")
