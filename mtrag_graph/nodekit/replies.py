"""Replies a node puts in the conversation itself (the final answer's is made by ``nodes/finish.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage


def question_message(question: str, state: Mapping[str, Any]) -> AIMessage:
    """The clarifying question as the conversation's next message (the reply's metadata shape)."""
    metadata: dict[str, Any] = {"task_id": state.get("task_id") or "", "kind": "clarifying_question",
                "abstain_reason": None, "citations": [], "sources": []}  # fmt: skip
    return AIMessage(question, id=f"{state.get('reply_id')}-question", response_metadata={"mtrag": metadata})
