"""Pattern file I/O throughput: every reader and writer on ~10^8-byte files, next to the
speed of reading the same bytes raw (Python ``read()``) and with ``cat``.

Workloads (issue 4, item 5), all seeded:

* csv, matrixmarket: 10^6 processes, a random sparse pattern, ~4.5 x 10^6 messages;
* csv_decimal: the same with byte counts in tenths (decimals such as ``83886.1``);
* csv_unsorted: the csv file with its lines shuffled, as a tool writing messages in the order
  it saw them would (the reader then builds the CSR from unsorted entries);
* metis, scotch: the same pattern made symmetric (undirected formats);
* dense: the largest n x n matrix near the target size (1 % non-zeros);
* ompi: 10^5 ``.prof`` files, 6 peers per rank with size histograms;
* dumpi: 1 000 ``dumpi2ascii`` files of send records;
* otf2: 5.5 x 10^6 MpiSend events of 64 ranks (~10^8 bytes) written by the ``otf2`` package (when installed).

Reads run with the page cache warm (right after the write), best of ``--repeat``.  The
figure that matters on a shared machine is the ratio of the reader's time to the time of
reading the same bytes raw in the same run (``x_cat``, ``x_python``: how many times slower
than ``cat`` and than Python's ``read()``), and the same ratio of CPU seconds (``x_cat_cpu``;
the reader's threads counted together), which other users' load inflates less than wall
time.  ``load_average`` in the JSON says how busy the machine was.

"At I/O speed" means at the speed of the storage the file comes from, so every case is
also read *cold*: the files' pages are evicted first (``posix_fadvise(DONTNEED)`` after
``sync``; ``resident_MB`` is what ``fincore`` still finds cached, 0 when eviction worked)
and then timed with ``cat`` (``cat_cold_s``), with ``O_DIRECT`` reads of 4 MiB that bypass
the page cache (``device_MBps``, the storage's own rate), and with the reader
(``read_cold_s``).  ``x_cat_cold`` = reader cold / cat cold is the figure to watch (1.0:
the reader is as fast as the storage lets ``cat`` be); ``x_device`` = reader's warm MB/s /
device MB/s (above 1: parsing outruns the storage).  On a virtual disk the host's cache can
make ``cat`` cold faster than ``O_DIRECT``: both are reported.

Every cold read runs in a fresh process (after a small warm-up read of the same format), as
a script reading one file would.  Two more figures say what limits it: ``threads_speedup_cold``
(the reader on all threads against ``OMP_NUM_THREADS=1``: near the number of cores when the
parse, not the storage, sets the pace) and ``cores_to_match_cat`` (the cold reader's CPU
seconds over cat's cold wall seconds: the cores it would need to keep pace with cat at its
per-core cost).  Where other projects read the same format, their readers are timed the same
way in the same rounds (``benchmarks/_io_yardsticks.py``: Apache Arrow's and Polars' CSV
readers, SciPy's ``mmread``; ``pip install ".[bench]"``), ``x_<name>_cold`` = topomap's
cold time / theirs.

    python benchmarks/bench_io.py             # ~100 MB per format, writes results/io_throughput.json
    python benchmarks/bench_io.py --quick     # ~5 MB per format

``--against DIR`` (a checkout of another version, its extension built in place) compares two
builds on a shared machine: the cold reads of both then run in fresh processes (the import
not timed), alternating with each other and with ``cat`` round by round, so that both see the
same load; ``x_cat_cold_against`` is the other build's reader cold / cat cold.

    python benchmarks/bench_io.py --only csv --against /tmp/old_checkout
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import mmap
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import topomap as tm  # noqa: E402
from _io_yardsticks import yardsticks  # noqa: E402


def _cpu() -> float:
    """CPU seconds of this process (all its threads) and of its finished children (cat)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def best_of(repeat: int, func) -> tuple[float, object, float]:
    """Best wall time, a result, and the best CPU time (which other users' load inflates less)."""
    best, result, best_cpu = float("inf"), None, float("inf")
    for _ in range(repeat):
        t, c = time.perf_counter(), _cpu()
        result = func()
        best = min(best, time.perf_counter() - t)
        best_cpu = min(best_cpu, _cpu() - c)
    return best, result, best_cpu


