"""Choose the answer judge's feature sets: 4-fold cross-validation by conversation within the tuning half.

    python -m research.answer_judge_cv ../shared/data/mtrag/eval/reference_subset_with_human_evaluations.json

For every set of up to five features (``judging.support.FEATURES``; no consensus for faithfulness, which
scores one answer alone) it fits the faithfulness model (least squares on human faithfulness) and the
preference model (pairwise logistic on human win-rates) on three folds of the tuning tasks and scores
the fourth; it prints the best sets by out-of-fold Spearman rho (faithfulness) and by pairwise agreement
(ties counted half, so that a feature that separates few pairs does not look good) plus top-1
(preference). The report half is never read. Sentence vectors come from the judge's disk cache.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys

from mtrag_graph.judging.answer_judge import AnswerJudge, LinearModel
from mtrag_graph.judging.embedding_cache import default_embedding_cache
from mtrag_graph.judging.fit import (
    FAITHFULNESS_FEATURES,
    PREFERENCE_FEATURES,
    fit_least_squares,
    fit_pairwise_logistic,
)
from mtrag_graph.judging.support import FEATURES
from mtrag_graph.measure.evaluation.agreement import spearman, top1_agreement
from mtrag_graph.measure.evaluation.golden import by_task, conversation_of, load_golden

FOLDS = 4
MAX_FEATURES = 5


def pairwise_ties_half(values, responses) -> float:
    agree = total = 0.0
    for group in by_task(responses).values():
        for a, b in itertools.combinations(group, 2):
            if a.human["win-rate"] == b.human["win-rate"]:
                continue
            total += 1
            d = (values[a.key] - values[b.key]) * (a.human["win-rate"] - b.human["win-rate"])
            agree += 1.0 if d > 0 else 0.5 if d == 0 else 0.0
    return agree / total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("golden")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()

    tune = [r for r in load_golden(args.golden) if r.split == "tune"]
    judge = AnswerJudge(LinearModel({}), LinearModel({}), embedding_cache=default_embedding_cache())
    features = {}
    for group in by_task(tune).values():
        item = group[0].item
        rows = judge.features(item.question, item.passages, [r.item.response for r in group])
        features.update({r.key: row for r, row in zip(group, rows, strict=True)})
    # folds by conversation, as the tuning / report split: no conversation's turns in two folds
    conversations = sorted({conversation_of(r.task_id) for r in tune})
    random.Random(0).shuffle(conversations)
    folds = [
        {r.task_id for r in tune if conversation_of(r.task_id) in conversations[i::FOLDS]}
        for i in range(FOLDS)
    ]

    def out_of_fold(names, kind):
        values = {}
        for fold in folds:
            train = [r for r in tune if r.task_id not in fold]
            if kind == "faithfulness":
                weights, bias = fit_least_squares(
                    [features[r.key] for r in train], [r.human["faithfulness"] for r in train], names
                )
            else:
                groups = [
                    [(features[r.key], r.human["win-rate"]) for r in g] for g in by_task(train).values()
                ]
                weights, bias = fit_pairwise_logistic(groups, names), 0.0
            for r in tune:
                if r.task_id in fold:
                    values[r.key] = bias + sum(w * features[r.key][n] for n, w in weights.items())
        return values

    for kind in ("faithfulness", "preference"):
        pool = [f for f in FEATURES if not (kind == "faithfulness" and f == "consensus")]
        results = []
        for k in range(1, MAX_FEATURES + 1):
            for names in itertools.combinations(pool, k):
                values = out_of_fold(list(names), kind)
                rho = (
                    spearman([values[r.key] for r in tune], [r.human["faithfulness"] for r in tune])[0] or 0.0
                )
                pairwise = pairwise_ties_half(values, tune)
                groups = [[(values[r.key], r.human["win-rate"]) for r in g] for g in by_task(tune).values()]
                top1 = top1_agreement(groups)[0] or 0.0
                key = rho if kind == "faithfulness" else pairwise + top1
                results.append((key, rho, pairwise, top1, names))
        results.sort(reverse=True)
        print(f"\n{kind}: out-of-fold rho vs faithfulness, pairwise (ties half), top-1 on the tuning half")
        for _, rho, pairwise, top1, names in results[: args.top]:
            print(f"  {rho:.3f} {pairwise:.3f} {top1:.3f}  {', '.join(names)}")
        shipped = set(FAITHFULNESS_FEATURES if kind == "faithfulness" else PREFERENCE_FEATURES)
        for rank, (_, rho, pairwise, top1, names) in enumerate(results, start=1):
            if set(names) == shipped:
                print(f"  shipped set, rank {rank} of {len(results)}: {rho:.3f} {pairwise:.3f} {top1:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
