"""Fit the clarify decision on real MTRAG-UN turns: the tuning slice's UNDERSPECIFIED turns against its
other turns and MTRAG's reference turns, a few structural signals and one logistic regression.

    python -m research.clarify_slice --data $MTRAG_DATA -o runs/clarify_slice.json
    python -m research.clarify_slice --data $MTRAG_DATA --model runs/clarify_slice.json --report

The earlier fits (``research.clarify_fit``, ``research.clarify_no_passages``) learned from generated
twins; this one learns from ``tasks/mtragun_tuning.jsonl`` (90 MTRAG-UN turns outside the dev slice: 36
UNDERSPECIFIED) and from the 832 turns of ``tasks/mtrag_reference.jsonl`` (none UNDERSPECIFIED: the
false-alarm side). Its inputs are the model-free rules' decision and a handful of numbers each rule-free
(``research.clarify_slice_features.slice_features``). The L2 strength is chosen by 5-fold cross-validation grouped
by conversation, the threshold on the out-of-fold scores of the negatives (``FALSE_ALARM``), then the
model is fitted on all of it. ``--report`` reads the dev slice (``tasks/mtragun_dev.jsonl``) once, with
the fitted model, and prints its rates; nothing is chosen there.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from mtrag_graph.context import Context
from mtrag_graph.judging.embedding_cache import CachedEmbedder, default_embedding_cache
from mtrag_graph.judging.underspecified import is_underspecified
from mtrag_graph.measure.decisions.sets import load_tasks
from mtrag_graph.models import get_embedder
from mtrag_graph.tasks import answerability_of
from research.clarify_fit import (
    _rounded,
    choose_l2,
    fit_logistic,
    set_sha256,
    standardise,
    threshold_for,
    turn_of,
)
from research.clarify_slice_features import FEATURES, load_slice_model, slice_features
from research.twins import file_sha256

FALSE_ALARM = 0.02  # of the negatives (every turn not UNDERSPECIFIED) that may be asked, out of fold
TUNING = ("tasks/mtragun_tuning.jsonl", "tasks/mtrag_reference.jsonl")
REPORT = "tasks/mtragun_dev.jsonl"


def _items(data: Path, names: tuple[str, ...]) -> list[dict[str, Any]]:
    items = []
    for name in names:
        for raw in load_tasks(data / name):
            label = str(answerability_of(raw))
            if label == "CONVERSATIONAL":
                continue
            items.append({**raw, "_label": label, "_file": name})
    return items


def _group(item: dict[str, Any]) -> str:
    return f"{item['_file']}:{str(item['task_id']).split('<::>')[0]}"


def feature_rows(items: list[dict[str, Any]], embedder: Any, context: Context) -> list[dict[str, float]]:
    rows = []
    for number, item in enumerate(items, start=1):
        history, question, passages = turn_of(item)
        rules, _ = is_underspecified(history, question, passages, context)
        rows.append(slice_features(history, question, passages, embedder, bool(rules)))
        if number % 100 == 0:
            print(f"features {number}/{len(items)}", file=sys.stderr)
    return rows


def _rates(items: list[dict[str, Any]], asked: np.ndarray) -> dict[str, str]:
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for item, ask in zip(items, asked, strict=True):
        passages = "passages" if turn_of(item)[2] else "no passages"
        label = item["_label"]
        label = "ANSWERABLE+PARTIAL" if label in ("ANSWERABLE", "PARTIAL") else label
        for key in (f"{item['_file']} {label}", f"{item['_file']} {label} {passages}"):
            table[key][0] += bool(ask)
            table[key][1] += 1
    return {k: f"{a}/{n} ({a / n:.1%})" for k, (a, n) in sorted(table.items())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("-o", "--output", type=Path, help="where the fitted model and its card go")
    parser.add_argument("--model", type=Path, help="a fitted model to score (with --report)")
    parser.add_argument("--report", action="store_true", help="score the dev slice once with --model")
    parser.add_argument("--features", nargs="*", default=list(FEATURES))
    args = parser.parse_args(argv)
    context = Context(clarify_no_passages=None)  # the rules alone: the fitted model replaces that one
    embedder = CachedEmbedder(get_embedder("minilm"), "minilm", default_embedding_cache())
    if args.report:
        model = load_slice_model(args.model)
        items = _items(args.data, (REPORT,))
        rows = feature_rows(items, embedder, context)
        asked = np.array([model.probability(r) >= model.threshold for r in rows])
        print(json.dumps(_rates(items, asked), indent=1))
        return 0
    items = _items(args.data, TUNING)
    rows = feature_rows(items, embedder, context)
    names = list(args.features)
    x = np.array([[r[n] for n in names] for r in rows], dtype=float)
    y = np.array([item["_label"] == "UNDERSPECIFIED" for item in items], dtype=float)
    groups = [_group(item) for item in items]
    negatives = y == 0
    for name in names:
        column = x[:, names.index(name)]
        print(
            f"{name:24s} U {column[y == 1].mean():.3f}  others {column[y == 0].mean():.3f}", file=sys.stderr
        )
    l2, recall, threshold, oof = choose_l2(x, y, groups, negatives, FALSE_ALARM)
    print(f"chosen l2={l2}: out-of-fold recall {recall:.3f} at {threshold:.3f}", file=sys.stderr)
    oof_rates = _rates(items, oof >= threshold)
    print(json.dumps(oof_rates, indent=1), file=sys.stderr)
    for item, score, label in zip(items, oof, y, strict=True):
        if (score >= threshold) != bool(label) and item["_file"] == TUNING[0]:
            print(f"  {'missed' if label else 'false'} {score:.2f} {turn_of(item)[1][:100]}", file=sys.stderr)
    if args.output is None:
        return 0
    mean, scale = standardise(x)
    coef, intercept = fit_logistic((x - mean) / scale, y, l2)
    fitted = ((x - mean) / scale) @ coef + intercept
    final_threshold = threshold_for((1 / (1 + np.exp(-fitted[negatives]))).tolist(), FALSE_ALARM)
    fitted_model = {
        "embedder": "minilm",
        "features": names,
        "mean": _rounded(mean),
        "scale": _rounded(scale),
        "coef": _rounded(coef),
        "intercept": round(float(intercept), 6),
        # the out-of-fold threshold: the in-sample one is set on scores the model was fitted to
        "threshold": round(float(threshold), 6),
        "card": {
            "command": "python -m research.clarify_slice --data $MTRAG_DATA -o runs/clarify_slice.json",
            "data": " and ".join(TUNING) + " (every turn but CONVERSATIONAL; never the dev slice)",
            "data_sha256": {name: file_sha256(args.data / name) for name in TUNING},
            "items_sha256": set_sha256(
                [{k: v for k, v in i.items() if not k.startswith("_")} for i in items]
            ),
            "items": len(items),
            "underspecified": int(y.sum()),
            "l2": l2,
            "false_alarm_target": FALSE_ALARM,
            "in_sample_threshold": round(float(final_threshold), 6),
            "out_of_fold_recall": round(recall, 4),
            "out_of_fold": oof_rates,
        },
    }
    args.output.write_text(json.dumps(fitted_model, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
