"""LogGOPSim GOAL export (topomap/export/goal.py) and ``topomap export goal``.

The GOAL text is read back by a small parser written here from LogGOPSim's grammar
(src/LogGOPSim/txt2bin.re): every send must meet one receive with the same size and tag,
labels must exist, and the dependency graph, timed with "a message takes its size in
seconds", must give every rank the stage start times of the RANKS rule computed directly
from the stages.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topomap as tm
from topomap.cli import main
from topomap.collectives.schedules import Schedule, binomial_bcast, bruck, ring_allgather
from topomap.errors import PatternError, TopomapError
from topomap.export.goal import goal, write_goal

RING4 = """\
num_ranks 4

rank 0 {
l0: send 2b to 1 tag 0
l1: recv 2b from 3 tag 0
l2: send 2b to 1 tag 1
l2 requires l1
l3: recv 2b from 3 tag 1
l4: calc 0
l4 requires l1
l4 requires l3
l5: send 2b to 1 tag 2
l5 requires l4
l6: recv 2b from 3 tag 2
}

rank 1 {
l0: send 2b to 2 tag 0
l1: recv 2b from 0 tag 0
l2: send 2b to 2 tag 1
l2 requires l1
l3: recv 2b from 0 tag 1
l4: calc 0
l4 requires l1
l4 requires l3
l5: send 2b to 2 tag 2
l5 requires l4
l6: recv 2b from 0 tag 2
}

rank 2 {
l0: send 2b to 3 tag 0
l1: recv 2b from 1 tag 0
l2: send 2b to 3 tag 1
l2 requires l1
l3: recv 2b from 1 tag 1
l4: calc 0
l4 requires l1
l4 requires l3
l5: send 2b to 3 tag 2
l5 requires l4
l6: recv 2b from 1 tag 2
}

rank 3 {
l0: send 2b to 0 tag 0
l1: recv 2b from 2 tag 0
l2: send 2b to 0 tag 1
l2 requires l1
l3: recv 2b from 2 tag 1
l4: calc 0
l4 requires l1
l4 requires l3
l5: send 2b to 0 tag 2
l5 requires l4
l6: recv 2b from 2 tag 2
}
"""

OP = re.compile(r"(l\d+): (send|recv) (\d+)b (to|from) (\d+) tag (\d+)$")
CALC = re.compile(r"(l\d+): calc (\d+)$")
DEP = re.compile(r"(l\d+) requires (l\d+)$")


def parse(text: str) -> tuple[int, list[dict]]:
    """(num_ranks, per rank {label: op, ...}) for the subset of GOAL the exporter writes."""
    lines = text.splitlines()
    assert lines[0].startswith("num_ranks ") and lines[1] == ""
    n = int(lines[0].split()[1])
    ranks: list[dict] = []
    rank = None
    for number, line in enumerate(lines[2:], start=3):
        if line == "":
            continue
        if rank is None:
            assert line == f"rank {len(ranks)} {{", (number, line)
            rank = {}
            continue
        if line == "}":
            ranks.append(rank)
            rank = None
        elif m := OP.match(line):
            label, kind, size, _, peer, tag = m.groups()
            assert label not in rank, (number, "label defined twice")
            rank[label] = {"kind": kind, "size": int(size), "peer": int(peer), "tag": int(tag), "deps": []}
        elif m := CALC.match(line):
            assert m.group(1) not in rank
            rank[m.group(1)] = {"kind": "calc", "size": int(m.group(2)), "deps": []}
        elif m := DEP.match(line):
            a, b = m.groups()
            assert a in rank and b in rank, (number, "dependency on an undefined label")
            rank[a]["deps"].append(b)
        else:
            raise AssertionError(f"line {number}: not GOAL: {line!r}")
    assert rank is None and len(ranks) == n
    return n, ranks


def match(ranks: list[dict]) -> dict[tuple[int, str], tuple[int, str]]:
    """{(rank, recv label): (rank, send label)}, LogGOPSim's rule: by source and tag, first posted first."""
    sends: dict[tuple[int, int, int], list[tuple[int, str, int]]] = {}
    for r, ops in enumerate(ranks):
        for label, op in ops.items():
            if op["kind"] == "send":
                sends.setdefault((r, op["peer"], op["tag"]), []).append((r, label, op["size"]))
    out = {}
    for r, ops in enumerate(ranks):
        for label, op in ops.items():
            if op["kind"] == "recv":
                queue = sends.get((op["peer"], r, op["tag"]))
                assert queue, f"rank {r} {label}: no send from {op['peer']} with tag {op['tag']}"
                src, slabel, size = queue.pop(0)
                assert size == op["size"], f"rank {r} {label}: {op['size']} bytes received, {size} sent"
                out[(r, label)] = (src, slabel)
    assert not any(sends.values()), f"sends nobody receives: {[v for v in sends.values() if v]}"
    return out


