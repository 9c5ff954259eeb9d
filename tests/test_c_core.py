"""Build and run the C core's own tests (tests/c) under AddressSanitizer and UBSan."""

import os
import shutil
import subprocess

import pytest

HERE = os.path.join(os.path.dirname(__file__), "c")


@pytest.mark.skipif(shutil.which("make") is None or shutil.which(os.environ.get("CC", "cc")) is None,
                    reason="needs make and a C compiler")
def test_c_core_under_sanitizers():
    proc = subprocess.run(["make", "-s", f"-j{os.cpu_count() or 1}", "-C", HERE, "run"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    passed, failed = (int(x.split()[0]) for x in last.split(","))
    assert failed == 0 and passed > 5000, last
