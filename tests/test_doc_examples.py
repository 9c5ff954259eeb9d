"""Every code block and command line of README.md and docs/ runs, so the documentation cannot rot.

Each page runs in a fresh directory, its blocks in document order: Python blocks share one
namespace (from the first block that imports mpi4py on, they form one program run under
``mpiexec -n 4``); each line of a ``bash``/``console`` block is a command that must exit 0; a
block with a ``:caption:`` naming a file (``fabric.json``, ``grid.yaml``) is written to that file
before anything runs.  Blocks in other languages without a caption (a directory tree, a file format shown for
reading) are text.  What a page assumes the reader already has (their application's pattern
file, an MPI program) comes from FIXTURES; the few lines that cannot run inside a test are in
NOT_RUN with the reason, and long measurements run in their quick form (QUICK).  A page that
needs a program this machine lacks (Scotch, an MPI) is skipped, naming it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import topomap as tm
from topomap.experiments import GridRunsFailed

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").rglob("*.rst") if "generated" not in p.parts)
MPI_RANKS = 4

# command prefix -> why this test leaves the line to someone else
NOT_RUN = {
    "pip install": "installs topomap itself: .ci/run runs the README's install commands in a fresh virtualenv",
    "apt-get install": "installs system packages as root: .ci/run runs the README's line (checked below)",
    "python -m pytest": "the test suite itself, which .ci/run runs",
    "jupyter lab": "an interactive server; tests/test_notebooks.py executes every notebook",
    "ibnetdiscover": "needs an InfiniBand fabric; the page reads a real ibnetdiscover dump (FIXTURES)",
}
# measurements that take minutes: their quick form runs here, from a copy of benchmarks/
QUICK = {
    "python benchmarks/bench_eval.py": "--quick",
    "python benchmarks/bench_io.py": "--quick --repeat 1",
}
# programs a page's commands need -> what to install
PROGRAMS = {"scotch_gmap": "Scotch (apt-get install scotch)", "mpiexec": "an MPI (apt-get install openmpi-bin)",
            "mpirun": "an MPI (apt-get install openmpi-bin)", "mpicc": "an MPI compiler wrapper"}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _stencil_file(name: str, dims: tuple[int, int]) -> Callable[[Path], None]:
    def make(d: Path) -> None:
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        tm.io.write(tm.generators.stencil_2d(dims), str(d / name))
    return make


def _mapping_file(d: Path) -> None:       # a mapping of app.mat's 64 processes on torus:8x8/8
    np.savetxt(d / "pe_of.txt", np.random.default_rng(0).permutation(512)[:64], fmt="%d")


def _mpi_program(d: Path) -> None:         # an MPI application: the profiler tests' program
    cc = shutil.which("mpicc")
    if cc is None:
        pytest.skip("the page runs an MPI program and needs mpicc")
    subprocess.run([cc, "-O1", "-o", str(d / "app"), str(ROOT / "tests/data/profiler/known_pattern.c")], check=True)


# file a page names -> how to make it (what a reader of that page already has)
FIXTURES: dict[str, Callable[[Path], None]] = {
    "app.mat": lambda d: np.savetxt(d / "app.mat", tm.generators.stencil_2d((8, 8)).to_dense(), fmt="%g"),
    "pe_of.txt": _mapping_file,
    "app.mtx": _stencil_file("app.mtx", (MPI_RANKS, 1)),
    "traces/app.tmprof": _stencil_file("traces/app.tmprof", (16, 32)),
    "node.xml": lambda d: shutil.copy(ROOT / "tests/data/hwloc/synth_2x2x4x2.xml", d / "node.xml"),
    "fabric.ibnet": lambda d: shutil.copy(ROOT / "tests/data/fabric/ibnetdiscover_small.txt", d / "fabric.ibnet"),
    "./app": _mpi_program,
}


@dataclass
class Block:
    page: str
    line: int
    lang: str
    text: str
    caption: str = ""


def markdown_blocks(path: Path) -> list[Block]:
    lines, out, i = path.read_text(encoding="utf-8").splitlines(), [], 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while not lines[j].startswith("```"):
            j += 1
        out.append(Block(path.name, i + 2, m.group(1), "\n".join(lines[i + 1:j])))
        i = j + 1
    return out


def rst_blocks(path: Path) -> list[Block]:
    lines, out, i = path.read_text(encoding="utf-8").splitlines(), [], 0
    name = str(path.relative_to(ROOT))
    while i < len(lines):
        m = re.match(r"^(\s*)\.\. code(?:-block)?::\s*(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        indent, options, j = len(m.group(1)), {}, i + 1
        while j < len(lines) and (opt := re.match(r"^\s+:(\w+):\s*(.*)$", lines[j])):
            options[opt.group(1)] = opt.group(2).strip()
            j += 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        start, body = j, []
        while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent):
            body.append(lines[j])
            j += 1
        out.append(Block(name, start + 1, m.group(2), textwrap.dedent("\n".join(body)).strip("\n"),
                         options.get("caption", "")))
        i = j
    return out


def blocks_of(path: Path) -> list[Block]:
    return markdown_blocks(path) if path.suffix == ".md" else rst_blocks(path)


def commands(block: Block) -> list[tuple[int, str]]:
    """(line, command) of a shell block: continuations joined, comments and console output left out."""
    out, pending, first = [], "", 0
    for k, raw in enumerate(block.text.splitlines()):
        line = raw.rstrip()
        if block.lang == "console":
            if not (line.startswith("$ ") or pending):
                continue
            line = line[2:] if line.startswith("$ ") else line
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        first = first if pending else block.line + k
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append((first, pending + line))
        pending = ""
    return out


def _plan(cmd: str) -> tuple[str | None, str]:
    """(command to run or None, why not) for one documented command line; `a && b` runs part by part."""
    parts = []
    for part in (p.strip() for p in cmd.split("&&")):
        bare = part.split("#", 1)[0].strip()
        skip = next((why for prefix, why in NOT_RUN.items() if bare.startswith(prefix)), None)
        if skip:
            parts.append((None, skip))
            continue
        quick = next((extra for prefix, extra in QUICK.items() if bare.startswith(prefix)), None)
        parts.append((f"{bare} {quick}" if quick else bare, ""))
    runnable = [p for p, _ in parts if p]
    return (" && ".join(runnable) if runnable else None), "; ".join(w for _, w in parts if w)


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env.update(MPLBACKEND="Agg", HOME=env.get("HOME", str(tmp)), OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1",
               PRTE_MCA_rmaps_default_mapping_policy=":oversubscribe", OMPI_MCA_btl="self,vader,tcp")
    env.pop("TOPOMAP_MPI_HOSTS", None)
    return env


def _needs(page: str) -> list[str]:
    shell = "\n".join(c for b in _BLOCKS[page] if b.lang in ("bash", "console", "sh") for _, c in commands(b))
    missing = [why for prog, why in PROGRAMS.items()
               if re.search(rf"(^|[\s|&;]){re.escape(prog)}\b", shell) and shutil.which(prog) is None]
    if re.search(r"\btopomap\b.*\s--mpi\b", shell) and importlib.util.find_spec("mpi4py") is None:
        missing.append("mpi4py for `topomap ... --mpi` (pip install 'topomap-hpc[mpi]')")
    return sorted(set(missing))


_BLOCKS = {str(p.relative_to(ROOT)): blocks_of(p) for p in PAGES}
RUNNABLE = [k for k, bs in _BLOCKS.items() if any(b.lang in ("python", "bash", "console", "sh") for b in bs)]


def _run_shell(cmd: str, where: str, tmp: Path, env: dict[str, str]) -> None:
    done = subprocess.run(["bash", "-c", cmd], cwd=tmp, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (f"{where}: `{cmd}` exited with {done.returncode}\n--- stdout\n"
                                  f"{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")


def _run_mpi_program(blocks: list[Block], tmp: Path, env: dict[str, str]) -> None:
    pytest.importorskip("mpi4py", reason="the page's mpi4py code needs mpi4py: pip install 'topomap-hpc[mpi]'")
    from topomap.mpi import mpiexec_command
    script = tmp / "doc_program.py"
    script.write_text("\n\n".join(f"# {b.page}:{b.line}\n{b.text}" for b in blocks) + "\n")
    try:
        launch = mpiexec_command(MPI_RANKS, True)
    except tm.TopomapError as exc:
        pytest.skip(f"no usable MPI for the page's mpi4py code: {exc}")
    where = ", ".join(f"{b.page}:{b.line}" for b in blocks)
    _run_shell(" ".join(shlex.quote(a) for a in [*launch, sys.executable, str(script)]), where, tmp, env)


@pytest.mark.parametrize("page", RUNNABLE)
def test_page_runs(page, tmp_path, monkeypatch):
    text = (ROOT / page).read_text(encoding="utf-8")
    missing = _needs(page)
    if missing:
        pytest.skip(f"{page} needs {', '.join(missing)}")
    for name, make in FIXTURES.items():
        if name in text:
            make(tmp_path)
    if "benchmarks/" in text:
        shutil.copytree(ROOT / "benchmarks", tmp_path / "benchmarks", ignore=shutil.ignore_patterns("results"))
        (tmp_path / "benchmarks" / "results").mkdir()
    monkeypatch.chdir(tmp_path)
    env = _env(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": "__doc__"}
    mpi_blocks: list[Block] = []
    for block in _BLOCKS[page]:      # the files a page shows exist before its commands run
        if block.caption:
            _write(tmp_path / block.caption, block.text + "\n")
    for block in _BLOCKS[page]:
        where = f"{block.page}:{block.line}"
        if block.caption:
            continue
        if block.lang == "python":
            if mpi_blocks or "mpi4py" in block.text:
                mpi_blocks.append(block)
                continue
            try:
                with warnings.catch_warnings():   # a documented grid whose runs fail is a broken example
                    warnings.simplefilter("error", GridRunsFailed)
                    exec(compile(block.text, where, "exec"), namespace)
            except Exception as exc:
                raise AssertionError(f"{where}: the Python block raised {type(exc).__name__}: {exc}") from exc
        elif block.lang in ("bash", "console", "sh"):
            for line, cmd in commands(block):
                run, _ = _plan(cmd)
                if run is not None:
                    _run_shell(run, f"{block.page}:{line}", tmp_path, env)
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
    if mpi_blocks:
        _run_mpi_program(mpi_blocks, tmp_path, env)


def test_every_exception_is_still_in_the_docs():
    """NOT_RUN, QUICK and FIXTURES name lines and files the docs still have (no stale entries)."""
    shell = [c for bs in _BLOCKS.values() for b in bs if b.lang in ("bash", "console", "sh") for _, c in commands(b)]
    for prefix in (*NOT_RUN, *QUICK):
        assert any(prefix in c for c in shell), prefix
    text = "\n".join(p.read_text(encoding="utf-8") for p in PAGES)
    for name in FIXTURES:
        assert name in text, name


def test_ci_installs_the_readme_s_system_packages():
    readme = next(c for b in _BLOCKS["README.md"] if b.lang == "bash" for _, c in commands(b)
                  if c.startswith("apt-get install"))
    ci = (ROOT / ".ci" / "run").read_text()
    line = next(ln for ln in ci.splitlines() if "apt-get install" in ln)
    packages = set(readme.split()[2:])
    words = line.split(">", 1)[0].split()
    assert packages == {w for w in words if not w.startswith("-")} - {"apt-get", "install"}


def test_the_block_reader_sees_every_block():
    md = markdown_blocks(ROOT / "README.md")
    assert sum(b.lang == "python" for b in md) >= 2 and sum(b.lang == "bash" for b in md) >= 4
    fabric = rst_blocks(ROOT / "docs/howto/fabric.rst")
    assert {b.caption for b in fabric} >= {"fabric.json", "topology.conf"}
    console = Block("x", 1, "console", "$ topomap a \\\n  --b\nprinted output\n$ topomap c  # note")
    assert commands(console) == [(1, "topomap a    --b"), (4, "topomap c  # note")]
    assert _plan('pip install ".[test]" && python -m pytest')[0] is None
    assert _plan("pip install . && topomap demo")[0] == "topomap demo"
    assert _plan("python benchmarks/bench_io.py   # readers")[0] == "python benchmarks/bench_io.py --quick --repeat 1"
