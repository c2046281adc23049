"""The graph as a LangGraph chat graph: messages in, a cited AIMessage out, a thread that keeps the
conversation, a messages stream of only the text that stands, schemas, and settings in ``configurable``."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import fields

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from mtrag_graph.context import Context
from mtrag_graph.graph import Insertion, build_graph
from mtrag_graph.nodes import clarify
from mtrag_graph.nodes.ask_user import reply_text
from mtrag_graph.runtime.checkpoints import open_checkpointer
from mtrag_graph.tasks import TaskError
from mtrag_graph.testing import endpoint_context, fake_context, make_task
from mtrag_graph.testing.standin import StandInServer
from tests.conftest import REPO
from tests.nodes.test_clarify import LIBRARIES, QUESTION_ASKED, TITLES

BEES = [
    {"document_id": "bees-1", "title": "Bees", "text": "Bees dance to show where flowers are."},
    {"document_id": "bees-2", "title": "Waggle dance", "text": "The waggle dance points at food."},
]
ANSWER = "Bees dance to show where flowers are. The waggle dance points at food."
IDK = "I don't know the answer based on the provided documents."
THREAD = {"configurable": {"thread_id": "t"}}


def ask(graph, text, *, context, **inputs):
    return graph.invoke({"messages": [HumanMessage(text)], **inputs}, THREAD, context=context)


def test_a_thread_answers_with_a_cited_message_and_keeps_the_conversation_for_the_follow_up():
    context = fake_context(grounding="facts", generate=[ANSWER, "The waggle dance points at food."])
    graph = build_graph(checkpointer=InMemorySaver())
    first = graph.invoke(
        {"messages": [HumanMessage("How do bees talk?")], "contexts": BEES}, THREAD, context=context
    )
    reply = first["messages"][-1]
    assert set(first) == {"messages"} and isinstance(reply, AIMessage) and reply.content == ANSWER
    metadata = reply.response_metadata["mtrag"]
    assert metadata["kind"] == "answer" and metadata["abstain_reason"] is None
    assert metadata["task_id"] == "t<::>1"  # the thread, and its turn as MTRAG numbers them
    assert [c["document_ids"] for c in metadata["citations"]] == [["bees-1"], ["bees-2"]]
    assert [s["document_id"] for s in metadata["sources"]] == ["bees-1", "bees-2"]

    second = graph.invoke({"messages": [HumanMessage("Where does it point?")]}, THREAD, context=context)
    assert [m.type for m in second["messages"]] == ["human", "ai", "human", "ai"]
    assert second["messages"][-1].content == "The waggle dance points at food."
    prompt = str(context.generate_model.calls[-1]["messages"][-1].content)
    assert "How do bees talk?" in prompt and "Where does it point?" in prompt  # the thread's history
    assert graph.get_state(THREAD).values["history"][0]["text"] == "How do bees talk?"


def test_each_run_of_a_thread_starts_its_decisions_afresh():
    graph = build_graph(checkpointer=InMemorySaver(), output="state")
    context = fake_context(generate=["Bees talk.", ANSWER])  # a draft restating the question, then the answer
    first = ask(graph, "How do bees talk?", contexts=BEES, context=context)
    assert first["gate"] == "yes" and first["kept_passages"] and first["standalone_question"]
    assert [d["draft"] for d in first["rejected_drafts"]] == ["Bees talk."]
    second = ask(graph, "And ants?", contexts=[], context=context)  # no passages: "I don't know"
    assert second["abstain_reason"] == "no_evidence" and second["messages"][-1].content == IDK
    for key in ("gate", "kept_passages", "standalone_question", "draft", "grounding", "rejected_drafts"):
        assert second.get(key) is None, key
    assert [n["node"] for n in second["node_seconds"]] == ["load_task", "evidence_precheck"]
    assert [c["node"] for c in second["model_calls"]] == []


def test_the_benchmark_task_runs_through_the_same_graph_and_returns_the_reply():
    out = build_graph().invoke({"task": make_task(["How do bees talk?"], [ANSWER])}, context=fake_context())
    assert set(out) == {"messages"} and len(out["messages"]) == 1  # a task brings its conversation
    reply = out["messages"][-1]
    assert reply.content == "The answer is stated in the passage."
    assert reply.response_metadata["mtrag"]["task_id"] == "t<::>1"


def test_messages_a_conversation_cannot_hold_are_rejected_naming_the_message():
    graph = build_graph()
    with pytest.raises(TaskError, match=r"field 'messages\[0\]'.*system message"):
        graph.invoke({"messages": [SystemMessage("Be brief."), HumanMessage("Hi?")]}, context=fake_context())
    with pytest.raises(TaskError, match=r"field 'messages\[0\]\.text'.*question is empty"):
        graph.invoke({"messages": [HumanMessage("  ")]}, context=fake_context())
    with pytest.raises(TaskError, match=r"field 'contexts'"):
        graph.invoke({"messages": [HumanMessage("Hi?")], "contexts": "bees"}, context=fake_context())


def test_a_chat_ui_message_of_content_blocks_is_read_as_its_text():
    context = fake_context(generate=[ANSWER])
    question = HumanMessage(content=[{"type": "text", "text": "How do bees talk?"}])
    out = build_graph(output="state").invoke({"messages": [question], "contexts": BEES}, context=context)
    assert out["question"] == "How do bees talk?"


def streamed(graph, inputs, context, config=None):
    """The ``messages`` stream: (message, node) pairs, and the final state."""
    items = []
    for mode, chunk in graph.stream(inputs, config, context=context, stream_mode=["messages", "values"]):
        if mode == "messages":
            message, metadata = chunk
            items.append((message, metadata["langgraph_node"]))
        else:
            state = chunk
    return items, state


def test_the_messages_stream_shows_only_the_text_the_grounding_check_keeps_under_one_id():
    draft = "Bees dance to show where flowers are. The Moon landing in 1969 used 42 rockets."
    context = fake_context(grounding="facts", generate=[draft])
    items, state = streamed(
        build_graph(), {"messages": [HumanMessage("How do bees talk?")], "contexts": BEES}, context
    )
    reply = state["messages"][-1]
    assert reply.content == "Bees dance to show where flowers are."
    chunks = [m for m, _ in items if isinstance(m, AIMessageChunk)]
    assert {m.id for m in chunks} == {reply.id}
    assert "".join(m.content for m in chunks) == reply.content
    assert {node for _, node in items} <= {"generate", "finish"}  # no rewrite, gate or check call
    assert all(m.content in reply.content for m, _ in items)


def test_a_standing_sentence_is_streamed_before_the_answer_ends():
    context = fake_context(grounding="facts", generate=[ANSWER])
    items, state = streamed(
        build_graph(), {"messages": [HumanMessage("How do bees talk?")], "contexts": BEES}, context
    )
    assert [(m.content, node) for m, node in items] == [
        ("Bees dance to show where flowers are.", "generate"),
        (" The waggle dance points at food.", "finish"),
    ]


def test_i_dont_know_arrives_as_a_message():
    items, state = streamed(
        build_graph(), {"messages": [HumanMessage("How do ants talk?")], "contexts": []}, fake_context()
    )
    assert [m.content for m, _ in items] == [IDK]
    assert state["messages"][-1].response_metadata["mtrag"]["abstain_reason"] == "no_evidence"


def test_a_clarifying_question_arrives_as_a_message_and_the_run_waits_for_the_reply():
    passages = [{"text": t, "title": title} for t, title in zip(LIBRARIES, TITLES, strict=True)]
    graph = build_graph(checkpointer=InMemorySaver())
    context = fake_context(clarify=True, generate=["The Alameda library opens at 9 am."])
    inputs = {"messages": [HumanMessage("When does this library open?")], "contexts": passages}
    items, state = streamed(graph, inputs, context, THREAD)
    assert [m.content for m, _ in items] == [QUESTION_ASKED]
    assert state["messages"][-1].response_metadata["mtrag"]["kind"] == "clarifying_question"
    (pending,) = graph.get_state(THREAD).interrupts
    assert pending.value["action_requests"][0]["args"]["question"] == QUESTION_ASKED


def test_the_three_schemas_are_made_on_python_3_11():
    graph = build_graph()
    assert {"messages", "contexts", "task"} <= set(graph.get_input_jsonschema()["properties"])
    assert set(graph.get_output_jsonschema()["properties"]) == {"messages"}
    assert graph.get_context_jsonschema()["properties"]["top_k"]["default"] == 5


def test_a_setting_in_configurable_is_honoured_and_a_bad_value_is_rejected():
    graph = build_graph(output="state")
    inputs = {"messages": [HumanMessage("How do bees talk?")], "contexts": BEES}
    out = graph.invoke(inputs, {"configurable": {"top_k": 1}}, context=fake_context())
    assert len(out["kept_passages"]) == 1
    with pytest.raises(ValueError, match="grounding: 'sometimes' is not one of 'facts', 'whole', 'off'"):
        graph.invoke(inputs, {"configurable": {"grounding": "sometimes"}}, context=fake_context())


def test_a_run_without_a_context_runs_the_default_pipeline():
    graph = build_graph(output="state")
    with pytest.raises(TaskError):  # reaches load_task with Context(): no model is loaded before it
        graph.invoke({"messages": [HumanMessage(" ")]})


def test_a_graph_compiled_again_from_its_builder_gives_every_node_and_router_the_default_settings():
    seen = []

    def look(state, runtime):  # an inserted node: what a node of the graph is given
        seen.append(runtime.context)
        return {}

    built = build_graph(insert=[Insertion("look", look, after="load_task", before="evidence_precheck")])
    graph = built.builder.compile(checkpointer=InMemorySaver())
    fakes = fake_context(generate=[ANSWER])
    # no context: LangGraph gives the nodes None; the scripted models come in as configurable settings
    default = Context()
    settings = {
        f.name: getattr(fakes, f.name)
        for f in fields(Context)
        if getattr(fakes, f.name) != getattr(default, f.name)
    }
    config = {"configurable": {"thread_id": "again", **settings}}
    out = graph.invoke({"messages": [HumanMessage("How do bees talk?")], "contexts": BEES}, config)
    assert out["messages"][-1].content == ANSWER
    assert [type(c) for c in seen] == [Context] and seen[0].generate_model is fakes.generate_model
    assert seen[0].top_k == default.top_k  # every setting not named is the default's


def test_a_thread_over_the_stand_in_endpoint_answers_and_follows_up():
    server = StandInServer().start()
    try:
        context = endpoint_context(f"vllm:standin@{server.base_url}")
        graph = build_graph(checkpointer=InMemorySaver())
        first = ask(graph, "How do bees talk?", contexts=BEES, context=context)
        second = ask(graph, "Where does the waggle dance point?", context=context)
    finally:
        server.shutdown()
        server.server_close()
    for out in (first, second):
        reply = out["messages"][-1]
        assert isinstance(reply, AIMessage) and reply.content
        metadata = reply.response_metadata["mtrag"]
        assert metadata["kind"] == "answer" and metadata["citations"]
    assert [m.type for m in second["messages"]] == ["human", "ai", "human", "ai"]
    assert "How do bees talk?" in str(
        server.requests[-1]["messages"]
    )  # the follow-up's prompt has the history


def test_a_resumed_clarification_after_a_restart_asks_the_stored_question_not_a_new_one(
    tmp_path, monkeypatch
):
    passages = [{"text": t, "title": title} for t, title in zip(LIBRARIES, TITLES, strict=True)]
    inputs = {"messages": [HumanMessage("When does this library open?")], "contexts": passages}
    with open_checkpointer(tmp_path / "chat.sqlite") as saver:
        paused = build_graph(checkpointer=saver).invoke(inputs, THREAD, context=fake_context(clarify=True))
    assert paused["__interrupt__"][0].value["clarifying_question"] == QUESTION_ASKED

    # a new process: a new graph over the same checkpoint, whose clarify step would now ask otherwise
    monkeypatch.setattr(
        clarify, "clarifying_question", lambda state, context: "Which branch, north or south?"
    )
    context = fake_context(clarify=True, generate=["The Alameda library opens at 9 am."])
    with open_checkpointer(tmp_path / "chat.sqlite") as saver:
        graph = build_graph(checkpointer=saver, output="state")
        state = graph.invoke(Command(resume="the Alameda one"), THREAD, context=context)
    assert state["clarification"]["question"] == QUESTION_ASKED
    assert state["question"] == "When does this library open? (the Alameda one)"
    assert [(m.type, m.content) for m in state["messages"]] == [
        ("human", "When does this library open?"),
        ("ai", QUESTION_ASKED),
        ("human", "the Alameda one"),
        ("ai", "The Alameda library opens at 9 am."),
    ]
    nodes = [n["node"] for n in state["node_seconds"]]
    assert nodes.count("clarify") == 1 and nodes.count("ask_user") == 1  # clarify did not run again


@pytest.mark.parametrize(
    "resume",
    ["the Alameda one", {"type": "respond", "message": "the Alameda one"},
     {"decisions": [{"type": "respond", "message": "the Alameda one"}]}, [{"type": "response", "args": "the Alameda one"}]],
)  # fmt: skip
def test_the_reply_is_read_from_a_string_or_a_chat_ui_decision(resume):
    assert reply_text(resume) == "the Alameda one"


def test_a_resume_value_without_a_reply_is_rejected_naming_the_field():
    with pytest.raises(TaskError, match="field 'resume'"):
        reply_text(42, "t<::>1")


STRICT_TURN = """
import sys
from langchain_core.messages import HumanMessage
from mtrag_graph.graph import build_graph
from mtrag_graph.runtime.checkpoints import open_checkpointer
from mtrag_graph.testing import fake_context
with open_checkpointer(sys.argv[1]) as saver:
    out = build_graph(checkpointer=saver).invoke(
        {"messages": [HumanMessage(sys.argv[2])],
         "contexts": [{"text": "Bees dance to show where flowers are. The dance tells other bees the way."}]},
        {"configurable": {"thread_id": "strict"}}, context=fake_context(generate=[sys.argv[3]]))
print(len(out["messages"]), out["messages"][-1].response_metadata["mtrag"]["kind"])
"""


def test_a_thread_of_messages_goes_on_after_a_restart_with_strict_checkpoint_loading(tmp_path):
    env = {
        **os.environ,
        "LANGGRAPH_STRICT_MSGPACK": "true",
        "PYTHONWARNINGS": "always",
        "PYTHONPATH": str(REPO),
    }
    runs = [
        subprocess.run(
            [sys.executable, "-c", STRICT_TURN, str(tmp_path / "chat.sqlite"), question, answer],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )  # fmt: skip
        for question, answer in (
            ("How do bees talk?", "Bees dance to show where flowers are."),
            # an answer of its own: the same one again would be a repeat of the turn before, and decline
            ("Why do they dance?", "The dance tells other bees the way."),
        )
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert "unregistered type" not in run.stderr and "deserializ" not in run.stderr.lower(), run.stderr
    assert [run.stdout.split() for run in runs] == [["2", "answer"], ["4", "answer"]]
