"""The serving graph does not import the measurement side."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mtrag_graph"
SERVING = [PACKAGE / "graph.py", *(PACKAGE / d for d in ("nodes", "models", "retrieval"))]
MEASUREMENT = ("mtrag_graph.decisions", "mtrag_graph.evaluation")


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_graph_nodes_models_and_retrieval_never_import_the_benchmark():
    files = [f for place in SERVING for f in ([place] if place.is_file() else sorted(place.rglob("*.py")))]
    offending = {
        str(f.relative_to(PACKAGE)): sorted(m for m in imported_modules(f) if m.startswith(MEASUREMENT))
        for f in files
    }
    assert {f: m for f, m in offending.items() if m} == {}
