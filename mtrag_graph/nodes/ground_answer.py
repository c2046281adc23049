"""Check every sentence of the answer against the passages; drop what they do not back.

A sentence is backed when its facts (numbers, names) are found in the passages or the conversation and
enough of its content words are (``mtrag_graph.judging.grounding``). Unsupported sentences are cut;
an answer whose claims are all unsupported becomes the abstention (one without a claim, "Yes.", stands) (``AbstainReason.UNGROUNDED``). The
per-sentence support, with the passages that back each sentence, stays in ``grounding``: the raw
material of citations.

An answer written only by the decline retry (the model first said "I don't know", the retry took that
way out away) is also checked by the model itself when ``Context.verify_retried_answers`` says so: asked
yes/no whether the documents state it, a "yes" probability under ``verify_threshold`` makes it the
abstention (``AbstainReason.UNVERIFIED``); the probability is kept in ``grounding["verify"]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.judging.decline import draw_samples, sample_disagreements
from mtrag_graph.judging.grounding import grounded_answer, sentence_support, support_entries
from mtrag_graph.messages import format_conversation, question_for_answering, sample_messages, verify_messages
from mtrag_graph.models import get_chat_model
from mtrag_graph.models.logprobs import score_choice
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.nodes.check_answer import check_draft
from mtrag_graph.nodes.evidence_precheck import retrieved_setting
from mtrag_graph.state import AbstainReason, State


@guarded
def ground_answer(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    answer = state.get("answer") or ""
    if context.grounding == "off" or not answer:
        return {}
    kept, grounding = ground(answer, state, context)
    if kept is None:
        return {"grounding": grounding, "abstain_reason": AbstainReason.UNGROUNDED}
    if verifies(state, context):
        grounding["verify"] = verified = verify_answer(state, context, kept)
        if not verified["kept"]:
            return {"grounding": grounding, "abstain_reason": AbstainReason.UNVERIFIED}
    if samples_checked(state, context):
        grounding["samples"] = checked = check_against_samples(state, context, kept)
        if not checked["kept"]:
            return {"grounding": grounding, "abstain_reason": AbstainReason.MODEL_UNSURE}
    if kept != answer:
        return {"grounding": grounding, "answer": kept}
    return {"grounding": grounding}


def ground(answer: str, state: Mapping[str, Any], context: Context) -> tuple[str | None, dict[str, Any]]:
    """The stage's decision without the model: ``answer`` less the sentences the passages do not back
    (None: none of its claims is backed), and the per-sentence support behind it."""
    passages = state.get("kept_passages") or []
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
    return grounded_answer(answer, support), grounding


def verifies(state: Mapping[str, Any], context: Context) -> bool:
    """Whether the model is asked to confirm the answer (``Context.verify_retried_answers``)."""
    scope = context.verify_retried_answers
    if scope == "off" or not state.get("decline_retried"):
        return False
    return scope == "always" or retrieved_setting(state)


def verify_answer(state: Mapping[str, Any], context: Context, answer: str) -> dict[str, Any]:
    """The model's yes-probability that the documents state ``answer``; kept when it reaches the
    threshold. No usable reply keeps the answer (the grounding check already passed it) and says so."""
    _, probabilities, raws = score_choice(
        get_chat_model(context.generate_model),
        verify_messages(state, context, answer),
        ["yes", "no"],
        retries=context.parse_retries,
    )
    record: dict[str, Any] = {
        "p_yes": None,
        "threshold": context.verify_threshold,
        "kept": True,
        "answer": answer,
    }
    if probabilities is None:
        return {**record, "raw": raws[-1] if raws else ""}
    p_yes = probabilities["yes"]
    return {**record, "p_yes": round(p_yes, 4), "kept": p_yes >= context.verify_threshold}


def samples_checked(state: Mapping[str, Any], context: Context) -> bool:
    """Whether the answer is checked against samples (``Context.answer_samples``, ``sample_scope``)."""
    if context.answer_samples <= 0:
        return False
    return context.sample_scope == "always" or retrieved_setting(state)


def check_against_samples(state: Mapping[str, Any], context: Context, answer: str) -> dict[str, Any]:
    """Samples of the answer prompt (with "I don't know" offered) and which of them disagree with
    ``answer`` (``judging.decline.sample_disagreements``); kept when fewer than ``samples_needed`` do."""
    replies = draw_samples(
        get_chat_model(context.generate_model),
        sample_messages(state, context),
        context.answer_samples,
        context.sample_temperature,
        context.sample_max_tokens,
    )
    disagree = sample_disagreements(answer, replies, question_for_answering(state))
    return {"replies": replies, "disagree": disagree, "kept": len(disagree) < context.samples_needed}


def standing_text(draft: str, state: Mapping[str, Any], context: Context) -> str:
    """The answer the checks would give if the run's draft were ``draft`` ('' when they would hold it)."""
    if verifies(state, context) or samples_checked(state, context):
        return ""  # the model confirms the answer, or its samples are read, at the end: nothing stands before
    outcome = check_draft({**state, "draft": draft, "draft_finish_reason": "stop"}, context)
    answer = outcome.get("answer")
    if not answer or outcome.get("abstain_reason") is not None or answer == context.idk_answer:
        return ""
    if context.grounding == "off":
        return answer
    kept, _ = ground(answer, state, context)
    return kept or ""
