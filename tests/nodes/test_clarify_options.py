"""The clarifying question as a person would ask it: the user's own noun, and only options about what the
user asked (a scripted embedder stands for MiniLM: texts of one topic are close, of two far apart)."""

from __future__ import annotations

import numpy as np
import pytest

from mtrag_graph.graph import build_graph
from mtrag_graph.judging.underspecified import is_underspecified, rival_kinds
from mtrag_graph.models import embeddings
from mtrag_graph.nodes.clarify import clarifying_question
from mtrag_graph.testing import fake_context, make_task

GRAPH = build_graph(output="state")
TOPICS = {
    "crypto": {"session", "diffie", "hellman", "secret", "encryption", "tls"},
    "music": {"anthem", "song", "sung", "melody"},
    "health": {"va", "care", "services", "health"},
    "sport": {"arena", "square", "hockey", "mayo"},
}
SCRIPTED = "topics:clarify"


def _encode(texts: list[str]) -> np.ndarray:
    rows = []
    for text in texts:
        said = set(text.lower().replace("-", " ").replace("?", " ").replace(".", " ").split())
        rows.append([0.1, *(len(said & words) for words in TOPICS.values())])
    return np.asarray(rows, dtype=np.float32)


@pytest.fixture(autouse=True)
def topic_embedder(monkeypatch):
    """``Context.embedder=SCRIPTED`` embeds by topic words (``get_embedder`` serves it from its cache)."""
    monkeypatch.setitem(embeddings._EMBEDDERS, SCRIPTED, embeddings.Embedder(SCRIPTED, _encode))


def context(**overrides):
    return fake_context(clarify=True, embedder=SCRIPTED, **overrides)


SITCOM = "Who played the father in this TV sitcom on ABC?"


def test_a_referent_is_asked_for_by_the_users_own_noun_not_the_word_after_this():
    state = GRAPH.invoke({"task": make_task([SITCOM], [])}, context=context())
    assert state["clarification"]["asked"] is True
    assert state["answer"] == "Which sitcom do you mean?"  # was "Which tv do you mean?"


def test_the_users_noun_keeps_its_spelling_and_loses_its_modifiers():
    turns = ["Which funds are cheap?", "Index funds are.", "How does the liquidity of this particular index fund "
             "compare to that of ETFs?"]  # fmt: skip
    state = {"history": make_task(turns)["input"][:-1], "question": turns[-1], "passages": None}
    assert clarifying_question(state, context()) == "Which fund do you mean?"  # was "Which particular ..."


TLS = [
    "How does TLS keep a connection private?",
    "TLS agrees on a session key with a Diffie-Hellman key exchange; the secret key itself never travels.",
]
KEY = "Could you shed light on the key aspects of the power wielded by the Prime Minister?"


def test_kinds_of_a_word_the_user_uses_as_a_modifier_are_no_readings():
    history = make_task([*TLS, KEY])["input"][:-1]
    assert rival_kinds(history, "Is the key sent in the clear?") == (
        "key",
        ["session", "Diffie-Hellman", "secret"],
    )
    assert rival_kinds(history, KEY) is None  # "key aspects": key as in main
    state = GRAPH.invoke({"task": make_task([*TLS, KEY], [])}, context=context())
    assert state["clarification"] == {"asked": False}
    assert "Diffie-Hellman" not in state["answer"]


ANTHEM = "What is the key of the national anthem song?"


def test_kinds_about_something_else_do_not_make_the_turn_underspecified():
    history = make_task([*TLS, ANTHEM])["input"][:-1]
    assert rival_kinds(history, ANTHEM) is not None  # "the key of": a noun, and kinds of key were named
    decided, evidence = is_underspecified(history, ANTHEM, None, context())
    assert decided is False
    asked = is_underspecified(history, "Is the key sent in the clear over TLS?", None, context())
    assert asked[0] is True and asked[1][0].endswith("3 kinds of it, 3 about the question")


def test_a_question_with_no_sensible_kind_left_is_asked_plainly_in_the_users_word():
    state = {"history": make_task([*TLS, ANTHEM])["input"][:-1], "question": ANTHEM, "passages": None}
    assert clarifying_question(state, context()) == "Which key do you mean?"


CLINICS = [
    {"document_id": "a", "title": "Hibbing VA Clinic", "text": "Hibbing VA Clinic offers health care."},
    {"document_id": "b", "title": "Hayward VA Clinic", "text": "Hayward VA Clinic offers health care."},
    {"document_id": "c", "title": "Mayo Clinic Square", "text": "Mayo Clinic Square is a hockey arena."},
]


def test_names_in_the_passages_about_something_else_are_not_offered():
    turns = ["When are night courts held?", "On Wednesdays.", "What services does the clinic provide?"]
    task = make_task(turns)
    task["contexts"] = CLINICS
    state = GRAPH.invoke({"task": task}, context=context(clarify_model=None))
    assert state["answer"] == "Which clinic do you mean: Hibbing VA Clinic or Hayward VA Clinic?"


def test_with_one_sensible_name_left_the_question_asks_plainly():
    state = {"history": [], "question": "What services does the clinic provide?", "passages": CLINICS[1:]}
    assert clarifying_question(state, context()) == "Which clinic do you mean?"
