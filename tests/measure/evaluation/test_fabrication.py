"""The fabrication measure of ``evaluate``: answers holding facts that neither passages nor conversation hold."""

from __future__ import annotations

from mtrag_graph.measure.evaluation.inputs import EvalItem
from mtrag_graph.measure.evaluation.report import summarize
from mtrag_graph.measure.evaluation.runner import fabrication


def item(response: str, history=()) -> EvalItem:
    return EvalItem(
        task_id="t::1", line=1, answerability="UNANSWERABLE", domain=None, history=list(history),
        question="When did the NFL start playing the anthem?",
        passages=["The national anthem is played before NFL games."], target="I don't know.", response=response,
    )  # fmt: skip


def test_an_invented_year_is_a_fabrication_and_a_decline_is_not_an_answer():
    assert fabrication(item("The NFL started playing the anthem in 1921.")) == 1.0
    assert fabrication(item("The anthem is played before NFL games.")) == 0.0
    assert fabrication(item("I don't know the answer based on the provided documents.")) is None


def test_facts_the_conversation_holds_are_not_fabrications():
    said = [("user", "Was it 1921?"), ("agent", "I am not sure.")]
    assert fabrication(item("The NFL started playing the anthem in 1921.", said)) == 0.0


def test_the_rate_is_over_answering_responses():
    rows = [{"scores": {"fabrication": v}, "conditioned": {}} for v in (1.0, 0.0, None, 0.0)]
    assert abs(summarize(rows)["fabrication_rate"] - 1 / 3) < 1e-9
