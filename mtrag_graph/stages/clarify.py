"""The clarify stage (ask back when the turn is underspecified): its registration and its settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from mtrag_graph import settings
from mtrag_graph.stages import Stage, register, setting
from mtrag_graph.stages.common import ModelSetting

# The model-free signals that may call a turn underspecified (``judging/underspecified.py``).
ClarifySignal = Literal[
    "bare", "orphan", "pointer", "kinds", "rule", "pronoun", "passages", "person", "definite", "rivals", "several"
]  # fmt: skip

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
        description="Ask the user with interrupt() and resume with the reply (this needs a checkpointer); "
        "off: the clarifying question is the answer; None: ask when the run answers a conversation "
        "(messages), answer with it for a task.",
    )
    clarify_no_passages: str | None = setting(
        "default",
        stage="clarify",
        description="For a turn without passages that no signal asks about: a logistic regression over the "
        "turn's reference features and its MiniLM cosines with the last exchange, no model call ('default': "
        "mtrag_graph/data/clarify_no_passages.json, or a JSON file); None: such a turn is asked back only by "
        "a signal, and the model's MiniLM embedder is never loaded.",
    )
    clarify_signals: tuple[ClarifySignal, ...] = setting(
        get_args(ClarifySignal),  # every signal, in the order they are listed
        stage="clarify",
        description="The model-free signals that may call a turn underspecified "
        "(mtrag_graph.judging.underspecified.SIGNALS, docs/clarify.md); drop one that asks back too often "
        "on your conversations to switch it off.",
    )
