"""Check every sentence of the answer against the passages; drop what they do not back.

A sentence is backed when its facts (numbers, names) are found in the passages or the conversation and
enough of its content words are (``mtrag_graph.judging.grounding``). Unsupported sentences are cut;
an answer whose claims are all unsupported becomes the abstention (one without a claim, "Yes.", stands) (``AbstainReason.UNGROUNDED``). The
per-sentence support, with the passages that back each sentence, stays in ``grounding``: the raw
material of citations.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.judging.grounding import grounded_answer, sentence_support, support_entries
from mtrag_graph.messages import format_conversation
from mtrag_graph.nodes._common import guarded
from mtrag_graph.state import AbstainReason, State


@guarded
def ground_answer(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    answer = state.get("answer") or ""
    passages = state.get("kept_passages") or []
    if context.grounding == "off" or not answer:
        return {}
    support = sentence_support(
        answer,
        [p.get("text", "") for p in passages],
        format_conversation(state.get("history") or []),
        context.grounding_min_support,
        question=state["question"],
    )
    sentences = support_entries(support, passages)
    dropped = sum(1 for s in support if not s.supported)
    grounding = {"method": context.grounding, "min_support": context.grounding_min_support,
                 "sentences": sentences, "dropped": dropped, "answer_before": answer}  # fmt: skip
    kept = grounded_answer(answer, support)
    if kept is None:
        return {"grounding": grounding, "abstain_reason": AbstainReason.UNGROUNDED}
    if kept != answer:
        return {"grounding": grounding, "answer": kept}
    return {"grounding": grounding}
