"""research/clarify_several.py: the clarify decision over turns with passages, before and after."""

from __future__ import annotations

import json

from research.clarify_several import compare, table

SERIES = [
    {"document_id": "n", "title": "Norman Bates", "text": "A character of the TV series Bates Motel."},
    {"document_id": "p", "title": "Pride and Prejudice (1995 TV series)", "text": "A 1995 TV series."},
    {"document_id": "b", "title": "Blackwater (Game of Thrones)", "text": "An episode of the TV series."},
    {"document_id": "s", "title": "The Shannara Chronicles", "text": "A TV series based on the books."},
]
EARLIER = [{"speaker": "user", "text": "Who created the Dow Jones index?"},
           {"speaker": "agent", "text": "Charles Dow and Edward Jones created it."}]  # fmt: skip


def _task(task_id: str, question: str, label: str, contexts: list) -> dict:
    return {"task_id": task_id, "input": [*EARLIER, {"speaker": "user", "text": question}],
            "contexts": contexts, "answerability": [label]}  # fmt: skip


def test_a_turn_the_new_signal_asks_counts_after_not_before_and_turns_without_passages_are_left_out(tmp_path):
    path = tmp_path / "tasks.jsonl"
    tasks = [
        _task("a<::>3", "Who wrote the book the TV series is based on?", "UNDERSPECIFIED", SERIES),
        _task("b<::>3", "Who wrote the book the TV series Shannara is based on?", "ANSWERABLE", SERIES),
        _task("c<::>3", "Who wrote it?", "UNDERSPECIFIED", []),
    ]
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    rows = compare(path, retrieved=False, show=False)
    assert rows == [("all", "ANSWERABLE", 1, 0, 0), ("all", "UNDERSPECIFIED", 1, 0, 1)]
    assert "| x.jsonl | all | UNDERSPECIFIED | 1 | 0 | 1 |" in table([("x.jsonl", *rows[1])])
