"""research/rerank_fusion.py: the three orders it compares, and its nDCG@5."""

from __future__ import annotations

import pytest

from research import rerank_fusion


def test_ndcg_at_5_is_one_for_a_perfect_order_and_less_for_a_late_hit():
    assert rerank_fusion._ndcg5(["a", "b", "x"], {"a", "b"}) == pytest.approx(1.0)
    assert 0 < rerank_fusion._ndcg5(["x", "y", "a"], {"a"}) < rerank_fusion._ndcg5(["a", "y", "x"], {"a"})
    assert rerank_fusion._ndcg5(["x", "y", "z", "w", "v", "a"], {"a"}) == 0


def test_the_three_orders_hold_the_same_candidates(monkeypatch):
    monkeypatch.setenv("MTRAG_EMBEDDER", "hashing:64")  # no model: the orders, not their quality
    passages = [
        {"document_id": str(i), "text": t} for i, t in enumerate(["bees hive", "dance", "bees dance"])
    ]
    orders = rerank_fusion.three_orders("Why do bees dance?", passages)
    assert [p["document_id"] for p in orders["search"]] == ["0", "1", "2"]
    assert all(sorted(p["document_id"] for p in order) == ["0", "1", "2"] for order in orders.values())
