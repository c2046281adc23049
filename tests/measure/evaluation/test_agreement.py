"""Agreement statistics on tiny hand-computed fixtures."""

from __future__ import annotations

import math

import pytest

from mtrag_graph.measure.evaluation.agreement import (
    accuracy,
    average_ranks,
    cohen_kappa,
    pairwise_agreement,
    spearman,
    top1_agreement,
)

# two tasks x three responses: (metric, human win-rate)
TASK_A = [(0.9, 100.0), (0.2, 50.0), (0.5, 0.0)]
TASK_B = [(0.1, 50.0), (0.3, 50.0), (0.3, 0.0)]


def test_ties_share_their_mean_rank():
    assert average_ranks([5, 6, 7, 8, 7]) == [1, 2, 3.5, 5, 3.5]


def test_spearman_matches_the_hand_computed_value():
    # ranks y = 1, 2, 3.5, 5, 3.5: sum dx*dy = 8, sum dx^2 = 10, sum dy^2 = 9.5
    rho, n = spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])
    assert n == 5
    assert rho == pytest.approx(8 / math.sqrt(95))


def test_spearman_leaves_out_missing_metric_values():
    rho, n = spearman([1, None, 3, 2], [10, 99, 30, 20])
    assert (rho, n) == (pytest.approx(1.0), 3)


def test_spearman_of_a_constant_metric_is_undefined():
    assert spearman([1, 1, 1], [1, 2, 3]) == (None, 3)


def test_pairwise_counts_only_pairs_people_and_the_metric_both_separate():
    # A: (1,2) agree, (1,3) agree, (2,3) disagree; B: (1,2) human tie, (1,3) disagree, (2,3) metric tie
    assert pairwise_agreement([TASK_A, TASK_B]) == (0.5, 4)


def test_pairwise_skips_pairs_with_a_missing_metric_value():
    assert pairwise_agreement([[(None, 1.0), (0.5, 0.0), (0.2, 2.0)]]) == (0.0, 1)


def test_top1_takes_the_first_of_tied_best_and_accepts_any_human_favourite():
    # A: metric best = response 1 = the favourite; B: metric tie between 2 and 3, first is 2, a favourite
    assert top1_agreement([TASK_A, TASK_B]) == (1.0, 2)


def test_top1_misses_when_the_first_tied_best_is_not_a_favourite():
    assert top1_agreement([[(0.3, 0.0), (0.3, 100.0), (0.1, 50.0)]]) == (0.0, 1)


def test_kappa_and_accuracy_match_the_hand_computed_values():
    predicted = [1, 1, 0, 0, 0, 0, 0, 0, 0, 1]
    actual = [1, 0, 0, 0, 0, 0, 0, 0, 1, 1]
    # p_observed = 0.8; p_chance = 0.3 * 0.3 + 0.7 * 0.7 = 0.58
    assert accuracy(predicted, actual) == pytest.approx(0.8)
    assert cohen_kappa(predicted, actual) == pytest.approx((0.8 - 0.58) / (1 - 0.58))


def test_kappa_of_identical_constant_labels_is_one():
    assert cohen_kappa([0, 0, 0], [0, 0, 0]) == 1.0


def test_kappa_rejects_sequences_of_different_length():
    with pytest.raises(ValueError, match="differ in length"):
        cohen_kappa([1, 0], [1])
