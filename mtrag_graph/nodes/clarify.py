"""Underspecified turns: ask a clarifying question instead of answering (or saying "I don't know").

Does the user's turn point at one specific thing ("this library", "her") that the conversation never
named? If so, a short clarifying question naming the options found. In batch mode that question is
the answer; in chat mode (``Context.clarify_interrupt``) the node interrupts the graph, and the user's reply,
passed back with ``Command(resume=reply)``, is added to the question the rest of the graph answers.

Switched on with ``Context.clarify`` (the ``full`` preset, ``answer --clarify``, the chat). It runs
right after ``load_task`` (see ``mtrag_graph.graph``), because it must also see turns without
passages, which ``evidence_precheck`` would otherwise turn into "I don't know" before anything else runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from mtrag_graph.context import Context
from mtrag_graph.messages import clarify_messages
from mtrag_graph.models import get_chat_model, invoke_text
from mtrag_graph.models.logprobs import score_choice
from mtrag_graph.nodes._common import guarded
from mtrag_graph.words import FUNCTION_WORDS

# Closed-class words only (determiners, pronouns, auxiliaries): no list of topic nouns. A phrase
# "this/that/these/those <word>" or "the <word>'s" points at one particular thing; when that word
# does not occur in the last exchange, nothing in the conversation says which one.
_DEMONSTRATIVE = re.compile(r"\b(this|that|these|those)\s+([a-z][\w-]*)", re.IGNORECASE)
_POSSESSIVE = re.compile(r"\bthe\s+([a-z][\w-]*)'s\b", re.IGNORECASE)
_A_SPECIFIC = re.compile(r"\ba specific\s+[a-z]+", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
LAST_EXCHANGE_TURNS = 2  # the referent must have been named in the last exchange
_NOT_A_NOUN = FUNCTION_WORDS | {"means", "mean", "be", "been"}
REFERRING_WORD = re.compile(
    r"\b(the|this|that|these|those|it|its|they|them|their|he|him|his|she|her|one|a specific)\b", re.IGNORECASE
)


def _stem(word: str) -> str:
    """Singular of a plain English plural ("libraries" -> "library", "clinics" -> "clinic")."""
    word = word.lower()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def unresolved_reference(history: Sequence[dict[str, str]], question: str) -> str | None:
    """A phrase of the question that points at one thing the last exchange never names, or None."""
    named = {
        _stem(w) for turn in list(history)[-LAST_EXCHANGE_TURNS:] for w in _WORD.findall(turn["text"].lower())
    }
    for match in _DEMONSTRATIVE.finditer(question):
        noun = match.group(2)
        if noun.lower() not in _NOT_A_NOUN and _stem(noun) not in named:
            return f"{match.group(1)} {noun}"
    for match in _POSSESSIVE.finditer(question):
        if _stem(match.group(1)) not in named:
            return match.group(0)
    found = _A_SPECIFIC.search(question)
    return found.group(0) if found else None


def unclear_probability(
    history: Sequence[dict[str, str]], question: str, context: Context
) -> tuple[float | None, str]:
    """The model's probability that the message points at something nobody named, and its raw reply."""
    messages = clarify_messages(
        context.clarify_instruction, list(history)[-LAST_EXCHANGE_TURNS:], question, None, context
    )
    _, probabilities, raws = score_choice(
        get_chat_model(context.clarify_model), messages, ["yes", "no"], retries=context.parse_retries
    )
    if probabilities is None:
        return None, raws[-1] if raws else ""
    return probabilities["yes"], raws[-1]


def is_underspecified(
    history: Sequence[dict[str, str]],
    question: str,
    passages: Sequence[dict[str, Any]] | None,
    context: Context,
) -> tuple[bool | None, list[str]]:
    """The clarify decision alone: True = underspecified, None when the model gave no usable reply.

    1. A demonstrative or possessive phrase whose words the last exchange never mentions ("this
       library" after an exchange about a clinic, "the hurricane's" on a first turn), or "a specific
       ...": underspecified, with no model call.
    2. Only with ``Context.clarify_threshold`` set: a message with a determiner or pronoun gets one
       yes/no ("does it point at something neither it nor the conversation identifies?"), and the
       turn is underspecified when the "yes" probability reaches the threshold. Off by default: on the
       1.5B model that probability did not separate underspecified from answerable turns
       (benchmarks/results/decisions.md).
    ``passages`` are not used: the question is whether the user said which thing.
    Returns the decision and the evidence (the phrase, the probability, or the rule that decided).
    """
    phrase = unresolved_reference(history, question)
    if phrase is not None:
        return True, [f"unresolved reference '{phrase}'"]
    if context.clarify_threshold is None or not REFERRING_WORD.search(question):
        return False, ["no unresolved reference"]
    probability, raw = unclear_probability(history, question, context)
    if probability is None:
        return None, [raw]
    return probability >= context.clarify_threshold, [f"p_unclear={probability:.3f}"]


def clarifying_question(state: dict[str, Any], context: Context) -> str:
    messages = clarify_messages(
        context.clarify_question_instruction,
        state.get("history", []),
        state["question"],
        state.get("passages"),
        context,
    )
    reply = invoke_text(
        get_chat_model(context.clarify_model), messages, max_tokens=context.clarify_max_tokens, stream=True
    )
    text = " ".join(str(reply.content).split()).strip("\"' ")
    return text if text.endswith("?") else context.clarify_fallback_question


@guarded
def clarify(state: dict[str, Any], runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    decision, raws = is_underspecified(
        state.get("history", []), state["question"], state.get("passages"), context
    )
    update: dict[str, Any] = {}
    if decision is None:  # no usable reply: answering is the safer default
        update["fallbacks"] = [{"node": "clarify", "used": "clear", "raw": raws[-1]}]
    if not decision:
        return {**update, "clarification": {"asked": False}}
    asked = clarifying_question(state, context)
    if not context.clarify_interrupt:
        return {
            **update,
            "clarification": {"asked": True, "question": asked, "evidence": raws[-1]},
            "answer": asked,
        }
    # Chat: wait for the user's reply. On resume this node runs again from the top (same decision and
    # question, the model is deterministic) and interrupt() returns the reply instead of raising.
    reply = str(interrupt({"clarifying_question": asked})).strip()
    return {
        **update,
        "clarification": {"asked": True, "question": asked, "evidence": raws[-1], "reply": reply},
        "question": f"{state['question']} ({reply})" if reply else state["question"],
    }
