"""Streaming a run: the answer's tokens reach stream_mode="messages"; internal calls do not."""

from __future__ import annotations

import json
import subprocess
import sys

from mtrag_graph.graph import build_graph
from mtrag_graph.runtime.batch import answer_tasks
from mtrag_graph.runtime.streaming import run_streamed
from mtrag_graph.testing import fake_context, make_task
from tests.conftest import REPO
from tests.test_clarify import LIBRARIES, QUESTION_ASKED, titled

ANSWER = "Bees dance to show where the flowers are. The waggle dance points at food."
TASK = make_task(
    ["How do bees talk?", "They dance.", "Why do they dance?"],
    ["Bees dance to show where flowers are. The waggle dance points at food."],
)


def test_only_the_answer_call_reaches_the_messages_stream():
    context = fake_context(generate=[ANSWER])
    items = list(build_graph().stream({"task": TASK}, context=context, stream_mode="messages"))
    assert {metadata["langgraph_node"] for _, metadata in items} == {"generate"}  # no rewrite, class, gate
    tokens = [message.content for message, _ in items]
    assert len([t for t in tokens if t]) > 5  # word by word, not one piece
    assert "".join(tokens) == ANSWER


def test_a_streamed_run_ends_in_the_same_state_as_an_invoked_one():
    streamed, first = run_streamed(build_graph(), {"task": TASK}, context=fake_context(generate=[ANSWER]))
    invoked = build_graph().invoke({"task": TASK}, context=fake_context(generate=[ANSWER]))
    assert streamed["answer"] == invoked["answer"] == ANSWER
    assert streamed["gate"] == invoked["gate"] and first is not None and first > 0


def test_a_retried_answer_streams_again_under_a_new_message_id():
    context = fake_context(generate=["Why do they dance?", ANSWER])  # restates the question: retried
    ids, tokens = set(), []
    for message, _ in build_graph().stream({"task": TASK}, context=context, stream_mode="messages"):
        ids.add(message.id)
        tokens.append(message.content)
    assert len(ids) == 2 and "".join(tokens) == "Why do they dance?" + ANSWER


def test_a_clarifying_question_arrives_whole_with_the_final_state():
    task = titled(make_task(["When does this library open?"], LIBRARIES))
    items, state = [], {}
    for mode, chunk in build_graph().stream(
        {"task": task}, context=fake_context(clarify=True), stream_mode=["messages", "values"]
    ):
        if mode == "messages":
            items.append(chunk)
        else:
            state = chunk
    assert state["answer"] == QUESTION_ASKED and items == []


def test_batch_records_the_first_token_and_the_citations_of_each_prediction(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(TASK) + "\n")
    answer_tasks(tasks, tmp_path / "out.jsonl", fake_context(generate=[ANSWER]), progress=False, stream=True)
    record = json.loads((tmp_path / "out.jsonl").read_text())
    prediction = record["predictions"][0]
    assert prediction["text"] == ANSWER
    assert 0 < record["route"]["first_token_seconds"] <= record["route"]["seconds"]
    assert [c["document_ids"] for c in prediction["citations"]] == [["d0"], ["d0"]]


def test_the_streaming_example_runs_and_prints_the_streamed_answer():
    result = subprocess.run(
        [sys.executable, "examples/stream_answer.py", "--fake"], cwd=REPO, capture_output=True, text=True,
        timeout=300, env={**__import__("os").environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    streamed, cited, source = result.stdout.splitlines()[:3]
    assert cited == f"answer: {streamed} [1]" and source.startswith("  [1] ")
