"""Launcher files: place ranks at launch time instead of renumbering them afterwards.

A mapping ``pe_of[rank]`` on an allocation becomes one of:

============ =============================================================== ==========================================
format       file                                                            used as
============ =============================================================== ==========================================
``rankfile`` Open MPI rankfile: ``rank R=HOST slot=S`` per rank              ``mpirun --rankfile F`` (Open MPI 4),
                                                                             ``mpirun --map-by rankfile:file=F`` (5)
``mpich``    Cray MPICH ``MPICH_RANK_ORDER``: comma-separated ranks (ranges  ``MPICH_RANK_REORDER_METHOD=3``, file named
             ``a-b``) in the order they fill the allocation's PEs; ``#``     ``MPICH_RANK_ORDER`` in the working
             comments; one line per node                                     directory
``slurm``    ``SLURM_HOSTFILE``: host of rank ``i`` on line ``i+1``          ``srun --distribution=arbitrary``
``hostfile`` the same lines: a plain host list in rank order                 ``mpirun --map-by seq --hostfile F``
                                                                             (Open MPI), ``mpiexec -f F`` (Hydra),
                                                                             ``smpirun -hostfile F`` (SimGrid)
============ =============================================================== ==========================================

``slot`` in a rankfile is the PE's index inside its node (``pe % pes_per_node``),
which Open MPI reads as a logical core index (a hardware thread with
``--use-hwthread-cpus``): build the machine with cores as PEs to match.
Host and host-list formats carry nodes only; the order of ranks inside a
node is left to the launcher.  ``MPICH_RANK_ORDER`` describes a one-to-one
placement onto the allocation in its launch order (PE ``allocation.pes[j]``
is the ``j``-th slot), so it needs ``capacity == 1`` and as many ranks as
PEs.

With GPUs (a mapping from :func:`topomap.mappers.magc.magc` holds ``gpu_of``, the local GPU
of each rank), :func:`gpu_file` writes the GPU of every rank: a plain list (line ``r+1``:
rank ``r``'s device ordinal), or a wrapper script that sets ``CUDA_VISIBLE_DEVICES`` from
the launcher's rank variable before starting the program (``mpirun --rankfile F
./gpu-wrap.sh ./app``).

Host names come from ``hosts``: a sequence indexed by node id, a dict, a
callable ``node -> name``, or a format string such as ``"nid{node:05d}"``;
by default the machine's node names (fabric files name them) or ``node<id>``.

Examples
--------
>>> import topomap as tm
>>> from topomap.mpi.launch import launcher_file
>>> alloc = tm.machine("torus:2/2").allocate(4)
>>> print(launcher_file("rankfile", [3, 2, 1, 0], alloc, hosts="h{node}"), end="")
rank 0=h1 slot=1
rank 1=h1 slot=0
rank 2=h0 slot=1
rank 3=h0 slot=0
>>> print(launcher_file("mpich", [3, 2, 1, 0], alloc), end="")
# MPICH_RANK_ORDER: ranks in the order they fill the allocation (MPICH_RANK_REORDER_METHOD=3)
3,2
1,0
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..errors import MappingError
from ..io.atomic import atomic_write
from ..machine import Allocation, Machine
from ..mapping import Mapping as TmMapping
from ..mapping import check_mapping

__all__ = ["FORMATS", "launcher_file", "write_launcher_file", "usage", "host_namer", "gpu_file"]

FORMATS = ("rankfile", "mpich", "slurm", "hostfile")

HostSpec = "Sequence[str] | Mapping[int, str] | Callable[[int], str] | str | None"


def host_namer(machine: Machine, hosts: Any = None) -> Callable[[int], str]:
    """A function ``node id -> host name`` (see the module docstring for ``hosts``).

    Examples
    --------
    >>> import topomap as tm
    >>> host_namer(tm.machine("torus:4"), "nid{node:03d}")(2)
    'nid002'
    """
    if hosts is None:
        names = getattr(machine.network, "names", None)
        if names is not None:
            return lambda node: str(names[node])
        return lambda node: f"node{node}"
    if isinstance(hosts, str):
        if "{" not in hosts:
            raise MappingError(f"hosts={hosts!r} must be a format string with {{node}} (e.g. 'nid{{node:05d}}')")
        try:
            hosts.format(node=0)
        except (KeyError, IndexError, ValueError) as exc:
            raise MappingError(f"hosts format {hosts!r} is invalid: {exc}") from None
        return lambda node: hosts.format(node=node)
    if callable(hosts):
        return lambda node: str(hosts(node))
    if isinstance(hosts, Mapping):
        def from_dict(node: int) -> str:
            if node not in hosts:
                raise MappingError(f"hosts names no host for node {node}")
            return str(hosts[node])
        return from_dict
    names = [str(h) for h in hosts]

    def from_list(node: int) -> str:
        if not 0 <= node < len(names):
            raise MappingError(f"hosts lists {len(names)} names, none for node {node}")
        return names[node]
    return from_list


def _ranges(values: Sequence[int]) -> str:
    """``[0, 1, 2, 5, 4]`` -> ``"0-2,5,4"`` (runs of consecutive increasing ranks)."""
    parts, i = [], 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        parts.append(str(values[i]) if j == i else f"{values[i]}-{values[j]}")
        i = j + 1
    return ",".join(parts)


def launcher_file(format: str, mapping: "TmMapping | Any", allocation: Allocation, hosts: Any = None,
                  capacity: int = 1) -> str:
    """The text of a launcher file placing rank ``r`` on PE ``pe_of[r]``.

    Parameters
    ----------
    format : {"rankfile", "mpich", "slurm", "hostfile"}
        See the module docstring.
    mapping : Mapping or array of PE ids
        ``pe_of[rank]``, e.g. ``topomap.map(...)``.
    allocation : Allocation
        The PEs of the job in launch order.
    hosts : optional
        Host names of nodes (see the module docstring).
    capacity : int
        Most ranks per PE the mapping was made with.

    Examples
    --------
    >>> import topomap as tm
    >>> alloc = tm.machine("torus:2/2").allocate(4)
    >>> launcher_file("slurm", [0, 2, 1, 3], alloc).split()
    ['node0', 'node1', 'node0', 'node1']
    """
    if format not in FORMATS:
        raise MappingError(f"unknown launcher file format {format!r}; choose one of {', '.join(FORMATS)}")
    pe_of = np.asarray(mapping.pe_of if isinstance(mapping, TmMapping) else mapping)
    if pe_of.ndim != 1 or pe_of.size == 0 or pe_of.dtype.kind not in "iu":
        raise MappingError(f"the mapping must be a non-empty 1-D array of PE ids, got shape {pe_of.shape} "
                           f"dtype {pe_of.dtype}")
    check_mapping(pe_of, pe_of.size, allocation, capacity)
    machine = allocation.machine
    ppn = machine.pes_per_node
    name = host_namer(machine, hosts)
    node = (pe_of // ppn).tolist()
    if format == "rankfile":
        return "".join(f"rank {r}={name(n)} slot={int(pe) % ppn}\n" for r, (n, pe) in enumerate(zip(node, pe_of)))
    if format in ("slurm", "hostfile"):
        return "".join(f"{name(n)}\n" for n in node)
    if capacity != 1 or pe_of.size != len(allocation):
        raise MappingError(f"MPICH_RANK_ORDER places one rank on each of the allocation's PEs: the mapping has "
                           f"{pe_of.size} ranks for {len(allocation)} PEs (capacity {capacity})")
    rank_at = np.empty(machine.npes, dtype=np.int64)
    rank_at[pe_of] = np.arange(pe_of.size)
    order = rank_at[allocation.pes]
    lines = ["# MPICH_RANK_ORDER: ranks in the order they fill the allocation (MPICH_RANK_REORDER_METHOD=3)"]
    slot_node = allocation.pes // ppn
    start = 0
    for j in range(1, order.size + 1):
        if j == order.size or slot_node[j] != slot_node[start]:
            lines.append(_ranges(order[start:j].tolist()))
            start = j
    return "\n".join(lines) + "\n"


def write_launcher_file(path: "str | os.PathLike[str]", format: str, mapping: "TmMapping | Any",
                        allocation: Allocation, hosts: Any = None, capacity: int = 1) -> str:
    """Write :func:`launcher_file` to ``path``; return how to launch with it (:func:`usage`).

    Examples
    --------
    >>> import os, tempfile, topomap as tm
    >>> path = os.path.join(tempfile.mkdtemp(), "hosts.txt")
    >>> write_launcher_file(path, "slurm", [0, 1], tm.machine("torus:2/1").allocate(2))  # doctest: +ELLIPSIS
    'SLURM_HOSTFILE=... srun -n 2 --distribution=arbitrary ./app'
    """
    text = launcher_file(format, mapping, allocation, hosts, capacity)
    with atomic_write(path) as fh:
        fh.write(text)
    n = len(mapping.pe_of) if isinstance(mapping, TmMapping) else len(np.asarray(mapping))
    return usage(format, os.fspath(path), n)


# the rank variables of Open MPI, PMIx, Hydra/MPICH and Slurm, tried in this order
_RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID")


def gpu_file(mapping: TmMapping, format: str = "list") -> str:
    """The GPU (local device ordinal) of every rank, for the launcher.

    Parameters
    ----------
    mapping : Mapping
        With ``gpu_of`` (e.g. from :func:`topomap.mappers.magc.magc` or :func:`topomap.mpi.reorder`).
    format : {"list", "wrapper"}
        ``"list"``: line ``r+1`` is rank ``r``'s GPU; ``"wrapper"``: a POSIX shell script that
        exports ``CUDA_VISIBLE_DEVICES`` for its rank (``OMPI_COMM_WORLD_RANK``, ``PMIX_RANK``,
        ``PMI_RANK`` or ``SLURM_PROCID``) with ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (nvidia-smi's
        numbering, which the GPU node readers use) and runs its arguments.

    Examples
    --------
    >>> import topomap as tm
    >>> mp = tm.Mapping([0, 1, 2], gpu_of=[1, 0, 1])
    >>> print(gpu_file(mp), end="")
    1
    0
    1
    """
    gpu_of = getattr(mapping, "gpu_of", None)
    if gpu_of is None:
        raise MappingError("the mapping has no GPU per rank (gpu_of): map with topomap.mappers.magc")
    if format == "list":
        return "".join(f"{int(g)}\n" for g in gpu_of)
    if format != "wrapper":
        raise MappingError(f"unknown GPU file format {format!r}; choose 'list' or 'wrapper'")
    rank = "".join(f"${{{v}:-" for v in _RANK_VARS) + "" + "}" * len(_RANK_VARS)
    cases = "".join(f"  {r}) CUDA_VISIBLE_DEVICES={int(g)} ;;\n" for r, g in enumerate(gpu_of))
    return ("#!/bin/sh\n# topomap: the GPU of each rank (MAGC); run as: mpirun ... ./this-script ./app args\n"
            f"rank={rank}\n"
            'case "$rank" in\n' + cases +
            '  *) echo "topomap gpu wrapper: no GPU for rank \'$rank\'" >&2; exit 1 ;;\n'
            # topomap numbers GPUs as nvidia-smi and NVML do, in PCI order; CUDA's default differs
            "esac\nexport CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER=PCI_BUS_ID\nexec \"$@\"\n")


def usage(format: str, path: str, n: int) -> str:
    """How to launch ``n`` ranks with a launcher file of this format.

    Examples
    --------
    >>> usage("slurm", "hosts.txt", 8)
    'SLURM_HOSTFILE=hosts.txt srun -n 8 --distribution=arbitrary ./app'
    """
    if format == "rankfile":
        return (f"mpirun -n {n} --rankfile {path} ./app   (Open MPI 5: mpirun -n {n} --map-by rankfile:file={path} "
                "./app)")
    if format == "mpich":
        return (f"MPICH_RANK_REORDER_METHOD=3 srun -n {n} ./app   (the file must be named MPICH_RANK_ORDER in the "
                f"working directory: {path})")
    if format == "slurm":
        return f"SLURM_HOSTFILE={path} srun -n {n} --distribution=arbitrary ./app"
    if format == "hostfile":
        return (f"mpirun -n {n} --map-by seq --hostfile {path} ./app   (MPICH: mpiexec -n {n} -f {path} ./app; "
                f"SimGrid: smpirun -np {n} -hostfile {path} ./app)")
    raise MappingError(f"unknown launcher file format {format!r}; choose one of {', '.join(FORMATS)}")
