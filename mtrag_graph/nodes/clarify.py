"""Underspecified turns: ask a clarifying question instead of answering (or saying "I don't know").

One yes/no judgement: does the user's turn leave open which of several things is meant? If so, a
short clarifying question naming the options found. In batch mode that question is the answer; in
chat mode (``Context.clarify_interrupt``) the node interrupts the graph, and the user's reply,
passed back with ``Command(resume=reply)``, is added to the question the rest of the graph answers.

Not part of the default graph: it is inserted with ``CLARIFY`` (``build_graph(insert=[CLARIFY])``),
right after ``load_task``, because it must also see turns without passages, which
``evidence_precheck`` would otherwise turn into "I don't know" before anything else runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from mtrag_graph.budget import cut
from mtrag_graph.context import Context
from mtrag_graph.graph import Insertion
from mtrag_graph.models import CallLog, ask_choice, get_chat_model, invoke_text
from mtrag_graph.nodes._common import format_conversation, guarded
from mtrag_graph.prompts import clarify as prompts

# Kept small: the judge runs on every turn. The start of a passage is enough to tell referents apart.
PASSAGE_CHARS = 120
MAX_PASSAGES = 4
HISTORY_TURNS = 4
HISTORY_AGENT_CHARS = 200


def _messages(
    instruction: str,
    history: Sequence[dict[str, str]],
    question: str,
    passages: Sequence[dict[str, Any]] | None,
) -> list[BaseMessage]:
    conversation = format_conversation(list(history)[-HISTORY_TURNS:], HISTORY_AGENT_CHARS)
    lines = []
    for passage in list(passages or [])[:MAX_PASSAGES]:
        title = passage.get("title") or ""
        text = cut(f"{title}: {passage.get('text', '')}" if title else passage.get("text", ""), PASSAGE_CHARS)
        lines.append(f"- {text}")
    body = instruction.format(
        conversation=conversation or prompts.NO_CONVERSATION,
        passages="\n".join(lines) or prompts.NO_PASSAGES,
        question=" ".join(question.split()),
    )
    return [SystemMessage(content=prompts.SYSTEM), HumanMessage(content=body)]


def is_underspecified(
    history: Sequence[dict[str, str]],
    question: str,
    passages: Sequence[dict[str, Any]] | None,
    context: Context,
    log: CallLog,
) -> tuple[bool | None, list[str]]:
    """The clarify decision alone: True = underspecified, None when no reply parsed; and the raw replies.

    The model is asked whether the turn is *clear*; "no" means underspecified.
    """
    messages = _messages(context.clarify_instruction, history, question, passages)
    clear, raws = ask_choice(
        get_chat_model(context.clarify_model), messages, ["yes", "no"], log, retries=context.parse_retries
    )
    return (None if clear is None else clear == "no"), raws


def clarifying_question(state: dict[str, Any], context: Context, log: CallLog) -> str:
    messages = _messages(
        context.clarify_question_instruction,
        state.get("history", []),
        state["question"],
        state.get("passages"),
    )
    reply = invoke_text(
        get_chat_model(context.clarify_model), messages, log, max_tokens=context.clarify_max_tokens
    )
    text = " ".join(str(reply.content).split()).strip("\"' ")
    return text if text.endswith("?") else context.clarify_fallback_question


@guarded
def clarify(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    log = CallLog(node="clarify")
    decision, raws = is_underspecified(
        state.get("history", []), state["question"], state.get("passages"), context, log
    )
    update: dict[str, Any] = {"model_calls": log.records}
    if decision is None:  # unparseable: answering is the safer default
        update["fallbacks"] = [{"node": "clarify", "used": "clear", "raw": raws[-1]}]
    if not decision:
        return {**update, "clarification": {"asked": False}}
    asked = clarifying_question(state, context, log)
    if not context.clarify_interrupt:
        return {**update, "clarification": {"asked": True, "question": asked}, "answer": asked}
    # Chat: wait for the user's reply. On resume this node runs again from the top (same decision and
    # question, the model is deterministic) and interrupt() returns the reply instead of raising.
    reply = str(interrupt({"clarifying_question": asked})).strip()
    return {
        **update,
        "clarification": {"asked": True, "question": asked, "reply": reply},
        "question": f"{state['question']} ({reply})" if reply else state["question"],
    }


CLARIFY = Insertion("clarify", clarify, after="load_task", before="evidence_precheck")
"""Insert with ``build_graph(insert=[CLARIFY])``: every turn is judged before any abstention."""
