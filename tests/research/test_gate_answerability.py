"""research/gate_answerability.py: the cross-encoder features and the labelled training pairs."""

from __future__ import annotations

import pytest

from research.gate_answerability import ce_features, compare_either, fold_of, training_pairs


def test_an_items_passage_scores_become_the_best_the_mean_and_the_best_two():
    assert ce_features([0.5, 2.0, -1.0], "x") == pytest.approx({"x_max": 2.0, "x_mean": 0.5, "x_top2": 1.25})
    assert ce_features([3.0], "x") == {"x_max": 3.0, "x_mean": 3.0, "x_top2": 3.0}


def test_reference_passages_are_positive_and_every_other_passage_negative():
    items = [
        {"item_id": "positive:a", "kind": "positive", "question": "Q1",
         "passages": [{"title": "T", "text": "holds it"}]},
        {"item_id": "unanswerable_retrieved:b", "kind": "unanswerable_retrieved", "question": "Q2",
         "passages": [{"title": "", "text": "near it"}]},
        {"item_id": "other_conversation:c", "kind": "other_conversation", "question": "Q3",
         "passages": [{"title": "U", "text": "elsewhere"}]},
    ]  # fmt: skip
    hard = {"positive:a": [{"title": "V", "text": "same topic"}]}
    assert training_pairs(items, hard) == [
        ("Q1", "T\nholds it", 1.0),
        ("Q1", "V\nsame topic", 0.0),
        ("Q2", "near it", 0.0),
        ("Q3", "U\nelsewhere", 0.0),
    ]


def test_a_conversation_keeps_its_fold():
    folds = {fold_of(f"conversation-{n}") for n in range(20)}
    assert folds == {0, 1} and fold_of("x") == fold_of("x")


def test_either_rule_declines_what_each_feature_set_alone_would():
    rows = []
    for n in range(200):  # "a" tells the moved answers apart, "b" the unanswerable ones
        kind = ("positive", "positive", "unanswerable_retrieved", "other_conversation")[n % 4]
        a = 0.0 if kind == "other_conversation" else 1.0
        b = 0.0 if kind == "unanswerable_retrieved" else 1.0
        rows.append({"conversation_id": f"c{n}", "kind": kind, "label": kind == "positive",
                     "features": {"a": a + (n % 7) * 0.01, "b": b + (n % 5) * 0.01}})  # fmt: skip
    _, cells = compare_either(rows, ("a",), ("b",), loss=0.02)
    assert cells == ["0/100", "50/50", "50/50"]
