"""mtrag-graph: multi-turn retrieval-augmented generation as a LangGraph state machine."""

from __future__ import annotations

from typing import Any

__all__ = ["Context", "Insertion", "build_graph"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Lazy, so `import mtrag_graph.tasks` (and the CLI's --help) does not import LangGraph and models.
    if name in ("build_graph", "Insertion"):
        from mtrag_graph import graph as graph_module  # noqa: PLC0415 - lazy, see above

        return getattr(graph_module, name)
    if name == "Context":
        from mtrag_graph.context import Context  # noqa: PLC0415 - lazy, see above

        return Context
    raise AttributeError(name)
