"""Every input of the fuzz corpus (fuzz/corpus/<target>/) replayed through its target.

The fuzzing harness (fuzz/run.py) needs atheris; this replay does not, so the
corpus, which holds the cases of issue 19 next to valid seeds, is a
regression test of the normal suite.  Each target's inputs run in a child
under RLIMIT_AS with the fuzzer's limits (fuzz/targets.py, lower_limits); an
input passes when it raises nothing or only TopomapError/ValueError, within 10 s.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FUZZ = ROOT / "fuzz"
sys.path.insert(0, str(FUZZ))
import targets as fuzz_targets  # noqa: E402  (fuzz/ is not a package)

sys.path.remove(str(FUZZ))

CHILD = textwrap.dedent("""
    import json, sys, time, traceback
    sys.path.insert(0, sys.argv[1])
    import targets
    targets.lower_limits()
    target = targets.targets()[sys.argv[2]]
    out = {}
    for path in sys.argv[3:]:
        data = open(path, "rb").read()
        start = time.perf_counter()
        try:
            targets.run_one(target, data)
            error = ""
        except BaseException as exc:
            error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        out[path] = [error, time.perf_counter() - start]
    print(json.dumps(out))
""")


def _corpus() -> dict[str, list[Path]]:
    return {d.name: sorted(p for p in d.iterdir() if p.is_file()) for d in sorted((FUZZ / "corpus").iterdir())}


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))


def test_every_target_has_a_corpus_and_every_corpus_a_target():
    assert sorted(_corpus()) == sorted(fuzz_targets.targets())
    assert all(_corpus().values())


def test_the_issue_cases_are_in_the_corpus():
    names = {p.name for files in _corpus().values() for p in files}
    for case in ("issue19-1-header-n", "issue19-1-size-line", "issue19-1-15-bytes", "issue19-1-ranks",
                 "issue19-2-overflow", "issue19-2-seconds", "issue19-2-encoding", "issue19-3-inf-sum",
                 "issue19-4-asymmetric", "issue19-4-bytes-without-messages", "issue19-4-half-message",
                 "issue19-6-shortcut-100000", "issue19-6-circulant-918636", "issue19-6-hostlist",
                 "issue19-6-2.88M", "issue19-6-count"):
        assert case in names


@pytest.mark.parametrize("target", sorted(_corpus()))
def test_corpus_replays_without_a_finding(target):
    files = _corpus()[target]
    res = subprocess.run([sys.executable, "-c", CHILD, str(FUZZ), target, *map(str, files)],
                         capture_output=True, text=True, timeout=300, preexec_fn=_limit_memory,
                         env={**os.environ, "OMP_NUM_THREADS": "2"})
    assert res.returncode == 0, res.stderr[-3000:]
    results = json.loads(res.stdout.splitlines()[-1])
    bad = {Path(p).name: err for p, (err, _) in results.items() if err}
    slow = {Path(p).name: round(s, 2) for p, (_, s) in results.items() if s > 10}
    assert not bad and not slow


SURFACE_CHILD = textwrap.dedent("""
    import json, os, sys
    sys.path.insert(0, sys.argv[1])
    import targets
    import topomap
    targets.lower_limits()
    root = os.path.dirname(topomap.__file__)
    out = {}
    for name, target in targets.targets().items():
        called = set()
        def profile(frame, event, arg):
            path = frame.f_code.co_filename
            if event == "call" and path.startswith(root):
                parts = os.path.relpath(path, root)[:-3].split(os.sep)
                called.add(".".join(["topomap", *parts]).removesuffix(".__init__"))
        corpus = os.path.join(sys.argv[1], "corpus", name)
        for file in sorted(os.listdir(corpus)):
            data = open(os.path.join(corpus, file), "rb").read()
            sys.setprofile(profile)
            try:
                targets.run_one(target, data)
            except BaseException:
                pass  # test_corpus_replays_without_a_finding reports these
            finally:
                sys.setprofile(None)
        out[name] = sorted(called)
    print(json.dumps(out))
""")


def test_each_target_runs_only_code_its_fuzzer_instruments():
    # fuzz/run.py instruments only targets.SURFACES[name]; code outside it would be fuzzed blind
    res = subprocess.run([sys.executable, "-c", SURFACE_CHILD, str(FUZZ)], capture_output=True, text=True,
                         timeout=300, preexec_fn=_limit_memory, env={**os.environ, "OMP_NUM_THREADS": "2"})
    assert res.returncode == 0, res.stderr[-3000:]
    called = json.loads(res.stdout.splitlines()[-1])
    assert sorted(called) == sorted(fuzz_targets.SURFACES)
    outside = {name: [m for m in modules if not fuzz_targets.in_surface(m, fuzz_targets.SURFACES[name])]
               for name, modules in called.items()}
    assert not any(outside.values()), outside
    assert all(called.values())


def _fuzz_run():
    """fuzz/run.py as a module (importing it does not need atheris)."""
    sys.path.insert(0, str(FUZZ))
    try:
        import run as fuzz_run
    finally:
        sys.path.remove(str(FUZZ))
    return fuzz_run


def test_the_fuzzer_leaves_out_exactly_the_modules_outside_a_surface():
    fuzz_run = _fuzz_run()
    files = {p.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")
             for p in (ROOT / "topomap").rglob("*.py")}
    for name, surface in fuzz_targets.SURFACES.items():
        outside = set(fuzz_run._outside(surface))
        assert outside <= files
        inside = files - outside
        assert inside and all(fuzz_targets.in_surface(m, surface) for m in inside), name
    assert "topomap.io.csv_edges" not in fuzz_run._outside(fuzz_targets.SURFACES["pattern_csv"])
    assert "topomap.mpi.reorder" in fuzz_run._outside(fuzz_targets.SURFACES["pattern_csv"])


def test_jobs_fuzz_targets_side_by_side_and_report_them_in_order(monkeypatch, capsys, tmp_path):
    fuzz_run = _fuzz_run()
    lock, running, most = threading.Lock(), [0], [0]

    def fake(name, seconds, args, artifacts):        # stands in for one target's atheris process
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.3)
        with lock:
            running[0] -= 1
        return {"target": name, "seconds": 0.3, "executions": len(name), "ok": name != "pattern_metis",
                "artifacts": [f"{artifacts}/{name}-crash"], "log": f"{name} log"}

    monkeypatch.setattr(fuzz_run, "_run", fake)
    names = ["pattern_csv", "pattern_metis", "machine_spec"]
    assert fuzz_run.main([*names, "--seconds", "1", "--jobs", "2", "--artifacts", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert most[0] == 2
    assert [line.split()[0] for line in out.splitlines()[1:4]] == names
    assert f"FINDING {tmp_path}/pattern_metis-crash" in out and "== pattern_metis: last lines of the log" in out
    with pytest.raises(SystemExit):
        fuzz_run.main(["pattern_csv", "--jobs", "0"])
    assert "--jobs must be >= 1, got 0" in capsys.readouterr().err


def test_run_one_lets_only_other_exceptions_escape():
    from topomap.errors import FormatError

    def raises(exc: BaseException):
        def target(data: bytes) -> None:
            raise exc
        return target

    fuzz_targets.run_one(raises(FormatError("x")), b"")
    fuzz_targets.run_one(raises(ValueError("x")), b"")
    for exc in (OverflowError("x"), LookupError("x"), MemoryError(), TypeError("x")):
        with pytest.raises(type(exc)):
            fuzz_targets.run_one(raises(exc), b"")
