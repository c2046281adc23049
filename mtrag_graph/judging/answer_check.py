"""What of an answer stands: the draft's check (clean, reject, retry, decline) and the grounding check
(sentences the passages back, the model's confirmation, the trained verifier, the answer samples).

The check_answer and ground_answer nodes apply these decisions; ``standing_text`` runs them on a draft
still being written, so the stream shows only text that will stand (``nodekit.release``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mtrag_graph.judging import commands, yes_no
from mtrag_graph.judging.decline import decline_probability, draw_samples, sample_disagreements
from mtrag_graph.judging.grounding import (
    facts_in,
    grounded_answer,
    sentence_support,
    support_entries,
    technical_tokens,
    verbatim_key,
    verbatim_pattern,
)
from mtrag_graph.judging.verifier import get_verifier
from mtrag_graph.models import get_chat_model
from mtrag_graph.models.embeddings import get_embedder
from mtrag_graph.models.logprobs import score_choice
from mtrag_graph.prompts.build import (
    DECLINED_DESPITE_EVIDENCE,
    format_conversation,
    question_for_answering,
    sample_messages,
    verify_messages,
)
from mtrag_graph.state import AbstainReason, RetryReason, retrieved_setting
from mtrag_graph.text import declines
from mtrag_graph.text.answers import (
    ECHOES_INSTRUCTION,
    GENERAL_TERMS,
    REPEATS_PREVIOUS,
    answer_problems,
    answers_replaced,
    clean_answer,
    drop_about_documents,
    drop_spurious_yes_no,
    echoes_instruction,
    general_terms,
    injected_payloads,
    repeats_injection,
    trim_to_sentence,
)

if TYPE_CHECKING:
    from mtrag_graph.context import Context


def in_scope(scope: str, state: Mapping[str, Any]) -> bool:
    """Does a check scoped ``"off"``, ``"retrieved"`` (retrieved passages only) or ``"always"`` apply to
    this run?"""
    return scope == "always" or (scope == "retrieved" and retrieved_setting(state))


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
    answer = drop_about_documents(answer)
    if declines(answer):
        # the gate judged the passages relevant: ask once for the part they support before declining
        retry = context.retry_declines_retrieved if retrieved_setting(state) else context.retry_declines
        # (not when the draft was already asked without the "I don't know" way out: first_draft "answer")
        offered = state.get("decline_offered", True)
        if retry and offered and state.get("gate") == "yes" and retries < context.max_generate_retries:
            return {"answer_problems": [DECLINED_DESPITE_EVIDENCE], "retries": retries + 1,
                    "retry_reason": RetryReason.DECLINED, "decline_retried": True}  # fmt: skip
        return rereads(state, context, retries) or {
            "answer": context.idk_answer,
            "answer_problems": [],
            "abstain_reason": AbstainReason.GENERATOR_DECLINED,
        }
    if not context.check_answers:
        return {"answer": answer or context.idk_answer, "answer_problems": []}
    agent_turns = [t["text"] for t in state.get("history") or [] if t.get("speaker") == "agent"]
    previous = agent_turns[-1] if agent_turns else ""
    problems = answer_problems(answer, state["question"], truncated, context.min_answer_words, previous)
    asked = f"{state['question']} {question_for_answering(state)}"
    if previous and REPEATS_PREVIOUS not in problems and repeats_values(answer, previous, asked):
        problems.append(REPEATS_PREVIOUS)
    fragment = state.get("fragment") or {}
    if (
        fragment
        and REPEATS_PREVIOUS not in problems
        and answers_replaced(answer, str(fragment.get("replaced") or ""), str(fragment.get("by") or ""))
    ):
        # the elliptic turn was asked again as a whole question, and the draft answered the one before it
        problems.append(REPEATS_PREVIOUS)
    passage_texts = [
        str(p.get("text", "")) for p in state.get("kept_passages") or state.get("passages") or []
    ]
    payloads = injected_payloads(passage_texts)
    if payloads and repeats_injection(answer, payloads):
        problems.append("repeats an instruction found in a passage")
    if echoes_instruction(answer, instructions_shown(context), [state["question"], asked, *passage_texts]):
        problems.append(ECHOES_INSTRUCTION)
    if in_scope(context.general_terms, state) and general_terms(answer, passage_texts):
        problems.append(GENERAL_TERMS)
    repeat_taken = not context.decline_repeats and problems == [REPEATS_PREVIOUS]
    if not problems or (repeat_taken and retries >= context.max_generate_retries):
        # asked again and still the answer before: the passages may hold one answer for both turns
        # (Context.decline_repeats: a follow-up is never answered with the previous answer, it declines)
        return {"answer": answer, "answer_problems": []}
    if retries < context.max_generate_retries:
        return {"answer_problems": problems, "retries": retries + 1, "retry_reason": RetryReason.PROBLEMS}
    return rereads(state, context, retries) or {
        "answer_problems": problems,
        "abstain_reason": AbstainReason.FAILED_RETRY,
    }


def rereads(state: Mapping[str, Any], context: Context, retries: int) -> dict[str, Any] | None:
    """One more draft over the whole passages before a decline (``Context.reread_declines``): after a gate
    "yes", once a turn; None when the run declines."""
    if not context.reread_declines or state.get("reread") or state.get("gate") != "yes":
        return None
    return {"answer_problems": [], "retries": retries + 1, "retry_reason": RetryReason.REREAD, "reread": True}


def instructions_shown(context: Context) -> tuple[str, ...]:
    """The answering prompts' own words (system prompt, answer, retry and decline-retry instructions): an
    answer that gives a run of them back echoes the prompt (``text.answers.echoes_instruction``)."""
    return (
        context.grounded_system_prompt,
        context.generate_instruction,
        context.strict_generate_instruction,
        context.decline_retry_instruction,
    )


def repeats_values(answer: str, previous: str, asked: str) -> bool:
    """Does a follow-up's ``answer`` give the earlier agent turn's values again? Every number and
    technical token it holds beyond those of the question (``asked``) is in ``previous``, and it holds
    at least one: "How about lz4?" answered "lz4 decompresses at 1700 MB/s" after "1700 MB/s", "And over
    Q?" answered with the files of the integer solver named the turn before. Names are left out: the
    subject of a conversation ("IBM Cloud", "Borg") rightly comes back turn after turn. On the
    real-documents tuning split this catches those two wrong follow-ups and none of the right ones; the
    whole-answer overlap (``text.answers.repeats_answer``) caught neither, each having words of its own.
    With names counted too it also took an MTRAG answer naming the services the turn before had named.
    A call is compared without its "()": a call in a code span ("`f()`") never equalled the same call
    written bare, whose "()" the token pattern leaves out (the fresh split's commander-5 turn 2)."""
    numbers = facts_in(answer)[0] - facts_in(asked)[0]
    asked_key = verbatim_key(asked)
    tokens = [t for t in technical_tokens(answer) if not verbatim_pattern(t).search(asked_key)]
    if not numbers and not tokens:
        return False
    earlier = {_token_key(t) for t in technical_tokens(previous)}
    return numbers <= facts_in(previous)[0] and all(_token_key(t) in earlier for t in tokens)


def _token_key(token: str) -> str:
    """A technical token as ``repeats_values`` compares it: case, spacing and a call's "()" aside, so
    "`program.showHelpAfterError()`" in a code span is "program.showHelpAfterError" written bare (whose
    "()" the token pattern leaves out). A plain word of the answer before is no token ("release." then
    "`Release`" for another build system)."""
    return verbatim_key(token).removesuffix("()")


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


def quote_command(
    state: Mapping[str, Any], context: Context, draft: str, kept: str, grounding: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """``kept`` (the grounding check's answer to ``draft``) with the passage line holding the draft's
    command quoted after it, and the grounding record with the quote's support (``judging.commands``);
    as they were when the question asks no how-to, no line is found, or the quote is not backed whole."""
    passages = state.get("kept_passages") or []
    quote = commands.command_quote(question_for_answering(state), draft, kept, passages)
    if quote is None:
        return kept, grounding
    quoted = commands.with_quote(kept, quote)
    again, support = ground(quoted, state, context)
    if again != quoted:
        return kept, grounding
    return quoted, {**grounding, "sentences": support["sentences"], "command_quote": quote.as_dict(),
                    "sentences_before_quote": grounding["sentences"]}  # fmt: skip


def quotes_yes_no(state: Mapping[str, Any], context: Context, answer: str) -> bool:
    """Whether ``answer`` is settled on a quoted sentence (``Context.yes_no_quote``, ``judging.yes_no``)."""
    on = context.yes_no_quote and context.grounding != "off"
    return on and bool(state.get("kept_passages")) and yes_no.applies(question_for_answering(state), answer)


def quote_yes_no(state: Mapping[str, Any], context: Context, answer: str) -> tuple[str, dict[str, Any]]:
    """The yes/no answer with the sentence that decides it quoted, and the record (``judging.yes_no``)."""
    return yes_no.settle(
        answer,
        question_for_answering(state),
        state.get("kept_passages") or [],
        get_chat_model(context.generate_model),
        get_embedder(context.embedder).embed,
        min_confidence=context.yes_no_min_confidence,
        retries=context.parse_retries,
        quote_from=context.yes_no_quote_from,
        keep_no=context.yes_no_keep_no,
    )


def verifies(state: Mapping[str, Any], context: Context) -> bool:
    """Whether the model is asked to confirm the answer (``Context.verify_retried_answers``)."""
    return bool(state.get("decline_retried")) and in_scope(context.verify_retried_answers, state)


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


def verifier_checked(context: Context) -> bool:
    """Whether the trained verifier checks the answer (``Context.verifier_threshold``)."""
    return context.verifier_threshold is not None


def cited_passages(state: Mapping[str, Any], grounding: Mapping[str, Any]) -> list[str]:
    """The texts of the kept passages that back a kept sentence of the answer (all of them when none)."""
    passages = state.get("kept_passages") or []
    cited = sorted(
        {i for s in grounding.get("sentences") or [] if s.get("supported") for i in s.get("passages") or []}
    )
    chosen = [passages[i] for i in cited if i < len(passages)] or passages
    return [p.get("text", "") for p in chosen]


def check_with_verifier(
    state: Mapping[str, Any], context: Context, grounding: Mapping[str, Any]
) -> dict[str, Any]:
    """The verifier's best score for (the standalone question, each cited passage); the answer is kept
    when it reaches ``verifier_threshold`` (``judging.verifier``: a passage that states the answer)."""
    passages = cited_passages(state, grounding)
    score = get_verifier(context.verifier)(question_for_answering(state), passages)
    threshold = context.verifier_threshold
    return {"score": round(score, 4), "threshold": threshold, "passages": len(passages),
            "kept": threshold is None or score >= threshold}  # fmt: skip


def samples_checked(state: Mapping[str, Any], context: Context) -> bool:
    """Whether the answer is checked against samples or the samples' prompt's decline probability
    (``Context.answer_samples``, ``sample_decline_threshold``, ``sample_scope``)."""
    if context.answer_samples <= 0 and context.sample_decline_threshold is None:
        return False
    return in_scope(context.sample_scope, state)


def check_against_samples(state: Mapping[str, Any], context: Context, answer: str) -> dict[str, Any]:
    """Samples of the answer prompt (with "I don't know" offered), which of them disagree with ``answer``
    (``judging.decline.sample_disagreements``), and the prompt's first-token decline probability (the
    share of samples that would decline, ``judging.decline.decline_probability``). Kept when fewer than
    ``samples_needed`` disagree and the probability stays under ``sample_decline_threshold``."""
    model = get_chat_model(context.generate_model)
    messages = sample_messages(state, context)
    threshold = context.sample_decline_threshold
    p_decline = decline_probability(model, messages) if threshold is not None else None
    replies = (
        draw_samples(
            model, messages, context.answer_samples, context.sample_temperature, context.sample_max_tokens
        )
        if context.answer_samples > 0
        else []
    )
    disagree = sample_disagreements(answer, replies, question_for_answering(state))
    unsure = threshold is not None and p_decline is not None and p_decline >= threshold
    return {"replies": replies, "disagree": disagree, "p_decline": p_decline,
            "kept": len(disagree) < context.samples_needed and not unsure}  # fmt: skip


def standing_text(draft: str, state: Mapping[str, Any], context: Context) -> str:
    """The answer the checks would give if the run's draft were ``draft`` ('' when they would hold it)."""
    confirmed_later = verifies(state, context) or samples_checked(state, context) or verifier_checked(context)
    if confirmed_later or quotes_yes_no(state, context, draft):
        return ""  # confirmed (model, samples, verifier) or quoted at the end: nothing stands before
    outcome = check_draft({**state, "draft": draft, "draft_finish_reason": "stop"}, context)
    answer = outcome.get("answer")
    if not answer or outcome.get("abstain_reason") is not None or answer == context.idk_answer:
        return ""
    if context.grounding == "off":
        return answer
    kept, _ = ground(answer, state, context)
    return kept or ""
