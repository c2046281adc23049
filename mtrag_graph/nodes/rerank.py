"""Score passages against the standalone question and keep the top k."""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.models import get_reranker
from mtrag_graph.nodes._common import guarded
from mtrag_graph.nodes._grounded import question_for_answering


def passage_text(passage: dict[str, Any]) -> str:
    title = passage.get("title") or ""
    return f"{title}\n{passage['text']}" if title else passage["text"]


@guarded
def rerank(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    passages = state.get("passages") or []
    if not passages:
        return {"kept_passages": []}
    reranker = get_reranker(runtime.context.reranker, runtime.context.embedder)
    started = time.perf_counter()
    scores = reranker.score(question_for_answering(state), [passage_text(p) for p in passages])
    call = {"node": "rerank", "model": reranker.name, "attempt": 1, "seconds": time.perf_counter() - started}
    ranked = sorted(zip(scores, range(len(passages)), strict=True), key=lambda item: (-item[0], item[1]))
    kept = [{**passages[i], "score": round(score, 6)} for score, i in ranked[: runtime.context.top_k]]
    return {"kept_passages": kept, "model_calls": [call]}
