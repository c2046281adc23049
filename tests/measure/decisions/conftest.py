"""Small task fixtures for the decision benchmark: two domains, every answerability class."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def task(
    conversation: str,
    turn: int,
    answerability: str,
    question: str,
    contexts: list[str] | None,
    *,
    domain: str = "govt",
    multi_turn: str = "Follow-up",
) -> dict[str, Any]:
    turns: list[dict[str, str]] = []
    for i in range(1, turn):
        turns += [
            {"speaker": "user", "text": f"earlier question {i}"},
            {"speaker": "agent", "text": f"answer {i}"},
        ]
    turns.append({"speaker": "user", "text": question})
    raw: dict[str, Any] = {
        "task_id": f"{conversation}<::>{turn}",
        "conversation_id": conversation,
        "Collection": f"mt-rag-{domain}-elser-512-100-20240611",
        "input": turns,
        "answerability": [answerability],
        "Multi-Turn": [multi_turn],
        "targets": [{"speaker": "agent", "text": "gold"}],
    }
    raw["contexts"] = [
        {"document_id": f"{conversation}-{i}", "text": t} for i, t in enumerate(contexts or [])
    ]
    return raw


TASKS = [
    task("c1", 1, "ANSWERABLE", "How do bees dance?", ["Bees do a round dance."], multi_turn="N/A"),
    task("c1", 2, "PARTIAL", "And wasps?", ["Wasps sting."]),
    task("c1", 3, "UNANSWERABLE", "What do bees eat in winter?", None),
    task("c2", 1, "ANSWERABLE", "When is the court open?", ["The court opens at 9."], multi_turn="N/A"),
    task("c2", 2, "UNDERSPECIFIED", "What services does the clinic provide?", ["A clinic page."]),
    task("c2", 3, "CONVERSATIONAL", "Thanks!", None),
    task("c3", 1, "ANSWERABLE", "What is a stock?", ["A stock is a share."], domain="fiqa", multi_turn="N/A"),
    task("c4", 1, "ANSWERABLE", "What is a bond?", ["A bond is a loan."], domain="fiqa", multi_turn="N/A"),
]


@pytest.fixture
def tasks() -> list[dict[str, Any]]:
    return [json.loads(json.dumps(t)) for t in TASKS]


@pytest.fixture
def data_folder(tmp_path: Path, tasks: list[dict[str, Any]]) -> Path:
    """A data folder with both split files: the fixtures as the report split, two tasks as tuning."""
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "mtragun_dev.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    (tmp_path / "tasks" / "mtrag_reference.jsonl").write_text(
        "".join(json.dumps(t) + "\n" for t in tasks[:2])
    )
    return tmp_path


def fake_retriever(raw: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"document_id": "r1", "title": "", "text": f"retrieved for {raw['task_id']}", "score": 1.0}]
