"""The model's ask-back judgement for a turn without passages: one reply token of a yes/no question
("Can this last question be answered without asking the user which ... they mean?") whose yes/no
log-probabilities give the probability that the turn must be asked back.

The model-free signals of ``judging/underspecified.py`` need rival referents among the passages, so a turn
without passages was never asked about; the trained classifier's no-passage model (MiniLM embedding and
reference features) asked none of the dev slice's 5 such turns. Here the model reads the conversation
and the question; its log-odds join the classifier's no-passage score in a two-input logistic regression
fitted on the generated data's tuning split (``research/clarify_ask_back.py``, the file
``mtrag_graph/data/clarify_ask_back.json`` with its card). LLM output is untrusted: a reply whose first
token puts too little probability on yes or no gives None, and the caller records that and does not ask.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel

from mtrag_graph.context import Context
from mtrag_graph.models.calls import invoke_text
from mtrag_graph.models.capabilities import capabilities_of
from mtrag_graph.prompts.build import clarify_messages
from mtrag_graph.settings import data_file_text

TOP_LOGPROBS = 20
# the share of the first token's top alternatives that must be a yes or a no for the reply to count: a
# reply that opens otherwise ("The question ...") says nothing on the yes/no
MIN_CHOICE_MASS = 0.5
MAX_LOG_ODDS = 12.0  # a probability of 0 or 1 read as this many nats


def yes_no_mass(logprobs: Any) -> dict[str, float] | None:
    """The probability of "yes" and of "no" (any case, quotes stripped) among the first reply token's
    top alternatives (OpenAI logprobs format), or None when the format is wrong or they hold less than
    ``MIN_CHOICE_MASS``."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content or not isinstance(content[0], dict):
        return None
    first = content[0]
    alternatives = first.get("top_logprobs") or [first]
    mass = {"yes": 0.0, "no": 0.0}
    for alternative in alternatives:
        if not isinstance(alternative, dict):
            return None
        token = str(alternative.get("token", "")).strip().strip("\"'`*.").lower()
        try:
            logprob = float(alternative["logprob"])
        except (KeyError, TypeError, ValueError):
            return None
        if token in mass and math.isfinite(logprob):
            mass[token] += math.exp(logprob)
    return mass if sum(mass.values()) >= MIN_CHOICE_MASS else None


def ask_back_log_odds(mass: Mapping[str, float], ask_reply: str) -> float:
    """log(P(ask) / P(answer)) from the yes/no mass, bounded by ``MAX_LOG_ODDS``."""
    ask, answer = mass[ask_reply], mass["no" if ask_reply == "yes" else "yes"]
    if ask <= 0 or answer <= 0:
        return MAX_LOG_ODDS if ask > 0 else -MAX_LOG_ODDS
    return max(-MAX_LOG_ODDS, min(MAX_LOG_ODDS, math.log(ask / answer)))


def ask_back_judgement(
    model: BaseChatModel,
    history: Sequence[dict[str, str]],
    question: str,
    context: Context,
    instruction: str | None = None,
    ask_reply: str = "no",
) -> tuple[float | None, str]:
    """The model's ask-back log-odds for the turn, from the conversation and the question alone
    (``instruction``, by default ``Context.clarify_ask_back_instruction``, whose reply ``ask_reply``
    means ask back); None (and why) when the backend gives no log-probabilities or the reply names
    neither yes nor no."""
    if ask_reply not in ("yes", "no"):
        raise ValueError(f"ask_reply must be 'yes' or 'no', got {ask_reply!r}")
    if not capabilities_of(model).logprobs:
        return None, "no log-probabilities from this model"
    template = context.clarify_ask_back_instruction if instruction is None else instruction
    messages = clarify_messages(template, history, question, None)
    reply = invoke_text(model, messages, max_tokens=1, logprobs=True, top_logprobs=TOP_LOGPROBS)
    mass = yes_no_mass((reply.response_metadata or {}).get("logprobs"))
    if mass is None:
        return None, f"unparsed reply {str(reply.content)[:40]!r}"
    return ask_back_log_odds(mass, ask_reply), f"yes {mass['yes']:.3f} no {mass['no']:.3f}"


@dataclass(frozen=True)
class AskBackModel:
    """The no-passage decision: a logistic regression over the model's ask-back log-odds and the trained
    classifier's no-passage log-odds, its threshold, the model and prompt it was fitted with, its card."""

    model: str
    variant: str  # the prompt it was fitted with (Context.clarify_ask_back_instruction's default: "examples")
    classifier: str  # the clarify classifier whose no-passage score is the second input
    coef: tuple[float, float]  # model log-odds, classifier log-odds
    intercept: float
    threshold: float
    card: Mapping[str, Any]

    def probability(self, model_log_odds: float, classifier_log_odds: float) -> float:
        z = self.intercept + self.coef[0] * model_log_odds + self.coef[1] * classifier_log_odds
        return 1 / (1 + math.exp(-max(min(z, 50.0), -50.0)))


def parse_ask_back(text: str) -> AskBackModel:
    data = json.loads(text)
    coef = tuple(float(c) for c in data["coef"])
    if len(coef) != 2:
        raise ValueError(f"ask-back model: two coefficients expected, got {len(coef)}")
    return AskBackModel(
        model=str(data["model"]),
        variant=str(data["variant"]),
        classifier=str(data.get("classifier", "default")),
        coef=(coef[0], coef[1]),
        intercept=float(data["intercept"]),
        threshold=float(data["threshold"]),
        card=data.get("card", {}),
    )


@cache
def load_ask_back(spec: str) -> AskBackModel:
    """``"default"`` (the file shipped in the package) or a path to a JSON file."""
    return parse_ask_back(data_file_text(spec, "clarify_ask_back.json"))


def log_odds(probability: float) -> float:
    p = min(max(probability, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))
