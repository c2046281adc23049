"""The gate stage (do the kept passages hold the answer?): its registration and its settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mtrag_graph import settings
from mtrag_graph.prompts import grounded
from mtrag_graph.stages import Stage, register, setting
from mtrag_graph.stages.common import ModelSetting

register(
    Stage("gate", "Decides whether the kept passages hold the answer.", nodes=("answerability_gate",),
          label="checking the passages")
)  # fmt: skip


@dataclass(kw_only=True)
class GateSettings:
    gate_model: ModelSetting = setting(
        factory=settings.large_model,
        stage="gate",
        model=True,
        flag=True,
        description="Model asked when the gate uses its yes/no reply (gate_classifier None).",
    )
    use_gate: bool = setting(True, stage="gate", description="Gate on answerability before generating.")
    gate_declines: Literal["always", "retrieved"] = setting(
        "always",
        stage="gate",
        description="Where the gate's 'no' declines: 'always'; 'retrieved': with retrieved passages only, "
        "passages given with the task or the messages go on to the writer and the verdict, the gate's "
        "'no' recorded (gate 'advisory_no', its evidence in the route).",
    )
    gate_classifier: str | None = setting(
        "default",
        stage="gate",
        description="A classifier file ('default': the one shipped in mtrag_graph/data, no model call); "
        "None: the gate model's yes/no reply.",
    )
    gate_all_features: bool = setting(
        False,
        stage="gate",
        description="Compute every gate feature, asking the model even when the rule needs fewer (the "
        "decision benchmark records them to fit a classifier).",
    )
    gate_instruction: str = setting(
        grounded.GATE, stage="gate", description="Asks whether the documents hold the answer (yes/no)."
    )
