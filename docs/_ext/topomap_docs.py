"""Pages generated from the code at build time, so the documentation never goes stale.

* ``api/generated/*.rst``: one page per public module or package of topomap;
  each object is documented once, under the most public name it has (a class
  that ``topomap`` re-exports appears as ``topomap.Pattern``, not again on the
  page of ``topomap.pattern``).
* ``algorithms/generated/*.rst``: one page per registered mapper
  (:func:`topomap.methods`): summary, source, options, the hand-written notes
  in ``algorithms/notes/<name>.rst`` and the header comment of the C file
  that implements it (the registry's ``c_file``) when the source tree is
  there.
* the ``topomap-cli`` directive: ``topomap --help`` and every command's help,
  from the argparse parsers themselves.
* docstrings written as plain text get the two fixes RST needs
  (:func:`plain_to_rst`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import re
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive, directives


def _repo() -> str:
    """The source tree topomap was imported from (its C files exist only in a checkout)."""
    import topomap

    return os.path.dirname(os.path.dirname(os.path.abspath(topomap.__file__)))

_HEADING = re.compile(r"^([-=~^\"'`#*+]){3,}\s*$")


# ---------------------------------------------------------------- API pages
def public_modules() -> list[str]:
    """topomap's importable modules, private ones (``_x``) and the CLI left out."""
    import topomap

    names = ["topomap"]
    for info in pkgutil.walk_packages(topomap.__path__, "topomap."):
        parts = info.name.split(".")[1:]
        if any(p.startswith("_") for p in parts) or parts[0] == "cli":
            continue
        names.append(info.name)
    return names


def _exported(modules: list[str]) -> dict[int, str]:
    """id(object) -> the public name of the shallowest package that re-exports it in ``__all__``."""
    owner: dict[int, str] = {}
    for name in sorted(modules, key=lambda n: n.count(".")):
        mod = importlib.import_module(name)
        for attr in getattr(mod, "__all__", ()):
            obj = getattr(mod, attr, None)
            if obj is None or isinstance(obj, type(mod)) or isinstance(obj, (str, int, float, tuple, list, dict)):
                continue
            owner.setdefault(id(obj), f"{name}.{attr}")
    return owner


def _title(text: str, char: str) -> str:
    return f"{text}\n{char * len(text)}\n"


def api_pages() -> dict[str, str]:
    """File name -> content of the generated API pages (one per top-level unit)."""
    modules = public_modules()
    owner = _exported(modules)
    units: dict[str, list[str]] = {}
    for name in modules:
        units.setdefault(".".join(name.split(".")[:2]), []).append(name)
    pages = {}
    for unit, names in units.items():
        blocks = []
        for name in names:
            mod = importlib.import_module(name)
            skip = sorted(attr for attr, obj in vars(mod).items()
                          if not attr.startswith("_") and owner.get(id(obj), f"{name}.{attr}") != f"{name}.{attr}")
            options = "   :members:\n" + (f"   :exclude-members: {', '.join(skip)}\n" if skip else "")
            parent, _, last = name.rpartition(".")
            if parent and getattr(importlib.import_module(parent), last, mod) is not mod:
                # ``topomap.compare`` is a function as well as a module: index the function only
                options += "   :no-index:\n"
            blocks.append(f"{_title(name, '=' if name == unit else '-')}\n.. automodule:: {name}\n{options}")
        pages[f"{unit}.rst"] = "\n".join(blocks)
    return pages


# ---------------------------------------------------------------- algorithm pages
def c_header(c_file: str) -> tuple[str, str] | None:
    """The leading comment of ``csrc/core/<c_file>``, when the source tree is there.

    A mapper whose registered ``c_file`` is missing from a checkout is an
    error: its page would silently lose the choices its C code documents.
    """
    repo = _repo()
    core = os.path.join(repo, "csrc", "core")
    if not c_file or not os.path.isdir(core):
        return None
    path = os.path.join(core, c_file)
    if not os.path.exists(path):
        raise FileNotFoundError(f"registered c_file {c_file!r} is not in {core}; pass the file that implements "
                                f"the mapper (or c_file='' if it has no C code) to @register")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    match = re.match(r"\s*/\*(.*?)\*/", text, re.S)
    if not match:
        return None
    lines = [re.sub(r"^\s?\*( |$)", "", line) for line in match.group(1).splitlines()]
    return os.path.relpath(path, repo), "\n".join(lines).strip("\n")


def algorithm_pages() -> dict[str, str]:
    import topomap

    return {f"{name}.rst": f"{_title(name, '=')}\n.. topomap-method:: {name}\n" for name in topomap.methods()}


