"""research/clarify_splice.py: the asked-back tasks out, their answers without clarify back in."""

from __future__ import annotations

import json

from research.clarify_splice import main


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _prediction(task_id, text, asked):
    return {"task_id": task_id, "predictions": [{"text": text}], "route": {"clarification": {"asked": asked}}}


def test_only_the_asked_back_tasks_are_answered_again_and_replaced(tmp_path):
    run = tmp_path / "clarify.jsonl"
    _write(run, [_prediction("a", "Which one?", True), _prediction("b", "It is 3.", False)])
    tasks = tmp_path / "tasks.jsonl"
    _write(tasks, [{"task_id": "a", "input": []}, {"task_id": "b", "input": []}])
    assert main(["asked", str(run), str(tasks), "-o", str(tmp_path / "asked.jsonl")]) == 0
    assert [json.loads(x)["task_id"] for x in (tmp_path / "asked.jsonl").read_text().splitlines()] == ["a"]
    again = tmp_path / "again.jsonl"
    _write(again, [_prediction("a", "I don't know.", False)])
    assert main(["splice", str(run), str(again), "-o", str(tmp_path / "out.jsonl")]) == 0
    out = [json.loads(x) for x in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [r["predictions"][0]["text"] for r in out] == ["I don't know.", "It is 3."]


def test_an_asked_back_task_without_its_new_answer_is_an_error(tmp_path, capsys):
    run = tmp_path / "clarify.jsonl"
    _write(run, [_prediction("a", "Which one?", True)])
    empty = tmp_path / "again.jsonl"
    empty.write_text("", encoding="utf-8")
    assert main(["splice", str(run), str(empty), "-o", str(tmp_path / "out.jsonl")]) == 2
    assert "no answer for asked-back tasks ['a']" in capsys.readouterr().err
