"""Coverage-guided fuzzing of topomap's readers and spec parsers with atheris.

Usage::

    pip install -e ".[fuzz]"
    python fuzz/run.py --seconds 20 --all          # every target, 20 s each
    python fuzz/run.py --seconds 60 machine_spec   # some targets
    python fuzz/run.py --list
    python fuzz/run.py --seconds 8 --all --jobs 1  # one target at a time

Each target (``fuzz/targets.py``) runs in its own process under libFuzzer
(through atheris), starting from its seed corpus ``fuzz/corpus/<target>/``,
which is only read: new inputs go to a scratch directory.  The Python
bytecode of the topomap modules the target reaches (``targets.SURFACES``) is
instrumented for coverage (``atheris.instrument_imports``); the C
extension is not (it would have to be built with ``-fsanitize=fuzzer``), so
inputs that only change paths inside C are found by chance, not steered to.

A finding is an input that raises anything but ``TopomapError``/``ValueError``
or takes more than ``--timeout`` seconds or ``--rss-limit-mb`` of memory; it is
saved under ``--artifacts`` and the run exits with status 1.  The summary gives
each target's executions (libFuzzer's ``number_of_executed_units``).  Targets
run ``--jobs`` at a time (default: one per CPU), each a single-threaded
process, so each still gets its ``--seconds`` of one core.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import targets as _targets  # noqa: E402  (fuzz/ is not a package)

NAMES = ["pattern_csv", "pattern_matrixmarket", "pattern_metis", "pattern_scotch", "pattern_dense_text",
         "pattern_dense_npy", "pattern_tmprof", "pattern_ompi", "pattern_dumpi", "mapping_file", "machine_spec",
         "fabric_slurm", "fabric_ibnetdiscover", "fabric_json", "fabric_routes", "node_hwloc_xml",
         "node_synthetic"]


def _outside(surface: tuple[str, ...]) -> list[str]:
    """topomap's modules outside `surface`, listed from its files (importing would
    load them uninstrumented)."""
    root = importlib.util.find_spec("topomap").submodule_search_locations[0]
    names = []
    for folder, _, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        package = "topomap" if rel == "." else ".".join(["topomap", *rel.split(os.sep)])
        for file in files:
            if not file.endswith(".py"):
                continue
            module = package if file == "__init__.py" else f"{package}.{file[:-3]}"
            if not _targets.in_surface(module, surface):
                names.append(module)
    return names


def _child(name: str, libfuzzer_args: list[str]) -> None:
    import atheris

    with atheris.instrument_imports(include=["topomap"], exclude=_outside(_targets.SURFACES[name])):
        import topomap  # noqa: F401  (instrumented here, before any target imports it)
    _targets.lower_limits()
    target = _targets.targets()[name]

    def one(data: bytes) -> None:
        _targets.run_one(target, data)

    atheris.Setup([sys.argv[0], *libfuzzer_args], one)
    atheris.Fuzz()


def _run(name: str, seconds: int, args: argparse.Namespace, artifacts: str) -> dict:
    seeds = os.path.join(HERE, "corpus", name)
    with tempfile.TemporaryDirectory(prefix=f"topomap-fuzz-{name}-") as work:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--", work, seeds,
               f"-max_total_time={seconds}", f"-rss_limit_mb={args.rss_limit_mb}", f"-timeout={args.timeout}",
               f"-max_len={_targets.MAX_INPUT}", f"-artifact_prefix={artifacts}/{name}-", "-print_final_stats=1"]
        start = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
        elapsed = time.monotonic() - start
    log = proc.stdout + proc.stderr
    execs = re.search(r"stat::number_of_executed_units:\s*(\d+)", log)
    found = re.findall(r"Test unit written to (\S+)", log)
    return {"target": name, "seconds": elapsed, "executions": int(execs.group(1)) if execs else 0,
            "ok": proc.returncode == 0, "artifacts": found, "log": log}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        _child(argv[1], argv[3:])
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help="targets to fuzz (see --list)")
    p.add_argument("--all", action="store_true", help="fuzz every target")
    p.add_argument("--list", action="store_true", help="list the targets and exit")
    p.add_argument("--seconds", type=int, default=20, help="fuzzing time per target (default 20)")
    p.add_argument("--timeout", type=int, default=10, help="seconds one input may take (default 10)")
    p.add_argument("--rss-limit-mb", type=int, default=2048, help="memory one process may use (default 2048)")
    p.add_argument("--artifacts", default=None, help="where findings are saved (default: a new temporary folder)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="targets fuzzed at once (default: the number of CPUs)")
    args = p.parse_args(argv)
    if args.list:
        print("\n".join(NAMES))
        return 0
    names = NAMES if args.all else args.names
    unknown = sorted(set(names) - set(NAMES))
    if unknown or not names:
        p.error(f"unknown target {unknown[0]!r}" if unknown else "name targets or pass --all")
    if args.jobs < 1:
        p.error(f"--jobs must be >= 1, got {args.jobs}")
    artifacts = args.artifacts or tempfile.mkdtemp(prefix="topomap-fuzz-findings-")
    os.makedirs(artifacts, exist_ok=True)
    failed = []
    print(f"{'target':<22} {'executions':>10} {'seconds':>8}  result", flush=True)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:  # each job waits on its own child process
        results = pool.map(lambda name: _run(name, args.seconds, args, artifacts), names)
        for r in results:
            print(f"{r['target']:<22} {r['executions']:>10} {r['seconds']:>8.1f}  "
                  f"{'ok' if r['ok'] else 'FINDING ' + ' '.join(r['artifacts'])}", flush=True)
            if not r["ok"]:
                failed.append(r)
    for r in failed:
        print(f"\n== {r['target']}: last lines of the log\n" + "\n".join(r["log"].splitlines()[-40:]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
