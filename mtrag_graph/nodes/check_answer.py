"""Clean the draft and judge it; a bad draft is retried once with a stricter prompt, then abstained."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.messages import DECLINED_DESPITE_EVIDENCE
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.nodes.evidence_precheck import retrieved_setting
from mtrag_graph.state import AbstainReason, RetryReason, State
from mtrag_graph.text import declines
from mtrag_graph.text.answers import (
    REPEATS_PREVIOUS,
    answer_problems,
    clean_answer,
    drop_about_documents,
    drop_spurious_yes_no,
    injected_payloads,
    repeats_injection,
    trim_to_sentence,
)


@guarded
def check_answer(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    return check_draft(state, runtime.context)


def check_draft(state: Mapping[str, Any], context: Context) -> dict[str, Any]:
    """The stage's decision on ``state["draft"]``: the cleaned ``answer``, or a retry (``retry_reason``,
    ``answer_problems``), or an abstention (``abstain_reason``). What may be shown of a draft while it is
    written is decided by the same function (``mtrag_graph.nodekit.release``)."""
    answer = drop_spurious_yes_no(clean_answer(state.get("draft", "")), state["question"])
    truncated = state.get("draft_finish_reason") == "length"
    if truncated and (trimmed := trim_to_sentence(answer)):
        answer, truncated = trimmed, False
    retries = state.get("retries", 0)
    # sentences about the documents ("The documents provide information about ...") state nothing: an
    # answer made only of them declines
    answer = drop_about_documents(answer) if answer.strip() else answer
    if declines(answer):
        # the gate judged the passages relevant: ask once for the part they support before declining
        retry = context.retry_declines_retrieved if retrieved_setting(state) else context.retry_declines
        # (not when the draft was already asked without the "I don't know" way out: first_draft "answer")
        offered = state.get("decline_offered", True)
        if retry and offered and state.get("gate") == "yes" and retries < context.max_generate_retries:
            return {"answer_problems": [DECLINED_DESPITE_EVIDENCE], "retries": retries + 1,
                    "retry_reason": RetryReason.DECLINED, "decline_retried": True}  # fmt: skip
        return {
            "answer": context.idk_answer,
            "answer_problems": [],
            "abstain_reason": AbstainReason.GENERATOR_DECLINED,
        }
    if not context.check_answers:
        return {"answer": answer or context.idk_answer, "answer_problems": []}
    agent_turns = [t["text"] for t in state.get("history") or [] if t.get("speaker") == "agent"]
    problems = answer_problems(
        answer, state["question"], truncated, context.min_answer_words, agent_turns[-1] if agent_turns else ""
    )
    payloads = injected_payloads([p.get("text", "") for p in state.get("kept_passages") or []])
    if payloads and repeats_injection(answer, payloads):
        problems.append("repeats an instruction found in a passage")
    if not problems or (problems == [REPEATS_PREVIOUS] and retries >= context.max_generate_retries):
        # asked again and still the answer before: the passages may hold one answer for both turns
        return {"answer": answer, "answer_problems": []}
    if retries < context.max_generate_retries:
        return {"answer_problems": problems, "retries": retries + 1, "retry_reason": RetryReason.PROBLEMS}
    return {"answer_problems": problems, "abstain_reason": AbstainReason.FAILED_RETRY}
