"""Write the answer from the kept passages; a retry uses the stricter instruction.

The model and prompt variant are the active candidate's: ``generate_model`` with the default prompt
unless candidates are configured (one candidate, or the one the judge chose when a retry follows it).
With ``Context.answer_mode="evidence_first"`` the first answer copies its evidence from the passages
before answering; a quote the passages do not hold makes it a decline (``answers.parse_evidence_first``).
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
from mtrag_graph.text.answers import parse_evidence_first


def active_candidate(state: Mapping[str, Any], context: Context) -> Candidate:
    """The candidate this node (and a retry after the judge) answers with."""
    if not context.candidates:
        return Candidate(model=context.generate_model)
    return context.candidates[state.get("chosen_candidate") or 0]


@guarded
def generate(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    candidate = active_candidate(state, context)
    evidence_first = context.answer_mode == "evidence_first" and not state.get("answer_problems")
    # what stands of the draft is sent as it is written (mtrag_graph.nodekit.release); an evidence-first reply
    # (quotes, then the answer) comes whole at the end
    release = Release(
        state,
        lambda draft: standing_text(draft, state, context),
        lambda text: candidate.finish(text, context.citation_markers),
    )
    reply = invoke_text(
        get_chat_model(candidate.model),
        answer_messages(state, context, candidate),
        max_tokens=context.answer_max_tokens + (EVIDENCE_EXTRA_TOKENS if evidence_first else 0),
        on_token=None if evidence_first else release.token,
    )
    draft = candidate.finish(str(reply.content), context.citation_markers)
    update: dict[str, Any] = {
        "draft_finish_reason": (reply.response_metadata or {}).get("finish_reason"),
        "shown": release.shown,
        "decline_offered": offers_decline(state, context, candidate) is not False,
    }
    if evidence_first:
        passages = [p.get("text", "") for p in state.get("kept_passages") or []]
        draft, update["evidence_quotes"] = parse_evidence_first(draft, passages, context.idk_answer)
    update["draft"] = draft
    return update


EVIDENCE_EXTRA_TOKENS = 160  # room for the quotes before the answer
