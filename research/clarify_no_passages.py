"""Fit the clarify decision for turns without passages (mtrag_graph/data/clarify_no_passages.json) on the
tuning part of the generated data, and measure it on the held-out part.

    python -m research.clarify_no_passages --data $MTRAG_DATA --seed 0 -o mtrag_graph/data/clarify_no_passages.json

One command: it builds the generated set (``research.clarify_data``, three draws of the tuning split's
twins, as ``research.clarify_fit``) and reads each turn as it would be without passages: its reference
features and the question's MiniLM cosines with the last user turn and the last agent turn. No sentence
embedding of the question itself: the earlier classifier had one and learned the generator's wording.
For the same reason the features that describe the wording rather than the references (the length, a
capitalised name, a number: the generator takes names out, the benchmark's underspecified turns keep
them) are left out unless ``--features all``. The L2 strength is chosen by 5-fold cross-validation
grouped by conversation, the threshold on the out-of-fold scores of the natural tuning turns
(``FALSE_ALARM`` of them may be asked), then the model is fitted on the whole tuning part. The held-out
part is scored once everything is chosen; its figures go into the card.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from mtrag_graph import settings
from mtrag_graph.judging.clarify_no_passages import KNOWN_FEATURES, NoPassageModel, similarity_features
from mtrag_graph.judging.embedding_cache import CachedEmbedder, default_embedding_cache
from mtrag_graph.judging.underspecified import reference_features
from mtrag_graph.measure.decisions.sets import load_split, split_path
from mtrag_graph.models import get_embedder
from research.clarify_data import VARIANTS, generated_set, tuning_documents
from research.clarify_fit import (
    _rounded,
    choose_l2,
    fit_logistic,
    group_of,
    is_threshold_negative,
    rates,
    set_sha256,
    standardise,
    turn_of,
)
from research.twins import file_sha256

WORDING = ("words", "capitalised_name", "number")  # what the question looks like, not what it refers to
FEATURES = tuple(f for f in KNOWN_FEATURES if f not in WORDING)
FALSE_ALARM = 0.03  # of the natural tuning turns (their passages left out) that may be asked


def feature_values(items: list[dict[str, Any]], embedder: Any) -> list[dict[str, float]]:
    """Every item's inputs, its passages left out."""
    values = []
    for item in items:
        history, question, _ = turn_of(item)
        row = reference_features(history, question)
        row.update(similarity_features(history, question, embedder))
        values.append(row)
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m research.clarify_no_passages", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--data", default=os.environ.get("MTRAG_DATA"), help="benchmark data (MTRAG_DATA)")
    parser.add_argument("-o", "--output", required=True, metavar="MODEL.json")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", type=int, default=VARIANTS, help="draws of the tuning split's twins")
    parser.add_argument(
        "--features", choices=("references", "all"), default="references",
        help="references (default): leave out the question's length, capitalised names and numbers",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if not args.data:
        print("error: pass --data or set MTRAG_DATA to the benchmark data folder", file=sys.stderr)
        return 2
    items = generated_set(
        load_split(args.data, "tuning"), seed=args.seed, documents=tuning_documents(), variants=args.variants
    )
    spec = settings.DEFAULT_EMBEDDER
    embedder = CachedEmbedder(get_embedder(spec), spec, default_embedding_cache())
    values = feature_values(items, embedder)
    features = FEATURES if args.features == "references" else KNOWN_FEATURES
    matrix = np.array([[row[f] for f in features] for row in values])
    split = [item["clarify_item"]["split"] for item in items]
    tuning = [i for i in range(len(items)) if split[i] == "tuning"]
    x = matrix[tuning]
    y = np.array([float(items[i]["clarify_item"]["underspecified"]) for i in tuning])
    groups = [group_of(items[i]) for i in tuning]
    negatives = np.array([is_threshold_negative(items[i]) for i in tuning])
    l2, recall, threshold, oof = choose_l2(x, y, groups, negatives, FALSE_ALARM)
    mean, scale = standardise(x)
    coef, intercept = fit_logistic((x - mean) / scale, y, l2)
    model = NoPassageModel(
        embedder=spec,
        features=tuple(features),
        mean=_rounded(mean),
        scale=_rounded(scale),
        coef=_rounded(coef),
        intercept=float(f"{intercept:.6g}"),
        threshold=float(f"{threshold:.6g}"),
        card={},
    )
    held = [i for i in range(len(items)) if split[i] == "held-out"]
    held_asked = [model.probability(values[i]) >= model.threshold for i in held]
    as_given = [k for k, i in enumerate(held) if not items[i]["clarify_item"]["passages"]]
    removed = [k for k, i in enumerate(held) if items[i]["clarify_item"]["passages"]]
    tuning_items = [items[i] for i in tuning]
    source = split_path(args.data, "tuning")
    card = {
        "command": f"python -m research.clarify_no_passages --data $MTRAG_DATA --seed {args.seed} "
        f"--variants {args.variants} --features {args.features} -o {args.output}",
        "data": "tasks/mtrag_reference.jsonl (generated by research/clarify_data.py; never the MTRAG-UN dev slice) "
        "and the real-documents set's tuning conversations; every turn with its passages left out",
        "data_sha256": file_sha256(source),
        "generated_set_sha256": set_sha256(items),
        "seed": args.seed,
        "variants": args.variants,
        "l2": l2,
        "false_alarm_target": FALSE_ALARM,
        "tuning_items": len(tuning),
        "tuning_underspecified": int(y.sum()),
        "out_of_fold_recall": round(recall, 4),
        "out_of_fold": rates(tuning_items, (oof >= threshold).tolist()),
        "held_out_no_passages": rates([items[held[k]] for k in as_given], [held_asked[k] for k in as_given]),
        "held_out_passages_removed": rates(
            [items[held[k]] for k in removed], [held_asked[k] for k in removed]
        ),
    }
    model = NoPassageModel(**{**model.__dict__, "card": card})
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(model.to_json(), encoding="utf-8")
    print(json.dumps({**card, "output_sha256": file_sha256(out), "bytes": out.stat().st_size}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
