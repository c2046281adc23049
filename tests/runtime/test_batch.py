"""The `answer` command: incremental output, resume, bad tasks recorded and counted, exit code."""

from __future__ import annotations

import json
import sys

from langchain_core.messages import AIMessage

from mtrag_graph import tasks as task_module
from mtrag_graph.cli import main
from mtrag_graph.nodes.finish import reply_metadata
from mtrag_graph.runtime.batch import answer_tasks, prediction_record
from mtrag_graph.runtime.jsonl_out import open_resumable
from mtrag_graph.testing import fake_context, make_task

PASSAGES = ["Bees use the waggle dance to show the direction of flowers."]


def write_tasks(path, rows):
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))


def read_lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_each_task_gets_one_line_with_prediction_and_route(tmp_path):
    tasks, out = tmp_path / "tasks.jsonl", tmp_path / "out.jsonl"
    write_tasks(tasks, [make_task(["How do bees find flowers?"], PASSAGES, f"c<::>{i}") for i in range(3)])
    summary = answer_tasks(tasks, out, fake_context(), progress=False)
    lines = read_lines(out)
    assert summary.answered == 3 and summary.failed == 0
    assert [line["task_id"] for line in lines] == ["c<::>0", "c<::>1", "c<::>2"]
    assert lines[0]["predictions"][0]["text"] == "The answer is stated in the passage."
    assert lines[0]["route"]["gate"] == "yes" and "node_seconds" in lines[0]["route"]


def test_rerunning_resumes_without_redoing_tasks(tmp_path):
    tasks, out = tmp_path / "tasks.jsonl", tmp_path / "out.jsonl"
    write_tasks(tasks, [make_task(["How do bees find flowers?"], PASSAGES, f"c<::>{i}") for i in range(3)])
    answer_tasks(tasks, out, fake_context(), progress=False, limit=2)
    context = fake_context()
    summary = answer_tasks(tasks, out, context, progress=False)
    assert summary.resumed == 2 and summary.answered == 1
    assert len(context.generate_model.calls) == 1
    assert [line["task_id"] for line in read_lines(out)] == ["c<::>0", "c<::>1", "c<::>2"]


def test_a_torn_last_line_is_dropped_and_redone(tmp_path):
    tasks, out = tmp_path / "tasks.jsonl", tmp_path / "out.jsonl"
    write_tasks(tasks, [make_task(["How do bees find flowers?"], PASSAGES, f"c<::>{i}") for i in range(2)])
    answer_tasks(tasks, out, fake_context(), progress=False, limit=1)
    with open(out, "a") as handle:
        handle.write('{"task_id": "c<::>1", "predictions": [{"te')
    answer_tasks(tasks, out, fake_context(), progress=False)
    assert [line["task_id"] for line in read_lines(out)] == ["c<::>0", "c<::>1"]


def test_open_resumable_keeps_complete_lines(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"k": "a"}\n{"k": "b"}\n{"k": "c"')
    writer, done = open_resumable(path, lambda r: r["k"])
    writer.close()
    assert set(done) == {"a", "b"} and path.read_text() == '{"k": "a"}\n{"k": "b"}\n'


def test_bad_tasks_are_recorded_as_failed_and_the_run_goes_on(tmp_path):
    tasks, out = tmp_path / "tasks.jsonl", tmp_path / "out.jsonl"
    write_tasks(
        tasks,
        [
            "{not json",
            {"task_id": "no-input<::>1", "contexts": []},
            {"task_id": "agent-last<::>1", "input": [{"speaker": "agent", "text": "hi"}]},
            {"task_id": "bad-contexts<::>1", "input": [{"speaker": "user", "text": "q?"}], "contexts": "x"},
            make_task(["How do bees find flowers?"], PASSAGES, "good<::>1"),
        ],
    )
    summary = answer_tasks(tasks, out, fake_context(), progress=False)
    lines = read_lines(out)
    assert summary.failed == 4 and summary.answered == 1
    errors = {
        line.get("task_id", line.get("_line")): line["error"]["field"]
        for line in lines
        if line["status"] == "failed"
    }
    assert errors == {
        "line 1": "<line>",
        "no-input<::>1": "input",
        "agent-last<::>1": "input[0].speaker",
        "bad-contexts<::>1": "contexts",
    }
    assert lines[-1]["status"] == "ok"


def test_each_task_is_parsed_once(tmp_path, monkeypatch):
    parsed = []

    def counted(raw, line=None):
        parsed.append(raw["task_id"])
        return task_module.parse_task(raw, line)

    for module in [m for name, m in sys.modules.items() if name.startswith("mtrag_graph")]:
        if getattr(module, "parse_task", None) is task_module.parse_task and module is not task_module:
            monkeypatch.setattr(module, "parse_task", counted)
    tasks, out = tmp_path / "tasks.jsonl", tmp_path / "out.jsonl"
    write_tasks(tasks, [make_task(["How do bees find flowers?"], PASSAGES, f"c<::>{i}") for i in range(2)])
    assert answer_tasks(tasks, out, fake_context(), progress=False).answered == 2
    assert sorted(parsed) == ["c<::>0", "c<::>1"]


def test_cli_exit_code_is_non_zero_when_a_task_failed(tmp_path, capsys):
    tasks, out = tmp_path / "tasks.jsonl", tmp_path / "out.jsonl"
    write_tasks(tasks, [make_task(["How do bees find flowers?"], PASSAGES, "good<::>1"), {"task_id": "bad"}])
    code = main(
        ["answer", str(tasks), "-o", str(out), "--no-progress", "--small-model", "scripted:Yes.",
         "--large-model", "scripted:Yes.", "--reranker", "lexical", "--embedder", "hashing:64"]
    )  # fmt: skip
    assert code == 1
    err = capsys.readouterr().err
    assert "task bad" in err or "bad: field 'input'" in err
    assert "failed: 1" in err


def test_cli_exit_code_is_zero_when_all_tasks_succeed(tmp_path):
    tasks, out = tmp_path / "tasks.jsonl", tmp_path / "out.jsonl"
    write_tasks(tasks, [make_task(["How do bees find flowers?"], PASSAGES, "good<::>1")])
    code = main(
        ["answer", str(tasks), "-o", str(out), "--no-progress", "--small-model", "scripted:Yes.",
         "--large-model", "scripted:Yes.", "--reranker", "lexical", "--embedder", "hashing:64"]
    )  # fmt: skip
    assert code == 0
    assert read_lines(out)[0]["predictions"][0]["text"] == "Yes."


def test_retrieved_passages_become_the_predictions_contexts():
    task = make_task(["How do bees find flowers?"], PASSAGES, "r<::>1")
    kept = [{"document_id": "d9", "text": "Bees dance.", "title": "Bees", "score": 0.5, "file": "b.md"}]
    state = {"answer": "Bees dance.", "retrieve": True, "kept_passages": kept}
    state["messages"] = [AIMessage(state["answer"], response_metadata={"mtrag": reply_metadata(state)})]
    record = prediction_record(task, state, 1.0)
    assert record["contexts"] == [{"document_id": "d9", "title": "Bees", "text": "Bees dance.", "score": 0.5}]
    assert record["reference_contexts"] == task["contexts"]
    given = prediction_record(task, {**state, "retrieve": False}, 1.0)
    assert given["contexts"] == task["contexts"] and "reference_contexts" not in given
