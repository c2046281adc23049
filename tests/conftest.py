"""Shared test helpers: benchmark data location and a Context wired to scripted fake models."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from mtrag_graph.context import Context
from mtrag_graph.models.fake import ScriptedChatModel

REPO = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    return Path(os.environ.get("MTRAG_DATA") or REPO.parent / "shared" / "data" / "mtrag")


@pytest.fixture
def mtrag_data() -> Path:
    path = data_dir()
    if not path.exists():
        if os.environ.get("MTRAG_DATA"):
            pytest.fail(f"MTRAG_DATA={path} does not exist")
        pytest.skip(f"benchmark data not found at {path} (set MTRAG_DATA)")
    return path


def relation_responder(related_to_question: list[str], related_to_answer: list[str]):
    """A classify-model fake: answers the question-relation and answer-relation prompts from two lists."""
    queues = {"question": list(related_to_question), "answer": list(related_to_answer)}

    def respond(messages, options):
        text = str(messages[-1].content)
        kind = "question" if "follow-up on the same subject" in text else "answer"
        queue = queues[kind]
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return respond


def fake_context(
    *,
    rewrite: list[Any] | None = None,
    related_to_question: list[str] | None = None,
    related_to_answer: list[str] | None = None,
    gate: list[Any] | None = None,
    generate: list[Any] | None = None,
    **overrides: Any,
) -> Context:
    """A Context whose four model roles are scripted fakes (reranking by word overlap, no model)."""
    defaults: dict[str, Any] = {
        "rewrite_model": ScriptedChatModel(responses=rewrite or ["What is the rewritten question?"]),
        "classify_model": ScriptedChatModel(
            responder=relation_responder(related_to_question or ["yes"], related_to_answer or ["yes"])
        ),
        "gate_model": ScriptedChatModel(responses=gate or ["yes"]),
        "generate_model": ScriptedChatModel(responses=generate or ["The answer is stated in the passage."]),
        "reranker": "lexical",
        "gate_classifier": None,  # the scripted gate model decides (the default classifier needs no model)
    }
    return Context(**{**defaults, **overrides})


def make_task(turns: list[str], contexts: list[str] | None = None, task_id: str = "t<::>1") -> dict[str, Any]:
    """A task from alternating user/agent texts (the last is the user's question)."""
    speakers = ["user", "agent"]
    task: dict[str, Any] = {
        "task_id": task_id,
        "input": [{"speaker": speakers[i % 2], "text": text} for i, text in enumerate(turns)],
    }
    if contexts is not None:
        task["contexts"] = [{"document_id": f"d{i}", "text": text} for i, text in enumerate(contexts)]
    return task
