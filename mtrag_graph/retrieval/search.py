"""Hybrid search: BM25 and dense rankings fused with weighted reciprocal rank fusion; dual-query merge.

A search goes through the index's backend (``retrieval/backend.py``: the built-in index or Milvus),
which ranks; the modes, the query's embedding and the merge are written once, here, and ``rrf_fuse`` is
the fusion both backends use. A search returns ``(key, score)`` pairs, best first, where ``key`` is the
backend's own (a position in a built-in index, a passage id in Milvus), which ``as_passages`` turns into
passages. Scores are BM25 scores (``bm25``), cosine similarities (``dense``) or weighted RRF scores
(``hybrid``): comparable within one mode, not across modes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from mtrag_graph.models.embeddings import get_embedder
from mtrag_graph.passages import Passage
from mtrag_graph.retrieval.backend import Backend, Fusion, Hits

MODES = ("hybrid", "bm25", "dense")
DEFAULT_DEPTH = 100  # candidates taken from each ranking before fusion

_SPEAKER_TAG = re.compile(r"\|(?:user|agent)\|:\s*")


def clean_query(text: str) -> str:
    """Drop the benchmark's ``|user|:`` speaker tags: they are markup, not words to match."""
    return " ".join(_SPEAKER_TAG.sub(" ", text).split())


def rrf_fuse(
    rankings: Sequence[Sequence[Any]], weights: Sequence[float], k: int = 60
) -> list[tuple[Any, float]]:
    """Weighted reciprocal rank fusion: ``score(d) = sum_i w_i / (k + rank_i(d))`` with ranks from 1.

    Ties keep the order in which the items were first seen.
    """
    if len(rankings) != len(weights):
        raise ValueError("one weight per ranking")
    scores: dict[Any, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))


def merge_best(results: Iterable[Sequence[tuple[Any, float]]]) -> list[tuple[Any, float]]:
    """Merge result lists; an item found by several keeps its best score. Best first."""
    best: dict[Any, float] = {}
    for result in results:
        for item, score in result:
            if item not in best or score > best[item]:
                best[item] = score
    order = {item: i for i, item in enumerate(best)}
    return sorted(best.items(), key=lambda pair: (-pair[1], order[pair[0]]))


def search(
    index: Backend,
    query: str,
    *,
    top_k: int = 10,
    mode: str = "hybrid",
    bm25_weight: float = 1.0,
    dense_weight: float = 1.0,
    sparse_weight: float = 1.0,
    rrf_k: int = 60,
    depth: int | None = None,
) -> Hits:
    """The ``top_k`` passages for one query. Hybrid fuses each ranking's top ``depth`` candidates."""
    if mode not in MODES:
        raise ValueError(f"unknown search mode '{mode}': use one of {', '.join(MODES)}")
    if mode == "bm25":
        return index.bm25_ranking(query, top_k)
    vector = get_embedder(index.embedder_spec).embed([query])[0]
    if mode == "dense":
        return index.dense_ranking(vector, top_k)
    depth = max(depth or DEFAULT_DEPTH, top_k)
    fusion = Fusion(top_k, depth, rrf_k, bm25=bm25_weight, dense=dense_weight, sparse=sparse_weight)
    return index.hybrid_ranking(query, vector, fusion)


def multi_query_search(
    index: Backend, queries: Iterable[str | None], *, top_k: int = 10, **options: Any
) -> Hits:
    """Search with each distinct non-empty query and merge (best score wins); the top ``top_k``."""
    distinct = list(dict.fromkeys(q.strip() for q in queries if q and q.strip()))
    return merge_best(search(index, q, top_k=top_k, **options) for q in distinct)[:top_k]


def as_passages(index: Backend, hits: Hits) -> list[Passage]:
    """The hits as passages (``passages.Passage``): id, title, text, ``score``, and for passages of
    files their ``file``, ``page``, ``section``, ``url``."""
    return index.passages(hits)