def random_pattern(n: int, nnz: int, seed: int, tenths: bool = False) -> tm.Pattern:
    """Random messages; with `tenths`, byte counts with one decimal (written as decimals)."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, nnz)
    dst = (src + rng.integers(1, n, nnz)) % n
    size = rng.integers(1, 1 << 24, nnz).astype(float)
    return tm.Pattern.from_edges(src, dst, size / 10 if tenths else size, rng.integers(1, 100, nnz),
                                 n=n, provenance={"generator": "bench"})


def raw_speed(files: list[str], repeat: int) -> tuple[float, float, float, float]:
    """Seconds (wall, then CPU) to read the files with Python and with cat."""
    def py():
        for f in files:
            with open(f, "rb") as fh:
                fh.read()

    py_s, _, py_cpu = best_of(repeat, py)
    cat_s, _, cat_cpu = best_of(repeat, lambda: cat(files))
    return py_s, cat_s, py_cpu, cat_cpu


def evict(files: list[str]) -> None:
    """Drop the files' pages from the page cache (only clean pages go: see cold_speed)."""
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def resident_bytes(files: list[str]) -> "int | None":
    """Bytes of the files in the page cache (``fincore``); None without fincore."""
    if shutil.which("fincore") is None:
        return None
    out = subprocess.run(["xargs", "-0", "fincore", "--bytes", "--noheadings", "--raw", "--output", "RES"],
                         input="\0".join(files).encode(), capture_output=True, check=True).stdout
    return sum(int(v) for v in out.split())


def direct_read(files: list[str]) -> None:
    """Read the files with O_DIRECT (no page cache), 4 MiB at a time: the storage's own rate."""
    buf = mmap.mmap(-1, 4 << 20)  # page-aligned, as O_DIRECT wants
    for f in files:
        fd = os.open(f, os.O_RDONLY | os.O_DIRECT)
        try:
            while os.readv(fd, [buf]) == len(buf):
                pass
        finally:
            os.close(fd)


def cat(files: list[str]) -> None:
    # xargs keeps the argument list short for 10^5 files
    subprocess.run(["xargs", "-0", "cat"], input="\0".join(files).encode(), stdout=subprocess.DEVNULL, check=True)


def fresh_read(root: str, target: str, case: str, warmup: str, reader: str = "topomap",
               threads: "int | None" = None) -> tuple[float, float]:
    """Seconds (wall, then CPU of all its threads) a fresh Python process takes to read
    `target` with topomap imported from `root` or with the yardstick `reader` of `case`, after
    reading the small file `warmup` of the same format (so that no reader's one-off set-up,
    such as starting thread pools, is timed; nor are the interpreter's start and the imports);
    with `threads`, topomap's OpenMP threads."""
    code = ("import sys, time; sys.path[:0] = sys.argv[1:3]; import topomap as tm; "
            "from _io_yardsticks import yardsticks; "
            "read = tm.io.read if sys.argv[4] == 'topomap' else yardsticks(sys.argv[5])[sys.argv[4]]; "
            "read(sys.argv[6]); t, c = time.perf_counter(), time.process_time(); read(sys.argv[3]); "
            "print(time.perf_counter() - t, time.process_time() - c)")
    env = dict(os.environ, **({"OMP_NUM_THREADS": str(threads)} if threads else {}))
    out = subprocess.run([sys.executable, "-c", code, root, HERE, target, reader, case, warmup], capture_output=True,
                         check=True, text=True, env=env)
    wall, cpu = out.stdout.split()
    return float(wall), float(cpu)


