"""The verdict's fitted combiner: from an answer's support signals, the probability that the passages do
not hold it.

A standardised logistic regression over a few named signals of ``judging.verdict.support_signals`` (no
model call: sentence support against the passages, and support by one passage's stretch of sentences).
It replaces the hand rule "decline only when no claim is backed": an answer whose words are all
somewhere in on-topic passages but whose claims no passage states together is declined too, and a
person's answer with one sentence the passages do not back is not.

Fitted by ``python -m research.verdict_fit`` on MTRAG's reference conversations only (tuning data): each
people's answer on its own passages (keep) and moved onto another conversation's passages of the same
domain (decline); the threshold keeps at least ``KEEP_TARGET`` of the people's answers of the fitting
part. The card (data, command, hash, held-out figures) is in the JSON file and docs/verdict.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

from mtrag_graph.judging.fit import logistic_probability
from mtrag_graph.settings import data_file_text

SHIPPED = "verdict_combiner.json"  # in mtrag_graph/data
KEEP_TARGET = 0.98  # the share of people's answers (fitting part) the threshold keeps


@dataclass(frozen=True)
class Combiner:
    """``p = sigmoid(coef . (x - mean) / scale + intercept)``: the probability that the passages do not hold
    the answer; the verdict declines when ``p >= threshold``."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float
    card: Mapping[str, Any]

    def probability(self, signals: Mapping[str, Any]) -> float:
        missing = [f for f in self.features if signals.get(f) is None]
        if missing:
            raise KeyError(f"the combiner needs the signals {missing}")
        return logistic_probability(signals, self.features, self.mean, self.scale, self.coef, self.intercept)

    def declines(self, signals: Mapping[str, Any]) -> tuple[bool, float]:
        p = self.probability(signals)
        return p >= self.threshold, p

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["card"] = dict(self.card)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Combiner:
        return cls(
            features=tuple(data["features"]),
            mean=tuple(float(v) for v in data["mean"]),
            scale=tuple(float(v) for v in data["scale"]),
            coef=tuple(float(v) for v in data["coef"]),
            intercept=float(data["intercept"]),
            threshold=float(data["threshold"]),
            card=dict(data.get("card") or {}),
        )


@cache
def load_combiner(spec: str) -> Combiner:
    """``"default"``: the shipped combiner; else the path of a JSON file ``research.verdict_fit`` wrote."""
    return Combiner.from_dict(json.loads(data_file_text(spec, SHIPPED)))
