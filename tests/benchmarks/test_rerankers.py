"""benchmarks/rerankers: each reranker's order of the same candidates, fused as the rerank node fuses."""

from __future__ import annotations

import collections

import pytest

from benchmarks import rerankers as rb
from mtrag_graph.nodes.rerank import fused_order, rerank_passages
from research.reranker_fit import split_of

PASSAGES = [
    {"document_id": "a", "title": "", "text": "tomatoes grow in summer"},
    {"document_id": "b", "title": "", "text": "the NFL has thirty two teams"},
    {"document_id": "c", "title": "", "text": "how many teams play in the NFL league"},
]
QUESTION = "how many teams are in the NFL"


def test_orders_are_the_search_the_reranker_alone_and_the_nodes_fusion() -> None:
    seconds: dict[str, list[float]] = collections.defaultdict(list)
    orders = rb.orders_for(QUESTION, PASSAGES, ["none", "lexical"], seconds)
    assert orders["none"] == ["a", "b", "c"]
    alone = [
        p["document_id"]
        for p in rerank_passages(QUESTION, PASSAGES, reranker="lexical", embedder="", top_k=3)
    ]
    assert orders["lexical alone"] == alone and alone[0] == "c"
    node = rerank_passages(
        QUESTION, PASSAGES, reranker="lexical", embedder="", top_k=3, retrieval_weight=rb.FUSED_WEIGHT
    )
    assert orders["lexical"] == [p["document_id"] for p in node]
    assert len(seconds["lexical"]) == 1 and "none" not in seconds


def test_fused_order_weights_the_retrievals_order() -> None:
    reranked = [2, 1, 0]
    assert fused_order(reranked, 1.0)[0] in (
        0,
        2,
    )  # an even fusion: either end may lead, ties keep retrieval's
    assert fused_order(reranked, 10.0) == [0, 1, 2]
    assert fused_order(reranked, 0.01) == [2, 1, 0]


def test_metrics_and_interval() -> None:
    perfect = rb.metrics(["b", "c", "a"], {"b": 1, "c": 1})
    assert perfect == {"nDCG@5": pytest.approx(1.0), "R@5": 1.0, "R@10": 1.0}
    missed = rb.metrics(["a"], {"b": 1})
    assert missed["R@10"] == 0.0 and missed["nDCG@5"] == 0.0
    low, high = rb.bootstrap([0.1, 0.2, 0.3, 0.0, 0.2])
    assert low <= 0.16 <= high and low < high


def test_each_reranker_is_set_against_the_default_and_nothing_without_it() -> None:
    values = {"none": [1.0, 0.5, 1.0], "embedding": [0.5, 0.5, 0.5], "listwise": [0.5, 0.5, 0.5]}
    lines = rb.against_default(values, "MRR")
    assert len(lines) == 2
    assert lines[0].startswith("- none against embedding, MRR: +0.333 (95% interval")
    assert lines[1].startswith("- listwise against embedding, MRR: +0.000 (95% interval +0.000 to +0.000)")
    assert rb.against_default({"none": [1.0]}, "MRR") == []


def test_the_split_is_by_conversation_and_about_70_15_15() -> None:
    counts = collections.Counter(split_of(f"conversation-{i}") for i in range(2000))
    assert set(counts) == {"train", "tuning", "report"}
    assert 0.65 < counts["train"] / 2000 < 0.75 and 0.11 < counts["report"] / 2000 < 0.19
    assert split_of("x") == split_of("x")
