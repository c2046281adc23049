"""Decide what of the draft reaches the user: keep it, ask once more, or decline (``judging.verdict``).

One node and one retry edge: a ``retry`` goes back to ``generate`` with the reason (the stricter
instruction, or the decline retry's), a ``decline`` to ``abstain`` with ``abstain_reason`` "verdict", a
``keep`` to ``finish`` with the text to show. The verdict's outcome, why and signals are kept in the
route (``verdict``); the per-sentence support, the raw material of citations, in ``grounding``. A draft
not taken (retried, or declined) is kept in ``rejected_drafts`` with its problems.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.judging.verdict import verdict
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.state import AbstainReason, State

DRAFT_CHARS = 600  # a rejected draft is kept to this length in the route


@guarded
def accept_answer(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    decided = verdict(state, runtime.context)
    update: dict[str, Any] = {"verdict": decided.record()}
    if decided.grounding:
        update["grounding"] = decided.grounding
    if decided.outcome == "keep":
        return {**update, "answer": decided.text, "answer_problems": []}
    rejected = {
        "draft": str(state.get("draft") or "")[:DRAFT_CHARS],
        "problems": list(decided.signals.get("problems") or []),
        "outcome": str(decided.why or ""),
    }
    update["rejected_drafts"] = [*(state.get("rejected_drafts") or []), rejected]
    if decided.outcome == "retry":
        return {**update, **decided.retry}
    return {**update, "answer_problems": rejected["problems"], "abstain_reason": AbstainReason.VERDICT}
