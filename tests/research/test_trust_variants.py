"""research/trust_variants.py: the clarify variant rebuilt from a run's own passages, model-free."""

from __future__ import annotations

from mtrag_graph.judging import underspecified
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.testing import fake_context, make_task
from research.trust_variants import reclarified

QUESTION = "Which library do you mean: Alameda Free Library or Monterey Public Library?"


def _record(question: str, titles: list[str]) -> dict:
    task = make_task(
        [question], ["The Alameda library opens at 9 am.", "The Monterey library opens at 10 am."]
    )
    for passage, title in zip(task["contexts"], titles, strict=True):
        passage["title"] = title
    route = {"abstained": False, "abstain_reason": None}
    return {
        **task,
        "answerability": ["UNDERSPECIFIED"],
        "predictions": [{"text": "It opens at 9 am."}],
        "route": route,
    }


def _no_model() -> ScriptedChatModel:
    return ScriptedChatModel(responses=[])  # any call fails the test


def test_a_turn_the_node_would_ask_about_gets_its_question():
    record = _record("When does this library open?", ["Alameda Free Library", "Monterey Public Library"])
    out = reclarified(record, fake_context(clarify_model=_no_model()))
    assert out["predictions"] == [{"text": QUESTION}]
    assert out["route"]["clarification"]["asked"] is True
    assert out["route"]["clarification"]["evidence"].startswith("orphan: 'this library'")


def test_a_clear_turn_keeps_the_runs_answer():
    record = _record(
        "When does the Alameda library open?", ["Alameda Free Library", "Monterey Public Library"]
    )
    assert reclarified(record, fake_context(clarify_model=_no_model())) == record


def test_one_thing_in_the_passages_asks_what_the_reference_is_without_the_model(monkeypatch):
    # no two alternatives to name: the question asks which library, and no model writes it (one thing
    # is asked about only when the decision's minimum is lowered to one)
    monkeypatch.setattr(underspecified, "MIN_THINGS", 1)
    record = _record("When does this library open?", ["Alameda Free Library", "Alameda Free Library"])
    context = fake_context(clarify_model=_no_model())
    assert reclarified(record, context)["predictions"] == [{"text": "Which library do you mean?"}]
