"""The retrieval stage (full RAG: hybrid search over an index): its registration and its settings."""

from __future__ import annotations

from dataclasses import dataclass

from mtrag_graph import settings
from mtrag_graph.stages import Stage, register, setting

register(
    Stage("retrieval", "Hybrid BM25 + dense search in full-RAG mode.", nodes=("retrieve",),
          label="retrieving passages")
)  # fmt: skip


@dataclass(kw_only=True)
class RetrievalSettings:
    index_dir: str | None = setting(
        factory=settings.index_dir,
        stage="retrieval",
        flag="--index",
        description="Index folder for full-RAG tasks (no contexts, or retrieve: true); default MTRAG_INDEX_DIR.",
    )
    retrieval_top_k: int = setting(
        20, stage="retrieval", description="Passages each query retrieves before reranking."
    )
    retrieve_with_previous_turn: bool = setting(
        False,
        stage="retrieval",
        flag=True,
        description="On a follow-up, a third query beside the user's turn and the rewrite: the user's turn "
        "before it and this turn, as one text, so a rewrite that left out what the turn is about still "
        "finds its passages. It finds more (follow-ups' fact passage in the top 3 kept: real-documents "
        "tuning 25 -> 27 of 28, fresh 17 -> 20 of 21; MTRAG Recall@5 +0.007 to +0.014), but the answers "
        "did not follow (tuning 40 -> 41 of 51 right, fresh 22 -> 20 and one more unanswerable question "
        "answered): off (benchmarks/results/retrieval.md).",
    )
