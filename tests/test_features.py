"""features() tells the truth about the build."""

import shutil
import subprocess

import topomap as tm
from topomap import _core


def _pkg_config_has_hwloc():
    if shutil.which("pkg-config") is None:
        return False
    return subprocess.run(["pkg-config", "--atleast-version=2.0", "hwloc"]).returncode == 0


def test_hwloc_compiled_in_exactly_when_requested_and_available():
    # the TOPOMAP_WITH_HWLOC value the extension was built with
    mode = tm.features()["hwloc_request"]
    assert mode in ("auto", "0", "1")
    want = mode != "0" and _pkg_config_has_hwloc()
    assert tm.features()["hwloc"] is want
    assert hasattr(_core, "hwloc_topology_xml") is want


def test_discovery_works_in_every_build():
    tree = tm.NodeTree.discover()
    assert tree.npes >= 1
    if tm.features()["hwloc"]:
        assert tree.source == "hwloc-library"
    else:
        assert tree.source in ("lstopo", "sysfs", "cpu_count")


def test_features_lists_optional_packages():
    f = tm.features()
    assert f["version"] == tm.__version__
    assert isinstance(f["scipy"], bool) and isinstance(f["lstopo"], bool)
