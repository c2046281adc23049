"""The relation stage (how the question relates to the previous exchange): its registration and its
settings."""

from __future__ import annotations

from dataclasses import dataclass

from mtrag_graph import settings
from mtrag_graph.stages import Stage, register, setting
from mtrag_graph.stages.common import ModelSetting

register(
    Stage("relation", "Classifies how the question relates to the previous exchange (four classes).",
          nodes=("classify_relation",), label="reading the conversation")
)  # fmt: skip


@dataclass(kw_only=True)
class RelationSettings:
    classify_model: ModelSetting = setting(
        factory=settings.large_model,
        stage="relation",
        model=True,
        flag=True,
        description="Model for the two yes/no relation judgements (related to Q(t-1)? to A(t-1)?).",
    )
    classify_history: bool = setting(
        True,
        stage="relation",
        description="Classify the relation to pick the history by class; off: keep the last "
        "history_pairs_without_classifier exchanges.",
    )
