"""The real path: BERTScore with the bundled MiniLM, and the bundled local judge on one tiny case."""

from __future__ import annotations

import pytest

from mtrag_graph.measure.evaluation.bertscore import BertScorer
from mtrag_graph.measure.evaluation.judges import Judge

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scorer():
    return BertScorer()


def test_identical_strings_score_about_one(scorer):
    precision, recall = scorer.precision_recall("The cat sat on the mat.", "The cat sat on the mat.")
    assert precision == pytest.approx(1.0, abs=1e-4) and recall == pytest.approx(1.0, abs=1e-4)


def test_related_strings_score_in_a_sane_range_below_identical(scorer):
    precision, recall = scorer.precision_recall("A dog runs in the park.", "The cat sat on the mat.")
    assert 0.0 < precision < 0.95 and 0.0 < recall < 0.95


def test_k_precision_picks_the_best_passage(scorer):
    best = scorer.k_precision(
        "Paris is the capital of France.", ["Bananas are yellow.", "Paris is the capital of France."]
    )
    assert best == pytest.approx(1.0, abs=1e-4)


def test_local_judge_says_an_idk_response_does_not_know():
    judge = Judge("qwen2.5-coder-1.5b")
    verdict = judge.idk("Who won the 2030 World Cup?", "I'm sorry, I don't have that information.")
    assert verdict["verdict"] == "declines" and verdict["value"] == 1.0
