"""research.clarify_diff: every source's turns decided and saved; two saved decisions compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from research import clarify_diff


def task(task_id: str, label: str, question: str, passages: list[dict[str, str]] | None = None) -> dict:
    return {"task_id": task_id, "answerability": [label], "contexts": passages or [],
            "input": [{"speaker": "user", "text": question}]}  # fmt: skip


def write(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_every_source_is_decided_and_reference_tasks_twice_when_they_have_passages(tmp_path, monkeypatch):
    passage = {"document_id": "d", "title": "T", "text": "x"}
    data = tmp_path / "data"
    write(data / "tasks" / "mtragun_tuning.jsonl", [task("t1", "UNDERSPECIFIED", "Which one?")])
    write(data / "tasks" / "mtragun_dev.jsonl", [task("d1", "ANSWERABLE", "How?", [passage])])
    write(data / "tasks" / "mtrag_reference.jsonl",
          [task("r1", "ANSWERABLE", "Why?", [passage]), task("r2", "UNANSWERABLE", "When?")])  # fmt: skip
    seen = []

    def decide(history, question, passages, context):
        seen.append((question, bool(passages)))
        return bool(passages), ["fake: decided"]

    monkeypatch.setattr(clarify_diff, "is_underspecified", decide)
    out = tmp_path / "snap.jsonl"
    assert clarify_diff.snapshot(data, None, out) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["source"], r["task_id"], r["passages"]) for r in rows] == [
        ("mtragun_tuning", "t1", False),
        ("mtragun_dev", "d1", True),
        ("mtrag_reference", "r1", True),
        ("mtrag_reference (passages left out)", "r1", False),
        ("mtrag_reference", "r2", False),
    ]
    assert rows[1]["asked"] is True and rows[1]["evidence"] == "fake: decided"


def test_compare_counts_by_source_class_and_passages_and_marks_what_moved(tmp_path, capsys):
    def row(task_id: str, asked: bool) -> dict:
        return {"source": "s", "task_id": task_id, "label": "ANSWERABLE", "passages": True,
                "question": f"q {task_id}", "asked": asked, "evidence": "e"}  # fmt: skip

    before = write(tmp_path / "a.jsonl", [row("1", True), row("2", False)])
    after = write(tmp_path / "b.jsonl", [row("1", False), row("2", False)])
    assert clarify_diff.compare(before, after, show=True) == 0
    printed = capsys.readouterr().out
    assert "s ANSWERABLE 1: 'q 1'" in printed and "q 2" not in printed
    assert "| s | ANSWERABLE | with passages | 2 | 1 | 0 ** |" in printed
    other = write(tmp_path / "c.jsonl", [row("1", False)])
    with pytest.raises(SystemExit, match="different turns"):
        clarify_diff.compare(before, other, show=False)
