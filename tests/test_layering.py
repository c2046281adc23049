"""The serving graph does not import the measurement side; nothing imports LangGraph's private modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mtrag_graph"
# everything but the measurement side, the commands (some run a measurement) and the test stand-ins
SERVING = [
    *(f for f in PACKAGE.glob("*.py")),
    *(
        PACKAGE / d
        for d in (
            "nodes",
            "nodekit",
            "models",
            "retrieval",
            "runtime",
            "judging",
            "prompts",
            "stages",
            "text",
            "presets",
            "serve",
            "ingest",
        )
    ),
]
MEASUREMENT = ("mtrag_graph.measure", "mtrag_graph.testing")


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_serving_code_never_imports_the_measurement_side_or_the_test_stand_ins():
    files = [f for place in SERVING for f in ([place] if place.is_file() else sorted(place.rglob("*.py")))]
    offending = {
        str(f.relative_to(PACKAGE)): sorted(m for m in imported_modules(f) if m.startswith(MEASUREMENT))
        for f in files
    }
    assert {f: m for f, m in offending.items() if m} == {}


def test_the_package_never_imports_the_research_tree_or_the_benchmarks():
    files = sorted(PACKAGE.rglob("*.py"))
    offending = {
        str(f.relative_to(PACKAGE)): sorted(
            m for m in imported_modules(f) if m.split(".")[0] in ("research", "benchmarks")
        )
        for f in files
    }
    assert {f: m for f, m in offending.items() if m} == {}


def langgraph_imports(path: Path) -> set[str]:
    """The ``langgraph`` modules and names ``path`` imports (``from langgraph.x import y`` gives ``langgraph.x.y``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in names if name.split(".")[0] == "langgraph"}


def test_nothing_imports_a_private_langgraph_module():
    # LangGraph's private modules (a name part starting with "_") change without notice between releases
    root = PACKAGE.parent
    files = [
        f for tree in ("mtrag_graph", "research", "benchmarks", "tests") for f in (root / tree).rglob("*.py")
    ]
    offending = {
        str(f.relative_to(root)): sorted(
            name for name in langgraph_imports(f) if any(part.startswith("_") for part in name.split("."))
        )
        for f in files
    }
    assert {f: m for f, m in offending.items() if m} == {}


def test_the_private_langgraph_import_check_finds_one(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from langgraph.pregel import _messages\nimport langgraph.config\n", encoding="utf-8")
    assert langgraph_imports(module) == {"langgraph.pregel._messages", "langgraph.config"}


def test_the_wheel_holds_the_product_only():
    text = (PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert '[tool.setuptools.packages.find]\ninclude = ["mtrag_graph*"]' in text


def test_the_command_line_offers_product_commands_only(capsys):
    from mtrag_graph.cli import build_parser  # noqa: PLC0415 - the test of the parser, not of imports

    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    listed = capsys.readouterr().out
    assert "clarify-twins" not in listed
    for command in (
        "answer",
        "chat",
        "index",
        "retrieve",
        "trace",
        "evaluate",
        "eval-retrieval",
        "bench",
        "decisions",
    ):
        assert command in listed


def test_no_node_module_imports_another():
    # a decision several nodes (or the stream) need lives below the nodes (judging/, state.py, prompts/build.py)
    nodes = PACKAGE / "nodes"
    offending = {
        f.name: sorted(m for m in imported_modules(f) if m.startswith("mtrag_graph.nodes"))
        for f in sorted(nodes.glob("*.py"))
    }
    assert {f: m for f, m in offending.items() if m} == {}
