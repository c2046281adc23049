"""Conditioning, RB_alg and HM3 edge cases."""

from __future__ import annotations

import pytest

from mtrag_graph.measure.evaluation.metrics import condition, harmonic_mean3, hm3, mean, rb_alg, rouge_l


def test_underspecified_scores_1_when_the_response_asks_for_clarification():
    assert condition(0.2, "UNDERSPECIFIED", idk=0, clarify=1) == 1.0


def test_underspecified_scores_0_when_it_answers():
    assert condition(0.9, "UNDERSPECIFIED", idk=0, clarify=0) == 0.0


@pytest.mark.parametrize("answerability", ["UNANSWERABLE", "CONVERSATIONAL"])
def test_idk_classes_score_1_only_for_a_full_idk(answerability):
    assert [condition(0.4, answerability, idk) for idk in (1, 0.5, 0)] == [1.0, 0.0, 0.0]


@pytest.mark.parametrize("answerability", ["ANSWERABLE", "PARTIAL"])
def test_answerable_classes_keep_the_raw_value_unless_idk(answerability):
    assert [condition(0.4, answerability, idk) for idk in (1, 0.5, 0)] == [0.0, 0.4, 0.4]


def test_missing_idk_verdict_leaves_the_value_unconditioned():
    assert condition(0.4, "ANSWERABLE", None) is None


def test_rb_alg_is_zero_without_passages():
    assert rb_alg(0.8, 0.5, None) == 0.0


def test_rb_alg_maps_bert_values_to_the_unit_interval():
    assert rb_alg(1.0, 1.0, 1.0) == 1.0
    assert rb_alg(0.0, 0.5, 0.0) == pytest.approx(0.5)


def test_harmonic_mean_of_any_zero_is_zero():
    assert harmonic_mean3(0.0, 1.0, 1.0) == 0.0


def test_hm3_needs_all_three_parts():
    assert hm3(0.5, None, 0.5) is None
    assert hm3(0.5, 0.5, 0.5) == pytest.approx(0.5)


def test_mean_skips_missing_values():
    assert mean([1.0, None, 0.0]) == 0.5
    assert mean([None]) is None


def test_rouge_l_of_identical_texts_is_one():
    assert rouge_l("the cat sat", "the cat sat") == 1.0