def timed(ranks: list[dict]) -> dict[tuple[int, str], float]:
    """Completion time of every operation: a send starts when its dependencies are done, its
    message arrives `size` seconds later; a receive completes when its message arrives."""
    matched = match(ranks)
    done: dict[tuple[int, str], float] = {}

    def finish(r: int, label: str) -> float:
        key = (r, label)
        if key not in done:
            op = ranks[r][label]
            start = max((finish(r, d) for d in op["deps"]), default=0.0)
            if op["kind"] == "recv":
                src, slabel = matched[key]
                done[key] = max(start, finish(src, slabel))
            else:
                done[key] = start + op["size"] if op["kind"] == "send" else start
        return done[key]

    for r, ops in enumerate(ranks):
        for label in ops:
            finish(r, label)
    return done


def ranks_rule(stages: list[np.ndarray], iterations: int) -> list[list[float]]:
    """ready[r][k]: when rank r may send in stage occurrence k (RANKS rule, a message of b bytes
    taking b seconds): ready(r, next) = max(ready(r, k), arrival of every message to r in k)."""
    n = stages[0].shape[0]
    ready = [[0.0] for _ in range(n)]
    for _ in range(iterations):
        for dense in stages:
            k = len(ready[0]) - 1
            nxt = [ready[r][k] for r in range(n)]
            for p, q in zip(*np.nonzero(dense)):
                nxt[q] = max(nxt[q], ready[p][k] + dense[p, q])
            for r in range(n):
                ready[r].append(nxt[r])
    return ready


def check_against_rule(work, iterations: int) -> None:
    stages = [s.to_dense() for s in (work.stages if isinstance(work, Schedule) else (work,))]
    n, ranks = parse(goal(work, iterations))
    times = timed(ranks)
    ready = ranks_rule(stages, iterations)
    volume: dict[tuple[int, int, int], int] = {}
    for r, ops in enumerate(ranks):
        for label, op in ops.items():
            if op["kind"] == "send":
                started = times[(r, label)] - op["size"]
                assert started == pytest.approx(ready[r][op["tag"]]), (r, label, op)
                key = (r, op["peer"], op["tag"])
                volume[key] = volume.get(key, 0) + op["size"]
    # every entry of every stage occurrence is sent once, in full, under the tag of that occurrence
    expected = {(int(p), int(q), it * len(stages) + k): dense[p, q]
                for it in range(iterations) for k, dense in enumerate(stages) for p, q in zip(*np.nonzero(dense))}
    assert volume == expected


def test_ring_allgather_golden():
    assert goal(ring_allgather(4, bytes=2)) == RING4
    check_against_rule(ring_allgather(4, bytes=2), 1)


def test_binomial_bcast_joins_two_receives_with_calc():
    text = goal(binomial_bcast(4, bytes=16), iterations=2)
    rank2 = text[text.index("rank 2 {"):text.index("rank 3 {")]
    assert rank2 == ("rank 2 {\n"
                     "l0: recv 16b from 0 tag 0\n"
                     "l1: send 16b to 3 tag 1\n"
                     "l1 requires l0\n"
                     "l2: recv 16b from 0 tag 2\n"
                     "l3: calc 0\n"
                     "l3 requires l0\n"
                     "l3 requires l2\n"
                     "l4: send 16b to 3 tag 3\n"
                     "l4 requires l3\n"
                     "}\n\n")


def test_message_counts_split_the_bytes():
    pat = tm.Pattern.from_edges([0, 1], [1, 0], [10, 4], [3, 1], n=2)
    text = goal(pat)
    assert "l0: send 4b to 1 tag 0\nl1: send 3b to 1 tag 0\nl2: send 3b to 1 tag 0\n" in text
    assert "l0: send 4b to 0 tag 0\n" in text
    check_against_rule(pat, 1)
    merged = goal(pat, split=False)
    assert "l0: send 10b to 1 tag 0\nl1: recv 4b from 1 tag 0\n}" in merged
    assert merged == goal(tm.Pattern.from_edges([0, 1], [1, 0], [10, 4], n=2))