def cold_speed(files: list[str], target: str, repeat: int, contenders: dict) -> dict:
    """Cold-cache seconds of cat, of O_DIRECT reads and of each contender (a callable giving
    (wall, CPU) seconds), each best of `repeat` runs after evicting the files, round by round
    in alternating order so that all see the same load; and the bytes still cached right after
    an eviction."""
    os.sync()  # write the new files back once (an fsync per file takes minutes for 10^5 files)
    evict(files)
    left = resident_bytes(files)

    def timed(func) -> tuple[float, float]:
        evict(files)
        t, c = time.perf_counter(), _cpu()
        func()
        return time.perf_counter() - t, _cpu() - c

    names = list(contenders)
    rounds = []
    for r in range(repeat):
        order = names[::1 if r % 2 == 0 else -1]
        times = {}
        for name in order:
            evict(files)
            times[name] = contenders[name]()
        times["cat"] = timed(lambda: cat(files))
        rounds.append(times)
    best = {name: (min(t[name][0] for t in rounds), min(t[name][1] for t in rounds)) for name in names + ["cat"]}
    best["direct"] = min(timed(lambda: direct_read(files)) for _ in range(repeat))
    return {"resident_after_evict": left, **best}


def ompi_run(directory: str, ranks: int, peers: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    hist = ",".join(["0"] * 60 + ["3", "1", "0", "0", "0", "0"])
    files = []
    for r in range(ranks):
        dests = (r + rng.choice(np.arange(1, ranks), peers, replace=False)) % ranks
        lines = ["# POINT TO POINT"] + [f"E\t{r}\t{d}\t{rng.integers(1, 1 << 30)} bytes\t{rng.integers(1, 999)} msgs sent\t{hist}"
                                        for d in sorted(dests)]
        lines += ["# OSC", "# COLLECTIVES", f"D\tMPI_COMM_SELF\tprocs: {r}", f"O2A\t{r}\t0 bytes\t0 msgs sent",
                  f"A2O\t{r}\t0 bytes\t0 msgs sent", f"A2A\t{r}\t0 bytes\t0 msgs sent"]
        path = os.path.join(directory, f"prof.{r}.prof")
        with open(path, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        files.append(path)
    return files


def dumpi_run(directory: str, ranks: int, sends: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    record = ("MPI_Isend entering at walltime {t:.9f}, cputime {c:.9f} seconds in thread 0.\nint count={count}\n"
              "MPI_Datatype datatype=14 (MPI_DOUBLE)\nint dest={dest}\nint tag=7\nMPI_Comm comm=2 (MPI_COMM_WORLD)\n"
              "MPI_Request request=[{req}]\nMPI_Isend returning at walltime {t:.9f}, cputime {c:.9f} seconds in thread 0.\n"
              "MPI_Wait entering at walltime {t:.9f}, cputime {c:.9f} seconds in thread 0.\nMPI_Request request=[{req}]\n"
              "MPI_Status status=<IGNORED>\nMPI_Wait returning at walltime {t:.9f}, cputime {c:.9f} seconds in thread 0.\n")
    files = []
    for r in range(ranks):
        dests = (r + rng.integers(1, ranks, sends)) % ranks
        counts = rng.integers(1, 1 << 16, sends)
        body = "".join(record.format(t=8000 + i * 1e-3, c=i * 1e-4, count=c, dest=d, req=i + 2)
                       for i, (c, d) in enumerate(zip(counts.tolist(), dests.tolist())))
        path = os.path.join(directory, f"dumpi-2024.01.01.00.00.00-{r:04d}.dumpi.txt")
        with open(path, "w") as fh:
            fh.write("MPI_Init entering at walltime 1.0, cputime 0.0 seconds in thread 0.\nint argc=0\n"
                     "string argv[0]=<IGNORED>\nMPI_Init returning at walltime 1.0, cputime 0.0 seconds in thread 0.\n"
                     + body)
        files.append(path)
    return files


def otf2_run(directory: str, ranks: int, events: int, seed: int) -> list[str]:
    import otf2
    from otf2.enums import GroupType, LocationGroupType, Paradigm
    rng = np.random.default_rng(seed)
    with otf2.writer.open(directory, timer_resolution=10**9) as w:
        d = w.definitions
        node = d.system_tree_node("node")
        locs = [d.location("Master thread", group=d.location_group(f"MPI Rank {r}", system_tree_parent=node,
                                                                   location_group_type=LocationGroupType.PROCESS))
                for r in range(ranks)]
        d.group("world locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
        world = d.comm("MPI_COMM_WORLD", group=d.group("world", group_type=GroupType.COMM_GROUP,
                                                        paradigm=Paradigm.MPI, members=list(range(ranks))))
        src = rng.integers(0, ranks, events)
        dst = (src + rng.integers(1, ranks, events)) % ranks
        writers = [w.event_writer_from_location(loc) for loc in locs]
        for i, (s, t) in enumerate(zip(src.tolist(), dst.tolist())):
            writers[s].mpi_send(i, receiver=t, communicator=world, msg_tag=0, msg_length=1024 + i % 4096)
    return sorted(glob.glob(os.path.join(directory, "**", "*"), recursive=True))


def run_case(name: str, workdir: str, make, make_small, repeat: int, against: "str | None" = None) -> dict:
    os.makedirs(workdir, exist_ok=True)
    t = time.perf_counter()
    files, target = make(workdir)
    write_s = time.perf_counter() - t
    files = [f for f in files if os.path.isfile(f)]
    size = sum(os.path.getsize(f) for f in files)
    read_s, pat, read_cpu = best_of(repeat, lambda: tm.io.read(target))
    py_s, cat_s, py_cpu, cat_cpu = raw_speed(files, repeat)
    # every cold read runs in a fresh process, as a script reading one file would: no reader
    # then reuses memory an earlier call left mapped
    root = os.path.dirname(HERE)
    warmup = os.path.join(workdir, "warmup")
    os.makedirs(warmup)
    warm_target = make_small(warmup)[1]
    contenders = {"topomap": lambda: fresh_read(root, target, name, warm_target),
                  "topomap_1thread": lambda: fresh_read(root, target, name, warm_target, threads=1)}
    if against is not None:
        contenders["against"] = lambda: fresh_read(against, target, name, warm_target)
    others = yardsticks(name)
    warm_others = {other: best_of(repeat, lambda: read(target))[:2] for other, read in others.items()}
    for other in others:
        contenders[other] = (lambda other: lambda: fresh_read(root, target, name, warm_target, other))(other)
    cold = cold_speed(files, target, repeat, contenders)
    mb = size / 1e6
    ours, ours_cpu = cold["topomap"]
    row = {"format": name, "files": len(files), "MB": round(mb, 1), "n": pat.n, "nnz": pat.nnz,
           "write_s": round(write_s, 3), "read_s": round(read_s, 3), "read_MBps": round(mb / read_s, 1),
           "python_read_MBps": round(mb / py_s, 1), "cat_MBps": round(mb / cat_s, 1),
           "read_vs_python_read": round(py_s / read_s, 3), "x_cat": round(read_s / cat_s, 2),
           "x_python": round(read_s / py_s, 2), "read_cpu_s": round(read_cpu, 3), "cat_cpu_s": round(cat_cpu, 3),
           "python_read_cpu_s": round(py_cpu, 3), "x_cat_cpu": round(read_cpu / max(cat_cpu, 1e-9), 2),
           "resident_MB": None if cold["resident_after_evict"] is None else round(cold["resident_after_evict"] / 1e6, 2),
           "read_cold_s": round(ours, 3), "read_cold_cpu_s": round(ours_cpu, 3), "cat_cold_s": round(cold["cat"][0], 3),
           "read_cold_MBps": round(mb / ours, 1), "cat_cold_MBps": round(mb / cold["cat"][0], 1),
           "device_MBps": round(mb / cold["direct"][0], 1), "x_cat_cold": round(ours / cold["cat"][0], 2),
           "x_device": round(cold["direct"][0] / read_s, 2),
           # the reader's cold CPU seconds over cat's cold wall time: the cores it would take to
           # keep pace with cat at this per-core cost, were the parse spread perfectly
           "cores_to_match_cat": round(ours_cpu / cold["cat"][0], 2),
           "read_cold_1thread_s": round(cold["topomap_1thread"][0], 3),
           "threads_speedup_cold": round(cold["topomap_1thread"][0] / ours, 2)}
    for other, (warm_s, entries) in warm_others.items():
        if entries != pat.nnz:
            raise RuntimeError(f"{other} read {entries} entries of {target}, topomap {pat.nnz}")
        row[f"{other}_MBps"] = round(mb / warm_s, 1)
        row[f"{other}_cold_MBps"] = round(mb / cold[other][0], 1)
        row[f"{other}_cold_cpu_s"] = round(cold[other][1], 3)
        row[f"x_{other}_cold"] = round(ours / cold[other][0], 2)  # below 1: topomap is faster
    if against:
        row["against_cold_s"] = round(cold["against"][0], 3)
        row["x_cat_cold_against"] = round(cold["against"][0] / cold["cat"][0], 2)
    shutil.rmtree(workdir, ignore_errors=True)
    return row


def print_summary(rows: list[dict], before: "str | None") -> None:
    """One line per format: warm MB/s (and an earlier run's), cold ratios, the storage's rate,
    the cores the reader would need to keep pace with cat, and the other projects' readers."""
    earlier = {}
    if before:
        with open(before) as fh:
            earlier = {r["format"]: r["read_MBps"] for r in json.load(fh)["rows"]}
    print(f"\n{'format':<13}{'warm MB/s':>10}{'before':>8}{'cold MB/s':>10}{'cat cold':>9}{'O_DIRECT':>9}"
          f"{'read/cat cold':>14}{'warm/device':>12}{'1->all thr':>11}{'cores=cat':>10}{'against/cat cold':>17}"
          f"  others cold (MB/s, topomap/other time)")
    for r in rows:
        was = earlier.get(r["format"])
        others = [k[:-len("_cold_MBps")] for k in r
                  if k.endswith("_cold_MBps") and k not in ("read_cold_MBps", "cat_cold_MBps")]
        print(f"{r['format']:<13}{r['read_MBps']:>10.0f}{'' if was is None else f'{was:.0f}':>8}"
              f"{r['read_cold_MBps']:>10.0f}{r['cat_cold_MBps']:>9.0f}{r['device_MBps']:>9.0f}"
              f"{r['x_cat_cold']:>14.2f}{r['x_device']:>12.2f}{r['threads_speedup_cold']:>11.2f}"
              f"{r['cores_to_match_cat']:>10.1f}{r.get('x_cat_cold_against', ''):>17}  "
              + ", ".join(f"{o} {r[o + '_cold_MBps']:.0f} (x{r['x_' + o + '_cold']:.2f})" for o in others))


def make_cases(scale: float) -> dict:
    """Per format, a function writing its files into a directory and returning (files, the file
    to read); `scale` 1 gives ~10^8 bytes per format."""
    n = 10**6
    nnz = int(4.5e6 * scale)
    directed = random_pattern(n, nnz, seed=1)
    decimal = random_pattern(n, nnz, seed=1, tenths=True)
    undirected = random_pattern(n, nnz // 2, seed=2).symmetric()
    side = int(7000 * scale**0.5)
    rng = np.random.default_rng(3)
    dense = tm.Pattern.from_dense(np.where(rng.random((side, side)) < 0.01, rng.integers(1, 1 << 20, (side, side)), 0))

    def writer(pat, ext):
        def make(d):
            path = os.path.join(d, f"pattern{ext}")
            tm.io.write(pat, path)
            return [path], path
        return make

    def shuffled(make):
        def make_shuffled(d):
            files, target = make(d)
            with open(target, "rb") as fh:
                lines = fh.read().splitlines(keepends=True)
            head = next(i for i, line in enumerate(lines) if line[:1].isdigit())  # comments and the header stay
            order = np.random.default_rng(7).permutation(len(lines) - head)
            with open(target, "wb") as fh:
                fh.write(b"".join(lines[:head]) + b"".join(lines[head + i] for i in order))
            return files, target
        return make_shuffled

    def run_of(files: list[str]) -> tuple[list[str], str]:
        return files, files[0]  # per-rank formats: read through any one rank's file

    cases = {
        "csv": writer(directed, ".csv"),
        "csv_decimal": writer(decimal, ".csv"),
        "csv_unsorted": shuffled(writer(directed, ".csv")),
        "matrixmarket": writer(directed, ".mtx"),
        "metis": writer(undirected, ".graph"),
        "scotch": writer(undirected, ".grf"),
        "dense": writer(dense, ".mat"),
        "ompi": lambda d: run_of(ompi_run(d, max(8, int(10**5 * scale)), 6, seed=4)),
        "dumpi": lambda d: run_of(dumpi_run(d, max(2, int(1000 * scale**0.5)), max(1, int(300 * scale**0.5)), seed=5)),
    }
    if importlib.util.find_spec("otf2") is not None:
        cases["otf2"] = lambda d: (otf2_run(d, 64, max(1, int(5.5e6 * scale)), seed=6), os.path.join(d, "traces.otf2"))
    return cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="~5 MB per format instead of ~100 MB")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", help="comma-separated formats to run")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "io_throughput.json"))
    ap.add_argument("--before", help="an earlier JSON of this benchmark: its warm MB/s are shown next to these")
    ap.add_argument("--against", help="another checkout (extension built): its cold reads alternate with these")
    args = ap.parse_args()
    scale = 0.05 if args.quick else 1.0
    cases, small = make_cases(scale), make_cases(1e-4)  # small: every reader's warm-up file
    if "otf2" not in cases:
        print("otf2 not installed: skipping the OTF2 case", file=sys.stderr)
    wanted = args.only.split(",") if args.only else list(cases)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_io_") as tmp:
        for name in wanted:
            rows.append(run_case(name, os.path.join(tmp, name), cases[name], small[name], args.repeat, args.against))
            r = rows[-1]
            print(f"{r['format']:<13}{r['files']:>7}{r['MB']:>8.1f} MB  n={r['n']:<8} nnz={r['nnz']:<9} "
                  f"write {r['write_s']:7.2f} s  read {r['read_s']:7.2f} s = {r['read_MBps']:7.1f} MB/s  "
                  f"(python read {r['python_read_MBps']:7.1f}, cat {r['cat_MBps']:7.1f} MB/s; "
                  f"x{r['x_cat']:.1f} cat, x{r['x_python']:.1f} python; CPU x{r['x_cat_cpu']:.1f} cat)\n"
                  f"{'':<13}cold: read {r['read_cold_MBps']:7.1f} MB/s, cat {r['cat_cold_MBps']:7.1f} MB/s, "
                  f"O_DIRECT {r['device_MBps']:7.1f} MB/s; reader/cat cold x{r['x_cat_cold']:.2f}, "
                  f"warm reader/device x{r['x_device']:.2f}, cached after eviction {r['resident_MB']} MB\n"
                  f"{'':<13}cold CPU {r['read_cold_cpu_s']:.3f} s = {r['cores_to_match_cat']:.1f} cores to keep pace "
                  f"with cat; 1 thread {r['read_cold_1thread_s']:.3f} s (all threads x{r['threads_speedup_cold']:.2f})",
                  flush=True)
    print_summary(rows, args.before)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    meta = {"python": sys.version.split()[0], "numpy": np.__version__, "machine": platform.machine(),
            "cpus": os.cpu_count(), "quick": args.quick, "repeat": args.repeat, "cache": "warm and cold",
            "load_average": os.getloadavg(), "against": args.against}
    with open(args.out, "w") as fh:
        json.dump({"meta": meta, "rows": rows}, fh, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
