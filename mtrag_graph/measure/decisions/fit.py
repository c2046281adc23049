"""Fit the gate classifier on the tuning split's gate results (never on the report split).

Logistic regression (scikit-learn, balanced class weights) over standardised ``nodes.answerability_gate.FEATURES``. The
threshold is chosen on 5-fold cross-validated probabilities, so it is not fitted to the very scores it
is applied to: the best balanced accuracy that loses at most ``max_positive_loss`` of the positives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mtrag_graph.measure.decisions.metrics import best_threshold
from mtrag_graph.nodes.answerability_gate import FEATURES, GateClassifier


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
    import numpy as np  # noqa: PLC0415
    from sklearn.linear_model import LogisticRegression  # noqa: PLC0415
    from sklearn.model_selection import StratifiedKFold, cross_val_predict  # noqa: PLC0415
    from sklearn.pipeline import make_pipeline  # noqa: PLC0415
    from sklearn.preprocessing import StandardScaler  # noqa: PLC0415

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
