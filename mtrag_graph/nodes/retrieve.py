"""Retrieve passages for the question from the task's collection index (full-RAG mode).

Multi-query: searches with the user's last turn, with the graph's standalone rewrite and, on a follow-up
(``Context.retrieve_with_previous_turn``, off), with the user's turn before it and this one as one text, and
merges the result lists (a passage found by more than one keeps its best score). Reranking is the next
node's job.
Queries are embedded with the embedder the index was built with (its manifest), which may differ from
``Context.embedder`` (the reranker's): vectors from another model would not match the index.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.models.calls import timed_model_call
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.retrieval.backend import Backend, Hits, IndexNotFound
from mtrag_graph.retrieval.registry import index_for
from mtrag_graph.retrieval.search import as_passages, multi_query_search
from mtrag_graph.state import State


@guarded
def retrieve(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    if not context.index_dir:
        raise IndexNotFound("full-RAG mode needs an index: set Context.index_dir or MTRAG_INDEX_DIR")
    task = state.get("task") or {}
    index = index_for(context.index_dir, task.get("Collection") or task.get("collection"))
    rewrite = state.get("standalone_question") or state.get("global_rewrite")
    queries = [state.get("question"), rewrite]
    if context.retrieve_with_previous_turn:
        queries.append(with_previous_turn(state.get("question"), state.get("history") or []))
    hits = timed_model_call("hybrid-search", lambda: search_hits(index, queries, context))
    return {"passages": as_passages(index, hits)}


def search_hits(index: Backend, queries: list[str | None], context: Context) -> Hits:
    """The hybrid search of ``queries`` with the context's depth (BM25 and dense weighed alike, fused with
    ``multi_query_search``'s k), as the node runs it."""
    return multi_query_search(index, queries, top_k=context.retrieval_top_k, mode="hybrid")


def with_previous_turn(question: str | None, history: list[dict[str, Any]]) -> str | None:
    """The user's turn before ``question`` and ``question`` as one query; None on a first turn. "If a
    parameter I list after via hasn't been defined yet, what value does it start from?", given back by
    the rewrite as it was, finds the fit command's page only with "Which algorithm does gnuplot's fit
    command use?" before it (the real-documents fresh split)."""
    earlier = [turn["text"] for turn in history if turn.get("speaker") == "user" and turn.get("text")]
    if not question or not earlier:
        return None
    return f"{earlier[-1]} {question}"
