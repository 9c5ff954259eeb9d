"""Run a program of tests/mpi under the mpiexec that matches mpi4py's MPI library.

Every launch has a timeout, so a hang fails the test instead of the CI run.
Programs print result lines ``@json {...}`` that :func:`results` collects.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ROOT_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def launcher(n: int, oversubscribe: bool = True) -> list[str]:
    """mpiexec -n N (oversubscribed unless told) of the MPI mpi4py loads, or skip the test."""
    pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install 'topomap-hpc[mpi]'")
    from topomap.errors import TopomapError
    from topomap.mpi import mpiexec_command
    try:
        return mpiexec_command(n, oversubscribe)
    except TopomapError as exc:
        pytest.skip(f"no usable MPI: {exc}")


def run(n: int, script: "str | Path", *args: str, env: dict | None = None, timeout: float = 120,
        check: bool = True, launcher_args: tuple[str, ...] = (), oversubscribe: bool = True
        ) -> subprocess.CompletedProcess:
    """Run ``python tests/mpi/<script> args`` (or an absolute script path) on n ranks; fail on a
    non-zero exit or a timeout."""
    cmd = [*launcher(n, oversubscribe), *launcher_args, sys.executable, str(HERE / script), *args]
    full_env = {**os.environ, **ROOT_ENV}
    full_env.pop("TOPOMAP_MPI_HOSTS", None)      # only the test decides which hosts are simulated
    full_env.update(env or {})
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env, cwd=str(ROOT))
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{' '.join(cmd)} hung (killed after {timeout} s); output so far:\n{exc.stdout}\n{exc.stderr}")
    if check and done.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited with {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    return done


def results(done: subprocess.CompletedProcess) -> list[dict]:
    """The ``@json`` lines a run printed, in output order."""
    return [json.loads(line[6:]) for line in done.stdout.splitlines() if line.startswith("@json ")]
