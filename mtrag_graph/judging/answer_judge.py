"""The fitted answer judge: faithfulness and preference scores of candidate answers from their features.

The models are linear, fitted on the tuning half of the golden file
(``python -m research.fit_answer_judge``) and shipped as ``mtrag_graph/judging/data/answer_judge.json`` with their data card:

- faithfulness: least squares on the mean human faithfulness rating (1-4) of each response, mapped to
  [0, 1] as (prediction - 1) / 3, clipped;
- preference: a pairwise logistic model (Bradley-Terry) on the human win-rate order of same-task
  responses; only differences between candidates matter, so it has no bias.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from mtrag_graph.judging.embedding_cache import CachedEmbedder
from mtrag_graph.judging.support import FEATURES, SentenceEmbedder, answer_features
from mtrag_graph.models.embeddings import get_embedder

MODEL_FILE = "answer_judge.json"
# subtracted from the preference of a declining candidate when the gate said the passages hold the
# answer: larger than any preference gap the fitted model produces, so a decline is picked only when
# every candidate declines
DECLINE_PENALTY = 10.0
FAITHFULNESS_RANGE = (1.0, 4.0)  # the human faithfulness scale


@dataclass(frozen=True)
class LinearModel:
    weights: Mapping[str, float]
    bias: float = 0.0

    def __post_init__(self) -> None:
        unknown = set(self.weights) - set(FEATURES)
        if unknown:
            raise ValueError(f"answer judge model: unknown features {sorted(unknown)}; known: {FEATURES}")

    def __call__(self, features: Mapping[str, float]) -> float:
        return self.bias + sum(w * features[name] for name, w in self.weights.items())


@dataclass(frozen=True)
class AnswerScore:
    """What the judge says of one candidate answer."""

    faithfulness: float  # 0-1: how well the passages support it
    preference: float  # higher = people would prefer it among the candidates of the same question
    declines: bool
    features: dict[str, float] = field(default_factory=dict)


class AnswerJudge:
    """Scores the candidate answers to one question against its passages (no LLM call)."""

    def __init__(
        self,
        faithfulness: LinearModel,
        preference: LinearModel,
        embedder: SentenceEmbedder | None = None,
        embedder_spec: str = "minilm",
        card: dict[str, Any] | None = None,
        embedding_cache: str | Path | None = None,
    ):
        self.faithfulness = faithfulness
        self.preference = preference
        self.embedder_spec = embedder_spec
        self.card = card or {}
        self.embedding_cache = embedding_cache
        self._embedder = embedder

    @property
    def embedder(self) -> SentenceEmbedder:
        if self._embedder is None:
            embedder: SentenceEmbedder = get_embedder(self.embedder_spec)
            if self.embedding_cache is not None:
                embedder = CachedEmbedder(embedder, self.embedder_spec, self.embedding_cache)
            self._embedder = embedder
        return self._embedder

    @property
    def name(self) -> str:
        return f"answer-judge ({self.card.get('version', 'unversioned')}, {self.embedder_spec})"

    def features(
        self, question: str, passages: Sequence[str], answers: Sequence[str]
    ) -> list[dict[str, float]]:
        return answer_features(question, passages, answers, self.embedder)

    def score(self, question: str, passages: Sequence[str], answers: Sequence[str]) -> list[AnswerScore]:
        """One score per answer, in the order given."""
        low, high = FAITHFULNESS_RANGE
        scores = []
        for row in self.features(question, passages, answers):
            faithful = (self.faithfulness(row) - low) / (high - low)
            scores.append(
                AnswerScore(
                    faithfulness=min(1.0, max(0.0, faithful)),
                    preference=self.preference(row),
                    declines=bool(row["declines"]),
                    features=row,
                )
            )
        return scores

    def selection_scores(self, scores: Sequence[AnswerScore], gate_said_yes: bool) -> list[float]:
        """The candidate judge's score per candidate: the preference, less ``DECLINE_PENALTY`` for a
        candidate that declines although the gate said the passages hold the answer."""
        return [s.preference - (DECLINE_PENALTY if gate_said_yes and s.declines else 0.0) for s in scores]


def _model(data: Any, where: str) -> LinearModel:
    if not isinstance(data, dict) or not isinstance(data.get("weights"), dict):
        raise ValueError(f"answer judge file: '{where}' needs a 'weights' object")
    return LinearModel(
        weights={str(k): float(v) for k, v in data["weights"].items()}, bias=float(data.get("bias", 0.0))
    )


def load_answer_judge(
    path: str | Path | None = None,
    embedder: SentenceEmbedder | None = None,
    embedding_cache: str | Path | None = None,
) -> AnswerJudge:
    """The shipped judge (or the one in ``path``); ``embedding_cache``: keep sentence vectors on disk there."""
    if path is None:
        text = (resources.files("mtrag_graph") / "judging" / "data" / MODEL_FILE).read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    data = json.loads(text)
    return AnswerJudge(
        faithfulness=_model(data.get("faithfulness"), "faithfulness"),
        preference=_model(data.get("preference"), "preference"),
        embedder=embedder,
        embedder_spec=str(data.get("embedder", "minilm")),
        card=data.get("card", {}),
        embedding_cache=embedding_cache,
    )


@lru_cache(maxsize=8)
def _loaded(path: str | None) -> AnswerJudge:
    return load_answer_judge(path)


def answer_judge_of(value: AnswerJudge | str | Path | None) -> AnswerJudge:
    """``Context.answer_judge`` as a judge: an instance as is, a model file (or None: the shipped one) loaded
    once per process."""
    if isinstance(value, AnswerJudge):
        return value
    return _loaded(None if value is None else str(value))
