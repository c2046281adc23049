"""The fitted answer judge: loading, scoring, the decline rule, and the shipped model file."""

from __future__ import annotations

import json

import pytest

from mtrag_graph.judging import load_answer_judge
from mtrag_graph.judging.answer_judge import AnswerJudge, LinearModel
from mtrag_graph.judging.support import FEATURES

PASSAGES = ["Paris is the capital of France. It lies on the Seine river."]
QUESTION = "What is the capital of France?"


def _judge(embedder):
    return AnswerJudge(
        faithfulness=LinearModel({"lex_precision": 3.0}, bias=1.0),
        preference=LinearModel({"lex_precision": 2.0, "declines": 1.0}),
        embedder=embedder,
    )


def test_faithfulness_maps_the_human_scale_to_the_unit_interval(embedder):
    supported, unsupported = _judge(embedder).score(
        QUESTION, PASSAGES, ["Paris is the capital of France.", "Bananas grow quickly overseas."]
    )
    assert supported.faithfulness == 1.0 and unsupported.faithfulness == 0.0


def test_a_decline_loses_when_the_gate_said_yes_and_not_otherwise(embedder):
    judge = _judge(embedder)
    scores = judge.score(
        QUESTION, PASSAGES, ["Bananas grow overseas.", "I do not have specific information."]
    )
    assert scores[1].declines
    with_gate = judge.selection_scores(scores, gate_said_yes=True)
    assert with_gate[0] > with_gate[1]
    without_gate = judge.selection_scores(scores, gate_said_yes=False)
    assert without_gate[1] > without_gate[0]


def test_unknown_features_in_a_model_file_are_rejected(tmp_path, embedder):
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"faithfulness": {"weights": {"length": 1}}, "preference": {"weights": {}}}))
    with pytest.raises(ValueError, match="unknown features"):
        load_answer_judge(path, embedder=embedder)


def test_the_shipped_model_loads_and_carries_its_data_card(embedder):
    judge = load_answer_judge(embedder=embedder)
    assert set(judge.preference.weights) <= set(FEATURES)
    assert judge.card["split"].startswith("tune") and judge.card["command"].startswith("python -m")
    scores = judge.score(QUESTION, PASSAGES, ["Paris is the capital of France.", "Bananas grow overseas."])
    assert scores[0].faithfulness > scores[1].faithfulness