@pytest.mark.parametrize("work, iterations", [
    (ring_allgather(4, bytes=2), 1), (ring_allgather(5, bytes=3), 3), (binomial_bcast(8, bytes=4), 2),
    (bruck(6, bytes=5, op="alltoall"), 2), (tm.generators.stencil_2d((3, 3), periodic=True), 2),
])
def test_generated_schedules_follow_the_ranks_rule(work, iterations):
    check_against_rule(work, iterations)


@st.composite
def schedules(draw):
    n = draw(st.integers(2, 6))
    nstages = draw(st.integers(1, 4))
    stages = []
    for k in range(nstages):
        pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=8))
        pairs = [(p, q) for p, q in pairs if p != q] or [(0, 1)]
        src, dst = zip(*pairs)
        byts = draw(st.lists(st.integers(1, 9), min_size=len(src), max_size=len(src)))
        stages.append(tm.Pattern.from_edges(list(src), list(dst), byts, n=n))
    total = tm.Pattern.from_edges(np.concatenate([s.senders() for s in stages]),
                                  np.concatenate([s.indices for s in stages]),
                                  np.concatenate([s.bytes for s in stages]), n=n)
    return Schedule("random", tuple(stages), total), draw(st.integers(1, 3))


@settings(max_examples=60, deadline=None)
@given(schedules())
def test_random_schedules_match_and_follow_the_ranks_rule(case):
    work, iterations = case
    check_against_rule(work, iterations)


def test_write_goal_is_atomic_and_refuses_bad_input(tmp_path):
    path = tmp_path / "ring.goal"
    write_goal(ring_allgather(4, bytes=2), path)
    assert path.read_text() == goal(ring_allgather(4, bytes=2))
    with pytest.raises(PatternError, match="bytes 2.5 is not a whole number"):
        write_goal(tm.Pattern.from_edges([0], [1], [2.5], n=2), path)
    assert path.read_text() == goal(ring_allgather(4, bytes=2))       # the old file stays
    assert list(tmp_path.iterdir()) == [path]                         # no temporary left behind


@pytest.mark.parametrize("work, kwargs, message", [
    (tm.Pattern.from_edges([0, 1], [1, 2], [4, 1.5], n=3), {}, "message 1 -> 2: bytes 1.5 is not a whole number"),
    (tm.Pattern.from_edges([0], [1], [4], [1.5], n=2), {}, "message 0 -> 1: message count 1.5"),
    (tm.Pattern.from_edges([0], [1], [4], [0], n=2), {}, "message count 0 for 4 bytes"),
    (ring_allgather(3), {"iterations": 0}, "iterations = 0 must be an integer >= 1"),
    (ring_allgather(3), {"iterations": 1.0}, "iterations = 1.0 must be an integer"),
    (tm.Pattern.from_edges([0], [1], [1e19], n=2), {}, "bytes 1e+19 is not a whole number below 2^63"),
])
def test_bad_input_is_named(work, kwargs, message):
    with pytest.raises(PatternError, match=re.escape(message)):
        goal(work, **kwargs)


@pytest.mark.parametrize("work, message", [
    ("not a pattern", "cannot use a str as a communication pattern"),
    (Schedule("empty", (), tm.Pattern.from_edges([0], [1], [1], n=2)), "the schedule has no stages"),
    (Schedule("mixed", (tm.Pattern.from_edges([0], [1], [1], n=2), tm.Pattern.from_edges([0], [2], [1], n=3)),
              tm.Pattern.from_edges([0], [1], [1], n=3)), "stage 1 has 3 processes but stage 0 has 2"),
])
def test_work_is_read_as_predict_reads_it(work, message):
    with pytest.raises(TopomapError, match=re.escape(message)):
        goal(work)


def test_a_list_of_patterns_and_a_dense_matrix_are_work_too():
    stages = list(ring_allgather(4, bytes=2).stages)
    assert goal(stages) == RING4
    dense = np.array([[0, 3], [5, 0]])
    assert goal(dense) == goal(tm.Pattern.from_dense(dense))


@pytest.mark.skipif(not (shutil.which("txt2bin") and shutil.which("LogGOPSim")),
                    reason="LogGOPSim's txt2bin and LogGOPSim are not on PATH (build github.com/spcl/LogGOPSim)")
