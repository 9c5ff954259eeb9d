"""Run any MPI command under the PMPI profiler and check what it wrote.

The library must reach the MPI ranks, not necessarily the launcher:

* Open MPI's ``mpiexec``/``mpirun``: ``-x LD_PRELOAD=<lib>`` (and the
  profiler's variables) is inserted after the launcher's name, so only the
  ranks load the library.
* MPICH/Hydra (also Intel MPI): ``-genv LD_PRELOAD <lib>`` likewise.
* Anything else (``srun``, a wrapper script, a singleton ``./app``): the
  variables are set in the command's environment, which these launchers
  pass on to the ranks; every process of the command then loads the
  library, which is harmless because it only acts inside MPI calls.

A launcher is recognised by its name (``mpiexec``, ``mpirun``, ``orterun``,
with any suffix such as ``mpiexec.openmpi``) and its ``--version`` output.
An ``LD_PRELOAD`` already in the environment is kept, after the profiler.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .. import io
from ..io.atomic import atomic_write
from ..pattern import Pattern
from .build import build
from .errors import ProfilerError

__all__ = ["ProfileRun", "launcher_of", "prepare", "profile"]

_LAUNCHER_NAME = re.compile(r"^(mpiexec|mpirun|orterun)([._-].*)?$")
LAUNCHERS = ("auto", "openmpi", "mpich", "env")


@dataclass(frozen=True)
class ProfileRun:
    """A command made ready to run under the profiler.

    Attributes
    ----------
    command : list of str
        The command to execute (the user's, with launcher options inserted).
    env : dict
        Variables to add to the environment of ``command``.
    launcher : str
        How the library reaches the ranks: ``"openmpi"``, ``"mpich"`` or ``"env"``.
    output : pathlib.Path
        Where the profiler writes its ``.tmprof`` file.
    """

    command: list[str]
    env: dict[str, str] = field(default_factory=dict)
    launcher: str = "env"
    output: Path = Path("topomap.tmprof")


def launcher_of(command: Sequence[str]) -> str:
    """Which MPI launcher ``command`` starts: ``"openmpi"``, ``"mpich"`` or ``"env"`` (not a known launcher).

    Examples
    --------
    >>> from topomap.profiler import launcher_of
    >>> launcher_of(["./app", "-n", "4"])
    'env'
    """
    if not command or not _LAUNCHER_NAME.match(os.path.basename(command[0])):
        return "env"
    try:
        out = subprocess.run([command[0], "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "env"
    text = out.stdout + out.stderr
    if "Open MPI" in text or "OpenRTE" in text:
        return "openmpi"
    if "HYDRA" in text.upper():
        return "mpich"
    return "env"


def prepare(
    command: Sequence[str],
    library: "str | os.PathLike[str]",
    output: "str | os.PathLike[str]",
    *,
    collectives: bool = False,
    launcher: str = "auto",
) -> ProfileRun:
    """The command and environment that run ``command`` with the profiler loaded.

    Parameters
    ----------
    command : sequence of str
        The user's command, e.g. ``["mpiexec", "-n", "16", "./app"]``.
    library : path
        The profiler library (from :func:`topomap.profiler.build`).
    output : path
        The ``.tmprof`` file the profiler writes (made absolute: ranks may
        change directory).
    collectives : bool
        Also count collectives, expanded by the profiler's models.
    launcher : {"auto", "openmpi", "mpich", "env"}
        How to pass the library to the ranks; ``"auto"`` asks the launcher.

    Returns
    -------
    ProfileRun

    Examples
    --------
    >>> from topomap.profiler import prepare
    >>> run = prepare(["mpiexec", "-n", "4", "./app"], "/lib/p.so", "/tmp/a.tmprof", launcher="openmpi")
    >>> run.command
    ['mpiexec', '-x', 'LD_PRELOAD=/lib/p.so', '-x', 'TOPOMAP_PROFILE_OUT=/tmp/a.tmprof', '-n', '4', './app']
    >>> prepare(["./app"], "/lib/p.so", "/tmp/a.tmprof", launcher="env").env["LD_PRELOAD"]
    '/lib/p.so'
    """
    cmd = [str(c) for c in command]
    if not cmd:
        raise ProfilerError("no command to profile: give one after '--', e.g. -- mpiexec -n 4 ./app")
    if launcher not in LAUNCHERS:
        raise ProfilerError(f"launcher {launcher!r} is not one of {', '.join(LAUNCHERS)}")
    kind = launcher_of(cmd) if launcher == "auto" else launcher
    out = Path(os.path.abspath(output))
    preload = str(library)
    if os.environ.get("LD_PRELOAD"):
        preload += ":" + os.environ["LD_PRELOAD"]
    variables = {"LD_PRELOAD": preload, "TOPOMAP_PROFILE_OUT": str(out)}
    if collectives:
        variables["TOPOMAP_PROFILE_COLLECTIVES"] = "1"
    env = {k: v for k, v in variables.items() if k != "LD_PRELOAD"}
    if kind == "openmpi":
        extra = [a for k, v in variables.items() for a in ("-x", f"{k}={v}")]
    elif kind == "mpich":
        extra = [a for k, v in variables.items() for a in ("-genv", k, v)]
    else:
        extra, env = [], variables
    return ProfileRun([cmd[0], *extra, *cmd[1:]], env, kind, out)


def profile(
    command: Sequence[str],
    output: "str | os.PathLike[str]",
    *,
    collectives: bool = False,
    launcher: str = "auto",
    mpicc: str | None = None,
    library: "str | os.PathLike[str] | None" = None,
    what: str = "all",
) -> Pattern:
    """Run an MPI command under the profiler and return the pattern it recorded.

    Parameters
    ----------
    command : sequence of str
        E.g. ``["mpiexec", "-n", "16", "./app"]``.
    output : path
        The result file.  ``.tmprof`` keeps the profiler's own file (bytes
        and message counts, point-to-point and collectives apart); any other
        extension :func:`topomap.io.write` knows (``.mat``, ``.npy``, ...)
        receives the converted pattern.  It is replaced only when the run
        succeeded and its profile was read back: a failed run leaves a
        previous file there as it was.
    collectives : bool
        Also count collectives (see ``csrc/profiler/topomap_pmpi_coll.c``).
    launcher : {"auto", "openmpi", "mpich", "env"}
        See :func:`prepare`.
    mpicc : str, optional
        MPI compiler wrapper used to build the library when ``library`` is not given.
    library : path, optional
        A profiler library already built by :func:`topomap.profiler.build`.
    what : {"all", "p2p", "collectives"}
        The traffic returned (and converted, for non-``.tmprof`` outputs).

    Returns
    -------
    Pattern
        Read back from the written file, so a returned pattern is a checked one.

    Raises
    ------
    ProfilerError
        The command failed (``returncode`` attribute set), or it wrote no
        profile (not an MPI program, a statically linked MPI, a rank that
        never called ``MPI_Finalize``, ...).
    FormatError
        The profile is malformed or incomplete.
    """
    out = Path(os.path.abspath(output))
    if not out.parent.is_dir():
        raise ProfilerError(f"{out}: the output directory {out.parent} does not exist")
    lib = Path(library) if library is not None else build(mpicc)
    # The run writes a temporary profile beside the output; the output (and a previous
    # profile there) is replaced only once that one has been read back whole.
    fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmprof", dir=out.parent)
    os.close(fd)
    raw = Path(name)
    raw.unlink()  # a file the run did not write must not pass for its profile
    run = prepare(command, lib, raw, collectives=collectives, launcher=launcher)
    try:
        try:
            code = subprocess.run(run.command, env={**os.environ, **run.env}).returncode
        except OSError as exc:
            raise ProfilerError(f"cannot run {run.command[0]!r}: {exc.strerror}") from None
        if code != 0:
            err = ProfilerError(f"the profiled command exited with status {code}")
            err.returncode = code  # type: ignore[attr-defined]
            raise err
        if not raw.exists():
            raise ProfilerError(
                f"the command finished but no profile was written to {raw}: was it an MPI program "
                f"(dynamically linked, so that LD_PRELOAD reaches it) started by this command, and did every "
                f"rank call MPI_Finalize?" + ("" if run.launcher == "env" else
                                               f" (library passed via {run.launcher!r}; try --launcher env)"))
        pattern = io.read_tmprof(raw, what=what)
        if out.suffix.lower() == ".tmprof":
            with open(raw, "rb") as src, atomic_write(out, "wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            io.write(pattern, out)
        return pattern
    finally:
        raw.unlink(missing_ok=True)
