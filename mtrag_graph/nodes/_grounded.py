"""The large model's prompt: one shared prefix (system, documents, conversation), a per-node tail."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from mtrag_graph.budget import HISTORY_SHARE, cut, fit_passages, prompt_char_budget, trim_history
from mtrag_graph.context import Context
from mtrag_graph.nodes._common import QUESTION_CHARS, format_conversation, format_documents
from mtrag_graph.prompts import grounded


def question_for_answering(state: dict[str, Any]) -> str:
    question = state.get("standalone_question") or state.get("global_rewrite") or state["question"]
    return cut(question, QUESTION_CHARS)


def grounded_messages(state: dict[str, Any], context: Context, tail: str) -> list[BaseMessage]:
    """System text, then documents and conversation fitted to the context window, then ``tail``."""
    budget = prompt_char_budget(context.context_window_tokens, context.answer_max_tokens)
    history = trim_history(state.get("selected_history") or [], int(budget * HISTORY_SHARE))
    used = sum(len(turn["text"]) for turn in history) + len(tail) + len(context.grounded_system_prompt)
    passages = fit_passages(state.get("kept_passages") or [], context.passage_max_chars, budget - used)
    prefix = grounded.CONTEXT.format(
        documents=format_documents(passages, context.passage_max_chars),
        conversation=format_conversation(history) or grounded.NO_CONVERSATION,
    )
    return [SystemMessage(content=context.grounded_system_prompt), HumanMessage(content=prefix + tail)]
