"""Fit the clarify classifier (research/data/clarify_classifier.json) on the tuning part of the
generated data, and measure it on the held-out part.

    python -m research.clarify_fit --data $MTRAG_DATA --seed 0 -o research/data/clarify_classifier.json

One command: it builds the generated set (``research.clarify_data``, the same seed gives the same set)
and embeds its texts with the bundled MiniLM. The no-passage model trains on every tuning turn with its
passages left out, ``--variants`` draws of the twins; the passage model on the tuning turns with
passages, the first draw (out of fold, three draws gave it no more recall and gave the no-passage model
more). For each, the L2 strength is chosen by 5-fold cross-validation grouped by conversation, the
threshold on the out-of-fold scores of the natural tuning turns (``FALSE_ALARM`` of them may be asked);
then it is fitted on the whole tuning part. The held-out part is scored after everything is chosen, and
its figures go into the card.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mtrag_graph import settings
from mtrag_graph.judging.embedding_cache import CachedEmbedder, default_embedding_cache
from mtrag_graph.measure.decisions.sets import load_split, split_path
from mtrag_graph.models import get_embedder
from mtrag_graph.tasks import answerability_of, parse_task
from research.clarify_classifier import (
    CONVERSATION_FEATURES,
    ClarifyClassifier,
    ClarifyModel,
    feature_names,
    feature_row,
    setting_of,
    turn_features,
)
from research.clarify_data import VARIANTS, generated_set, tuning_documents
from research.twins import file_sha256

FOLDS = 5
L2_GRID = (1.0, 10.0, 100.0, 1000.0)
# the share of each setting's natural tuning turns that may be asked (out of fold): with passages, the
# ANSWERABLE and PARTIAL turns; without, every natural turn with its passages left out (the UNANSWERABLE
# and CONVERSATIONAL turns have none)
FALSE_ALARM = {"passages": 0.02, "none": 0.03}


def turn_of(item: dict[str, Any]) -> tuple[list[dict[str, str]], str, list[dict[str, Any]] | None]:
    """(history, question, passages) as the clarify node sees them."""
    task = parse_task(item)
    passages = (
        None
        if task.passages is None
        else [{k: p[k] for k in ("document_id", "title", "text")} for p in task.passages]
    )
    return [t.model_dump() for t in task.history], task.question, passages or None


def group_of(item: dict[str, Any]) -> str:
    """The MTRAG conversation an item comes from (a twin's source conversation)."""
    task_id = str(item["task_id"])
    return (
        task_id.split(":", 1)[-1].split("<::>")[0]
        if task_id.startswith("twin-")
        else task_id.split("<::>")[0]
    )


def is_threshold_negative(item: dict[str, Any]) -> bool:
    """A natural turn of the benchmark that must not be asked: the negatives a threshold is set on."""
    meta = item["clarify_item"]
    return meta["form"] in ("natural", "documents") and not meta["underspecified"]


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float, iterations: int = 30) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression (the intercept not penalised), Newton's method."""
    design = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(design.shape[1])
    penalty = l2 * np.eye(len(w))
    penalty[-1, -1] = 0.0
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-np.clip(design @ w, -50, 50)))
        gradient = design.T @ (p - y) + penalty @ w
        hessian = (design * (p * (1 - p))[:, None]).T @ design + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    return mean, np.where(scale > 1e-9, scale, 1.0)


def scores(
    x: np.ndarray, mean: np.ndarray, scale: np.ndarray, coef: np.ndarray, intercept: float
) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(((x - mean) / scale) @ coef + intercept, -50, 50)))


def threshold_for(negative_scores: Sequence[float], false_alarm: float) -> float:
    """The lowest threshold at which at most ``false_alarm`` of these scores reach it."""
    ordered = sorted(negative_scores, reverse=True)
    allowed = int(false_alarm * len(ordered))
    return float(np.nextafter(ordered[allowed], 1.0)) if allowed < len(ordered) else 0.0


