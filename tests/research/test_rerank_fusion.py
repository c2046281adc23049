"""research/rerank_fusion.py: the three orders it compares, and how an order is scored."""

from __future__ import annotations

import pytest

from research import rerank_fusion


def test_an_order_scores_one_when_perfect_and_less_for_a_late_hit():
    scores = rerank_fusion.order_scores(
        {"perfect": ["a", "b", "x"], "late": ["x", "y", "a"], "early": ["a", "y", "x"],
         "missed": ["x", "y", "z", "w", "v", "a"]},
        {"a": 1, "b": 1},
    )  # fmt: skip
    recall, ndcg = scores["perfect"]
    assert recall == pytest.approx(1.0) and ndcg == pytest.approx(1.0)
    assert 0 < scores["late"][1] < scores["early"][1]
    assert scores["missed"] == (0, 0)


def test_the_three_orders_hold_the_same_candidates(monkeypatch):
    monkeypatch.setenv("MTRAG_EMBEDDER", "hashing:64")  # no model: the orders, not their quality
    passages = [
        {"document_id": str(i), "text": t} for i, t in enumerate(["bees hive", "dance", "bees dance"])
    ]
    orders = rerank_fusion.three_orders("Why do bees dance?", passages)
    assert [p["document_id"] for p in orders["search"]] == ["0", "1", "2"]
    assert all(sorted(p["document_id"] for p in order) == ["0", "1", "2"] for order in orders.values())
