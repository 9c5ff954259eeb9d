"""The documentation builds without warnings, and its generated pages cover the code."""

import html as html_text
import os
import re
import shutil

import pytest

import topomap as tm
from topomap.cli import build_parser

sphinx_build = pytest.importorskip(
    "sphinx.cmd.build", reason="the docs toolchain (Sphinx) is not installed: pip install 'topomap-hpc[docs]'")

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    """Build a copy of docs/ (generated pages stay out of the source tree) with -W."""
    root = tmp_path_factory.mktemp("docs")
    src = root / "src"
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns("_build", "generated"))
    out = root / "html"
    log = root / "warnings.txt"
    rc = sphinx_build.build_main(["-W", "--keep-going", "-q", "-b", "html", "-d", str(root / "doctrees"),
                                  "-w", str(log), str(src), str(out)])
    assert rc == 0, "the docs build warned or failed:\n" + log.read_text()
    return out


def _page(html, path):
    return (html / path).read_text(encoding="utf-8")


def test_cli_reference_has_every_command(html):
    page = _page(html, "cli.html")
    sub = next(a for a in build_parser()._actions if hasattr(a, "choices") and isinstance(a.choices, dict))
    assert len(sub.choices) >= 10
    for name in sub.choices:
        assert f'id="cli-{name}"' in page
    assert "--no-resume" in page  # an option of `topomap experiment`, straight from its parser


def test_one_page_per_algorithm_with_its_options(html):
    for name, info in tm.methods().items():
        page = html_text.unescape(_page(html, f"algorithms/generated/{name}.html"))
        assert info.summary[1:] in page
        for option in info.options:
            assert f"<span class=\"pre\">{option}</span>" in page
        if info.c_file:  # the choices the paper leaves open, from the implementing C file
            assert f"header of csrc/core/{info.c_file}" in page, name
    block = _page(html, "algorithms/generated/block.html")
    assert "Complexity" in block and "No options." in block


def test_api_reference_documents_each_object_once(html):
    top = _page(html, "api/generated/topomap.html")
    for name in ("Pattern", "Machine", "evaluate", "compare", "map"):
        assert f'id="topomap.{name}"' in top
    assert 'id="topomap.pattern.Pattern"' not in _page(html, "api/generated/topomap.pattern.html")
    exp = _page(html, "api/generated/topomap.experiments.html")
    assert 'id="topomap.experiments.run_grid"' in exp and 'id="topomap.experiments.grid.run_grid"' not in exp
    plot = _page(html, "api/generated/topomap.plot.html")
    for name in ("comm_matrix", "comm_matrix_pair", "machine_links", "metric_bars", "improvement_lines",
                 "mapping_time"):
        assert f'id="topomap.plot.{name}"' in plot
    ids = re.findall(r'<dt class="sig sig-object py" id="([^"]+)"',
                     "".join(p.read_text(encoding="utf-8") for p in (html / "api" / "generated").glob("*.html")))
    assert len(ids) == len(set(ids)) > 100


def test_guide_pages_and_formulas(html):
    concepts = _page(html, "concepts.html")
    assert "Congestion" in concepts and "math notranslate" in concepts and "Mirsadeghi 2017" in concepts
    for page in ("howto/profile.html", "howto/fabric.html", "howto/experiments.html", "howto/scotch.html",
                 "howto/mpi4py.html", "quickstart.html"):
        assert (html / page).exists()
    unchecked = [p.name for p in (html / "howto").glob("*.html") if "To be checked" in p.read_text(encoding="utf-8")]
    assert not unchecked, f"how-to pages still marked 'To be checked': {unchecked}"
