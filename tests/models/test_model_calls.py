"""Strict parsing of model replies, bounded retries, and the transient-error classification."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from mtrag_graph.models.calls import (
    TRANSIENT_ERRORS,
    CallLog,
    TransientModelError,
    ask_choice,
    ask_json,
    invoke_text,
    parse_choice,
    parse_json_object,
)
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.models.llama import choice_grammar

ASK = [HumanMessage(content="Is it?")]


class Pair(BaseModel):
    a: int
    b: str


@pytest.mark.parametrize(
    ("reply", "value"),
    [("yes", "yes"), ("No.", "no"), ("  YES  ", "yes"), ('{"answer": "no"}', "no"), ("Yes, it is.", "yes"),
     ("maybe", None), ("", None), ('{"answer": 3}', None), ("{broken", None), ("nope", None)],
)  # fmt: skip
def test_parse_choice(reply, value):
    assert parse_choice(reply, ["yes", "no"]) == value


def test_parse_json_object_takes_the_object_out_of_surrounding_text():
    assert parse_json_object('Here: {"a": 1, "b": "x"} done', Pair) == Pair(a=1, b="x")


@pytest.mark.parametrize("reply", ["no json", '{"a": 1', '{"a": "one", "b": "x"}', '{"b": "x"}'])
def test_parse_json_object_rejects_invalid_replies(reply):
    with pytest.raises(ValueError):
        parse_json_object(reply, Pair)


def test_ask_choice_retries_with_a_correction_then_succeeds():
    model = ScriptedChatModel(responses=["hmm", "yes"])
    value, raws = ask_choice(model, ASK, ["yes", "no"], CallLog(node="t"), retries=2)
    assert value == "yes" and raws == ["hmm", "yes"]
    assert "exactly one word" in str(model.calls[1]["messages"][-1].content)


def test_ask_choice_gives_up_after_the_bounded_retries():
    model = ScriptedChatModel(responses=["hmm"])
    value, raws = ask_choice(model, ASK, ["yes", "no"], CallLog(node="t"), retries=1)
    assert value is None and len(model.calls) == 2


def test_ask_json_returns_none_after_invalid_replies():
    model = ScriptedChatModel(responses=["{", "[]", "{}"])
    value, raws = ask_json(model, ASK, Pair, CallLog(node="t"), retries=2)
    assert value is None and len(raws) == 3


def test_transient_errors_are_retried_and_logged():
    model = ScriptedChatModel(responses=[TransientModelError("503"), "fine"])
    log = CallLog(node="t")
    reply = invoke_text(model, ASK, log, backoff_seconds=0)
    assert reply.content == "fine"
    assert [("error" in r) for r in log.records] == [True, False]


def test_permanent_errors_are_not_retried():
    model = ScriptedChatModel(responses=[ValueError("bad request"), "fine"])
    with pytest.raises(ValueError):
        invoke_text(model, ASK, CallLog(node="t"), backoff_seconds=0)
    assert len(model.calls) == 1


def test_error_classification():
    assert isinstance(TimeoutError(), TRANSIENT_ERRORS) and isinstance(
        ConnectionRefusedError(), TRANSIENT_ERRORS
    )
    assert not isinstance(ValueError("context length exceeded"), TRANSIENT_ERRORS)


def test_choice_grammar_escapes_quotes():
    assert choice_grammar(["yes", 'a"b']) == 'root ::= "yes" | "a\\"b"\n'