class MethodDirective(Directive):
    """``.. topomap-method:: NAME``: what the registry knows about a mapper, its notes, its C header."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        import topomap

        name = self.arguments[0]
        info = topomap.methods().get(name)
        if info is None:
            raise self.error(f"no registered mapper {name!r}")
        out: list[nodes.Node] = [nodes.paragraph(text=info.summary[:1].upper() + info.summary[1:] + ".")]
        if info.source:
            para = nodes.paragraph()
            para += nodes.strong(text="Source: ")
            para += nodes.Text(info.source)
            out.append(para)
        out.append(self._options(info))
        out.append(nodes.paragraph(text=f'Run it with topomap.map(pattern, allocation, method="{name}", ...) or '
                                        f'topomap eval PATTERN MACHINE --method {name}.'))
        notes = os.path.join(self.state.document.settings.env.srcdir, "algorithms", "notes", f"{name}.rst")
        if os.path.exists(notes):
            self.state.document.settings.record_dependencies.add(notes)
            with open(notes, encoding="utf-8") as fh:
                self.state_machine.insert_input(fh.read().splitlines(), notes)
        try:
            header = c_header(info.c_file)
        except FileNotFoundError as exc:
            raise self.error(f"mapper {name!r}: {exc}") from None
        if header is not None:
            path, text = header
            section = nodes.rubric(text=f"Implementation notes (header of {path})")
            out += [section, _text_block(text)]
        return out

    @staticmethod
    def _options(info: Any) -> nodes.Node:
        if not info.options:
            return nodes.paragraph(text="No options.")
        table = nodes.table()
        group = nodes.tgroup(cols=3)
        table += group
        for width in (20, 15, 65):
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        group += head
        body = nodes.tbody()
        group += body
        for target, cells in [(head, ("option", "default", "meaning"))] + \
                [(body, (k, repr(d), doc)) for k, (d, doc) in info.options.items()]:
            row = nodes.row()
            for i, cell in enumerate(cells):
                entry = nodes.entry()
                entry += nodes.paragraph("", "", nodes.literal(text=cell) if i < 2 and target is body
                                         else nodes.Text(cell))
                row += entry
            target += row
        return table


# ---------------------------------------------------------------- CLI reference
def _help(parser: argparse.ArgumentParser) -> str:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"  # argparse wraps to the terminal: fix the width for a reproducible page
    try:
        return parser.format_help()
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _text_block(text: str) -> nodes.literal_block:
    block = nodes.literal_block(text, text)
    block["language"] = "text"  # help text is not Python: no syntax colouring
    return block


class CLIDirective(Directive):
    """``.. topomap-cli::``: one section per command with its ``--help``."""

    def run(self) -> list[nodes.Node]:
        from topomap.cli import build_parser

        parser = build_parser()
        out: list[nodes.Node] = [_text_block(_help(parser))]
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        for name, command in sub.choices.items():
            section = nodes.section(ids=[f"cli-{name}"], names=[f"topomap {name}"])
            section += nodes.title(text=f"topomap {name}")
            section += _text_block(_help(command))
            out.append(section)
        return out


# ---------------------------------------------------------------- docstrings
_BULLET = re.compile(r"^\s*[-*+] \S")


def plain_to_rst(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Two plain-text habits that read well in ``help()`` but are not valid in an
    autodoc block: a ``Title`` over ``-----`` becomes ``.. rubric:: Title``
    (a section title inside a docstring is a docutils error), and a bullet
    list right under a paragraph line gets the blank line RST needs."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        text = lines[i]
        under = lines[i + 1] if i + 1 < len(lines) else ""
        if text.strip() and _HEADING.match(under) and len(under.strip()) >= len(text.strip()) \
                and not _HEADING.match(text):
            if out and out[-1].strip():
                out.append("")
            indent = text[:len(text) - len(text.lstrip())]
            out += [f"{indent}.. rubric:: {text.strip()}", ""]
            i += 2
            continue
        if _BULLET.match(text) and out and out[-1].strip() and not _BULLET.match(out[-1]) \
                and _indent(out[-1]) == _indent(text) and not out[-1].rstrip().endswith("::"):
            out.append("")
        out.append(text)
        i += 1
    lines[:] = out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _write(folder: str, pages: dict[str, str]) -> None:
    """Write generated pages, touching only files whose content changed and removing stale ones."""
    os.makedirs(folder, exist_ok=True)
    for old in os.listdir(folder):
        if old.endswith(".rst") and old not in pages:
            os.remove(os.path.join(folder, old))
    for name, text in pages.items():
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as fh:
                if fh.read() == text:
                    continue
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)


def generate(app: Any) -> None:
    _write(os.path.join(app.srcdir, "api", "generated"), api_pages())
    _write(os.path.join(app.srcdir, "algorithms", "generated"), algorithm_pages())


def setup(app: Any) -> dict:
    app.connect("builder-inited", generate)
    app.connect("autodoc-process-docstring", plain_to_rst)
    directives.register_directive("topomap-method", MethodDirective)
    directives.register_directive("topomap-cli", CLIDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
