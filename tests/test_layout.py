"""The package layout: the top level holds the four values and the entry points, everything
else lives in a subpackage named after what it holds, and no module imports one that
(directly or not) imports it back."""

from __future__ import annotations

import ast
from pathlib import Path

import topomap as tm

PACKAGE = Path(tm.__file__).resolve().parent

# The values (pattern, machine, mapping; the allocation lives with the machine), the entry
# points (map/methods, evaluate, compare, partition, features) and private helpers.
TOP_LEVEL = {"__init__", "__main__", "_digest", "_rng", "_version", "_source_tree", "errors", "pattern", "machine",
             "mapping", "metrics", "registry", "compare", "partition", "features"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Every import statement, at any depth (functions too), outside ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph() -> dict[str, set[str]]:
    """Module -> the topomap modules it imports (a submodule named in ``from pkg import sub``
    counts as that submodule)."""
    modules = _modules()
    extensions = {"topomap." + p.name.split(".")[0] for p in PACKAGE.iterdir() if p.suffix in (".so", ".pyd")}
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name in modules)
                continue
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in modules:
                    deps.add(sub)
                elif target in modules and sub not in extensions:
                    deps.add(target)
        deps.discard(name)
        graph[name] = deps
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        path.append(v)
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1:
                return path[path.index(w):] + [w]
            if w not in state:
                found = visit(w)
                if found:
                    return found
        state[v] = 2
        path.pop()
        return None

    for v in sorted(graph):
        if v not in state:
            found = visit(v)
            if found:
                return found
    return None


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    graph = import_graph()
    assert "topomap.node.nodetree" in graph["topomap.machine"]          # a real edge is seen
    assert "topomap.node.hwloc_xml" in graph["topomap.node.nodetree"]
    assert "topomap.networks" not in graph["topomap.machine"]           # TYPE_CHECKING imports are not edges
    assert "topomap" not in graph["topomap.machine"]                    # nor the C extension (from . import _core)


def test_top_level_holds_values_entry_points_and_subpackages():
    loose = {p.stem for p in PACKAGE.glob("*.py")}
    assert loose == TOP_LEVEL, f"modules to move into a subpackage: {sorted(loose - TOP_LEVEL)}"
    subpackages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert {"node", "networks", "patterns", "collectives", "cabling", "mappers", "io", "mpi"} <= subpackages


def test_public_names_stay_importable():
    assert tm.generators is tm.patterns.generators and tm.patterns_util is tm.patterns.util
    assert tm.generators_nas is tm.patterns.nas and tm.generators_collective is tm.collectives.schedules
    assert tm.analysis is tm.networks.analysis and tm.NodeTree is tm.node.NodeTree
    assert tm.machine is tm.networks.spec.machine
    for name in tm.__all__:
        assert hasattr(tm, name), name
