"""Streaming a run: only answer text that stands reaches a person (the messages stream: tests/test_messages_graph.py)."""

from __future__ import annotations

import json
import subprocess
import sys

from langgraph.graph import END, START, StateGraph

from mtrag_graph.graph import build_graph
from mtrag_graph.nodekit.release import complete_sentences
from mtrag_graph.nodes.finish import finish
from mtrag_graph.runtime.batch import answer_tasks
from mtrag_graph.runtime.streaming import iter_events, run_streamed
from mtrag_graph.state import graph_schema
from mtrag_graph.testing import fake_context, make_task
from tests.conftest import REPO
from tests.nodes.test_clarify import LIBRARIES, QUESTION_ASKED, titled

ANSWER = "Bees dance to show where the flowers are. The waggle dance points at food."
TASK = make_task(
    ["How do bees talk?", "They dance.", "Why do they dance?"],
    ["Bees dance to show where flowers are. The waggle dance points at food."],
)
FEE = make_task(
    ["What is the fee to file a notice of appeal in Texas?"],
    ["A notice of appeal must be filed within 30 days after the judgment is signed. Filing fees are set "
     "by each court; the clerk can tell you the amount."],
)  # fmt: skip
IDK = "I don't know the answer based on the provided documents."


def shown(task, context):
    """What a person sees (the text events, a retraction as "<retract>") and the final state."""
    seen, state = [], {}
    for kind, value in iter_events(build_graph(output="state"), {"task": task}, context=context):
        if kind == "text":
            seen.append(value)
        elif kind == "retract":
            seen.append("<retract>")
        elif kind == "done":
            state = value
    return seen, state


def grounded(**overrides):
    return fake_context(grounding="facts", **overrides)


def test_the_shown_text_is_the_final_answer_and_comes_sentence_by_sentence():
    seen, state = shown(TASK, grounded(generate=[ANSWER]))
    assert state["answer"] == ANSWER and "".join(seen) == ANSWER
    assert seen == ["Bees dance to show where the flowers are.", " The waggle dance points at food."]


def test_a_sentence_the_passages_do_not_back_is_never_shown():
    draft = "Bees dance to show where the flowers are. The queen rules 80,000 workers. The waggle dance points at food."
    seen, state = shown(TASK, grounded(generate=[draft]))
    assert "80,000" not in "".join(seen) and "80,000" not in state["answer"]
    assert "".join(seen) == state["answer"] == ANSWER.replace(" The waggle", " The waggle")


def test_a_decline_and_an_invented_fee_after_it_are_never_shown():
    # the gate says yes, the model declines, the decline retry invents a fee the passages do not hold
    context = grounded(
        generate=["I don't know.", "Texas charges a $100 filing fee for every appeal."],
        first_draft="may_decline",
    )
    seen, state = shown(FEE, context)
    assert state["answer"] == IDK and state["abstain_reason"] == "verdict"
    assert seen == [IDK]


def test_a_draft_with_problems_is_held_and_only_the_retry_is_shown():
    context = grounded(generate=["Why do they dance?", ANSWER])  # restates the question: retried
    seen, state = shown(TASK, context)
    assert state["retries"] == 1 and "".join(seen) == state["answer"] == ANSWER


def test_a_how_many_answer_is_held_until_its_number_comes():
    task = make_task(
        ["How many legs does a bee have?"], ["A bee has six legs. Bees also have two pairs of wings."]
    )
    seen, state = shown(task, grounded(generate=["A bee has legs for walking. It has six legs in all."]))
    assert "".join(seen) == state["answer"]
    assert seen[0].startswith("A bee has legs for walking. It has six")  # not before the number


def test_the_finish_node_withdraws_shown_text_the_final_answer_does_not_keep():
    builder = StateGraph(graph_schema())
    builder.add_node(finish)
    builder.add_edge(START, "finish")
    builder.add_edge("finish", END)
    events = list(
        builder.compile().stream({"answer": IDK, "shown": "The fee is $100."}, stream_mode="custom")
    )
    assert events == [{"mtrag": "retract"}, {"mtrag": "text", "text": IDK}]


def test_complete_sentences_leave_the_last_one_open():
    assert complete_sentences("One. Two") == "One."
    assert complete_sentences("One. Two. Thr") == "One. Two."
    assert complete_sentences("One only.") == ""


def test_a_streamed_run_ends_in_the_same_state_as_an_invoked_one():
    streamed, timings = run_streamed(
        build_graph(output="state"), {"task": TASK}, context=fake_context(generate=[ANSWER])
    )
    invoked = build_graph(output="state").invoke({"task": TASK}, context=fake_context(generate=[ANSWER]))
    assert streamed["answer"] == invoked["answer"] == ANSWER
    assert streamed["gate"] == invoked["gate"]
    assert 0 < timings["first_draft"] <= timings["first_shown"] and timings["retracted"] == 0


def test_the_steps_come_before_the_text():
    kinds = [
        (k, v)
        for k, v in iter_events(
            build_graph(output="state"), {"task": TASK}, context=fake_context(generate=[ANSWER])
        )
    ]
    steps = [v for k, v in kinds if k == "step"]
    assert steps[:2] == ["rewriting the question", "reading the conversation"]
    assert "writing the answer" in steps
    assert [k for k, _ in kinds].index("text") > [v for _, v in kinds].index("writing the answer")


def test_a_clarifying_question_arrives_whole():
    task = titled(make_task(["When does this library open?"], LIBRARIES))
    seen, state = shown(task, fake_context(clarify=True))
    assert state["answer"] == QUESTION_ASKED and seen == [QUESTION_ASKED]


def test_batch_records_the_first_shown_text_and_the_citations_of_each_prediction(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(TASK) + "\n")
    answer_tasks(tasks, tmp_path / "out.jsonl", fake_context(generate=[ANSWER]), progress=False, stream=True)
    record = json.loads((tmp_path / "out.jsonl").read_text())
    prediction = record["predictions"][0]
    assert prediction["text"] == ANSWER
    route = record["route"]
    assert 0 < route["first_token_seconds"] <= route["first_shown_seconds"] <= route["seconds"]
    assert route["stream_chunks"] == 2 and route["stream_retracts"] == 0
    assert [c["document_ids"] for c in prediction["citations"]] == [["d0"], ["d0"]]


def test_the_streaming_example_prints_one_json_line_per_task_with_what_was_shown(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(TASK) + "\n" + json.dumps({**FEE, "task_id": "fee<::>1"}) + "\n")
    result = subprocess.run(
        [sys.executable, "examples/stream_answer.py", str(tasks), "--jsonl", "--fake"], cwd=REPO,
        capture_output=True, text=True, timeout=300, env={**__import__("os").environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["task_id"] for line in lines] == ["t<::>1", "fee<::>1"]
    for line in lines:
        assert set(line) == {"task_id", "streamed", "answer", "first_s", "total_s", "chunks"}
        assert "".join(line["streamed"]) == line["answer"]


def test_the_timings_say_when_a_raw_draft_stream_would_have_shown_withdrawn_text():
    context = grounded(generate=["I don't know.", "Texas charges a $100 filing fee for every appeal."])
    _, timings = run_streamed(build_graph(output="state"), {"task": FEE}, context=context)
    assert timings["draft_withdrawn"] and timings["retracted"] == 0
    _, timings = run_streamed(
        build_graph(output="state"), {"task": TASK}, context=grounded(generate=[ANSWER])
    )
    assert not timings["draft_withdrawn"]
