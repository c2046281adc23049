"""The model's ask-back judgement for turns without passages, tried and not kept
(research/clarify_ask_back.py): parsing its yes/no log-probabilities, its prompt, its decision file."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from mtrag_graph.context import Context
from mtrag_graph.models import get_chat_model
from mtrag_graph.models.fake import FirstTokenModel, ScriptedChatModel
from research.clarify_ask_back import (
    MAX_LOG_ODDS,
    ask_back_judgement,
    ask_back_log_odds,
    load_ask_back,
    parse_ask_back,
    yes_no_mass,
)

HISTORY = [
    {"speaker": "user", "text": "What is the capital of Peru?"},
    {"speaker": "agent", "text": "Lima."},
]


def _top(*pairs: tuple[str, float]) -> dict[str, Any]:
    top = [{"token": t, "logprob": math.log(p)} for t, p in pairs]
    return {"content": [{**top[0], "top_logprobs": top}]}


def test_yes_and_no_are_pooled_over_spellings():
    mass = yes_no_mass(_top(("No", 0.5), ("Yes", 0.3), ("no", 0.1), (" yes", 0.05)))
    assert mass == pytest.approx({"yes": 0.35, "no": 0.6})


def test_a_first_token_that_is_mostly_neither_yes_nor_no_gives_nothing():
    assert yes_no_mass(_top(("The", 0.7), ("Yes", 0.2))) is None


@pytest.mark.parametrize(
    "logprobs",
    [None, {}, {"content": []}, {"content": "no"}, {"content": [{"token": "yes"}]}, {"content": [["yes"]]}],
)
def test_malformed_log_probabilities_give_nothing(logprobs):
    assert yes_no_mass(logprobs) is None


def test_the_log_odds_follow_the_reply_that_means_ask_back():
    mass = {"yes": 0.2, "no": 0.8}
    assert ask_back_log_odds(mass, "no") == pytest.approx(math.log(4))
    assert ask_back_log_odds(mass, "yes") == pytest.approx(-math.log(4))
    assert ask_back_log_odds({"yes": 0.0, "no": 0.9}, "no") == MAX_LOG_ODDS


def test_the_judgement_reads_the_conversation_and_the_question():
    model = FirstTokenModel(responses=["no"], first_tokens=[("No", 0.9), ("Yes", 0.1)])
    odds, evidence = ask_back_judgement(model, HISTORY, "How tall is it?")
    assert odds == pytest.approx(math.log(9))
    assert "no 0.900" in evidence
    prompt = str(model.calls[0]["messages"][-1].content)
    assert "Lima." in prompt and "How tall is it?" in prompt
    assert model.calls[0]["options"]["max_tokens"] == 1


def test_the_instruction_may_be_another_and_its_reply_that_means_ask_back_may_be_yes():
    model = FirstTokenModel(responses=["no"], first_tokens=[("No", 0.9), ("Yes", 0.1)])
    instruction = "Q: {question} C: {conversation} Must we ask?"
    odds, _ = ask_back_judgement(model, [], "How tall is it?", instruction, ask_reply="yes")
    assert odds == pytest.approx(-math.log(9))
    assert "Must we ask?" in str(model.calls[0]["messages"][-1].content)


def test_a_model_without_log_probabilities_gives_no_judgement():
    odds, evidence = ask_back_judgement(ScriptedChatModel(responses=["no"]), [], "Q?")
    assert odds is None and "log-probabilities" in evidence


def test_a_reply_other_than_yes_or_no_cannot_mean_ask_back():
    with pytest.raises(ValueError, match="ask_reply"):
        ask_back_judgement(FirstTokenModel(responses=["no"]), [], "Q?", ask_reply="maybe")


@pytest.mark.parametrize(
    ("change", "message"),
    [({"coef": [1.0]}, "two coefficients"), ({"coef": [1.0, "x"]}, "could not convert")],
)
def test_a_malformed_decision_file_is_refused(change, message):
    data = {"model": "m", "variant": "which", "coef": [1.0, 1.0], "intercept": 0.0, "threshold": 0.5}
    with pytest.raises(ValueError, match=message):
        parse_ask_back(json.dumps({**data, **change}))


def test_the_kept_decision_file_loads_with_its_card():
    kept = load_ask_back("default")
    assert kept.card["items"] > 0 and 0 < kept.threshold < 1
    assert kept.classifier == "default"


@pytest.mark.slow
def test_the_bundled_model_judges_a_vague_turn_more_in_need_of_asking_back():
    model = get_chat_model(Context().clarify_model)
    vague, _ = ask_back_judgement(model, [], "How tall is it?")
    named, _ = ask_back_judgement(model, [], "How tall is the Eiffel Tower in Paris?")
    assert vague is not None and named is not None and vague > named
