"""Bookkeeping in one place: the node wrapper's CallLog records every model call; one summary feeds the route."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from mtrag_graph.graph import build_graph
from mtrag_graph.models.calls import CallLog, TransientModelError, invoke_text, recording, timed_model_call
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.runtime.bookkeeping import cost_summary, route_of
from mtrag_graph.testing import fake_context, make_task

PASSAGES = [
    "Bees use the waggle dance to show the direction of flowers.",
    "The round dance means food is close.",
]
GRAPH = build_graph(output="state")


def test_every_model_call_of_a_run_is_recorded_against_its_node():
    context = fake_context()
    state = GRAPH.invoke(
        {"task": make_task(["How do bees talk?", "They dance.", "Why?"], PASSAGES)}, context=context
    )
    by_node: dict[str, int] = {}
    for call in state["model_calls"]:
        by_node[call["node"]] = by_node.get(call["node"], 0) + 1
    chat_calls = sum(len(m.calls) for m in (context.rewrite_model, context.classify_model, context.gate_model,
                                            context.generate_model))  # fmt: skip
    assert sum(by_node.values()) == chat_calls + 1  # every chat call, plus the reranker
    # one relation judgement: a "yes" on the question settles it when no older exchange is there
    assert by_node["classify_relation"] == 1 and by_node["answerability_gate"] == 1 and by_node["rerank"] == 1
    gate = next(c for c in state["model_calls"] if c["node"] == "answerability_gate")
    assert gate["model"] == "scripted" and gate["prompt_tokens"] > 0 and gate["seconds"] >= 0
    assert {e["node"] for e in state["node_seconds"]} >= {"load_task", "rerank", "accept_answer"}


def test_a_failed_attempt_is_recorded_with_its_error_and_the_retry_after_it():
    log = CallLog(node="t")
    model = ScriptedChatModel(responses=[TransientModelError("503"), "fine"])
    with recording(log):
        invoke_text(model, [HumanMessage(content="Is it?")], backoff_seconds=0)
    assert [(r["attempt"], "error" in r) for r in log.records] == [(1, True), (2, False)]


def test_calls_outside_a_recording_are_not_recorded_anywhere():
    log = CallLog(node="t")
    with recording(log):
        pass
    invoke_text(ScriptedChatModel(responses=["x"]), [HumanMessage(content="Is it?")])
    assert log.records == []


def test_a_non_chat_model_call_is_recorded_with_its_name():
    log = CallLog(node="rerank")
    with recording(log):
        assert timed_model_call("lexical", lambda: [1.0, 0.5]) == [1.0, 0.5]
    assert [(r["node"], r["model"]) for r in log.records] == [("rerank", "lexical")]


def test_one_summary_gives_totals_by_node_and_the_errors():
    calls = [
        {"node": "generate", "model": "m", "attempt": 1, "seconds": 1.25, "error": "TimeoutError: slow"},
        {"node": "generate", "model": "m", "attempt": 2, "seconds": 2.0, "prompt_tokens": 10,
         "prompt_tokens_processed": 4, "completion_tokens": 3},
        {"node": "rerank", "model": "lexical", "attempt": 1, "seconds": 0.5},
    ]  # fmt: skip
    summary = cost_summary(calls, [{"node": "generate", "seconds": 3.5}])
    assert summary["model_calls"] == 3 and summary["models"] == ["lexical", "m"]
    assert summary["model_seconds"] == {"generate": 3.25, "rerank": 0.5}
    assert summary["node_seconds"] == {"generate": 3.5}
    assert summary["prompt_tokens"] == 10 and summary["prompt_tokens_processed"] == 4
    assert summary["model_errors"] == [{"node": "generate", "attempt": 1, "error": "TimeoutError: slow"}]


def test_the_route_holds_the_decisions_and_the_summary():
    state = GRAPH.invoke({"task": make_task(["How do bees talk?"], PASSAGES)}, context=fake_context())
    route = route_of(state)
    assert route["gate"] == "yes" and route["abstained"] is False
    assert route["model_calls"] == len(state["model_calls"])
    assert set(route["node_seconds"]) >= {"load_task", "generate"}
