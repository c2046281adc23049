"""Passages for UNANSWERABLE turns, found the way the graph finds them: hybrid search, then reranking."""

from __future__ import annotations

from typing import Any

from mtrag_graph.measure.decisions.sets import Retriever
from mtrag_graph.nodes.rerank import rerank_passages
from mtrag_graph.nodes.retrieve import with_previous_turn
from mtrag_graph.retrieval.registry import index_for
from mtrag_graph.retrieval.search import as_passages, multi_query_search
from mtrag_graph.tasks import parse_task


def search_queries(raw: dict[str, Any]) -> list[str]:
    """The user's last turn, and the same turn after the previous user turn (a cheap contextual query:
    no rewrite model, so the set does not depend on one; the retrieve node's ``with_previous_turn``, none
    on a first turn)."""
    task = parse_task(raw)
    previous = with_previous_turn(task.question, [turn.model_dump() for turn in task.history])
    return [task.question, previous] if previous else [task.question]


def index_retriever(
    index_dir: str, *, top_k: int = 5, depth: int = 20, reranker: str = "embedding", embedder: str = "minilm"
) -> Retriever:
    """A retriever over ``index_dir`` (one sub-index per domain, from ``mtrag-graph index``)."""

    def retrieve(raw: dict[str, Any]) -> list[dict[str, Any]]:
        queries = search_queries(raw)
        index = index_for(index_dir, raw.get("Collection") or raw.get("collection"))
        passages = as_passages(index, multi_query_search(index, queries, top_k=depth, mode="hybrid"))
        return rerank_passages(queries[0], passages, reranker=reranker, embedder=embedder, top_k=top_k)

    return retrieve
