"""Claim-level support features and consensus."""

from __future__ import annotations

import math

import pytest

from mtrag_graph.judging.support import FEATURES, answer_features, consensus, lexical_features

PASSAGES = ["Paris is the capital of France. It lies on the Seine river."]


def test_an_answer_copied_from_the_passage_is_fully_supported():
    features = lexical_features("Paris is the capital of France.", PASSAGES)
    assert features == {
        "lex_precision": 1.0,
        "lex_claim_min": 1.0,
        "bigram_precision": 1.0,
        "unsupported_words": 0.0,
    }


def test_one_unsupported_claim_lowers_the_minimum_more_than_the_mean():
    features = lexical_features("Paris is the capital of France. Bananas grow quickly overseas.", PASSAGES)
    assert features["lex_claim_min"] == 0.0
    assert 0.3 < features["lex_precision"] < 0.7


def test_unsupported_words_count_distinct_words_in_neither_passages_nor_question():
    features = lexical_features(
        "Paris has bananas and mangoes, bananas mostly.", PASSAGES, "Does Paris have mangoes?"
    )
    assert features["unsupported_words"] == pytest.approx(-math.log1p(2))  # banana, most


def test_stems_match_inflected_words():
    assert lexical_features("The capitals of France.", PASSAGES)["lex_precision"] == 1.0


def test_no_passages_means_no_support():
    assert lexical_features("Paris is the capital.", [])["lex_precision"] == 0.0


def test_consensus_is_highest_for_the_answer_the_others_agree_with():
    answers = ["Paris is the capital of France.", "The capital of France is Paris.", "Bananas are yellow."]
    scores = consensus(answers)
    assert scores[0] == pytest.approx(scores[1]) and scores[2] == 0.0
    assert consensus(["alone"]) == [0.0]


def test_answer_features_has_every_feature_and_flags_a_decline(embedder):
    rows = answer_features(
        "What is the capital of France?",
        PASSAGES,
        ["Paris is the capital of France.", "I do not have specific information."],
        embedder,
    )
    assert [set(r) for r in rows] == [set(FEATURES)] * 2
    assert rows[0]["sem_claim_mean"] == pytest.approx(1.0, abs=1e-5)
    assert rows[0]["sem_claim_mean"] > rows[1]["sem_claim_mean"]
    assert (rows[0]["declines"], rows[1]["declines"]) == (0.0, 1.0)
