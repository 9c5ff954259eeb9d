"""OSU Micro-Benchmarks output -> link-class parameters (topomap/timemodel/osu.py).

The fixtures in tests/data/osu are published OMB 5.x/6.x/7.x outputs (SOURCES.md says which);
the expected figures below were worked out by hand from the rows of those files.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import topomap as tm
from topomap.errors import FormatError, TimeModelError
from topomap.timemodel import LinkClass, TimeModel
from topomap.timemodel.osu import read_osu, read_osu_table

DATA = Path(__file__).parent / "data" / "osu"


@pytest.mark.parametrize("name, kind, version, pairs, rows, first, last", [
    ("v5.8_latency.txt", "latency", "5.8", 1, 24, (0, 1.62), (4194304, 178.11)),
    ("v5.8_bw.txt", "bw", "5.8", 1, 23, (1, 3.93), (4194304, 24308.22)),
    ("v6.1_latency.txt", "latency", "6.1", 1, 4, (0, 31.28), (4, 28.75)),
    ("v6.2_bw.txt", "bw", "6.2", 1, 23, (1, 0.22), (4194304, 1279.54)),
    ("v7.2_latency.txt", "latency", "7.2", 1, 23, (1, 2.46), (4194304, 522.29)),
    ("v7.5_latency_validation.txt", "latency", "7.5", 1, 23, (1, 3.00), (4194304, 181.46)),
    ("v7.5_bw_validation.txt", "bw", "7.5", 1, 23, (1, 0.88), (4194304, 24007.69)),
    ("v7.5_bibw_validation.txt", "bibw", "7.5", 1, 23, (1, 1.03), (4194304, 46433.80)),
    ("v7.5.2_mbw_mr.txt", "mbw_mr", "7.5.2", 4, 23, (1, 5.71), (4194304, 193713.41)),
])
def test_every_published_layout_parses(name, kind, version, pairs, rows, first, last):
    t = read_osu_table(DATA / name)
    assert (t.kind, t.version, t.pairs, t.sizes.size) == (kind, version, pairs, rows)
    assert (int(t.sizes[0]), float(t.values[0])) == first
    assert (int(t.sizes[-1]), float(t.values[-1])) == last
    assert np.all(np.diff(t.sizes) > 0)


@pytest.mark.parametrize("latency, bandwidth, alpha_us, bandwidth_mbs", [
    # median of 1.61 1.61 1.62 1.62 1.62 1.62 1.79 1.84 (sizes 0..64); median of 24318.09 24579.14 24308.22
    ("v5.8_latency.txt", "v5.8_bw.txt", 1.62, 24318.09),
    # sizes 1..64: 2.46 3.31 3.31 3.71 4.77 4.96 5.96 -> 3.71; another run's osu_bw, 1..4 MiB: 831.02 1363.30 1279.54
    ("v7.2_latency.txt", "v6.2_bw.txt", 3.71, 1279.54),
    # 0..4 bytes: 26.76 27.95 28.75 31.28 -> (27.95 + 28.75) / 2
    ("v6.1_latency.txt", "v5.8_bw.txt", 28.35, 24318.09),
    # sizes 1..64: 2.99 2.99 2.99 3.00 3.01 3.07 3.08 -> 3.00; 23940.59 23980.12 24007.69 -> 23980.12
    ("v7.5_latency_validation.txt", "v7.5_bw_validation.txt", 3.00, 23980.12),
    # bibw counts both directions: 45621.16 46159.65 46433.80 -> 46159.65 / 2
    ("v7.5_latency_validation.txt", "v7.5_bibw_validation.txt", 3.00, 23079.825),
    # mbw_mr is the sum over 4 pairs: 191985.38 193126.48 193713.41 -> 193126.48 / 4
    ("v7.5_latency_validation.txt", "v7.5.2_mbw_mr.txt", 3.00, 48281.62),
])
def test_fit_worked_by_hand(latency, bandwidth, alpha_us, bandwidth_mbs):
    link = read_osu(DATA / latency, DATA / bandwidth)
    assert isinstance(link, LinkClass)
    assert link.alpha == pytest.approx(alpha_us * 1e-6, rel=1e-12)
    assert link.bandwidth == pytest.approx(bandwidth_mbs * 1e6, rel=1e-12)


def test_bandwidth_from_latencies_agrees_with_osu_bw_of_the_same_run():
    alone = read_osu(DATA / "v5.8_latency.txt")
    # least squares through (1, 2, 4 MiB; 49.52, 92.44, 178.11 us) by hand: slope = 4.0871e-5 us/B
    x = np.array([1, 2, 4]) * 1048576.0
    y = np.array([49.52, 92.44, 178.11]) * 1e-6
    slope = ((x - x.mean()) * (y - y.mean())).sum() / ((x - x.mean()) ** 2).sum()
    assert alone.bandwidth == pytest.approx(1 / slope, rel=1e-9)
    assert alone.bandwidth == pytest.approx(read_osu(DATA / "v5.8_latency.txt", DATA / "v5.8_bw.txt").bandwidth,
                                            rel=0.02)


def test_bounds_choose_the_rows():
    link = read_osu(DATA / "v5.8_latency.txt", DATA / "v5.8_bw.txt", small=0, large=4194304)
    assert link.alpha == pytest.approx(1.62e-6) and link.bandwidth == pytest.approx(24308.22e6)
    with pytest.raises(TimeModelError, match=r"v5.8_bw.txt: no message sizes >= 8388608 bytes"):
        read_osu(DATA / "v5.8_latency.txt", DATA / "v5.8_bw.txt", large=1 << 23)
    with pytest.raises(TimeModelError, match=r"v7.2_latency.txt: no message sizes <= 0 bytes"):
        read_osu(DATA / "v7.2_latency.txt", DATA / "v5.8_bw.txt", small=0)
    with pytest.raises(TimeModelError, match="needs two sizes >= 1048576 bytes, the file has 0"):
        read_osu(DATA / "v6.1_latency.txt")


def test_a_read_class_goes_into_a_model_under_any_name():
    link = read_osu(DATA / "v5.8_latency.txt", DATA / "v5.8_bw.txt")
    model = TimeModel.default().merged({"network": link})
    assert model.classes["network"] == link and model.classes["PE"] == TimeModel.default().classes["PE"]
    machine = tm.machine("torus:2x2/2")
    assert model.level_classes(machine)[-1] == "network"
    alpha, bandwidth = model.level_arrays(machine)
    assert (alpha[-1], bandwidth[-1]) == (link.alpha, link.bandwidth)


LAT = (DATA / "v5.8_latency.txt").read_text()


@pytest.mark.parametrize("text, kwarg, message", [
    ("1 2.0\n2 2.1\n", "latency", "no OSU Micro-Benchmarks header"),
    (LAT.replace("8192                    4.08", "8192"), "latency", "line 17: truncated row '8192'"),
    (LAT.replace("4.08", "-4.08"), "latency", "line 17: value -4.08 must be positive"),
    (LAT.replace("4.08", "nan"), "latency", "line 17: value nan must be positive and finite"),
    (LAT.replace("4.08", "4,08"), "latency", "line 17: value '4,08' is not a number"),
    (LAT.replace("8192 ", "8k   "), "latency", "line 17: size '8k' is not a non-negative integer"),
    (LAT.replace("8192 ", "1024 "), "latency", "line 17: size 1024 does not follow 4096"),
    (LAT.replace("# Size          Latency (us)\n", ""), "latency", "line 2: data before the '# Size ...' column"),
    (LAT + LAT, "latency", "line 27: a second benchmark starts after the data"),
    (LAT.split("0    ")[0], "latency", "has a header but no data rows"),
    ((DATA / "v5.8_bw.txt").read_text(), "latency", "an osu_bw output given as latency"),
    (LAT, "bandwidth", "an osu_latency output given as bandwidth"),
    ("# OSU MPI Allreduce Latency Test v5.8\n# Size       Avg Latency(us)\n4 9.92\n", "latency",
     "line 1: '# OSU MPI Allreduce Latency Test v5.8' is not osu_latency, osu_bw"),
])
def test_bad_files_name_file_and_line(tmp_path, text, kwarg, message):
    bad = tmp_path / "bad.txt"
    bad.write_text(text)
    files = {"latency": DATA / "v5.8_latency.txt", "bandwidth": DATA / "v5.8_bw.txt", kwarg: bad}
    with pytest.raises(FormatError, match=re.escape(message)) as info:
        read_osu(**files)
    assert str(info.value).startswith(f"{bad}: ")


def test_missing_file_and_bandwidth_of_a_latency_table(tmp_path):
    with pytest.raises(FormatError, match="cannot read OSU output .*nope.txt: No such file"):
        read_osu(tmp_path / "nope.txt")
    with pytest.raises(TimeModelError, match="an osu_latency output holds no bandwidths"):
        read_osu_table(DATA / "v5.8_latency.txt").bandwidth()
