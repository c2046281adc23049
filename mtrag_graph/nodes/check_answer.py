"""Clean the draft and judge it; a bad draft is retried once with a stricter prompt, then abstained.

The decision is ``judging.answer_check.check_draft``, which the stream's release also reads. A draft not
taken (retried, or ended in an abstention) is kept in ``rejected_drafts`` with its problems: the route
shows what each retry answered.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.judging.answer_check import check_draft
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.state import State

DRAFT_CHARS = 600  # a rejected draft is kept to this length in the route


@guarded
def check_answer(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    outcome = check_draft(state, runtime.context)
    if "answer" in outcome and not outcome.get("abstain_reason"):
        return outcome
    rejected = {
        "draft": str(state.get("draft") or "")[:DRAFT_CHARS],
        "problems": list(outcome.get("answer_problems") or []),
        "outcome": str(outcome.get("retry_reason") or outcome.get("abstain_reason") or ""),
    }
    return {**outcome, "rejected_drafts": [*(state.get("rejected_drafts") or []), rejected]}