def out_of_fold(x: np.ndarray, y: np.ndarray, groups: Sequence[str], l2: float) -> np.ndarray:
    """Each item's score from the model fitted on the other folds (folds of whole conversations)."""
    names = sorted(set(groups))
    rng = np.random.default_rng(0)
    fold_of = {g: i % FOLDS for i, g in enumerate(rng.permutation(names))}
    folds = np.array([fold_of[g] for g in groups])
    result = np.zeros(len(y))
    for fold in range(FOLDS):
        train, test = folds != fold, folds == fold
        mean, scale = standardise(x[train])
        coef, intercept = fit_logistic((x[train] - mean) / scale, y[train], l2)
        result[test] = scores(x[test], mean, scale, coef, intercept)
    return result


def choose_l2(
    x: np.ndarray,
    y: np.ndarray,
    groups: Sequence[str],
    negatives: np.ndarray,
    false_alarm: float,
    label: str = "",
) -> tuple[float, float, float, np.ndarray]:
    """The L2 strength of ``L2_GRID`` with the highest out-of-fold recall when the threshold lets
    ``false_alarm`` of the ``negatives`` be asked (ties: the stronger): (l2, recall, threshold, scores)."""
    search: dict[float, tuple[float, float, np.ndarray]] = {}
    for l2 in L2_GRID:
        oof = out_of_fold(x, y, groups, l2)
        threshold = threshold_for(oof[negatives].tolist(), false_alarm)
        search[l2] = (float((oof[y == 1] >= threshold).mean()), threshold, oof)
        print(f"{label}l2={l2}: out-of-fold recall {search[l2][0]:.3f} at {threshold:.3f}", file=sys.stderr)
    l2 = max(L2_GRID, key=lambda value: (search[value][0], value))
    return (l2, *search[l2])


def rates(items: Sequence[dict[str, Any]], asked: Sequence[bool]) -> dict[str, str]:
    """Asked / total by (form, label), for the report."""
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for item, ask in zip(items, asked, strict=True):
        meta = item["clarify_item"]
        label = "UNDERSPECIFIED" if meta["underspecified"] else str(answerability_of(item))
        for key in (f"{label} {meta['form']}", f"{label} all"):
            table[key][0] += bool(ask)
            table[key][1] += 1
    return {k: f"{a}/{n} ({a / n:.1%})" for k, (a, n) in sorted(table.items())}


def _rounded(values: np.ndarray) -> tuple[float, ...]:
    """Six significant digits: a small scale stays above zero."""
    return tuple(float(f"{v:.6g}") for v in values)


