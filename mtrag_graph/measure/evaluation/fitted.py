"""RB_llm and RL_F without an LLM call (``evaluate --judges fitted``), validated on the golden file.

- RL_F (fitted) is the answer judge's faithfulness (``judging.answer_judge``): how much of the response
  the passages hold, fitted on human faithfulness ratings.
- RB_llm (fitted) is a reference-based rating: a linear model over BERTScore recall against the
  reference answer and the answer judge's faithfulness, fitted by ridge least squares on the official
  (GPT-class) rb_llm values of the tuning half of the golden file, clipped to [0, 1].

Fit (tuning half only; HARNESS is ``harness/scores.jsonl`` of an ``evaluate --fidelity`` run, which holds
``bert_rec`` and ``faithfulness`` for every golden response)::

    python -m mtrag_graph.measure.evaluation.fitted GOLDEN.json HARNESS -o mtrag_graph/measure/evaluation/data/reference_rating.json

Why: the 1.5B local judge's RB_llm and RL_F cost 20-100 s a response on this CPU and gave flat ratings
(``benchmarks/results/judges.md``, "Tried and rejected"); these cost nothing beyond BERTScore and the answer judge.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from mtrag_graph.judging.fit import RIDGE, fit_least_squares
from mtrag_graph.measure.evaluation.agreement import spearman
from mtrag_graph.measure.evaluation.golden import SPLIT_RULE, load_golden

JUDGES = ("llm", "fitted")
MODEL_FILE = "reference_rating.json"
FEATURES = ("bert_rec", "faithfulness")
VERSION = "reference-rating-v2"  # v2: fitted on the conversation-level split


@dataclass(frozen=True)
class ReferenceRating:
    """RB_llm (fitted): ``bias + sum(weight * feature)``, clipped to [0, 1]."""

    weights: Mapping[str, float]
    bias: float
    card: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = set(self.weights) - set(FEATURES)
        if unknown or not self.weights:
            raise ValueError(
                f"reference rating: weights must name some of {FEATURES}, got {sorted(self.weights)}"
            )

    @property
    def name(self) -> str:
        return f"fitted ({self.card.get('version', VERSION)})"

    def __call__(self, features: Mapping[str, float | None]) -> float | None:
        """The rating, or None when a feature is missing."""
        if any(features.get(n) is None for n in self.weights):
            return None
        value = self.bias + sum(w * float(features[n] or 0.0) for n, w in self.weights.items())
        return min(1.0, max(0.0, value))


def load_reference_rating(path: str | Path | None = None) -> ReferenceRating:
    """The shipped model (or the one in ``path``)."""
    if path is None:
        text = (resources.files("mtrag_graph") / "measure" / "evaluation" / "data" / MODEL_FILE).read_text(
            encoding="utf-8"
        )
    else:
        text = Path(path).read_text(encoding="utf-8")
    data = json.loads(text)
    if not isinstance(data.get("weights"), dict):
        raise ValueError(f"reference rating file {path or MODEL_FILE}: needs a 'weights' object")
    return ReferenceRating(
        weights={str(k): float(v) for k, v in data["weights"].items()},
        bias=float(data.get("bias", 0.0)),
        card=data.get("card", {}),
    )


@lru_cache(maxsize=1)
def shipped_reference_rating() -> ReferenceRating:
    return load_reference_rating()


def training_rows(golden: str | Path, harness_scores: str | Path, split: str = "tune"):
    """``(feature rows, official rb_llm values, response keys)`` of the golden responses of ``split``
    that the harness scored with every feature and that have an official rb_llm value."""
    scored: dict[str, dict[str, Any]] = {}
    with open(harness_scores, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                scored[row["task_id"]] = row.get("scores", {})
    rows, targets, keys = [], [], []
    for response in load_golden(golden):
        scores = scored.get(response.key)
        official = response.official.get("rb_llm")
        if response.split != split or scores is None or official is None:
            continue
        if any(scores.get(n) is None for n in FEATURES):
            continue
        rows.append({n: float(scores[n]) for n in FEATURES})
        targets.append(float(official))
        keys.append(response.key)
    return rows, targets, keys


def _answer_judges(harness_scores: str | Path) -> list[str]:
    """The answer judges (name and version) that gave the harness rows their faithfulness."""
    names = set()
    with open(harness_scores, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                names.add(str(json.loads(line).get("answer_judge")))
    return sorted(names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mtrag_graph.measure.evaluation.fitted", description=__doc__
    )
    parser.add_argument("golden", help="eval/reference_subset_with_human_evaluations.json")
    parser.add_argument(
        "harness", help="harness/scores.jsonl of an `evaluate --fidelity` run (bert, faithfulness)"
    )
    parser.add_argument("-o", "--output", required=True, help="model file to write")
    args = parser.parse_args(argv)

    rows, targets, keys = training_rows(args.golden, args.harness)
    if len(rows) < len(FEATURES) + 2:
        print(f"error: only {len(rows)} tuning responses with {FEATURES} in {args.harness}", file=sys.stderr)
        return 2
    weights, bias = fit_least_squares(rows, targets, FEATURES)
    rating = ReferenceRating(weights, bias)
    fitted = [rating(row) for row in rows]
    model = {
        "weights": weights,
        "bias": bias,
        "card": {
            "version": VERSION,
            "trained": datetime.date.today().isoformat(),
            "command": f"python -m mtrag_graph.measure.evaluation.fitted GOLDEN HARNESS -o {args.output}",
            "data": Path(args.golden).name,
            "data_sha256": hashlib.sha256(Path(args.golden).read_bytes()).hexdigest(),
            "harness_sha256": hashlib.sha256(Path(args.harness).read_bytes()).hexdigest(),
            "answer_judge": _answer_judges(args.harness),
            "split": "tune half of the golden file, " + SPLIT_RULE,
            "responses": len(rows),
            "tasks": len({k.split("/")[0] for k in keys}),
            "target": "official rb_llm of each response (GPT-class judge, 0.1-1); ridge least squares",
            "features": "bert_rec: BERTScore recall against the reference (the harness's encoder, bundled "
            "MiniLM); faithfulness: the answer judge's (judging/data/answer_judge.json)",
            "ridge": RIDGE,
            "scores_in_sample": {
                "rho_vs_official_rb_llm": round(spearman(fitted, targets)[0] or 0.0, 4),
                "mean_absolute_error": round(
                    sum(abs((f or 0.0) - t) for f, t in zip(fitted, targets, strict=True)) / len(rows), 4
                ),
            },
            "caveat": "one of the three golden systems is the reference itself (bert_rec 1.0); it is kept, "
            "since the official judge also rated it",
        },
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(model, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.output}: rb_llm = {bias} + {weights} ({len(rows)} tuning responses)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
