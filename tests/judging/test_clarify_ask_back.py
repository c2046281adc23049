"""The model's ask-back judgement for turns without passages: parsing its yes/no log-probabilities,
routing the decision, its file, and the safe default when the reply says neither yes nor no."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.judging import underspecified
from mtrag_graph.judging.clarify_ask_back import (
    MAX_LOG_ODDS,
    AskBackModel,
    ask_back_judgement,
    ask_back_log_odds,
    load_ask_back,
    parse_ask_back,
    yes_no_mass,
)
from mtrag_graph.judging.underspecified import is_underspecified
from mtrag_graph.models import get_chat_model
from mtrag_graph.models.fake import FirstTokenModel, ScriptedChatModel
from mtrag_graph.testing import fake_context, make_task

HISTORY = [
    {"speaker": "user", "text": "What is the capital of Peru?"},
    {"speaker": "agent", "text": "Lima."},
]
PASSAGES = [{"document_id": "d1", "title": "Lima", "text": "Lima is the capital of Peru."}]


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
    odds, evidence = ask_back_judgement(model, HISTORY, "How tall is it?", fake_context())
    assert odds == pytest.approx(math.log(9))
    assert "no 0.900" in evidence
    prompt = str(model.calls[0]["messages"][-1].content)
    assert "Lima." in prompt and "How tall is it?" in prompt
    assert model.calls[0]["options"]["max_tokens"] == 1


def test_the_instruction_is_a_setting_and_its_reply_that_means_ask_back_may_be_yes():
    model = FirstTokenModel(responses=["no"], first_tokens=[("No", 0.9), ("Yes", 0.1)])
    context = fake_context(clarify_ask_back_instruction="Q: {question} C: {conversation} Must we ask?")
    odds, _ = ask_back_judgement(model, [], "How tall is it?", context, ask_reply="yes")
    assert odds == pytest.approx(-math.log(9))
    assert "Must we ask?" in str(model.calls[0]["messages"][-1].content)


def test_a_model_without_log_probabilities_gives_no_judgement():
    odds, evidence = ask_back_judgement(ScriptedChatModel(responses=["no"]), [], "Q?", fake_context())
    assert odds is None and "log-probabilities" in evidence


def test_a_reply_other_than_yes_or_no_cannot_mean_ask_back():
    with pytest.raises(ValueError, match="ask_reply"):
        ask_back_judgement(FirstTokenModel(responses=["no"]), [], "Q?", fake_context(), ask_reply="maybe")


DECISION = AskBackModel(
    model="scripted",
    variant="which",
    classifier="default",
    coef=(1.0, 0.0),
    intercept=0.0,
    threshold=0.5,
    card={},
)


@pytest.fixture
def decision(monkeypatch):
    monkeypatch.setattr(underspecified, "load_ask_back", lambda spec: DECISION)
    return DECISION


@pytest.fixture
def classifier_half(monkeypatch):
    """The classifier's no-passage probability fixed at 0.5 (log-odds 0): no embedding."""
    monkeypatch.setattr(underspecified, "classifier_row", lambda *a: None)
    monkeypatch.setattr(
        underspecified,
        "load_clarify_classifier",
        lambda spec: type("C", (), {"probability": lambda self, r, p: 0.5})(),
    )


def test_without_passages_the_ask_back_decides(decision, classifier_half):
    asking = FirstTokenModel(responses=["no"], first_tokens=[("No", 0.8), ("Yes", 0.2)])
    context = fake_context(clarify_ask_back="default", clarify_model=asking)
    decided, evidence = is_underspecified(HISTORY, "What does the museum hold?", None, context)
    assert decided is True and evidence[-1].startswith("ask-back: p=0.800")
    clear = FirstTokenModel(responses=["yes"], first_tokens=[("Yes", 0.9), ("No", 0.1)])
    context = fake_context(clarify_ask_back="default", clarify_model=clear)
    assert is_underspecified(HISTORY, "What does the museum hold?", None, context)[0] is False


def test_with_passages_the_ask_back_is_not_asked(decision):
    model = FirstTokenModel(responses=["no"], first_tokens=[("No", 0.99), ("Yes", 0.01)])
    context = fake_context(clarify_ask_back="default", clarify_model=model)
    decided, _ = is_underspecified(HISTORY, "How tall is it?", PASSAGES, context)
    assert decided is False and model.calls == []


def test_off_by_default_a_turn_without_passages_costs_no_model_call():
    model = FirstTokenModel(responses=["no"], first_tokens=[("No", 0.99), ("Yes", 0.01)])
    decided, _ = is_underspecified(HISTORY, "How tall is it?", None, fake_context(clarify_model=model))
    assert decided is False and model.calls == []


def test_a_reply_that_says_neither_yes_nor_no_gives_no_decision(decision):
    model = FirstTokenModel(responses=["The"], first_tokens=[("The", 0.9), ("No", 0.05)])
    context = fake_context(clarify_ask_back="default", clarify_model=model)
    decided, evidence = is_underspecified(HISTORY, "How tall is it?", None, context)
    assert decided is None and "unparsed" in evidence[-1]


def test_the_clarify_node_answers_when_the_ask_back_gives_no_decision(decision):
    model = FirstTokenModel(responses=["The"], first_tokens=[("The", 0.9), ("No", 0.05)])
    task = make_task([HISTORY[0]["text"], HISTORY[1]["text"], "How tall is it?"], contexts=[])
    context = fake_context(clarify=True, clarify_ask_back="default", clarify_model=model)
    state = build_graph(output="state").invoke({"task": task}, context=context)
    assert state["clarification"] == {"asked": False}
    assert {"node": "clarify", "used": "clear", "raw": "ask-back: unparsed reply 'The'"} in state["fallbacks"]


@pytest.mark.parametrize(
    ("change", "message"),
    [({"coef": [1.0]}, "two coefficients"), ({"coef": [1.0, "x"]}, "could not convert")],
)
def test_a_malformed_decision_file_is_refused(change, message):
    data = {"model": "m", "variant": "which", "coef": [1.0, 1.0], "intercept": 0.0, "threshold": 0.5}
    with pytest.raises(ValueError, match=message):
        parse_ask_back(json.dumps({**data, **change}))


def test_the_shipped_decision_file_loads_with_its_card():
    shipped = load_ask_back("default")
    assert shipped.card["items"] > 0 and 0 < shipped.threshold < 1
    assert shipped.classifier == "default"


@pytest.mark.slow
def test_the_real_path_decides_a_turn_without_passages_with_the_bundled_model():
    context = Context(clarify_ask_back="default")
    decided, evidence = is_underspecified([], "How tall is it?", None, context)
    assert decided is not None and evidence[-1].startswith("ask-back: p=")
    model = get_chat_model(context.clarify_model)
    vague, _ = ask_back_judgement(model, [], "How tall is it?", context)
    named, _ = ask_back_judgement(model, [], "How tall is the Eiffel Tower in Paris?", context)
    assert vague is not None and named is not None and vague > named
