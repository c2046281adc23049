"""The answer judge's fitting: its feature sets and the two regressions (ridge least squares, pairwise
logistic). The command that fits it on the golden file is ``research.fit_answer_judge``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np

# The feature sets were chosen by 4-fold cross-validation within the tuning half
# (research/answer_judge_cv.py): among all sets of up to five features, these are near the best and
# read plainly. Faithfulness: how much of the answer the passages hold (a single answer has no
# consensus); preference: support, its weakest claim, coverage of the passage sentences closest to the
# question (completeness), and declining.
FAITHFULNESS_FEATURES = ("lex_precision", "bigram_precision", "unsupported_words", "sem_claim_mean")
PREFERENCE_FEATURES = ("lex_precision", "passage_coverage", "sem_claim_min", "declines")
RIDGE = 1.0
VERSION = "answer-judge-v2"  # v2: fitted on the conversation-level split


Z_CLIP = 50.0  # a logit past this is certainty either way (and exp() stays finite)


def logistic_probability(
    values: Mapping[str, float],
    features: Sequence[str],
    mean: Sequence[float],
    scale: Sequence[float],
    coef: Sequence[float],
    intercept: float,
) -> float:
    """A standardised logistic regression's probability for the named ``values`` (the gate classifier,
    the no-passages clarify model and the verdict's combiner are each one)."""
    z = intercept + sum(
        c * (float(values[f]) - m) / s for f, m, s, c in zip(features, mean, scale, coef, strict=True)
    )
    return 1 / (1 + math.exp(-max(min(z, Z_CLIP), -Z_CLIP)))


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
