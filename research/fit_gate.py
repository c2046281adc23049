"""Fit the gate classifier on the tuning split's gate results (never on the report split).

Logistic regression (scikit-learn, balanced class weights) over standardised ``nodes.answerability_gate.FEATURES``. The
threshold is chosen on 5-fold cross-validated probabilities, so it is not fitted to the very scores it
is applied to: the best balanced accuracy that loses at most ``max_positive_loss`` of the positives.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mtrag_graph.commands import decisions
from mtrag_graph.measure.decisions.metrics import best_threshold
from mtrag_graph.measure.decisions.sets import SPLITS
from mtrag_graph.nodes.answerability_gate import FEATURES, GateClassifier
from research.twins import file_sha256


def fit_gate_classifier(
    results: Sequence[dict[str, Any]],
    *,
    max_positive_loss: float = 0.03,
    features: Sequence[str] = FEATURES,
    trained_on: str = "",
    seed: int = 0,
) -> tuple[GateClassifier, dict[str, Any]]:
    """The classifier and a summary (items per label, cross-validated balanced accuracy, threshold)."""
    # scikit-learn is in the measure extra: loaded only when a fit runs
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    usable = [r for r in results if r.get("features")]
    if len(usable) < len(results):
        raise ValueError(
            f"{len(results) - len(usable)} of {len(results)} results have no features (the gate model gave "
            "no log-probabilities): fit on results of a backend that returns them"
        )
    x = np.array([[r["features"][f] for f in features] for r in usable], dtype=float)
    y = np.array([bool(r["label"]) for r in usable])
    pipeline = make_pipeline(
        StandardScaler(), LogisticRegression(class_weight="balanced", C=1.0, max_iter=1000)
    )
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)
    cv_scores = cross_val_predict(pipeline, x, y, cv=folds, method="predict_proba")[:, 1]
    threshold, cv_balanced = best_threshold(
        cv_scores.tolist(), y.tolist(), max_positive_loss=max_positive_loss
    )
    pipeline.fit(x, y)
    scaler, model = pipeline[0], pipeline[1]
    classifier = GateClassifier(
        features=tuple(features),
        mean=tuple(float(v) for v in scaler.mean_),
        scale=tuple(float(v) for v in scaler.scale_),
        coef=tuple(float(v) for v in model.coef_[0]),
        intercept=float(model.intercept_[0]),
        threshold=float(threshold),
        trained_on=trained_on,
    )
    summary = {
        "positives": int(y.sum()),
        "negatives": int((~y).sum()),
        "max_positive_loss": max_positive_loss,
        "threshold": float(threshold),
        "cv_balanced_accuracy": float(cv_balanced),
    }
    return classifier, summary


def card_command(args: argparse.Namespace, features: Sequence[str]) -> str:
    """The command that rebuilds the classifier, as its card records it (paths as placeholders)."""
    return (
        f"python -m research.fit_gate --split {args.split} --only {' '.join(args.only)} --index INDEX"
        + (f" --limit-per-kind {args.limit_per_kind}" if args.limit_per_kind else "")
        + (f" --seed {args.seed}" if args.seed else "")
        + (f" --max-positive-loss {args.max_positive_loss}" if args.max_positive_loss != 0.03 else "")
        + f" -o OUT --fit-gate {args.fit_gate} --gate-features {' '.join(features)}"
        + (f" --evidence-out {args.evidence_out}" if args.evidence_out else "")
    )


def fit_after(args: argparse.Namespace) -> Any:
    """The decision benchmark's ``after_decision`` hook: fit on the gate (or evidence) results, save the
    classifier with its card, and return the summary the report shows."""
    features = tuple(args.gate_features or FEATURES)
    source_name = str(args.tasks) if args.tasks else SPLITS[args.split]
    suffix = f"-limit{args.limit_per_kind}-seed{args.seed}" if args.limit_per_kind else ""

    def after(name: str, items: list, results: list, set_file: Path) -> dict[str, Any] | None:
        if name not in ("gate", "evidence"):
            return None
        classifier, summary = fit_gate_classifier(
            results,
            max_positive_loss=args.max_positive_loss,
            features=features,
            trained_on=f"{source_name}{suffix}",
            seed=args.seed,
        )
        evidence: dict[str, Any] = {}
        if args.evidence_out:  # the fit's input as numbers (no benchmark text): tests refit from it
            table = Path(args.evidence_out)
            table.parent.mkdir(parents=True, exist_ok=True)
            keep = ("item_id", "kind", "label", "features")
            table.write_text("".join(json.dumps({k: r[k] for k in keep}) + "\n" for r in results))
            evidence = {"evidence_file": str(args.evidence_out), "evidence_sha256": file_sha256(table)}
        card = {
            "trained": datetime.date.today().isoformat(),
            "command": card_command(args, features),
            "data": source_name,
            "data_sha256": file_sha256(Path(args.tasks) if args.tasks else Path(args.data) / source_name),
            "set_sha256": file_sha256(set_file),
            "split": f"{args.split}: {source_name} (never the report split)",
            "items": dict(sorted(Counter(str(i.get("kind")) for i in items).items())),
            **summary,
            **evidence,
        }
        dataclasses.replace(classifier, card=card).save(args.fit_gate)
        return {"path": str(args.fit_gate), "fitted_on": name, **summary}

    return after


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m research.fit_gate",
        description="Run the decision benchmark's gate (or evidence) decision on the tuning split and fit the "
        "gate classifier on its results (mtrag_graph/data/gate_classifier.json is fitted so).",
    )
    decisions.add_arguments(parser)
    parser.add_argument("--fit-gate", required=True, metavar="FILE.json", help="where the classifier goes")
    parser.add_argument(
        "--gate-features",
        nargs="+",
        help="features of the fitted classifier (default: all; leave out logit_p_yes for a model-free gate)",
    )
    parser.add_argument(
        "--max-positive-loss",
        type=float,
        default=0.03,
        help="share of tuning positives the fitted gate may turn away (default 0.03)",
    )
    parser.add_argument(
        "--evidence-out",
        metavar="FILE.jsonl",
        help="also write the fit's input: each item's label and features",
    )
    args = parser.parse_args(argv)
    if args.split != "tuning" or not {"gate", "evidence"} & set(args.only):
        parser.error(
            "the gate classifier is fitted on the tuning split's gate results: --split tuning --only gate|evidence"
        )
    return decisions.run(args, after_decision=fit_after(args))


if __name__ == "__main__":
    sys.exit(main())
