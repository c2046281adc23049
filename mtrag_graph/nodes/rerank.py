"""Score passages against the standalone question and keep the top k."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.messages import question_for_answering
from mtrag_graph.models import get_reranker
from mtrag_graph.models.calls import timed_model_call
from mtrag_graph.nodes._common import guarded
from mtrag_graph.retrieval.corpus import passage_text
from mtrag_graph.state import State


@guarded
def rerank(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    passages = state.get("passages") or []
    if not passages:
        return {"kept_passages": []}
    reranker = get_reranker(runtime.context.reranker, runtime.context.embedder)
    texts = [passage_text(p.get("title") or "", p["text"]) for p in passages]
    scores = timed_model_call(reranker.name, lambda: reranker.score(question_for_answering(state), texts))
    ranked = sorted(zip(scores, range(len(passages)), strict=True), key=lambda item: (-item[0], item[1]))
    kept = [{**passages[i], "score": round(score, 6)} for score, i in ranked[: runtime.context.top_k]]
    return {"kept_passages": kept}
