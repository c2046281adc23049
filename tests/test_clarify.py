"""The clarify node, inserted with the Insertion mechanism: batch answers with the question, chat asks."""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from mtrag_graph.graph import build_graph
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.nodes.clarify import CLARIFY
from tests.conftest import fake_context, make_task

LIBRARIES = ["The Alameda library opens at 9 am.", "The Monterey library opens at 10 am."]
QUESTION_ASKED = "Do you mean the Alameda library or the Monterey library?"


def judge(unclear_words: str):
    """A clarify-model fake: the turn is unclear when the user's message contains ``unclear_words``."""

    def respond(messages, options):
        prompt = str(messages[-1].content)
        message = prompt.split("User's new message:")[1].split("\n")[0]
        if "Is it clear" in prompt:
            return "no" if unclear_words in message else "yes"
        return QUESTION_ASKED

    return ScriptedChatModel(responder=respond)


GRAPH = build_graph(insert=[CLARIFY])


def test_an_underspecified_turn_is_answered_with_the_clarifying_question():
    context = fake_context(clarify_model=judge("this library"))
    state = GRAPH.invoke({"task": make_task(["When does this library open?"], LIBRARIES)}, context=context)
    assert state["answer"] == QUESTION_ASKED
    assert state["clarification"] == {"asked": True, "question": QUESTION_ASKED}
    assert context.gate_model.calls == [] and context.generate_model.calls == []


def test_an_underspecified_turn_without_passages_is_asked_about_not_abstained():
    context = fake_context(clarify_model=judge("this library"))
    state = GRAPH.invoke({"task": make_task(["When does this library open?"], [])}, context=context)
    assert state["answer"] == QUESTION_ASKED
    assert state["abstain_reason"] is None


def test_a_clear_turn_goes_on_to_the_usual_answer():
    context = fake_context(
        clarify_model=judge("this library"), generate=["The Alameda library opens at 9 am."]
    )
    task = make_task(["When does the Alameda library open?"], LIBRARIES)
    state = GRAPH.invoke({"task": task}, context=context)
    assert state["clarification"] == {"asked": False}
    assert state["answer"] == "The Alameda library opens at 9 am."


def test_a_clear_turn_without_passages_still_abstains():
    context = fake_context(clarify_model=judge("this library"))
    state = GRAPH.invoke({"task": make_task(["When does the Alameda library open?"], [])}, context=context)
    assert state["abstain_reason"] == "no_evidence"


def test_an_unparseable_judgement_answers_and_is_recorded():
    context = fake_context(clarify_model=ScriptedChatModel(responses=["maybe"]))
    state = GRAPH.invoke({"task": make_task(["When does this library open?"], LIBRARIES)}, context=context)
    assert state["clarification"] == {"asked": False}
    assert state["fallbacks"][0]["node"] == "clarify"


def test_in_chat_mode_the_reply_resumes_the_graph_with_the_disambiguated_question():
    graph = build_graph(insert=[CLARIFY], checkpointer=InMemorySaver())
    context = fake_context(clarify_model=judge("this library"), clarify_interrupt=True)
    config = {"configurable": {"thread_id": "c1"}}
    paused = graph.invoke(
        {"task": make_task(["When does this library open?"], LIBRARIES)}, config, context=context
    )
    assert paused["__interrupt__"][0].value == {"clarifying_question": QUESTION_ASKED}
    assert context.generate_model.calls == []
    state = graph.invoke(Command(resume="the Alameda one"), config, context=context)
    assert state["question"] == "When does this library open? (the Alameda one)"
    assert state["clarification"]["reply"] == "the Alameda one"
    assert state["answer"] == "The answer is stated in the passage."
