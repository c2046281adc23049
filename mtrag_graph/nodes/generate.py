"""Write the answer from the kept passages; a retry uses the stricter instruction.

The model and prompt variant are the active candidate's: ``generate_model`` with the default prompt
unless candidates are configured (one candidate, or the one the judge chose when a retry follows it).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.models import CallLog, get_chat_model, invoke_text
from mtrag_graph.nodes._candidates import active_candidate, candidate_tail, finish_text
from mtrag_graph.nodes._common import guarded
from mtrag_graph.nodes._grounded import grounded_messages, question_for_answering


@guarded
def generate(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    candidate = active_candidate(state, context)
    question = question_for_answering(state)
    if state.get("answer_problems"):
        tail = context.strict_generate_instruction.format(
            question=question, problems="; ".join(state["answer_problems"]), idk=context.idk_answer
        )
    else:
        tail = candidate_tail(candidate, question, context)
    log = CallLog(node="generate")
    reply = invoke_text(
        get_chat_model(candidate.model),
        grounded_messages(state, context, tail),
        log,
        max_tokens=context.answer_max_tokens,
    )
    return {
        "draft": finish_text(candidate, str(reply.content), context),
        "draft_finish_reason": (reply.response_metadata or {}).get("finish_reason"),
        "model_calls": log.records,
    }
