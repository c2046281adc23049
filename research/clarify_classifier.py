"""The trained clarify classifier, tried and not kept: a logistic regression over the question's sentence
embedding and a few reference features, one model for turns with passages and one for turns without.

The rules of ``judging/underspecified.py`` need rival referents among the passages, so a turn with no
passages was never asked about, and on conversations nobody on the team had seen they asked none of 12
underspecified turns. This classifier is trained on generated data (``research/clarify_data.py``: MTRAG
reference turns made underspecified, their answerable twins and the natural turns, never the MTRAG-UN
dev slice) by ``research/clarify_fit.py``, which writes ``research/data/clarify_classifier.json`` with
its card. No language-model call: one embedding of the question (and of the last exchange), the rest is
arithmetic. On the MTRAG-UN dev slice it asked 3 of 18 underspecified turns, so the product decides with
the model-free signals and, without passages, the no-passage model (``benchmarks/results/clarify.md``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from mtrag_graph.judging.clarify_no_passages import AGENT_CHARS, KNOWN_FEATURES
from mtrag_graph.judging.underspecified import (
    alternatives,
    passage_things,
    reference_features,
    unresolved_definite,
    unresolved_pronoun,
)
from mtrag_graph.models import get_embedder

DEFAULT = Path(__file__).resolve().parent / "data" / "clarify_classifier.json"
MAX_FEATURE_THINGS = 5

# The features every model gets (the names the JSON file lists, in this order); "emb" is the question's
# sentence embedding, appended after these.
CONVERSATION_FEATURES = KNOWN_FEATURES
PASSAGE_FEATURES = ("things", "pronoun_untied", "definite_alternatives", "cos_passage_max", "cos_passage_min")


def setting_of(passages: Sequence[Mapping[str, Any]] | None) -> str:
    """Which of the two models decides: "passages" or "none"."""
    return "passages" if passages else "none"


def turn_features(
    history: Sequence[dict[str, str]], question: str, passages: Sequence[Mapping[str, Any]] | None
) -> dict[str, float]:
    """The model-free features of a turn (no embedding): ``reference_features`` and, with passages, what
    the passages name."""
    features = reference_features(history, question)
    if passages:
        titled = passage_things([dict(p) for p in passages if str(p.get("title") or "").strip()])
        things = passage_things([dict(p) for p in passages])
        nouns = unresolved_definite(history, question)
        features.update(
            things=min(len(things), MAX_FEATURE_THINGS) / MAX_FEATURE_THINGS,
            pronoun_untied=float(bool(history) and unresolved_pronoun(history, question, titled) is not None),
            definite_alternatives=float(
                any(len(alternatives(n, [dict(p) for p in passages])) >= 2 for n in nouns)
            ),
        )
    return features


def similarity_features(
    history: Sequence[dict[str, str]],
    question: str,
    passages: Sequence[Mapping[str, Any]] | None,
    embedder: Any,
) -> tuple[dict[str, float], np.ndarray]:
    """The cosines of the question with the last user turn, the last agent turn and the passages, and
    the question's embedding: one ``embed`` call."""
    users = [t["text"] for t in history if t.get("speaker") == "user"]
    agents = [t["text"][:AGENT_CHARS] for t in history if t.get("speaker") == "agent"]
    texts = [
        question,
        *users[-1:],
        *agents[-1:],
        *(str(p.get("text", ""))[:AGENT_CHARS] for p in passages or []),
    ]
    vectors = np.asarray(embedder.embed(texts), dtype=np.float64)
    q = vectors[0]
    at = 1
    features: dict[str, float] = {}
    for name, present in (("cos_last_user", users), ("cos_last_agent", agents)):
        features[name] = float(vectors[at] @ q) if present else 0.0
        at += bool(present)
    if passages:
        cosines = vectors[at:] @ q
        features.update(cos_passage_max=float(cosines.max()), cos_passage_min=float(cosines.min()))
    return features, q


def feature_names(setting: str, dim: int) -> tuple[str, ...]:
    """The names of one model's inputs: the reference features, then ``emb0`` ... ``emb{dim-1}``."""
    scalars = CONVERSATION_FEATURES + (PASSAGE_FEATURES if setting == "passages" else ())
    return scalars + tuple(f"emb{i}" for i in range(dim))


def feature_row(
    references: Mapping[str, float],
    history: Sequence[dict[str, str]],
    question: str,
    passages: Sequence[Mapping[str, Any]] | None,
    embedder: Any,
) -> np.ndarray:
    """The input row of the model for this turn's setting, in ``feature_names`` order: the reference
    features (``turn_features``), the cosines and the question's embedding."""
    values = dict(references)
    similarities, embedding = similarity_features(history, question, passages, embedder)
    values.update(similarities)
    scalars = CONVERSATION_FEATURES + (PASSAGE_FEATURES if passages else ())
    return np.concatenate([np.array([values[n] for n in scalars]), embedding])


@dataclass(frozen=True)
class ClarifyModel:
    """One logistic regression: standardised inputs, weights, intercept and the threshold it asks at."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float

    def probability(self, row: np.ndarray) -> float:
        z = self.intercept + float(((row - np.array(self.mean)) / np.array(self.scale)) @ np.array(self.coef))
        return 1 / (1 + math.exp(-max(min(z, 50.0), -50.0)))


@dataclass(frozen=True)
class ClarifyClassifier:
    """The two models (``passages``, ``none``), the embedder they were trained with, and the card."""

    embedder: str
    models: Mapping[str, ClarifyModel]
    card: Mapping[str, Any]

    def probability(self, row: np.ndarray, passages: Sequence[Mapping[str, Any]] | None) -> float:
        """The probability that the turn is underspecified, from its ``feature_row``."""
        return self.models[setting_of(passages)].probability(row)

    def encoder(self) -> Any:
        """The embedder the models were trained with."""
        return get_embedder(self.embedder)

    def threshold(self, passages: Sequence[Mapping[str, Any]] | None) -> float:
        return self.models[setting_of(passages)].threshold

    def to_json(self) -> str:
        data = {
            "embedder": self.embedder,
            "models": {k: asdict(m) for k, m in self.models.items()},
            "card": self.card,
        }
        return json.dumps(data, indent=1) + "\n"


def parse_classifier(text: str) -> ClarifyClassifier:
    data = json.loads(text)
    models = {
        name: ClarifyModel(
            mean=tuple(m["mean"]),
            scale=tuple(m["scale"]),
            coef=tuple(m["coef"]),
            intercept=float(m["intercept"]),
            threshold=float(m["threshold"]),
        )
        for name, m in data["models"].items()
    }
    if set(models) != {"passages", "none"}:
        raise ValueError(f"clarify classifier: models must be 'passages' and 'none', got {sorted(models)}")
    return ClarifyClassifier(embedder=str(data["embedder"]), models=models, card=data.get("card", {}))


@cache
def load_clarify_classifier(spec: str = "default") -> ClarifyClassifier:
    """``"default"`` (``research/data/clarify_classifier.json``) or a path to a JSON file."""
    return parse_classifier((DEFAULT if spec == "default" else Path(spec)).read_text(encoding="utf-8"))


def classifier_row(
    history: Sequence[dict[str, str]],
    question: str,
    passages: Sequence[dict[str, Any]] | None,
    classifier: ClarifyClassifier,
) -> np.ndarray:
    """The classifier's input row for the turn: ``turn_features`` and its embedder's features."""
    references = turn_features(history, question, passages)
    return feature_row(references, history, question, passages, classifier.encoder())
