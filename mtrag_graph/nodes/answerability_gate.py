"""Do the kept passages, as a whole, hold what the user asks? One calibrated yes/no.

Two ways to decide, from the Context:

- ``gate_classifier`` (a JSON file, or ``"default"`` for the one shipped in ``mtrag_graph/data``):
  a logistic regression over the features below, with its threshold; trained on the tuning split by
  ``mtrag-graph decisions --split tuning --only gate --fit-gate FILE`` (data card: docs/decisions.md);
- None: the model's constrained reply (the argmax).

Features (all cheap: the yes-probability comes with the gate's one call, the rest is MiniLM and word
overlap): ``logit_p_yes``, ``cos_max`` / ``cos_mean`` (question vs each passage), ``overlap_max`` /
``overlap_all`` (share of the question's content words found in the best passage / in all of them).
What the decision rests on is written to ``gate_evidence``; ``mtrag-graph decisions`` measures it.

Before either, over a user's documents, a question naming something no kept passage says is declined
(``judging.unmentioned``). With every feature asked for (the decision benchmark), the answering
model's first-token probability of declining on the gate's prefix is recorded too (``p_decline``); a
gate rule on it did not separate invented answers from right ones on the real-documents tuning split,
and the verdict (``judging.verdict``) reads that probability on its own prompt.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from mtrag_graph.context import Context
from mtrag_graph.judging.decline import decline_probability
from mtrag_graph.judging.fit import logistic_probability
from mtrag_graph.judging.unmentioned import from_documents, unmentioned_names
from mtrag_graph.models import get_chat_model, get_reranker
from mtrag_graph.models.logprobs import score_choice
from mtrag_graph.nodekit.wrapper import guarded
from mtrag_graph.prompts.build import decline_messages, gate_messages, question_for_answering
from mtrag_graph.settings import data_file_text
from mtrag_graph.state import AbstainReason, State, retrieved_setting
from mtrag_graph.text import content_words

FEATURES = ("logit_p_yes", "cos_max", "cos_mean", "overlap_max", "overlap_all")
FALLBACK = "yes"  # the verdict when the gate's reply never parses (recorded in fallbacks): the run answers
LOGIT_CLIP = 12.0


def _logit(p: float) -> float:
    p = min(max(p, math.exp(-LOGIT_CLIP)), 1 - math.exp(-LOGIT_CLIP))
    return math.log(p / (1 - p))


def evidence_features(question: str, passages: list[dict[str, Any]], context: Context) -> dict[str, float]:
    """Question-vs-passage similarity and word overlap (no LLM)."""
    texts = [f"{p.get('title') or ''}\n{p.get('text', '')}".strip() for p in passages]
    if not texts:
        return {"cos_max": 0.0, "cos_mean": 0.0, "overlap_max": 0.0, "overlap_all": 0.0}
    scores = get_reranker("embedding", context.embedder).score(question, texts)
    words = content_words(question)
    per_passage_words = [content_words(t) for t in texts]
    per_passage = [len(words & w) / len(words) if words else 0.0 for w in per_passage_words]
    union = set().union(*per_passage_words)
    return {
        "cos_max": float(max(scores)),
        "cos_mean": float(sum(scores) / len(scores)),
        "overlap_max": max(per_passage),
        "overlap_all": len(words & union) / len(words) if words else 0.0,
    }


@dataclass(frozen=True)
class GateClassifier:
    """Standardised logistic regression over ``features``; "yes" when the probability >= ``threshold``."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float
    trained_on: str = ""
    # data card: command, input hashes, split, counts, cross-validated score, date (decisions.bench)
    card: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def probability(self, values: dict[str, float]) -> float:
        return logistic_probability(values, self.features, self.mean, self.scale, self.coef, self.intercept)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")


@cache
def load_classifier(spec: str) -> GateClassifier:
    """``"default"`` (the file shipped in the package) or a path to a JSON file."""
    text = data_file_text(spec, "gate_classifier.json")
    data: dict[str, Any] = json.loads(text)
    converted: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
    return GateClassifier(**converted)


def gate_decision(state: Mapping[str, Any], context: Context) -> dict[str, Any]:
    """``gate`` ("yes"/"no") with what it rests on: ``p_yes``, ``features``, ``score``, ``gate_argmax``.

    A classifier whose features leave out ``logit_p_yes`` decides without any model call.
    ``Context.gate_all_features``: ask the model and compute every feature even when the rule needs
    fewer (to train). Without it, a model-free classifier still gets its features (and the model is
    not asked). An unparseable reply without log-probabilities falls back to ``FALLBACK`` ("yes").
    """
    question = question_for_answering(state)
    classifier = load_classifier(context.gate_classifier) if context.gate_classifier else None
    every_feature = context.gate_all_features
    result: dict[str, Any] = {"gate_argmax": None, "p_yes": None, "raw": ""}
    if every_feature or classifier is None or "logit_p_yes" in classifier.features:
        value, probabilities, raws = score_choice(
            get_chat_model(context.gate_model),
            gate_messages(state, context),
            ["yes", "no"],
            retries=context.parse_retries,
        )
        result.update(gate_argmax=value, p_yes=probabilities["yes"] if probabilities else None, raw=raws[-1])
    features: dict[str, float] = {}
    if every_feature or classifier is not None:
        features = evidence_features(question, state.get("kept_passages") or [], context)
        if result["p_yes"] is not None:
            features["logit_p_yes"] = _logit(result["p_yes"])
        result["features"] = features
    if classifier is not None and all(f in features for f in classifier.features):
        result["score"] = classifier.probability(features)
        decision = "yes" if result["score"] >= classifier.threshold else "no"
    else:
        decision = result["gate_argmax"] or FALLBACK
    result["fallback"] = result["gate_argmax"] is None and "score" not in result
    if every_feature:
        result["p_decline"] = decline_probability(get_chat_model(context.generate_model),
                                                  decline_messages(state, context))  # fmt: skip
    result["gate"] = decision
    return result


# the gate said "no" over passages given with the task, and Context.gate_declines="retrieved" let the run go on
ADVISORY_NO = "advisory_no"

# what the decision rests on, kept in gate_evidence when there (the decision benchmark reads them all)
EVIDENCE_KEYS = ("p_yes", "score", "features", "gate_argmax", "raw", "p_decline")
# "unmentioned": the question's names no kept passage says (judging/unmentioned.py), when they decided


@guarded
def answerability_gate(state: State, runtime: Runtime[Context]) -> dict[str, Any]:
    context = runtime.context
    if not state.get("kept_passages"):
        return {"gate": "no", "abstain_reason": AbstainReason.NO_EVIDENCE}
    if not context.use_gate:
        return {"gate": "skipped"}
    kept = state["kept_passages"]
    if from_documents(kept):
        missing = unmentioned_names(question_for_answering(state), kept)
        if missing:
            return {
                "gate": "no",
                "gate_evidence": {"unmentioned": missing},
                "abstain_reason": AbstainReason.GATE_NO,
            }
    decision = gate_decision(state, context)
    update: dict[str, Any] = {
        "gate": decision["gate"],
        "gate_evidence": {k: decision[k] for k in EVIDENCE_KEYS if decision.get(k) not in (None, "")},
    }
    if decision["fallback"]:
        update["fallbacks"] = [
            {"node": "answerability_gate", "used": decision["gate"], "raw": decision["raw"]}
        ]
    if decision["gate"] == "no":
        if context.gate_declines == "retrieved" and not retrieved_setting(state):
            update["gate"] = ADVISORY_NO  # given passages: the writer and the verdict decide
        else:
            update["abstain_reason"] = AbstainReason.GATE_NO
    return update
