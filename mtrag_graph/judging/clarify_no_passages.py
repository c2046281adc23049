"""The clarify decision for a turn without passages (``Context.clarify_no_passages``, the default): does
the question point at something the conversation never named, and does it leave the conversation's
topic?

The model-free signals of ``judging/underspecified.py`` need rival referents among the passages, so a turn
that comes without passages was never asked about, and most underspecified MTRAG-UN turns come without
any (the benchmark's reference setting gives none). The two trained decisions tried before this one
(``research/clarify_classifier.py``'s no-passage model, ``research/clarify_ask_back.py``'s yes/no of
the 1.5B) read the question's wording: a 384-value sentence embedding, or the model's reply. Both learned
what the generated questions look like, and neither asked one of the dev slice's underspecified turns
without passages.

This one reads only the turn's structure, never its wording: whether it holds a reference the turn
does not resolve itself ("it", "this case", "the SDK" that the conversation never names, "a specific
..."), whether it is a first turn, the share of its words the conversation never said, and how close the
question is to the last user turn and the last agent turn (two MiniLM cosines: a question about "it"
after a turn on another subject is far from both). Nine numbers, one logistic regression, fitted on the
generated data's tuning split with its threshold set so that 3% of the natural turns there are asked
(``research/clarify_no_passages.py``; ``mtrag_graph/data/clarify_no_passages.json`` holds the weights
and the card). No language-model call: one embedding call of up to three texts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

import numpy as np

from mtrag_graph.judging.fit import logistic_probability
from mtrag_graph.models import get_embedder
from mtrag_graph.settings import data_file_text

AGENT_CHARS = 600  # of the last agent turn embedded: its opening says what it is about

# every input the model may name: the reference features of ``judging.underspecified.reference_features``
# and the two cosines of ``similarity_features``
KNOWN_FEATURES = (
    "first_turn",
    "words",
    "capitalised_name",
    "number",
    "pronoun",
    "pronoun_first_turn",
    "unresolved_reference",
    "unresolved_definite",
    "unresolved_person",
    "new_words",
    "cos_last_user",
    "cos_last_agent",
)


def similarity_features(history: Sequence[dict[str, str]], question: str, embedder: Any) -> dict[str, float]:
    """The cosines of the question with the last user turn and the last agent turn (0 without one): one
    ``embed`` call."""
    users = [t["text"] for t in history if t.get("speaker") == "user"]
    agents = [t["text"][:AGENT_CHARS] for t in history if t.get("speaker") == "agent"]
    vectors = np.asarray(embedder.embed([question, *users[-1:], *agents[-1:]]), dtype=np.float64)
    q = vectors[0]
    at = 1
    features: dict[str, float] = {}
    for name, present in (("cos_last_user", users), ("cos_last_agent", agents)):
        features[name] = float(vectors[at] @ q) if present else 0.0
        at += bool(present)
    return features


@dataclass(frozen=True)
class NoPassageModel:
    """One logistic regression over named features: standardised inputs, weights, intercept, threshold."""

    embedder: str
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float
    card: Mapping[str, Any]

    def probability(self, values: Mapping[str, float]) -> float:
        """The probability that the turn is underspecified, from its named feature values."""
        return logistic_probability(values, self.features, self.mean, self.scale, self.coef, self.intercept)

    def values(
        self, references: Mapping[str, float], history: Sequence[dict[str, str]], question: str
    ) -> dict[str, float]:
        """The turn's inputs: its reference features and, when the model reads them, the cosines (one
        embedding call)."""
        values = dict(references)
        if any(name.startswith("cos_") for name in self.features):
            values.update(similarity_features(history, question, get_embedder(self.embedder)))
        return values

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1) + "\n"


def parse_no_passage_model(
    text: str, known: Sequence[str] = KNOWN_FEATURES, what: str = "clarify no-passage model"
) -> NoPassageModel:
    """The model from its JSON text; a clear error, naming ``what``, for a feature not in ``known`` or
    mismatched lengths (``research.clarify_slice_features`` reads its own features' model this way)."""
    data = json.loads(text)
    features = tuple(str(f) for f in data["features"])
    unknown = [f for f in features if f not in known]
    if unknown:
        raise ValueError(f"{what}: unknown features {unknown}; known: {', '.join(known)}")
    lengths = {key: len(data[key]) for key in ("mean", "scale", "coef")}
    if set(lengths.values()) != {len(features)}:
        raise ValueError(f"{what}: {len(features)} features but lengths {lengths}")
    if any(float(s) <= 0 for s in data["scale"]):
        raise ValueError(f"{what}: every scale must be positive")
    return NoPassageModel(
        embedder=str(data["embedder"]),
        features=features,
        mean=tuple(float(v) for v in data["mean"]),
        scale=tuple(float(v) for v in data["scale"]),
        coef=tuple(float(v) for v in data["coef"]),
        intercept=float(data["intercept"]),
        threshold=float(data["threshold"]),
        card=data.get("card", {}),
    )


@cache
def load_no_passage_model(spec: str) -> NoPassageModel:
    """``"default"`` (the file shipped in the package) or a path to a JSON file."""
    return parse_no_passage_model(data_file_text(spec, "clarify_no_passages.json"))
