"""Write the answer from the kept passages; a retry uses the stricter instruction.

The model and prompt variant are the active candidate's: ``generate_model`` with the default prompt
unless candidates are configured (one candidate, or the one the judge chose when a retry follows it).
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.candidates import active_candidate
from mtrag_graph.context import Context
from mtrag_graph.messages import answer_messages
from mtrag_graph.models import get_chat_model, invoke_text
from mtrag_graph.nodes._common import guarded


@guarded
def generate(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    candidate = active_candidate(state, context)
    reply = invoke_text(
        get_chat_model(candidate.model),
        answer_messages(state, context, candidate),
        max_tokens=context.answer_max_tokens,
        stream=True,  # the answer's tokens reach graph.stream(..., stream_mode="messages")
    )
    return {
        "draft": candidate.finish(str(reply.content), context.citation_markers),
        "draft_finish_reason": (reply.response_metadata or {}).get("finish_reason"),
    }
