"""Fit the answer judge on the tuning half of the golden file and write it with its data card.

    python -m research.fit_answer_judge GOLDEN.json -o mtrag_graph/judging/data/answer_judge.json

GOLDEN is ``eval/reference_subset_with_human_evaluations.json``. Only the tuning half is read for
fitting (``golden.split_of``: by conversation); the report half stays unseen. The feature sets and the
regressions are the judge's own (``judging.fit``); this is the measurement side that reads the golden
file and scores the fit against people.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import sys
from pathlib import Path

from tqdm import tqdm

from mtrag_graph.judging.answer_judge import AnswerJudge, LinearModel
from mtrag_graph.judging.embedding_cache import default_embedding_cache
from mtrag_graph.judging.fit import (
    FAITHFULNESS_FEATURES,
    PREFERENCE_FEATURES,
    RIDGE,
    VERSION,
    fit_least_squares,
    fit_pairwise_logistic,
)
from mtrag_graph.measure.evaluation.agreement import pairwise_agreement, spearman, top1_agreement
from mtrag_graph.measure.evaluation.golden import SPLIT_RULE, by_task, load_golden


def in_sample_scores(responses, features, faith_weights, faith_bias, preference) -> dict[str, float | None]:
    """How the fitted models agree with people on the responses they were fitted on (the card's scores;
    the held-out numbers are in benchmarks/results/judges.md, "Report half")."""

    def linear(weights, bias, row):
        return bias + sum(w * row[n] for n, w in weights.items())

    faith = [linear(faith_weights, faith_bias, features[r.key]) for r in responses]
    groups = [
        [(linear(preference, 0.0, features[r.key]), r.human["win-rate"]) for r in group]
        for group in by_task(responses).values()
    ]
    rho = spearman(faith, [r.human["faithfulness"] for r in responses])[0]
    pairwise, top1 = pairwise_agreement(groups)[0], top1_agreement(groups)[0]
    return {
        "faithfulness_rho_vs_human_faithfulness": None if rho is None else round(rho, 4),
        "preference_pairwise_vs_human_win_rate": None if pairwise is None else round(pairwise, 4),
        "preference_top1": None if top1 is None else round(top1, 4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m research.fit_answer_judge", description=__doc__)
    parser.add_argument("golden", help="eval/reference_subset_with_human_evaluations.json")
    parser.add_argument("-o", "--output", required=True, help="model file to write")
    parser.add_argument("--embedder", default="minilm", help="sentence embedder spec (default minilm)")
    args = parser.parse_args(argv)

    responses = [r for r in load_golden(args.golden) if r.split == "tune"]
    groups = by_task(responses)
    judge = AnswerJudge(
        LinearModel({}),
        LinearModel({}),
        embedder_spec=args.embedder,
        embedding_cache=default_embedding_cache(),
    )
    features: dict[str, dict[str, float]] = {}
    for group in tqdm(groups.values(), desc="features (tuning half)", unit="task"):
        first = group[0].item
        rows = judge.features(first.question, first.passages, [r.item.response for r in group])
        features.update({r.key: row for r, row in zip(group, rows, strict=True)})
    faith_weights, faith_bias = fit_least_squares(
        [features[r.key] for r in responses],
        [r.human["faithfulness"] for r in responses],
        FAITHFULNESS_FEATURES,
    )
    preference = fit_pairwise_logistic(
        [[(features[r.key], r.human["win-rate"]) for r in g] for g in groups.values()], PREFERENCE_FEATURES
    )
    golden_bytes = Path(args.golden).read_bytes()
    scores = in_sample_scores(responses, features, faith_weights, faith_bias, preference)
    command = "python -m research.fit_answer_judge GOLDEN -o " + args.output
    if args.embedder != "minilm":
        command += f" --embedder {args.embedder}"
    model = {
        "faithfulness": {"weights": faith_weights, "bias": faith_bias},
        "preference": {"weights": preference, "bias": 0.0},
        "embedder": args.embedder,
        "card": {
            "version": VERSION,
            "trained": datetime.date.today().isoformat(),
            "command": command,
            "data": Path(args.golden).name,
            "data_sha256": hashlib.sha256(golden_bytes).hexdigest(),
            "split": "tune half of the golden file, " + SPLIT_RULE,
            "tasks": len(groups),
            "responses": len(responses),
            "faithfulness_target": "mean human faithfulness (1-4) over annotators; ridge least squares",
            "preference_target": "human win-rate order of same-task pairs; pairwise logistic, ridge",
            "ridge": RIDGE,
            "feature_selection": "4-fold cross-validation within the tuning half (benchmarks/answer_judge_cv.py)",
            "scores_in_sample": scores,
            "systems": sorted({r.model_id for r in responses}),
        },
    }
    Path(args.output).write_text(json.dumps(model, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.output}: faithfulness {faith_weights} + {faith_bias}; preference {preference}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
