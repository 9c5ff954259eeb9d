"""Issue 19 item 7: a write killed half-way leaves the previous file as it was.

Each writer runs in a child process whose file-size limit (RLIMIT_FSIZE) is far
below what it writes; SIGXFSZ is ignored there, so the write fails with EFBIG
as it would on a full disk.  The previous file must be intact and no temporary
file left beside it.  The same writer without the limit must replace the file,
so each case can fail.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap

import pytest

PREVIOUS = "previous content\n" * 500
LIMIT = 200  # bytes: every writer below writes more

# Each case: the code a child runs with OUT (the target path) and DIR (its folder) set.
CASES = {
    "map -o (node format)": """
        from topomap.cli import main
        sys.exit(main(["map", "stencil2d:16x16", "torus:4x4/16", "-o", OUT, "--format", "node"]))
    """,
    "map -o (PE format, io.write_mapping)": """
        from topomap.cli import main
        sys.exit(main(["map", "stencil2d:16x16", "torus:4x4/16", "-o", OUT]))
    """,
    "convert": """
        from topomap.cli import main
        sys.exit(main(["convert", "stencil2d:16x16", OUT]))
    """,
    "launch-file -o": """
        from topomap.cli import main
        sys.exit(main(["launch-file", "hostfile", "stencil2d:16x16", "torus:4x4/16", "-o", OUT]))
    """,
    "compare --csv": """
        from topomap.cli import main
        sys.exit(main(["compare", "stencil2d:8x8", "torus:4x4/4", "--methods", "block,greedy", "--csv", OUT]))
    """,
    "experiments.save": """
        import pandas as pd
        from topomap.experiments import save
        save(pd.DataFrame({"pattern": ["stencil2d:8x8"] * 50, "hop_bytes": range(50), "error": [""] * 50}), OUT)
    """,
    "mpi.launch.write_launcher_file": """
        import topomap as tm
        from topomap.mpi.launch import write_launcher_file
        alloc = tm.machine("torus:4x4/4").allocate(64)
        write_launcher_file(OUT, "rankfile", list(range(64)), alloc)
    """,
    "fabric.write_json": """
        from topomap.fabric import parse_slurm, write_json
        write_json(parse_slurm("SwitchName=s0 Nodes=n[0-31]"), OUT)
    """,
    "fabric.write_routes": """
        import topomap as tm
        from topomap.fabric import parse_slurm, write_routes
        fab = parse_slurm("SwitchName=s0 Nodes=n[0-7]")
        write_routes(OUT, fab, fab.machine())
    """,
    "profile -o X.tmprof": """
        import topomap as tm
        from topomap import profiler
        from topomap.io.tmprof import write_tmprof
        # The "MPI program" writes a valid profile where the profiler library would, outside
        # the file-size limit (a soft one, which it lifts): only topomap's own write is cut.
        script = ("import os, resource, topomap as tm; from topomap.io.tmprof import write_tmprof; "
                  "hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]; "
                  "resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard)); "
                  "write_tmprof(tm.Pattern.from_edges(list(range(32)), [(i + 1) % 32 for i in range(32)], "
                  "[1000.0] * 32, n=32), os.environ['TOPOMAP_PROFILE_OUT'])")
        profiler.profile([sys.executable, "-c", script], OUT, library=os.devnull, launcher="env")
    """,
}
SUFFIX = {"convert": ".mtx", "compare --csv": ".csv", "experiments.save": ".csv", "fabric.write_json": ".json",
          "profile -o X.tmprof": ".tmprof"}


def _run(code: str, out: str, limit: int | None) -> subprocess.CompletedProcess:
    def preexec() -> None:
        if limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    prog = "import os, sys\nOUT = sys.argv[1]\n" + textwrap.dedent(code)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", prog, out], capture_output=True, text=True, timeout=120,
                          preexec_fn=preexec, env=env)


@pytest.mark.parametrize("case", list(CASES))
def test_a_write_killed_half_way_keeps_the_previous_file(tmp_path, case):
    out = tmp_path / ("out" + SUFFIX.get(case, ".txt"))
    out.write_text(PREVIOUS)
    res = _run(CASES[case], str(out), LIMIT)
    assert res.returncode != 0
    assert "File too large" in res.stderr or "EFBIG" in res.stderr or "errno 27" in res.stderr.lower()
    assert out.read_text() == PREVIOUS
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]

    res = _run(CASES[case], str(out), None)
    assert res.returncode == 0, res.stderr
    written = out.read_text()
    assert written != PREVIOUS and len(written) > LIMIT
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]


def test_a_failed_profiled_run_keeps_the_previous_profile(tmp_path):
    from topomap import profiler
    from topomap.profiler import ProfilerError

    out = tmp_path / "app.tmprof"
    out.write_text(PREVIOUS)
    with pytest.raises(ProfilerError, match="exited with status 3"):
        profiler.profile([sys.executable, "-c", "raise SystemExit(3)"], out, library=os.devnull, launcher="env")
    with pytest.raises(ProfilerError, match="no profile was written"):
        profiler.profile([sys.executable, "-c", "pass"], out, library=os.devnull, launcher="env")
    assert out.read_text() == PREVIOUS
    assert [p.name for p in tmp_path.iterdir()] == ["app.tmprof"]
