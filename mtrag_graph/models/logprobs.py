"""A constrained choice with its probability: the decision and how sure the model was.

Backends that return token log-probabilities (llama.cpp with ``logprobs``, OpenAI-compatible servers)
give the probability mass of each choice at the first token where the reply names one; the choices are
renormalised among themselves. A threshold on that probability, calibrated on labelled data, replaces
the argmax, which a small model tilts heavily one way. Backends without log-probabilities (the
scripted fake) give 1.0 to the parsed choice.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from mtrag_graph.models.calls import CallLog, constraint_options, invoke_text, parse_choice
from mtrag_graph.models.capabilities import capabilities_of

TOP_LOGPROBS = 20


def _token_choice(token: str, choices: Sequence[str]) -> str | None:
    cleaned = token.strip().strip("\"'`*").lower()
    return next((c for c in choices if cleaned and cleaned == c.lower()), None)


def choice_probabilities(logprobs: Any, choices: Sequence[str]) -> dict[str, float] | None:
    """Each choice's share of the probability at the first reply token that names a choice.

    ``logprobs`` is the OpenAI chat format: ``{"content": [{"token", "logprob", "top_logprobs": [...]}]}``.
    None when no token names a choice (or there are no log-probabilities).
    """
    content = (logprobs or {}).get("content") if isinstance(logprobs, dict) else None
    for entry in content or []:
        if _token_choice(str(entry.get("token", "")), choices) is None:
            continue
        mass = dict.fromkeys(choices, 0.0)
        alternatives = entry.get("top_logprobs") or [entry]
        for alternative in alternatives:
            choice = _token_choice(str(alternative.get("token", "")), choices)
            if choice is not None:
                mass[choice] += math.exp(float(alternative["logprob"]))
        total = sum(mass.values())
        return {c: m / total for c, m in mass.items()} if total > 0 else None
    return None


def _logprob_options(model: BaseChatModel) -> dict[str, Any]:
    if capabilities_of(model).logprobs:
        return {"logprobs": True, "top_logprobs": TOP_LOGPROBS}
    return {}


def score_choice(
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    choices: Sequence[str],
    log: CallLog | None = None,
    *,
    retries: int = 2,
) -> tuple[str | None, dict[str, float] | None, list[str]]:
    """Like ``ask_choice``, plus each choice's probability (None when the backend gives none).

    The choice is the constrained (greedy) reply, parsed strictly; probabilities come from the same call.
    """
    conversation = list(messages)
    raws: list[str] = []
    options = {**constraint_options(model, choices=choices), **_logprob_options(model)}
    for _ in range(retries + 1):
        reply = invoke_text(model, conversation, log, max_tokens=8, **options)
        raws.append(str(reply.content))
        value = parse_choice(raws[-1], choices)
        if value is not None:
            probabilities = choice_probabilities((reply.response_metadata or {}).get("logprobs"), choices)
            if probabilities is None and not _logprob_options(model):
                probabilities = {c: float(c == value) for c in choices}
            return value, probabilities, raws
        conversation = [
            *messages,
            AIMessage(content=raws[-1]),
            HumanMessage(content=f"Reply with exactly one word: {' or '.join(choices)}."),
        ]
    return None, None, raws
