"""NAS-Parallel-Benchmark-like point-to-point patterns: CG, MG, FT, LU, BT, SP.

Cui's thesis runs NPB class A on 128 processes and names each benchmark's
dominant collective (notes 003 §4.4, after Faraj & Yuan 2002: FT and IS
Alltoall, MG and LU Allreduce).  The process layouts and neighbour rules
below are those of the NPB 3.x MPI reference code; the volumes are bytes
per iteration (8-byte doubles, 16-byte complex) from the same loops, with
the simplifications listed per generator.  Collectives other than FT's
transposes are not included: add them with
:mod:`topomap.collectives.schedules` and :func:`topomap.patterns.util.add`.

Process layouts (``me`` = MPI rank)
-----------------------------------
* **CG** (``setup_proc_info``, ``setup_submatrix_info``): ``nprocs`` a power
  of two; ``npcols = nprows`` (square) or ``2 * nprows``; ``me = proc_row *
  npcols + proc_col``.  Per inner CG iteration a rank exchanges with
  ``log2 npcols`` row partners (``proc_col`` with bit ``div/2`` flipped for
  ``div = npcols, npcols/2, ..., 2``) its partial matrix-vector product
  (``reduce_send_lengths`` doubles) and two scalar sums (``d``, ``rho``), and
  sends ``send_len`` doubles to its transpose partner ``exch_proc``
  (``(me mod nprows) * nprows + me / nprows`` when square, else ``2 *
  (((me/2) mod nprows) * nprows + me/2/nprows) + me mod 2``).
* **MG** (``setup``): ``nprocs`` a power of two on a ``p1 x p2 x p3`` grid
  with ``p1 = 2^(L/3)``, ``p2 = 2^((L - L/3)/2)``, ``p3 = nprocs/(p1 p2)``
  (``L = log2 nprocs``, integer division), first coordinate fastest, periodic.
  Each grid level exchanges one face with each of the 6 neighbours (``comm3``).
  Simplification: one exchange per level per iteration, levels whose local
  extent falls below one point are skipped (the reference code then
  hands data to a few ranks with ``give_ex``/``take_ex``).
* **FT** (``setup``): ``nprocs <= nz``: 1-D layout, one all-to-all over
  all ranks per FFT; otherwise 2-D, ``np1 = nz``, ``np2 = nprocs / nz``,
  all-to-alls inside the groups of equal ``me mod np1`` and of equal
  ``me / np1``.  Blocks: ``16 * nx ny nz / nprocs / group size`` bytes.
* **LU** (``proc_grid``, ``neighbors``): ``xdim = 2^ceil(L/2)``,
  ``ydim = nprocs / xdim``, ``row = me mod xdim``, ``col = me / xdim``;
  north ``me - 1``, south ``me + 1``, west ``me - xdim``, east
  ``me + xdim``, not periodic.  Per SSOR iteration: the lower sweep
  (``blts``) sends 5 values per boundary point of each of ``nz - 2``
  planes south and east, the upper sweep (``buts``) north and west, and
  ``exchange_3`` sends 2 layers of 5 values of the ``nz`` planes to all four.
* **BT, SP** (``make_set``): ``nprocs = q^2`` on a ``q x q`` grid, ``me =
  i + q j``, multi-partition: each rank owns ``q`` cells.  Neighbours
  (periodic): ``x`` ``(i +- 1, j)``, ``y`` ``(i, j +- 1)``, ``z``
  successor ``(i - 1, j + 1)`` and predecessor ``(i + 1, j - 1)``.  Per time
  step: ``copy_faces`` sends 2 layers x 5 values of each cell face (``q``
  cells, ``(N/q)^2`` points each) to all six; each sweep direction sends
  ``forward`` values per face point to the successor and ``backward`` to
  the predecessor for ``q - 1`` cell stages.  BT: 30 forward (a 5x5 block
  and 5 right-hand sides), 5 backward.  SP's scalar pentadiagonal systems
  carry less; its defaults (22 forward, 10 backward) are an estimate,
  not read from the code.

Problem classes (``cls``): the NPB grid sizes S, W, A, B, C (``na`` for CG).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..errors import PatternError
from .generators import _check_n
from ..pattern import Pattern

__all__ = ["nas_cg", "nas_mg", "nas_ft", "nas_lu", "nas_bt", "nas_sp"]

_CG_NA = {"S": 1400, "W": 7000, "A": 14000, "B": 75000, "C": 150000}
_MG_N = {"S": 32, "W": 128, "A": 256, "B": 256, "C": 512}
_FT_N = {"S": (64, 64, 64), "W": (128, 128, 32), "A": (256, 256, 128), "B": (512, 256, 256), "C": (512, 512, 512)}
_LU_N = {"S": 12, "W": 33, "A": 64, "B": 102, "C": 162}
_BT_N = {"S": 12, "W": 24, "A": 64, "B": 102, "C": 162}
_SP_N = {"S": 12, "W": 36, "A": 64, "B": 102, "C": 162}
_DOUBLE = 8.0


def _class(cls: str, table: dict) -> object:
    if cls not in table:
        raise PatternError(f"class {cls!r} is not one of {', '.join(table)}")
    return table[cls]


def _power_of_two(nprocs: int, what: str) -> int:
    n = _check_n(nprocs)
    if n & (n - 1):
        raise PatternError(f"{what} needs a power-of-two number of processes, got {n}")
    return n


def _pattern(name: str, n: int, src: Sequence[int], dst: Sequence[int], byts: Sequence[float], params: dict) -> Pattern:
    return Pattern.from_edges(np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64),
                              np.asarray(byts, dtype=np.float64), np.ones(len(src)), n=n,
                              provenance={"generator": name, "nprocs": n, **params})


def nas_cg(nprocs: int, cls: str = "A") -> Pattern:
    """NPB CG: row reductions and transpose exchange, bytes per inner CG iteration.

    Examples
    --------
    >>> from topomap.patterns.nas import nas_cg
    >>> pat = nas_cg(4, "S")              # 2 x 2 grid: one row partner, one transpose partner
    >>> pat.indices[pat.indptr[1]:pat.indptr[2]].tolist()
    [0, 2]
    >>> float(pat.to_dense()[1, 0])       # 700 doubles of A.p and 2 scalars
    5616.0
    """
    n = _power_of_two(nprocs, "nas_cg")
    na = int(_class(cls, _CG_NA))  # type: ignore[arg-type]
    nprows = 1 << (int(math.log2(n)) // 2)
    npcols = n // nprows
    l2npcols = int(math.log2(npcols))
    src, dst, byts = [], [], []
    for me in range(n):
        proc_row, proc_col = divmod(me, npcols)
        row_size = na // nprows + (proc_row < na % nprows)
        if npcols == nprows:
            send_len = row_size
            lengths = [send_len] * l2npcols
            exch = (me % nprows) * nprows + me // nprows
        else:
            send_len = (row_size + 1) // 2 if me % 2 == 0 else row_size // 2
            lengths = [send_len] * (l2npcols - 1) + [row_size - send_len]
            exch = 2 * (((me // 2) % nprows) * nprows + me // 2 // nprows) + me % 2
        div = npcols
        for i in range(l2npcols):
            j = (proc_col + div // 2) % div + proc_col // div * div
            src.append(me), dst.append(proc_row * npcols + j), byts.append(_DOUBLE * (lengths[i] + 2))
            div //= 2
        if l2npcols:
            src.append(me), dst.append(exch), byts.append(_DOUBLE * send_len)
    return _pattern("nas_cg", n, src, dst, byts, {"class": cls, "na": na, "grid": [nprows, npcols]})


def _torus_neighbours(dims: tuple[int, ...]) -> list[list[tuple[int, int]]]:
    """For each rank, (axis, neighbour) pairs of a periodic grid, first coordinate fastest."""
    n = math.prod(dims)
    out = []
    for me in range(n):
        coord, rest = [], me
        for e in dims:
            coord.append(rest % e)
            rest //= e
        nb = []
        for a, e in enumerate(dims):
            for step in (-1, 1):
                c = list(coord)
                c[a] = (c[a] + step) % e
                nb.append((a, sum(c[b] * math.prod(dims[:b]) for b in range(len(dims)))))
        out.append(nb)
    return out


def nas_mg(nprocs: int, cls: str = "A") -> Pattern:
    """NPB MG: periodic 3-D face exchanges at every multigrid level, bytes per V-cycle.

    Examples
    --------
    >>> from topomap.patterns.nas import nas_mg
    >>> pat = nas_mg(8, "S")              # 2 x 2 x 2 grid: each neighbour is reached twice (+1 and -1)
    >>> sorted(set(pat.msgs.tolist())), pat.nnz
    ([2.0], 24)
    """
    n = _power_of_two(nprocs, "nas_mg")
    size = int(_class(cls, _MG_N))  # type: ignore[arg-type]
    log_p = int(math.log2(n))
    dx = log_p // 3
    dy = (log_p - dx) // 2
    dims = (1 << dx, 1 << dy, n // ((1 << dx) * (1 << dy)))
    src, dst, byts = [], [], []
    levels = int(math.log2(size))
    for me, nb in enumerate(_torus_neighbours(dims)):
        for a, q in nb:
            vol = 0.0
            for lev in range(levels, 0, -1):
                ext = [(size >> (levels - lev)) // d for d in dims]
                if min(ext) < 1:
                    break
                vol += _DOUBLE * math.prod(ext) / ext[a]
            src.append(me), dst.append(q), byts.append(vol)
    return _pattern("nas_mg", n, src, dst, byts, {"class": cls, "grid": list(dims)})


def nas_ft(nprocs: int, cls: str = "A") -> Pattern:
    """NPB FT: all-to-all transposes (1-D or 2-D layout), bytes per FFT.

    Examples
    --------
    >>> from topomap.patterns.nas import nas_ft
    >>> nas_ft(4, "S").nnz                     # 1-D layout: everyone to everyone
    12
    >>> pat = nas_ft(128, "S")                 # 2-D layout: 64 x 2 groups
    >>> int(pat.indptr[1]), pat.provenance["layout"]
    (64, '2D')
    """
    n = _check_n(nprocs)
    nx, ny, nz = _class(cls, _FT_N)  # type: ignore[misc]
    points = nx * ny * nz / n
    src, dst, byts = [], [], []
    if n <= nz:
        layout, groups = "1D", [list(range(n))]
    else:
        np1 = nz
        if n % np1:
            raise PatternError(f"nas_ft: {n} processes are not a multiple of nz = {np1} (2-D layout)")
        layout = "2D"
        groups = [list(range(r, n, np1)) for r in range(np1)] + [list(range(c * np1, (c + 1) * np1))
                                                                 for c in range(n // np1)]
    for g in groups:
        block = 16.0 * points / len(g)
        for a in g:
            for b in g:
                if a != b:
                    src.append(a), dst.append(b), byts.append(block)
    return _pattern("nas_ft", n, src, dst, byts, {"class": cls, "layout": layout})


def nas_lu(nprocs: int, cls: str = "A") -> Pattern:
    """NPB LU: pipelined SSOR sweeps and face exchanges on a 2-D grid, bytes per iteration.

    Examples
    --------
    >>> from topomap.patterns.nas import nas_lu
    >>> pat = nas_lu(8, "S")                   # xdim 4, ydim 2, not periodic
    >>> pat.indices[pat.indptr[0]:pat.indptr[1]].tolist()    # rank 0: south 1, east 4
    [1, 4]
    """
    n = _power_of_two(nprocs, "nas_lu")
    size = int(_class(cls, _LU_N))  # type: ignore[arg-type]
    xdim = 1 << math.ceil(math.log2(n) / 2)
    ydim = n // xdim
    ni, nj = size / xdim, size / ydim  # points along i (rows) and j (columns) per rank
    sweep = 5 * (size - 2)             # values per boundary point over the sweep's planes
    faces = 2 * 5 * size               # exchange_3: two layers of 5 values, every plane
    src, dst, byts = [], [], []
    for me in range(n):
        row, col = me % xdim, me // xdim
        # north and south share a j-line, west and east an i-line; each gets one sweep (lower: S, E; upper: N, W)
        for ok, q, line in ((row > 0, me - 1, nj), (row < xdim - 1, me + 1, nj),
                            (col > 0, me - xdim, ni), (col < ydim - 1, me + xdim, ni)):
            if ok:
                src.append(me), dst.append(q), byts.append(_DOUBLE * line * (sweep + faces))
    return _pattern("nas_lu", n, src, dst, byts, {"class": cls, "grid": [xdim, ydim]})


def _multipartition(name: str, nprocs: int, size: int, forward: float, backward: float, cls: str) -> Pattern:
    n = _check_n(nprocs)
    q = math.isqrt(n)
    if q * q != n:
        raise PatternError(f"{name} needs a square number of processes, got {n}")
    face = (size / q) ** 2
    copy = 2 * 5 * face * q
    sweep_f, sweep_b = forward * face * (q - 1), backward * face * (q - 1)
    src, dst, byts = [], [], []
    for me in range(n):
        i, j = me % q, me // q
        succ = [((i + 1) % q, j), (i, (j + 1) % q), ((i - 1) % q, (j + 1) % q)]
        pred = [((i - 1) % q, j), (i, (j - 1) % q), ((i + 1) % q, (j - 1) % q)]
        for (a, b), extra in [(s, sweep_f) for s in succ] + [(p, sweep_b) for p in pred]:
            src.append(me), dst.append(a + q * b), byts.append(_DOUBLE * (copy + extra))
    return _pattern(name, n, src, dst, byts, {"class": cls, "grid": [q, q], "forward": forward,
                                              "backward": backward})


def nas_bt(nprocs: int, cls: str = "A", forward: float = 30, backward: float = 5) -> Pattern:
    """NPB BT: multi-partition neighbours on a ``q x q`` grid, bytes per time step.

    Examples
    --------
    >>> from topomap.patterns.nas import nas_bt
    >>> pat = nas_bt(9, "S")
    >>> pat.indices[pat.indptr[4]:pat.indptr[5]].tolist()    # rank 4 = (1, 1): six neighbours
    [1, 2, 3, 5, 6, 7]
    """
    return _multipartition("nas_bt", nprocs, int(_class(cls, _BT_N)), forward, backward, cls)  # type: ignore[arg-type]


def nas_sp(nprocs: int, cls: str = "A", forward: float = 22, backward: float = 10) -> Pattern:
    """NPB SP: the BT layout with SP's (estimated) sweep payloads, bytes per time step.

    Examples
    --------
    >>> from topomap.patterns.nas import nas_sp, nas_bt
    >>> bool((nas_sp(16).indices == nas_bt(16).indices).all())
    True
    """
    return _multipartition("nas_sp", nprocs, int(_class(cls, _SP_N)), forward, backward, cls)  # type: ignore[arg-type]
