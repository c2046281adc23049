"""The answer judge's regressions: least squares and the pairwise logistic model recover known orders."""

from __future__ import annotations

import pytest

from mtrag_graph.judging.fit import fit_least_squares, fit_pairwise_logistic, preference_pairs


def test_least_squares_recovers_a_linear_relation():
    rows = [{"a": x, "b": (x * 7) % 5} for x in range(20)]
    target = [2 * r["a"] - r["b"] + 1 for r in rows]
    weights, bias = fit_least_squares(rows, target, ["a", "b"])
    assert weights["a"] == pytest.approx(2, abs=0.02)
    assert weights["b"] == pytest.approx(-1, abs=0.05)
    assert bias == pytest.approx(1, abs=0.2)


def test_pairs_skip_human_ties_and_come_both_ways_round():
    group = [({"a": 1.0}, 100.0), ({"a": 0.0}, 50.0), ({"a": 0.5}, 50.0)]
    x, y = preference_pairs([group], ["a"])
    assert x.tolist() == [[1.0], [-1.0], [0.5], [-0.5]]
    assert y.tolist() == [1.0, 0.0, 1.0, 0.0]


def test_pairwise_logistic_weights_the_feature_people_follow():
    groups = [
        [({"good": 1.0, "noise": n % 2}, 100.0), ({"good": 0.0, "noise": (n + 1) % 2}, 0.0)]
        for n in range(30)
    ]
    weights = fit_pairwise_logistic(groups, ["good", "noise"])
    assert weights["good"] > 1.0 and abs(weights["noise"]) < 0.5


def test_pairwise_logistic_needs_pairs():
    with pytest.raises(ValueError, match="no pairs"):
        fit_pairwise_logistic([[({"a": 1.0}, 50.0), ({"a": 0.0}, 50.0)]], ["a"])
