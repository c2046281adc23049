"""Fit the answer judge on the tuning half of the golden file and write it with its data card.

    python -m mtrag_graph.judging.fit GOLDEN.json -o mtrag_graph/judging/data/answer_judge.json

GOLDEN is ``eval/reference_subset_with_human_evaluations.json``. Only the tuning half is read for
fitting (``golden.split_of``: by conversation); the report half stays unseen.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import itertools
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

# The feature sets were chosen by 4-fold cross-validation within the tuning half
# (benchmarks/answer_judge_cv.py): among all sets of up to five features, these are near the best and
# read plainly. Faithfulness: how much of the answer the passages hold (a single answer has no
# consensus); preference: support, its weakest claim, coverage of the passage sentences closest to the
# question (completeness), and declining.
FAITHFULNESS_FEATURES = ("lex_precision", "bigram_precision", "unsupported_words", "sem_claim_mean")
PREFERENCE_FEATURES = ("lex_precision", "passage_coverage", "sem_claim_min", "declines")
RIDGE = 1.0
VERSION = "answer-judge-v2"  # v2: fitted on the conversation-level split


def fit_least_squares(rows: Sequence[dict[str, float]], target: Sequence[float], names: Sequence[str]):
    """Ridge least squares (the bias is not penalised): ``(weights by name, bias)``."""
    x = np.array([[row[n] for n in names] for row in rows], dtype=float)
    y = np.array(target, dtype=float)
    design = np.hstack([x, np.ones((len(x), 1))])
    penalty = RIDGE * np.eye(design.shape[1])
    penalty[-1, -1] = 0.0
    solution = np.linalg.solve(design.T @ design + penalty, design.T @ y)
    return dict(zip(names, solution[:-1].round(6).tolist(), strict=True)), round(float(solution[-1]), 6)


def preference_pairs(groups: Sequence[Sequence[tuple[dict[str, float], float]]], names: Sequence[str]):
    """Feature differences of same-task pairs whose human values differ, both ways round, and labels."""
    differences, labels = [], []
    for group in groups:
        for (fa, ha), (fb, hb) in itertools.combinations(group, 2):
            if ha == hb:
                continue
            delta = [fa[n] - fb[n] for n in names]
            differences += [delta, [-d for d in delta]]
            labels += [float(ha > hb), float(hb > ha)]
    return np.array(differences, dtype=float), np.array(labels, dtype=float)


def fit_pairwise_logistic(
    groups: Sequence[Sequence[tuple[dict[str, float], float]]], names: Sequence[str], iterations: int = 50
) -> dict[str, float]:
    """L2-regularised logistic regression on pair differences (Newton's method)."""
    x, y = preference_pairs(groups, names)
    if not len(x):
        raise ValueError("no pairs with different human values to fit on")
    w = np.zeros(x.shape[1])
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-(x @ w)))
        gradient = x.T @ (p - y) + RIDGE * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + RIDGE * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return dict(zip(names, w.round(6).tolist(), strict=True))


def in_sample_scores(responses, features, faith_weights, faith_bias, preference) -> dict[str, float | None]:
    """How the fitted models agree with people on the responses they were fitted on (the card's scores;
    the held-out numbers are in benchmarks/results/judge_fidelity.md)."""
    from mtrag_graph.evaluation.agreement import pairwise_agreement, spearman, top1_agreement
    from mtrag_graph.evaluation.golden import by_task

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
    from tqdm import tqdm

    from mtrag_graph.evaluation.golden import SPLIT_RULE, by_task, load_golden
    from mtrag_graph.judging.answer_judge import AnswerJudge, LinearModel

    parser = argparse.ArgumentParser(prog="python -m mtrag_graph.judging.fit", description=__doc__)
    parser.add_argument("golden", help="eval/reference_subset_with_human_evaluations.json")
    parser.add_argument("-o", "--output", required=True, help="model file to write")
    parser.add_argument("--embedder", default="minilm", help="sentence embedder spec (default minilm)")
    args = parser.parse_args(argv)

    responses = [r for r in load_golden(args.golden) if r.split == "tune"]
    groups = by_task(responses)
    from mtrag_graph.judging.embedding_cache import default_embedding_cache

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
    command = "python -m mtrag_graph.judging.fit GOLDEN -o " + args.output
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