def test_loggopsim_reads_and_times_our_goal(tmp_path):
    """LogGOPSim itself parses the files; a ring allgather's end time is the hand-worked LogGP chain."""
    L, o, g, G = 2500, 1500, 1000, 6                   # ns; every message eager (S above the sizes)
    cases = {"ring": (ring_allgather(8, bytes=4096), 2), "bcast": (binomial_bcast(16, bytes=1024), 1),
             "bruck": (bruck(6, bytes=100, op="alltoall"), 3),
             "split": (tm.Pattern.from_edges([0, 1], [1, 0], [10, 4], [3, 1], n=2), 1)}
    ends = {}
    for name, (work, iterations) in cases.items():
        write_goal(work, tmp_path / f"{name}.goal", iterations=iterations)
        subprocess.run(["txt2bin", "-i", f"{name}.goal", "-o", f"{name}.bin"], cwd=tmp_path, check=True,
                       capture_output=True)
        out = subprocess.run(["LogGOPSim", "-f", f"{name}.bin", "-L", str(L), "-o", str(o), "-g", str(g),
                              "-G", str(G), "-S", "100000"], cwd=tmp_path, check=True, capture_output=True,
                             text=True).stdout
        ends[name] = [int(t) for t in re.findall(r"^Host \d+: (\d+)$", out, flags=re.M)]
        n = work.stages[0].n if isinstance(work, Schedule) else work.n
        assert len(ends[name]) == n, out
    # each of the 2 x 7 ring stages waits for the previous receive: o + L + (m - 1) G + o per stage
    assert ends["ring"] == [14 * (2 * o + L + 4095 * G)] * 8


# ------------------------------------------------------------------ command line

def test_cli_export_goal(tmp_path, capsys):
    out = tmp_path / "ring.goal"
    assert main(["export", "goal", "ring_allgather:4:bytes=2", "-o", str(out)]) == 0
    assert out.read_text() == goal(ring_allgather(4, bytes=2))
    assert main(["export", "goal", "bruck:6:bytes=5,op=allgather", "-o", "-", "--iterations", "2"]) == 0
    assert capsys.readouterr().out == goal(bruck(6, bytes=5, op="allgather"), iterations=2)
    assert main(["export", "goal", "stencil2d:4x4:bytes=8", "-o", str(out)]) == 0
    assert out.read_text() == goal(tm.generators.from_spec("stencil2d:4x4:bytes=8"))
    pattern_file = tmp_path / "p.csv"
    tm.io.write(tm.Pattern.from_edges([0, 2], [1, 0], [5, 7], n=3), str(pattern_file))
    assert main(["export", "goal", str(pattern_file), "-o", str(out)]) == 0
    assert out.read_text() == goal(tm.Pattern.from_edges([0, 2], [1, 0], [5, 7], n=3))
    assert main(["export", "goal", "stencil2d:2x3:periodic", "-o", str(out), "--merge-messages"]) == 0
    assert out.read_text() == goal(tm.generators.from_spec("stencil2d:2x3:periodic"), split=False)
    assert out.read_text() != goal(tm.generators.from_spec("stencil2d:2x3:periodic"))   # 2-wide: neighbours twice


@pytest.mark.parametrize("argv, message", [
    (["export", "goal", "-o", "-"], "export goal needs a pattern file, a generator spec or a collective"),
    (["export", "goal", "ring_allgather:x", "-o", "-"], "expected ring_allgather:N[:key=value,...]"),
    (["export", "goal", "ring_allgather:4:root=1", "-o", "-"], "ring_allgather takes no root option"),
    (["export", "goal", "bruck:4:size=3", "-o", "-"], "option 'size=3' is not bytes=, root= or op="),
    (["export", "goal", "bruck:4:bytes=big", "-o", "-"], "bytes = 'big' is not a number"),
    (["export", "goal", "recursive_doubling:6", "-o", "-"], "needs a power-of-two number of ranks"),
    (["export", "goal", "ring_allgather:4:bytes=0.5", "-o", "-"], "bytes 0.5 is not a whole number"),
    (["export", "goal", "ring_allgather:4", "-o", "-", "--format", "dot"], "no --format or --pattern"),
    (["export", "goal", "nosuch.csv", "-o", "-"], "nosuch.csv: no such pattern file"),
    (["export", "torus:2x2", "-o", "-"], "export of a machine needs --format"),
    (["export", "torus:2x2", "--format", "torus", "-o", "-", "--iterations", "3"],
     "--iterations and --merge-messages are options of 'export goal'"),
    (["export", "goal", "ring_allgather:4", "-o", "-", "--iterations", "0"], "iterations = 0 must be an integer >= 1"),
    (["export", "torus:2x2", "ring_allgather:4", "--format", "torus", "-o", "-"],
     "unexpected argument 'ring_allgather:4'"),
])
def test_cli_export_goal_errors_exit_2_with_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("topomap export: error: ") and message in err, err
