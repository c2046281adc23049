"""The rerank stage (keep the top k passages): its registration and its settings."""

from __future__ import annotations

from dataclasses import dataclass

from mtrag_graph import settings
from mtrag_graph.retrieval.evidence import EVIDENCE_TOKENS
from mtrag_graph.stages import Stage, register, setting

# words of a reranking window: MiniLM truncates at 256 word pieces, about 1.3 a word in prose and more
# in code and tables, with the title in front (benchmarks/results/documents.md, "reranking windows")
RERANK_WINDOW_WORDS = 160

register(
    Stage("rerank", "Scores the passages against the standalone question and keeps the top k.",
          nodes=("rerank",), label="checking the passages")
)  # fmt: skip


@dataclass(kw_only=True)
class RerankSettings:
    reranker: str = setting(
        factory=settings.reranker,
        stage="rerank",
        flag=True,
        description="Reranker spec: embedding (MiniLM cosine), cross-encoder:/path, or lexical (no model).",
    )
    top_k: int = setting(5, stage="rerank", flag=True, description="Passages kept after reranking.")
    rerank_retrieval_weight: float = setting(
        1.0,
        stage="rerank",
        flag=True,
        description="Retrieved passages are kept by the reciprocal-rank fusion of the reranker's order and "
        "the retrieval's, the retrieval's with this weight (0: the reranker's order alone). Passages given "
        "with the task are ordered by the reranker alone.",
    )
    rerank_window_words: int = setting(
        RERANK_WINDOW_WORDS,
        stage="rerank",
        description="A retrieved passage longer than this many words is scored in windows of it (each with "
        "the title) and keeps its best window's score: the bundled MiniLM reads 256 word pieces and drops the "
        "rest (0: whole passages; passages given with the task are scored whole).",
    )
    evidence_tokens: int = setting(
        EVIDENCE_TOKENS,
        stage="rerank",
        flag=True,
        description="The answering prompts see, of the kept passages, only the sentences that bear on the "
        "question, within about this many tokens in all (mtrag_graph.retrieval.evidence); 0: whole "
        "passages.",
    )
