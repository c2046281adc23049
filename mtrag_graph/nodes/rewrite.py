"""Question rewriting: a global rewrite of the last turn, and a local one from the selected history."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field, field_validator

from mtrag_graph.budget import cut, prompt_char_budget, trim_history
from mtrag_graph.context import Context
from mtrag_graph.models import CallLog, ask_json, get_chat_model, invoke_text
from mtrag_graph.nodes._common import (
    AGENT_TURN_CHARS,
    QUESTION_CHARS,
    format_conversation,
    guarded,
    pairs_to_turns,
    user_and_agent_pairs,
)
from mtrag_graph.prompts import rewrite as prompts

_WORDS = re.compile(r"[A-Za-z']+")
_LABEL = re.compile(r"^\s*(rewritten|standalone)?\s*(question)?\s*:\s*", re.IGNORECASE)


def mentions_earlier_turn(question: str, pronouns: tuple[str, ...]) -> bool:
    """Does the question use a pronoun or reference word that points back into the conversation?"""
    words = {w.lower() for w in _WORDS.findall(question)}
    return any(p in words for p in pronouns)


def clean_rewrite(text: str, question: str) -> str | None:
    """The rewritten question, or None when the reply is not a plausible rewrite of ``question``."""
    line = next((ln for ln in text.strip().splitlines() if ln.strip()), "")
    line = _LABEL.sub("", line).strip().strip("\"'`").strip()
    if not line:
        return None
    if len(line.split()) > max(3 * len(question.split()), 40):
        return None
    return line


class LocalRewrite(BaseModel):
    summary: str = Field(description="one sentence summarising the selected conversation")
    intent: str = Field(description="what the user wants to know now")
    standalone_question: str = Field(description="the question, understandable without the conversation")

    @field_validator("standalone_question")
    @classmethod
    def _not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("standalone_question is empty")
        return value.strip()


def _fit(turns: list[dict[str, str]], context: Context) -> list[dict[str, str]]:
    """Agent turns cut, then the oldest turns dropped so the conversation fits half the window."""
    short = [t if t["speaker"] == "user" else {**t, "text": cut(t["text"], AGENT_TURN_CHARS)} for t in turns]
    return trim_history(
        short, prompt_char_budget(context.context_window_tokens, context.local_rewrite_max_tokens) // 2
    )


def _messages(context: Context, body: str) -> list:
    return [SystemMessage(content=context.rewrite_system_prompt), HumanMessage(content=body)]


@guarded
def global_rewrite(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    context, question, history = runtime.context, state["question"], state.get("history", [])
    if not history or not context.rewrite_question:
        return {"global_rewrite": question, "pronoun_detected": False}
    pronoun = mentions_earlier_turn(question, context.pronouns)
    pairs = user_and_agent_pairs(history)
    turns = _fit(pairs_to_turns(pairs[-1:]) if pronoun else history, context)
    question = cut(question, QUESTION_CHARS)
    log = CallLog(node="global_rewrite")
    body = prompts.GLOBAL_REWRITE.format(
        conversation=format_conversation(turns, AGENT_TURN_CHARS), question=question
    )
    reply = invoke_text(
        get_chat_model(context.rewrite_model),
        _messages(context, body),
        log,
        max_tokens=context.rewrite_max_tokens,
    )
    rewritten = clean_rewrite(str(reply.content), question)
    update: dict[str, Any] = {"pronoun_detected": pronoun, "model_calls": log.records}
    if rewritten is None:
        update["global_rewrite"] = question
        update["fallbacks"] = [
            {"node": "global_rewrite", "used": "original question", "raw": str(reply.content)}
        ]
    else:
        update["global_rewrite"] = rewritten
    return update


@guarded
def local_rewrite(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    context, question = runtime.context, state["question"]
    selected = state.get("selected_history") or []
    if not selected or not context.rewrite_question:
        return {"standalone_question": state.get("global_rewrite") or question}
    log = CallLog(node="local_rewrite")
    body = prompts.LOCAL_REWRITE.format(
        conversation=format_conversation(_fit(selected, context), AGENT_TURN_CHARS),
        question=cut(question, QUESTION_CHARS),
    )
    parsed, raws = ask_json(
        get_chat_model(context.rewrite_model),
        _messages(context, body),
        LocalRewrite,
        log,
        retries=context.parse_retries,
        max_tokens=context.local_rewrite_max_tokens,
    )
    if parsed is None or clean_rewrite(parsed.standalone_question, question) is None:
        return {
            "standalone_question": state.get("global_rewrite") or question,
            "model_calls": log.records,
            "fallbacks": [
                {"node": "local_rewrite", "used": "global rewrite", "raw": raws[-1] if raws else ""}
            ],
        }
    return {
        "history_summary": parsed.summary,
        "intent": parsed.intent,
        "standalone_question": clean_rewrite(parsed.standalone_question, question),
        "model_calls": log.records,
    }
