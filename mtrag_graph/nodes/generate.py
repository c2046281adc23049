"""Write the answer from the kept passages; a retry uses the stricter instruction.

The model and prompt variant are the active candidate's: ``generate_model`` with the default prompt
unless candidates are configured (one candidate, or the one the judge chose when a retry follows it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.judging.verdict import standing_text
from mtrag_graph.models import get_chat_model, invoke_text
from mtrag_graph.nodekit.release import Release
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.prompts.build import answer_messages, offers_decline
from mtrag_graph.stages.candidates import Candidate
from mtrag_graph.state import State


def active_candidate(state: Mapping[str, Any], context: Context) -> Candidate:
    """The candidate this node (and a retry after the judge) answers with."""
    if not context.candidates:
        return Candidate(model=context.generate_model)
    return context.candidates[state.get("chosen_candidate") or 0]


@guarded
def generate(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    candidate = active_candidate(state, context)
    # what stands of the draft is sent as it is written (mtrag_graph.nodekit.release)
    release = Release(state, lambda draft: standing_text(draft, state, context), candidate.finish)
    reply = invoke_text(
        get_chat_model(candidate.model),
        answer_messages(state, context, candidate),
        max_tokens=context.answer_max_tokens,
        on_token=release.token,
    )
    draft = candidate.finish(str(reply.content))
    update: dict[str, Any] = {
        "draft_finish_reason": (reply.response_metadata or {}).get("finish_reason"),
        "shown": release.shown,
        "decline_offered": offers_decline(state, context, candidate) is not False,
    }
    update["draft"] = draft
    return update
