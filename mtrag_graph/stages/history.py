"""The history stage (the history the answer may lean on): its registration and its settings."""

from __future__ import annotations

from dataclasses import dataclass

from mtrag_graph.stages import Stage, register, setting

register(
    Stage("history", "Selects the history the answer may lean on, by relation class.",
          nodes=("select_history",), label="reading the conversation", reads=("relation",))
)  # fmt: skip


@dataclass(kw_only=True)
class HistorySettings:
    history_walk_cap: int = setting(
        3,
        stage="history",
        description="Class 1: at most this many earlier exchanges while they still classify as continuations.",
    )
    history_pairs_without_classifier: int = setting(
        3, stage="history", description="Exchanges kept when classify_history is off."
    )
