"""The large model's prompt: one shared prefix (system, documents, conversation), a per-node tail."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from mtrag_graph.context import Context
from mtrag_graph.nodes._common import format_conversation, format_documents
from mtrag_graph.prompts import grounded


def question_for_answering(state: dict[str, Any]) -> str:
    return state.get("standalone_question") or state.get("global_rewrite") or state["question"]


def grounded_messages(state: dict[str, Any], context: Context, tail: str) -> list[BaseMessage]:
    conversation = format_conversation(state.get("selected_history") or []) or grounded.NO_CONVERSATION
    prefix = grounded.CONTEXT.format(
        documents=format_documents(state.get("kept_passages") or [], context.passage_max_chars),
        conversation=conversation,
    )
    return [SystemMessage(content=context.grounded_system_prompt), HumanMessage(content=prefix + tail)]
