from __future__ import annotations

import math

import pytest
from langchain_core.messages import HumanMessage

from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.models.logprobs import choice_probabilities, score_choice


def entry(token, logprob, top):
    return {
        "token": token,
        "logprob": logprob,
        "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top],
    }


def test_choice_probabilities_pool_spellings_and_renormalise():
    logprobs = {"content": [entry("Yes", math.log(0.6), [("Yes", math.log(0.6)), ("yes", math.log(0.1)),
                                                          (" No", math.log(0.2)), ("The", math.log(0.1))])]}  # fmt: skip
    probabilities = choice_probabilities(logprobs, ["yes", "no"])
    assert probabilities == {"yes": pytest.approx(0.7 / 0.9), "no": pytest.approx(0.2 / 0.9)}


def test_choice_probabilities_use_the_first_token_that_names_a_choice():
    logprobs = {"content": [entry("{", 0.0, [("{", 0.0)]), entry('"', 0.0, [('"', 0.0)]),
                            entry("no", math.log(0.8), [("no", math.log(0.8)), ("yes", math.log(0.2))])]}  # fmt: skip
    assert choice_probabilities(logprobs, ["yes", "no"])["no"] == pytest.approx(0.8)


def test_choice_probabilities_are_none_without_log_probabilities():
    assert choice_probabilities(None, ["yes", "no"]) is None
    assert choice_probabilities({"content": [entry("Sure", 0.0, [("Sure", 0.0)])]}, ["yes", "no"]) is None


def test_score_choice_on_a_backend_without_log_probabilities_gives_the_parsed_choice_certainty():
    value, probabilities, raws = score_choice(
        ScriptedChatModel(responses=["maybe", "no"]),
        [HumanMessage(content="q")],
        ["yes", "no"],
    )
    assert value == "no" and probabilities == {"yes": 0.0, "no": 1.0} and raws == ["maybe", "no"]
