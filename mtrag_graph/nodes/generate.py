"""Write the answer from the kept passages; a retry uses the stricter instruction."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.models import CallLog, get_chat_model, invoke_text
from mtrag_graph.nodes._common import guarded
from mtrag_graph.nodes._grounded import grounded_messages, question_for_answering


@guarded
def generate(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    question = question_for_answering(state)
    if state.get("answer_problems"):
        tail = context.strict_generate_instruction.format(
            question=question, problems="; ".join(state["answer_problems"]), idk=context.idk_answer
        )
    else:
        tail = context.generate_instruction.format(question=question, idk=context.idk_answer)
    log = CallLog(node="generate")
    reply = invoke_text(
        get_chat_model(context.generate_model),
        grounded_messages(state, context, tail),
        log,
        max_tokens=context.answer_max_tokens,
    )
    return {
        "draft": str(reply.content),
        "draft_finish_reason": (reply.response_metadata or {}).get("finish_reason"),
        "model_calls": log.records,
    }
