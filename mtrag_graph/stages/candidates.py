"""The candidates stage (the answer ensemble, docs/ensemble.md): its registration and its settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import WithJsonSchema

from mtrag_graph import settings
from mtrag_graph.candidates import Candidate, load_candidates
from mtrag_graph.prompts import candidate_judge
from mtrag_graph.stages import Stage, register, setting
from mtrag_graph.stages.common import ModelSetting

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
    judge_seed: int = setting(
        0, stage="candidates", description="Seeds the per-task shuffle of the candidates shown to the judge."
    )
    judge_max_tokens: int = setting(
        320, stage="candidates", description="Token limit of the llm judge's verdict."
    )
    candidate_judge_instruction: str = setting(
        candidate_judge.JUDGE, stage="candidates", description="Asks the llm judge for its verdicts."
    )
    candidate_judge_answer_template: str = setting(
        candidate_judge.ANSWER, stage="candidates", description="How one candidate is shown to the llm judge."
    )
    candidate_timeout_s: float | None = setting(
        None,
        stage="candidates",
        description="A candidate slower than this many seconds is dropped (None: no limit).",
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
