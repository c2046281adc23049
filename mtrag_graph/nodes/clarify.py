"""Underspecified turns: ask a clarifying question instead of answering (or saying "I don't know").

Does the user's turn point at one specific thing ("this library", "the actor", "her") that the
conversation never named? If so, a short clarifying question naming the options found. In batch mode that question is the answer; in
chat mode (``Context.clarify_interrupt``) the node interrupts the graph, and the user's reply,
passed back with ``Command(resume=reply)``, is added to the question the rest of the graph answers.

Switched on with ``Context.clarify`` (the ``full`` preset, ``answer --clarify``, the chat). It runs
right after ``load_task`` (see ``mtrag_graph.graph``), because it must also see turns without
passages, which ``evidence_precheck`` would otherwise turn into "I don't know" before anything else runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from mtrag_graph.context import Context
from mtrag_graph.messages import clarify_messages
from mtrag_graph.models import get_chat_model, invoke_text
from mtrag_graph.nodes._common import guarded

# A phrase that points at one specific thing without naming it: a demonstrative with a noun, a
# pronoun, "a specific ...", or "the" with a category noun ("the actor", "the clinic").
REFERRING_PHRASE = re.compile(
    r"\b(this|that|these|those)\s+(?!is\b|was\b|are\b|were\b|will\b|would\b|can\b|could\b|has\b|have\b"
    r"|does\b|do\b|did\b|means?\b)[a-z]+"
    r"|\b(its|her|his|their|she|he|they|them|it)\b|\ba specific\b"
    r"|\bthe (actor|actress|country|clinic|park|animal|city|town|case|library|company|hurricane|storm|state"
    r"|county|court|team|player|book|novel|movie|film|show|song|singer|band|author|president|school"
    r"|university|hospital|store|restaurant|product|program|service|plan|policy|stars?|person|man|woman"
    r"|church|museum|building|bridge|river|lake|mountain|island|event|war|battle|law|act|bill)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+")


def referring_phrase(question: str) -> str | None:
    match = REFERRING_PHRASE.search(question)
    return match.group(0) if match else None


def is_underspecified(
    history: Sequence[dict[str, str]],
    question: str,
    passages: Sequence[dict[str, Any]] | None,
    context: Context,
) -> tuple[bool | None, list[str]]:
    """The clarify decision alone: True = underspecified, None when the model gave no usable reply.

    No referring phrase: clear, without a model call. A referring phrase on the first turn: nothing
    can have named it, so underspecified. Otherwise the model names what the phrase refers to, and the
    turn is underspecified when it says NONE or names something the last exchange never mentions.
    Returns the decision and the evidence (the model's raw reply, or the rule that decided).
    """
    phrase = referring_phrase(question)
    if phrase is None:
        return False, ["no referring phrase"]
    if not history:
        return True, [f"first turn refers to '{phrase}'"]
    recent = list(history)[-2:]
    messages = clarify_messages(
        context.clarify_instruction, recent, question, passages, context, phrase=phrase
    )
    reply = str(
        invoke_text(
            get_chat_model(context.clarify_model), messages, max_tokens=context.clarify_referent_max_tokens
        ).content
    ).strip()
    if not reply:
        return None, [reply]
    conversation = " ".join(turn["text"] for turn in recent).lower()
    named = [w for w in _WORD.findall(reply.lower()) if len(w) > 3 and w not in question.lower()]
    unresolved = "none" in reply.lower() or not any(w in conversation for w in named)
    return unresolved, [reply]


def clarifying_question(state: dict[str, Any], context: Context) -> str:
    messages = clarify_messages(
        context.clarify_question_instruction,
        state.get("history", []),
        state["question"],
        state.get("passages"),
        context,
    )
    reply = invoke_text(
        get_chat_model(context.clarify_model), messages, max_tokens=context.clarify_max_tokens
    )
    text = " ".join(str(reply.content).split()).strip("\"' ")
    return text if text.endswith("?") else context.clarify_fallback_question


@guarded
def clarify(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    decision, raws = is_underspecified(
        state.get("history", []), state["question"], state.get("passages"), context
    )
    update: dict[str, Any] = {}
    if decision is None:  # no usable reply: answering is the safer default
        update["fallbacks"] = [{"node": "clarify", "used": "clear", "raw": raws[-1]}]
    if not decision:
        return {**update, "clarification": {"asked": False}}
    asked = clarifying_question(state, context)
    if not context.clarify_interrupt:
        return {
            **update,
            "clarification": {"asked": True, "question": asked, "evidence": raws[-1]},
            "answer": asked,
        }
    # Chat: wait for the user's reply. On resume this node runs again from the top (same decision and
    # question, the model is deterministic) and interrupt() returns the reply instead of raising.
    reply = str(interrupt({"clarifying_question": asked})).strip()
    return {
        **update,
        "clarification": {"asked": True, "question": asked, "evidence": raws[-1], "reply": reply},
        "question": f"{state['question']} ({reply})" if reply else state["question"],
    }
