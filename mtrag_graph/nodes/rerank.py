"""Score passages against the standalone question and keep the top k."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.models import get_embedder, get_reranker
from mtrag_graph.models.calls import timed_model_call
from mtrag_graph.models.listwise import ListwiseReranker
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.prompts.build import question_for_answering
from mtrag_graph.prompts.excerpts import Options, select_evidence
from mtrag_graph.retrieval.corpus import passage_text
from mtrag_graph.retrieval.search import rrf_fuse
from mtrag_graph.state import State, retrieved_setting

RRF_K = 60  # the k of the reciprocal-rank fusion with the retrieval's order, as the retrieval's own fusion


def rerank_passages(
    question: str,
    passages: Sequence[Mapping[str, Any]],
    *,
    reranker: str,
    embedder: str,
    top_k: int,
    retrieval_weight: float = 0.0,
    window_words: int = 0,
) -> list[dict[str, Any]]:
    """The stage's decision: the ``top_k`` passages by ``reranker``'s score for ``question``, each with its
    score (ties keep the passages' order). The node and the decision benchmark's retriever both call it.

    ``retrieval_weight`` > 0: ``passages`` come in the retrieval's order, and the passages kept are the
    top of the reciprocal-rank fusion of both orders, the retrieval's with this weight. The default
    reranker is the bi-encoder the index's dense half already used, so alone it throws away what BM25
    found: exact names, versions, options (the real-documents tuning split: the fact's passage in the
    top 5 for 46 of 51 questions reranked, 50 fused; MTRAG mini, 240 rewritten queries: Recall@5 0.643
    either way; benchmarks/results/documents.md).

    A passage longer than ``window_words`` words is scored in windows of that many words (each with the
    title), and scores as its best one: the bundled MiniLM reads 256 word pieces and drops the rest, so
    the end of a 512-token passage was never seen (0: the passage whole, as the scorer takes it)."""
    if not passages:
        return []
    scorer = get_reranker(reranker, embedder)
    windows = [word_windows(p["text"], window_words) for p in passages]
    texts = [
        passage_text(p.get("title") or "", w) for p, ws in zip(passages, windows, strict=True) for w in ws
    ]
    if isinstance(scorer, ListwiseReranker):  # its chat model call is recorded as such
        flat = scorer.score(question, texts)
    else:
        flat = timed_model_call(scorer.name, lambda: scorer.score(question, texts))
    scores, at = [], 0
    for ws in windows:  # a passage scores as its best window
        scores.append(max(flat[at : at + len(ws)]))
        at += len(ws)
    ranked = sorted(zip(scores, range(len(passages)), strict=True), key=lambda item: (-item[0], item[1]))
    if retrieval_weight > 0:
        ranked = [(scores[i], i) for i in fused_order([i for _, i in ranked], retrieval_weight)]
    return [{**passages[i], "score": round(float(score), 6)} for score, i in ranked[:top_k]]


def fused_order(reranked: Sequence[int], retrieval_weight: float) -> list[int]:
    """The reciprocal-rank fusion of the retrieval's order (``0 .. n-1``) with the reranker's
    (``reranked``, indices into the retrieval's order), the retrieval's with ``retrieval_weight``."""
    # ranks counted from 0 here (what was measured), from 1 in rrf_fuse: k - 1 gives the same scores;
    # the retrieval's order first, so ties keep it
    order = rrf_fuse([range(len(reranked)), list(reranked)], [retrieval_weight, 1.0], k=RRF_K - 1)
    return [i for i, _ in order]


def word_windows(text: str, window_words: int) -> list[str]:
    """``text`` in windows of ``window_words`` words, each starting a quarter window before the last
    one ended (``text`` itself when it is no longer, or ``window_words`` is 0)."""
    spans = [m.span() for m in re.finditer(r"\S+", text)]
    if window_words <= 0 or len(spans) <= window_words:
        return [text]
    step = window_words - window_words // 4
    starts = range(0, len(spans) - window_words // 4, step)
    return [text[spans[i][0] : spans[min(i + window_words, len(spans)) - 1][1]] for i in starts]


def configured_rerank(
    question: str, passages: Sequence[Mapping[str, Any]], context: Context, retrieved: bool
) -> list[dict[str, Any]]:
    """``rerank_passages`` with the context's settings, as the node calls it: the fusion with the
    retrieval's order and the word windows only for retrieved passages."""
    return rerank_passages(
        question, passages,
        reranker=context.reranker, embedder=context.embedder, top_k=context.top_k,
        retrieval_weight=context.rerank_retrieval_weight if retrieved else 0.0,
        window_words=context.rerank_window_words if retrieved else 0,
    )  # fmt: skip


@guarded
def rerank(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    context, question = runtime.context, question_for_answering(state)
    kept = configured_rerank(question, state.get("passages") or [], context, retrieved_setting(state))
    if context.evidence_tokens > 0 and kept:
        embedder = get_embedder(context.embedder)

        def embed(texts: Sequence[str]) -> Any:  # a recorded call, made only when the passages are cut
            return timed_model_call(embedder.name, lambda: embedder.embed(texts))

        options = Options(
            context.evidence_after_questions, context.evidence_shown_once, context.evidence_neighbour_weight
        )
        excerpts = select_evidence(question, kept, context.evidence_tokens, embed, options)
        kept = [{**p, "evidence": excerpt} for p, excerpt in zip(kept, excerpts, strict=True)]
    return {"kept_passages": kept}
