"""How well a metric agrees with people: rank correlation, pairwise order, top-1, Cohen's kappa.

Definitions (those of the judges' anchor table, reproduced from the golden file's official values):

- Spearman rho over responses: Pearson correlation of average ranks (ties share their mean rank);
  responses whose metric value is missing are left out.
- pairwise: over same-task response pairs whose human values differ, the share that the metric orders
  the same way; pairs the metric ties (or cannot score) are left out.
- top-1: over tasks, the share where the metric's best response (the first in file order on a tie) is
  one of the people's favourites (the highest human value; several when tied).
- Cohen's kappa of two label sequences: (p_observed - p_chance) / (1 - p_chance).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson correlation; None for fewer than two points or a constant sequence."""
    if len(x) != len(y):
        raise ValueError(f"pearson: sequences differ in length ({len(x)} vs {len(y)})")
    n = len(x)
    if n < 2:
        return None
    mean_x, mean_y = sum(x) / n, sum(y) / n
    dx = [a - mean_x for a in x]
    dy = [b - mean_y for b in y]
    sx = math.sqrt(sum(a * a for a in dx))
    sy = math.sqrt(sum(b * b for b in dy))
    if sx == 0 or sy == 0:
        return None
    return sum(a * b for a, b in zip(dx, dy, strict=True)) / (sx * sy)


def spearman(metric: Sequence[float | None], human: Sequence[float]) -> tuple[float | None, int]:
    """Spearman rho of the metric with the human values over the responses it scored, and their number."""
    pairs = [(m, h) for m, h in zip(metric, human, strict=True) if m is not None]
    if not pairs:
        return None, 0
    xs, ys = zip(*pairs, strict=True)
    return pearson(average_ranks(xs), average_ranks(ys)), len(pairs)


def pairwise_agreement(
    groups: Sequence[Sequence[tuple[float | None, float]]],
) -> tuple[float | None, int]:
    """Share of same-group pairs (``(metric, human)`` per response) ordered as people did, and the pairs
    counted (human values differ, metric values present and different)."""
    agree = counted = 0
    for group in groups:
        for (m1, h1), (m2, h2) in itertools.combinations(group, 2):
            if h1 == h2 or m1 is None or m2 is None or m1 == m2:
                continue
            counted += 1
            agree += (m1 - m2) * (h1 - h2) > 0
    return (agree / counted if counted else None), counted


def top1_agreement(groups: Sequence[Sequence[tuple[float | None, float]]]) -> tuple[float | None, int]:
    """Share of groups where the metric's best response (first on a tie; missing values lose) is one of
    the people's favourites, and the number of groups."""
    hits = counted = 0
    for group in groups:
        if not group:
            continue
        counted += 1
        best = max(range(len(group)), key=lambda i: (_orderable(group[i][0]), -i))
        favourite = max(h for _, h in group)
        hits += group[best][1] == favourite
    return (hits / counted if counted else None), counted


def _orderable(value: float | None) -> float:
    return -math.inf if value is None else value


def accuracy(predicted: Sequence[int], actual: Sequence[int]) -> float | None:
    if len(predicted) != len(actual):
        raise ValueError(f"accuracy: sequences differ in length ({len(predicted)} vs {len(actual)})")
    if not predicted:
        return None
    return sum(p == a for p, a in zip(predicted, actual, strict=True)) / len(predicted)


def cohen_kappa(predicted: Sequence[int], actual: Sequence[int]) -> float | None:
    """Cohen's kappa of two label sequences; None when empty, 1.0 when both are one identical constant."""
    observed = accuracy(predicted, actual)
    if observed is None:
        return None
    n = len(predicted)
    labels = set(predicted) | set(actual)
    chance = sum((predicted.count(lb) / n) * (actual.count(lb) / n) for lb in labels)
    if chance == 1:
        return 1.0 if observed == 1 else 0.0
    return (observed - chance) / (1 - chance)
