"""Full-RAG retrieval (replaced by the retrieval package's node when it lands)."""

from __future__ import annotations

from typing import Any

from mtrag_graph.nodes._common import guarded


@guarded
def retrieve(state: dict[str, Any], runtime: Any) -> dict[str, Any]:
    raise RuntimeError("retrieval is not available yet: give the task `contexts`")
