"""Hybrid search: BM25 and dense rankings fused with weighted reciprocal rank fusion; dual-query merge.

A search returns ``(key, score)`` pairs, best first, where ``key`` is a position in the passages of a
``PassageIndex`` or a passage id of a ``MilvusIndex`` (the engine ranks; fusion and the merge are the
same). Scores are BM25 scores (``bm25``), cosine similarities (``dense``) or weighted RRF
scores (``hybrid``): comparable within one mode, not across modes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from mtrag_graph.models.embeddings import get_embedder
from mtrag_graph.retrieval.index import Index, PassageIndex, bm25_tokenize
from mtrag_graph.retrieval.milvus import MilvusIndex

MODES = ("hybrid", "bm25", "dense")
DEFAULT_DEPTH = 100  # candidates taken from each ranking before fusion

Hits = list[tuple[Any, float]]

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


def _top(scores: np.ndarray, depth: int) -> Hits:
    depth = min(depth, len(scores))
    if depth <= 0:
        return []
    top = np.argpartition(-scores, depth - 1)[:depth]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(i), float(scores[i])) for i in top]


def bm25_ranking(index: PassageIndex, query: str, depth: int) -> Hits:
    """BM25 over title + text; passages sharing no term with the query are not ranked."""
    vocab = index.bm25.vocab_dict
    tokens = [t for t in bm25_tokenize([query])[0] if t in vocab]
    if not tokens:
        return []
    scores = np.asarray(index.bm25.get_scores(tokens), dtype=np.float32)
    return [(i, s) for i, s in _top(scores, depth) if s > 0]


def dense_ranking(index: PassageIndex, query_vector: np.ndarray, depth: int) -> Hits:
    scores, ids = index.dense.search(
        np.asarray(query_vector, np.float32).reshape(1, -1), min(depth, len(index))
    )
    return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]


def sparse_ranking(index: PassageIndex, weights: dict[str, float], depth: int) -> Hits:
    """BGE-M3 lexical matching: the dot product of query and passage token weights."""
    matrix = index.sparse
    if matrix is None:
        return []
    query = np.zeros(matrix.shape[1], dtype=np.float32)
    for token, weight in weights.items():
        if int(token) < len(query):
            query[int(token)] = weight
    scores = np.asarray(matrix @ query).ravel()
    return [(i, s) for i, s in _top(scores, depth) if s > 0]


def search(
    index: Index,
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
    depth = max(depth or DEFAULT_DEPTH, top_k)
    if isinstance(index, MilvusIndex):
        return _milvus_search(index, query, top_k, mode, bm25_weight, dense_weight, rrf_k, depth)
    if mode == "bm25":
        return bm25_ranking(index, query, top_k)
    embedder = get_embedder(index.embedder_spec)
    vector = embedder.embed([query])[0]
    if mode == "dense":
        return dense_ranking(index, vector, top_k)
    rankings = [bm25_ranking(index, query, depth), dense_ranking(index, vector, depth)]
    weights = [bm25_weight, dense_weight]
    if index.sparse is not None and embedder.has_sparse:
        rankings.append(sparse_ranking(index, embedder.embed_sparse([query])[0], depth))
        weights.append(sparse_weight)
    fused = rrf_fuse([[i for i, _ in ranking] for ranking in rankings], weights, k=rrf_k)
    return fused[:top_k]


def _milvus_search(
    index: MilvusIndex,
    query: str,
    top_k: int,
    mode: str,
    bm25_weight: float,
    dense_weight: float,
    rrf_k: int,
    depth: int,
) -> Hits:
    if mode == "bm25":
        return index.bm25_ranking(query, top_k)
    vector = get_embedder(index.embedder_spec).embed([query])[0]
    if mode == "dense":
        return index.dense_ranking(vector, top_k)
    if bm25_weight == dense_weight:  # plain RRF: the engine fuses
        return index.hybrid_ranking(query, vector, depth, top_k, rrf_k)
    rankings = [index.bm25_ranking(query, depth), index.dense_ranking(vector, depth)]
    fused = rrf_fuse([[i for i, _ in r] for r in rankings], [bm25_weight, dense_weight], k=rrf_k)
    return fused[:top_k]


def multi_query_search(
    index: Index, queries: Iterable[str | None], *, top_k: int = 10, **options: Any
) -> Hits:
    """Search with each distinct non-empty query and merge (best score wins); the top ``top_k``."""
    distinct = list(dict.fromkeys(q.strip() for q in queries if q and q.strip()))
    return merge_best(search(index, q, top_k=top_k, **options) for q in distinct)[:top_k]


def as_passages(index: Index, hits: Hits) -> list[dict[str, Any]]:
    """The hits as passages: ``document_id``, ``title``, ``text``, ``score``, and for passages of
    documents ``source``, ``page``, ``section``."""
    return index.passages(hits)