def set_sha256(items: Sequence[dict[str, Any]]) -> str:
    text = "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in items)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m research.clarify_fit", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--data", default=os.environ.get("MTRAG_DATA"), help="benchmark data (MTRAG_DATA)")
    parser.add_argument("-o", "--output", required=True, metavar="CLASSIFIER.json")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", type=int, default=VARIANTS, help="draws of the tuning split's twins")
    parser.add_argument(
        "--scores", metavar="FILE.jsonl", help="also write every item's held-out or OOF score"
    )
    args = parser.parse_args(argv)
    if not args.data:
        print("error: pass --data or set MTRAG_DATA to the benchmark data folder", file=sys.stderr)
        return 2
    items = generated_set(
        load_split(args.data, "tuning"), seed=args.seed, documents=tuning_documents(), variants=args.variants
    )
    spec = settings.DEFAULT_EMBEDDER
    embedder = CachedEmbedder(get_embedder(spec), spec, default_embedding_cache())
    turns = [turn_of(item) for item in items]
    # the no-passage model sees every turn as it would be without passages: what the conversation and
    # the question say is the same with or without them
    rows: dict[str, list[np.ndarray | None]] = {
        "passages": [
            feature_row(turn_features(h, q, p), h, q, p, embedder) if p else None for h, q, p in turns
        ],
        "none": [feature_row(turn_features(h, q, None), h, q, None, embedder) for h, q, _ in turns],
    }
    print(f"{len(items)} items embedded", file=sys.stderr)
    dim = np.asarray(rows["none"][0]).shape[0] - len(CONVERSATION_FEATURES)

    models: dict[str, ClarifyModel] = {}
    card_settings: dict[str, Any] = {}
    written: list[dict[str, Any]] = []
    for setting in ("passages", "none"):
        split = [items[i]["clarify_item"]["split"] for i in range(len(items))]
        in_setting = [i for i, (_, _, p) in enumerate(turns) if setting_of(p) == setting]
        trained_on = (
            [i for i in in_setting if "#variant" not in items[i]["task_id"]]
            if setting == "passages"
            else range(len(items))
        )
        tuning = [i for i in trained_on if split[i] == "tuning"]
        held = [i for i in in_setting if split[i] == "held-out"]  # as the classifier meets them
        x = np.array([rows[setting][i] for i in tuning])
        y = np.array([float(items[i]["clarify_item"]["underspecified"]) for i in tuning])
        groups = [group_of(items[i]) for i in tuning]
        negatives = np.array([is_threshold_negative(items[i]) for i in tuning])
        l2, recall, threshold, oof = choose_l2(x, y, groups, negatives, FALSE_ALARM[setting], f"{setting} ")
        mean, scale = standardise(x)
        coef, intercept = fit_logistic((x - mean) / scale, y, l2)
        model = ClarifyModel(
            mean=_rounded(mean),
            scale=_rounded(scale),
            coef=_rounded(coef),
            intercept=float(f"{intercept:.6g}"),
            threshold=float(f"{threshold:.6g}"),
        )
        models[setting] = model
        held_scores = [model.probability(np.asarray(rows[setting][i])) for i in held]
        held_items = [items[i] for i in held]
        tuning_items = [items[i] for i in tuning]
        card_settings[setting] = {
            "features": [
                *feature_names(setting, 0),
                f"the question's {spec} embedding ({dim} values)",
            ],
            "l2": l2,
            "false_alarm_target": FALSE_ALARM[setting],
            "tuning_items": len(tuning),
            "tuning_underspecified": int(y.sum()),
            "out_of_fold_recall": round(recall, 4),
            "out_of_fold": rates(tuning_items, (oof >= threshold).tolist()),
            "held_out_items": len(held),
            "held_out": rates(held_items, [s >= model.threshold for s in held_scores]),
        }
        written += [
            {"task_id": items[i]["task_id"], "split": "tuning", "setting": setting, "score": float(s)}
            for i, s in zip(tuning, oof, strict=True)
        ]
        written += [
            {"task_id": items[i]["task_id"], "split": "held-out", "setting": setting, "score": s}
            for i, s in zip(held, held_scores, strict=True)
        ]
    source = split_path(args.data, "tuning")
    card = {
        "command": f"python -m research.clarify_fit --data $MTRAG_DATA --seed {args.seed} --variants {args.variants} -o {args.output}",
        "data": "tasks/mtrag_reference.jsonl (generated by research/clarify_data.py; never the MTRAG-UN dev slice) "
        "and the real-documents set's tuning conversations",
        "data_sha256": file_sha256(source),
        "generated_set_sha256": set_sha256(items),
        "seed": args.seed,
        "variants": args.variants,
        "embedder": spec,
        "settings": card_settings,
    }
    classifier = ClarifyClassifier(embedder=spec, models=models, card=card)
    out = Path(args.output)
    out.write_text(classifier.to_json(), encoding="utf-8")
    print(json.dumps({**card, "output_sha256": file_sha256(out), "bytes": out.stat().st_size}, indent=2))
    if args.scores:
        Path(args.scores).write_text("".join(json.dumps(r) + "\n" for r in written), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
