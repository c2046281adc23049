"""The rerank stage (keep the top k passages): its registration and its settings."""

from __future__ import annotations

from dataclasses import dataclass

from mtrag_graph import settings
from mtrag_graph.prompts.excerpts import EVIDENCE_TOKENS
from mtrag_graph.stages import Stage, register, setting

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
        description="Reranker spec: embedding (MiniLM cosine), none (the order the passages came in: the "
        "search's; as good on retrieval, worse on Task C answers; benchmarks/results/retrieval.md), cross-encoder (the bundled MiniLM trained here "
        "as a cross-encoder; models/cross_encoder.py), cross-encoder:/path (a reranker folder), lexical (no model), or "
        "listwise / listwise:MODEL (a chat model orders the top 10 passages; default the large model).",
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
        0,
        stage="rerank",
        flag=True,
        description="0: passages scored whole (the bundled MiniLM reads their first 256 word pieces). N: a "
        "retrieved passage longer than N words is scored in windows of N words (each with the title) and "
        "keeps its best window's score; 160 fits MiniLM. Off by default: on the real-documents tuning split "
        "it kept every fact's passage (51 of 51), on MTRAG dev Task C it cost ANSWERABLE turns "
        "(benchmarks/results/documents.md).",
    )
    evidence_tokens: int = setting(
        EVIDENCE_TOKENS,
        stage="rerank",
        flag=True,
        description="The answering prompts see, of the kept passages, only the sentences that bear on the "
        "question, within about this many tokens in all (mtrag_graph.prompts.excerpts); 0: whole "
        "passages.",
    )
    evidence_after_questions: bool = setting(
        False,
        stage="rerank",
        flag=True,
        description="A question in a passage chosen for the excerpt brings the sentence after it (an FAQ's "
        "answer). Off by default: it helped the real-documents tuning and fresh splits, not MTRAG dev "
        "(benchmarks/results/documents.md).",
    )
    evidence_shown_once: bool = setting(
        False,
        stage="rerank",
        flag=True,
        description="A sentence another kept passage already shows (overlapping windows of one page) is "
        "neither shown nor paid for again in the excerpts. Off by default: it helped the real-documents "
        "tuning and fresh splits, not MTRAG dev Task C (benchmarks/results/documents.md).",
    )
    evidence_neighbour_weight: float = setting(
        0.0,
        stage="rerank",
        flag=True,
        description="A sentence is ranked for the excerpts as if it scored this share of its better "
        "neighbour's score more (the fact often sits beside the sentence that names what is asked); 0: "
        "off. Off by default (benchmarks/results/documents.md, the thirteenth round).",
    )
