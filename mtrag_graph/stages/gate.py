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
        description="Model asked when the gate uses its yes-probability or reply (gate_classifier None).",
    )
    use_gate: bool = setting(True, stage="gate", description="Gate on answerability before generating.")
    gate_classifier: str | None = setting(
        "default",
        stage="gate",
        description="A classifier file ('default': the one shipped in mtrag_graph/data, no model call); "
        "None: gate_threshold on the model's yes-probability, or its yes/no reply.",
    )
    gate_threshold: float | None = setting(
        None,
        stage="gate",
        description="With gate_classifier None: 'yes' when the model's yes-probability reaches it.",
    )
    gate_unmentioned: Literal["documents", "always", "off"] = setting(
        "documents",
        stage="gate",
        description="Decline (abstain_reason 'unmentioned') when the question names something (a "
        "capitalised word, a token with a digit or hyphen, an option) that no kept passage says: over a "
        "user's documents only ('documents'), for any passages ('always'), or never ('off').",
    )
    gate_fallback: Literal["yes", "no"] = setting(
        "yes",
        stage="gate",
        description="The verdict used when the gate's reply never parses (recorded in fallbacks).",
    )
    gate_all_features: bool = setting(
        False,
        stage="gate",
        description="Compute every gate feature, asking the model even when the rule needs fewer (the "
        "decision benchmark records them to fit a classifier).",
    )
    decline_threshold: float | None = setting(
        None,
        stage="gate",
        description="After a gate 'yes': 'no' when the answering model's probability of declining (the first "
        "token of its reply to decline_instruction, which offers 'I don't know') reaches this; None: not asked.",
    )
    decline_instruction: str = setting(
        grounded.DECLINE_PROBE,
        stage="gate",
        description="The answer prompt whose first-token decline probability decline_threshold reads.",
    )
    gate_instruction: str = setting(
        grounded.GATE, stage="gate", description="Asks whether the documents hold the answer (yes/no)."
    )
