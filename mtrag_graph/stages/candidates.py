"""The candidates stage (the answer ensemble, docs/ensemble.md): its candidates, its registration and its settings.

Answer candidates (the one thing called "candidates") are (model spec, prompt variant) pairs. A candidate
preset is a JSON file in ``mtrag_graph/presets/candidates`` (``{"description": ..., "candidates": [...]}``,
each candidate ``{"model": SPEC, "variant": NAME, "name": LABEL}``); ``load_candidates`` takes a preset
name or a path to such a file. The order of the list is the prior order: ties in the judge's scores,
and a judge that fails, go to the earlier candidate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import WithJsonSchema

from mtrag_graph import settings
from mtrag_graph.models.factory import ModelSpec, model_name
from mtrag_graph.presets import CANDIDATES, read_preset
from mtrag_graph.stages import Stage, register, setting
from mtrag_graph.stages.common import ModelSetting
from mtrag_graph.text.answers import strip_citations

VARIANTS = ("default", "extractive", "fewshot", "citation")


@dataclass(frozen=True)
class Candidate:
    """One answer generator: a model and the prompt variant it is asked with."""

    model: ModelSpec
    variant: str = "default"
    name: str | None = None

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"unknown prompt variant '{self.variant}': use one of {', '.join(VARIANTS)}")

    @property
    def label(self) -> str:
        return self.name or f"{model_name(self.model)}/{self.variant}"

    def finish(self, text: str) -> str:
        """The reply as an answer: the citation variant's [Passage N] markers stripped."""
        if self.variant == "citation":
            return strip_citations(text)
        return text

    @classmethod
    def coerce(cls, value: Any) -> Candidate:
        if isinstance(value, Candidate):
            return value
        if isinstance(value, dict):
            unknown = set(value) - {"model", "variant", "name"}
            if unknown or "model" not in value:
                raise ValueError(f"a candidate is {{'model', 'variant', 'name'}}, got {sorted(value)}")
            return cls(**value)
        if isinstance(value, str):  # "SPEC" or "SPEC#variant"
            spec, _, variant = value.partition("#")
            return cls(model=spec, variant=variant or "default")
        raise ValueError(f"not a candidate: {value!r}")


def load_candidates(preset_or_file: str) -> tuple[Candidate, ...]:
    """The candidates of a bundled candidate preset (by name) or of a JSON file (by path)."""
    data = read_preset(preset_or_file, CANDIDATES)
    items = data["candidates"] if isinstance(data, dict) else data
    candidates = tuple(Candidate.coerce(item) for item in items)
    if not candidates:
        raise ValueError(f"candidate preset '{preset_or_file}' lists no candidates")
    return candidates


CandidatesSetting = Annotated[
    tuple[Candidate, ...],
    WithJsonSchema({"anyOf": [
        {"type": "string", "description": "a candidate preset name or a JSON file path"},
        {"type": "array", "items": {"type": "object", "properties": {
            "model": {"type": "string"}, "variant": {"type": "string"}, "name": {"type": "string"}}}},
    ]}),
]  # fmt: skip

# Selection score = sum of weight x signal; "declined" is subtracted (see nodes/judge_candidates.py).
DEFAULT_JUDGE_WEIGHTS = {"faithfulness": 0.5, "completeness": 0.3, "support": 0.2, "declined": 1.0}

register(
    Stage("candidates", "The answer ensemble: several candidates, and a judge that picks one.",
          nodes=("generate_candidate", "judge_candidates"), label="writing candidate answers",
          reads=("generate",))
)  # fmt: skip


@dataclass(kw_only=True)
class CandidatesSettings:
    candidates: CandidatesSetting = setting(
        (),
        stage="candidates",
        flag=True,
        description="Answer candidates (model, prompt variant): two or more fan out after the gate and a "
        "judge picks one; a preset name (e.g. ensemble-local) or a JSON file path is accepted too.",
    )
    judge_method: Literal["answer", "llm"] = setting(
        "answer",
        stage="candidates",
        description="'answer': the fitted answer judge (no model call); 'llm': judge_model's verdicts "
        "combined with judge_weights.",
    )
    answer_judge: Any = setting(
        None,
        stage="candidates",
        description="The answer judge: a model file path, an AnswerJudge, or None (the shipped one).",
    )
    judge_model: ModelSetting = setting(
        factory=settings.large_model,
        stage="candidates",
        model=True,
        description="Model of the 'llm' candidate judge.",
    )
    judge_weights: dict[str, float] = setting(
        factory=lambda: dict(DEFAULT_JUDGE_WEIGHTS),
        stage="candidates",
        description="Weights of the llm judge's signals (faithfulness, completeness, support; declined is subtracted).",
    )

    def __post_init__(self) -> None:
        if isinstance(self.candidates, str):
            self.candidates = load_candidates(self.candidates)
        else:
            self.candidates = tuple(Candidate.coerce(c) for c in self.candidates)
        unknown = set(self.judge_weights) - set(DEFAULT_JUDGE_WEIGHTS)
        if unknown:
            raise ValueError(f"unknown judge weights {sorted(unknown)}: use {sorted(DEFAULT_JUDGE_WEIGHTS)}")
        self.judge_weights = {**DEFAULT_JUDGE_WEIGHTS, **self.judge_weights}
