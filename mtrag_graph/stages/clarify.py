"""The clarify stage (ask back when the turn is underspecified): its registration and its settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mtrag_graph import settings
from mtrag_graph.prompts import clarify as clarify_prompts  # the module; `clarify` is also a setting
from mtrag_graph.stages import Stage, register, setting
from mtrag_graph.stages.common import ModelSetting

# The model-free signals that may call a turn underspecified (``judging/underspecified.py``).
ClarifySignal = Literal[
    "bare", "orphan", "pointer", "kinds", "rule", "pronoun", "passages", "person", "definite", "rivals"
]

register(
    Stage("clarify", "Asks back when the turn is underspecified (an unresolved reference, passages about "
          "several things).", nodes=("clarify", "ask_user"), label="checking the question", reads=("rewrite",))
)  # fmt: skip


@dataclass(kw_only=True)
class ClarifySettings:
    clarify: bool = setting(
        True,
        stage="clarify",
        description="Ask a clarifying question when the turn is underspecified (an unresolved reference "
        "and passages about several things). Runs after load_task with given passages, after rerank with "
        "retrieved ones.",
    )
    clarify_model: ModelSetting = setting(
        factory=settings.large_model,
        stage="clarify",
        model=True,
        flag=True,
        description="Model that writes a clarifying question the passages' alternatives cannot.",
    )
    clarify_interrupt: bool | None = setting(
        None,
        stage="clarify",
        description="Ask the user with interrupt() and resume with the reply; off: the clarifying question "
        "is the answer; None: ask when the run answers a conversation (messages), answer with it for a task.",
    )
    clarify_classifier: str | None = setting(
        None,
        stage="clarify",
        description="A trained classifier that decides from the conversation, the question and the passages "
        "(a JSON file, or 'default': mtrag_graph/data/clarify_classifier.json; MiniLM embeddings, no model "
        "call); None (the default: the classifier asked 3 of the dev slice's 18 underspecified turns): the "
        "model-free signals (clarify_signals, clarify_threshold).",
    )
    clarify_ask_back: str | None = setting(
        None,
        stage="clarify",
        description="For a turn without passages: the model's yes/no ask-back judgement (clarify_model, one "
        "reply token's log-probabilities) combined with the classifier's no-passage score, a JSON file or "
        "'default' (mtrag_graph/data/clarify_ask_back.json); None: such a turn is decided as with passages.",
    )
    clarify_no_passages: str | None = setting(
        "default",
        stage="clarify",
        description="For a turn without passages (with clarify_ask_back and clarify_classifier None): a "
        "logistic regression over the turn's reference features and its MiniLM cosines with the last "
        "exchange, no model call ('default': mtrag_graph/data/clarify_no_passages.json, or a JSON file); "
        "None: such a turn is never asked back (the signals need passages).",
    )
    clarify_ask_back_instruction: str = setting(
        clarify_prompts.ASK_BACK,
        stage="clarify",
        description="Asks the clarify model whether the last question can be answered without asking which "
        "one the user means (clarify_ask_back): a reply 'no' means ask back.",
    )
    clarify_signals: tuple[ClarifySignal, ...] = setting(
        ("bare", "orphan", "pointer", "kinds", "rule", "pronoun", "passages", "person", "definite", "rivals"),
        stage="clarify",
        description="The model-free signals that may call a turn underspecified "
        "(mtrag_graph.judging.underspecified.SIGNALS, docs/clarify.md); drop one that asks back too often "
        "on your conversations to switch it off.",
    )
