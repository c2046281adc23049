from __future__ import annotations

from pathlib import Path

import pytest

from mtrag_graph.retrieval.registry import load_index
from mtrag_graph.retrieval.search import clean_query, merge_best, multi_query_search, rrf_fuse, search


def test_rrf_adds_weighted_reciprocal_ranks():
    fused = dict(rrf_fuse([["a", "b"], ["b", "c"]], [1.0, 2.0], k=60))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 2 / 61)
    assert fused["c"] == pytest.approx(2 / 62)


def test_rrf_orders_best_first():
    assert [d for d, _ in rrf_fuse([["a", "b"], ["b", "c"]], [1.0, 1.0], k=60)] == ["b", "a", "c"]


def test_rrf_with_zero_weight_ignores_that_ranking():
    assert [d for d, _ in rrf_fuse([["a", "b"], ["b", "a"]], [0.0, 1.0], k=1)][:2] == ["b", "a"]


def test_rrf_rejects_a_missing_weight():
    with pytest.raises(ValueError):
        rrf_fuse([["a"], ["b"]], [1.0])


def test_merge_keeps_the_best_score_of_a_passage_found_twice():
    merged = merge_best([[("a", 0.2), ("b", 0.9)], [("a", 0.5), ("c", 0.1)]])
    assert merged == [("b", 0.9), ("a", 0.5), ("c", 0.1)]


def test_clean_query_drops_speaker_tags():
    assert (
        clean_query("|user|: does IBM offer\n|user|: document databases?")
        == "does IBM offer document databases?"
    )


def test_bm25_finds_the_passage_sharing_terms(tiny_index: Path):
    hits = search(load_index(tiny_index), "mortgage loan", mode="bm25", top_k=3)
    assert load_index(tiny_index).ids[hits[0][0]] == "p-mortgage"


def test_bm25_ranks_nothing_for_unknown_words(tiny_index: Path):
    assert search(load_index(tiny_index), "zzzqx", mode="bm25") == []


def test_dense_ranks_every_passage_up_to_top_k(tiny_index: Path):
    assert len(search(load_index(tiny_index), "json database", mode="dense", top_k=3)) == 3


def test_hybrid_puts_the_passage_both_rankings_like_first(tiny_index: Path):
    index = load_index(tiny_index)
    hits = search(index, "Cloudant JSON document database", top_k=3)
    assert index.ids[hits[0][0]] == "p-cloudant"


def test_dual_query_returns_what_either_query_finds(tiny_index: Path):
    index = load_index(tiny_index)
    hits = multi_query_search(index, ["mortgage loan", "passport post office"], top_k=10, mode="bm25")
    found = [index.ids[i] for i, _ in hits]
    assert {"p-mortgage", "p-passport"} <= set(found)


def test_dual_query_ignores_a_missing_rewrite(tiny_index: Path):
    index = load_index(tiny_index)
    one = multi_query_search(index, ["mortgage loan", None], top_k=5)
    assert one == search(index, "mortgage loan", top_k=5)
