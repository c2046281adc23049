"""The package's import graph has no cycle. Every import counts: function-level and type-only ones too,
and importing ``a.b.c`` imports the packages ``a.b`` (their ``__init__``) on the way."""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

import mtrag_graph

PACKAGE = "mtrag_graph"
ROOT = Path(mtrag_graph.__file__).parent


def package_modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name: its ``__init__``)."""
    modules = {}
    for path in ROOT.rglob("*.py"):
        parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imported_names(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules ``name`` imports anywhere in its source, resolved to module names."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            for alias in node.names:  # `from pkg import module` imports the module
                targets.add(f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source)
    return targets


def module_edges() -> dict[str, set[str]]:
    """``{module: modules it imports}``; a module importing ``a.b.c`` imports ``a.b`` too (its parent
    packages run first), except the packages it lies in, which are already importing."""
    modules = package_modules()
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges[name] = set()
        for target in imported_names(name, path, modules):
            parts = target.split(".")
            for depth in range(2, len(parts) + 1):  # the root package's __init__ imports nothing eagerly
                module = ".".join(parts[:depth])
                if module in modules and module != name and not name.startswith(module + "."):
                    edges[name].add(module)
    return edges


def part_edges(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The same graph between the package's parts: a subpackage (``mtrag_graph.nodes``) or a top-level
    module (``mtrag_graph.context``) is one node."""

    def part(module: str) -> str:
        return ".".join(module.split(".")[:2])

    parts: dict[str, set[str]] = {}
    for source, targets in edges.items():
        parts.setdefault(part(source), set()).update(part(t) for t in targets if part(t) != part(source))
    return parts


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each group of nodes that reach each other (strongly connected components of
    two or more), as the path ``[a, b, ..., a]``; sorted, so a failure reads the same every run."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:  # Tarjan; the graph is a few hundred nodes, recursion is fine
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(_shortest_cycle(edges, group) for group in groups)


def _shortest_cycle(edges: dict[str, set[str]], group: set[str]) -> list[str]:
    start = min(group)
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in sorted(edges.get(node, set()) & group):
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if target not in previous:
                previous[target] = node
                queue.append(target)
    raise AssertionError(f"no cycle through {start} in {sorted(group)}")


def describe(found: list[list[str]]) -> str:
    return "\n".join(" -> ".join(cycle) for cycle in found)


def test_the_cycle_finder_finds_a_cycle_and_names_its_path():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e", "d"}}
    assert cycles(edges) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_function_level_type_only_and_relative_imports_all_count(tmp_path):
    source = tmp_path / "x.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import b\n"
        "if TYPE_CHECKING:\n    from p.c import C\n"
        "def f():\n    import p.d\n    from .e import g\n"
    )
    modules = dict.fromkeys(["p", "p.x", "p.b", "p.c", "p.d", "p.e"], source)
    assert imported_names("p.x", source, modules) == {"typing", "p.b", "p.c", "p.d", "p.e"}


def test_importing_a_module_imports_its_parent_packages():
    edges = module_edges()
    assert {"mtrag_graph.models", "mtrag_graph.models.calls"} <= edges[
        "mtrag_graph.measure.evaluation.judges"
    ]


def test_no_module_of_the_package_imports_itself_back():
    edges = module_edges()
    found = cycles(edges)
    assert not found, "import cycles between modules:\n" + describe(found)


def test_no_two_parts_of_the_package_import_each_other():
    edges = part_edges(module_edges())
    found = cycles(edges)
    assert not found, "import cycles between parts of the package:\n" + describe(found)
