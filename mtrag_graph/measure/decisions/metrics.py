"""Scores of each decision against the labels its set carries.

Gate / decline results: one dict per item with ``label`` (True: the passages hold the answer),
``kind``, ``domain``, ``gate`` ("yes" / "no") and ``declined`` (the generator declined or failed
its retry, or the grounding check dropped every sentence; None when it was not run because the gate
said no), and ``unsupported_facts`` (numbers and names of the answer that neither the passages nor the
conversation hold). The pipeline answers an item when the gate says yes and the generator does not
decline.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any


def _rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def answered(result: dict[str, Any]) -> bool:
    return result.get("gate") == "yes" and not result.get("declined")


def gate_scores(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Balanced accuracy of "answer vs decline", positives lost (gate no + decline), negatives declined."""
    positives = [r for r in results if r["label"]]
    negatives = [r for r in results if not r["label"]]
    gate_no = sum(r.get("gate") == "no" for r in positives)
    declined = sum(r.get("gate") == "yes" and bool(r.get("declined")) for r in positives)
    lost = gate_no + declined
    negatives_declined = sum(not answered(r) for r in negatives)
    recall = _rate(len(positives) - lost, len(positives))
    specificity = _rate(negatives_declined, len(negatives))
    scores: dict[str, Any] = {
        "positives": len(positives),
        "negatives": len(negatives),
        "positives_lost": _rate(lost, len(positives)),
        "positives_gate_no": _rate(gate_no, len(positives)),
        "positives_declined": _rate(declined, len(positives)),
        "negatives_declined": specificity,
        "negatives_gate_no": _rate(sum(r.get("gate") == "no" for r in negatives), len(negatives)),
        "balanced_accuracy": None if recall is None or specificity is None else (recall + specificity) / 2,
        "gate_balanced_accuracy": _gate_only_balanced_accuracy(positives, negatives),
    }
    # fabrication: answered items whose answer holds a number or name found in neither the passages nor
    # the conversation (results without the field, from before the measure existed, are left out)
    answered_positives = [r for r in positives if answered(r) and "unsupported_facts" in r]
    scores["answered_positives"] = len(answered_positives)
    scores["fabrication_positives"] = _rate(
        sum(bool(r["unsupported_facts"]) for r in answered_positives), len(answered_positives)
    )
    answered_negatives = [r for r in negatives if answered(r) and "unsupported_facts" in r]
    scores["fabrication_negatives"] = _rate(
        sum(bool(r["unsupported_facts"]) for r in answered_negatives), len(answered_negatives)
    )
    by_kind = Counter(r["kind"] for r in negatives)
    scores["negatives_declined_by_kind"] = {
        kind: _rate(sum(not answered(r) for r in negatives if r["kind"] == kind), n)
        for kind, n in sorted(by_kind.items())
    }
    return scores


def _gate_only_balanced_accuracy(positives: Sequence[dict[str, Any]], negatives: Sequence[dict[str, Any]]):
    tpr = _rate(sum(r.get("gate") == "yes" for r in positives), len(positives))
    tnr = _rate(sum(r.get("gate") == "no" for r in negatives), len(negatives))
    return None if tpr is None or tnr is None else (tpr + tnr) / 2


def gate_report(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Overall and per-domain gate / decline scores, and the mean seconds per item."""
    by_domain: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for result in results:
        by_domain[result["domain"]].append(result)
    seconds = [r["seconds"] for r in results if r.get("seconds") is not None]
    return {
        "overall": gate_scores(results),
        "by_domain": {domain: gate_scores(rs) for domain, rs in sorted(by_domain.items())},
        "mean_seconds": sum(seconds) / len(seconds) if seconds else None,
    }


def evidence_scores(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean of each model-free gate feature for positives and for each kind of negative."""
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for result in results:
        groups[result["kind"]].append(result["features"])
    return {
        kind: {"items": len(rows), **{f: sum(r[f] for r in rows) / len(rows) for f in sorted(rows[0])}}
        for kind, rows in sorted(groups.items())
    }


def clarify_scores(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Recall and precision of "ask" on UNDERSPECIFIED turns; false clarification per answerable class."""
    asked = [bool(r.get("clarify")) for r in results]
    labels = [bool(r["label"]) for r in results]
    true_positive = sum(a and y for a, y in zip(asked, labels, strict=True))
    false_rate = {}
    for answerability in ("ANSWERABLE", "PARTIAL"):
        of_class = [r for r in results if r.get("answerability") == answerability]
        false_rate[answerability] = _rate(sum(bool(r.get("clarify")) for r in of_class), len(of_class))
    seconds = [r["seconds"] for r in results if r.get("seconds") is not None]
    negative_scores = [p for r in results if not r["label"] and (p := unclear_probability(r)) is not None]
    asked_model = any(str(r.get("evidence", "")).startswith("model: p_unclear=") for r in results)
    calibrated = {
        f"threshold_false_{rate:.2f}": negative_threshold(negative_scores, rate) if asked_model else None
        for rate in (0.03, 0.05)
    }
    signals = Counter(signal_of(r) for r in results if r.get("clarify"))
    return {
        **calibrated,
        "signal_share": {name: _rate(n, sum(asked)) for name, n in sorted(signals.items())},
        "false_on_answered": _rate(
            sum(
                bool(r.get("clarify")) for r in results if r.get("answerability") in ("ANSWERABLE", "PARTIAL")
            ),
            sum(r.get("answerability") in ("ANSWERABLE", "PARTIAL") for r in results),
        ),
        "underspecified": sum(labels),
        "others": len(labels) - sum(labels),
        "recall": _rate(true_positive, sum(labels)),
        "precision": _rate(true_positive, sum(asked)),
        "false_clarification": false_rate,
        "mean_seconds": sum(seconds) / len(seconds) if seconds else None,
    }


def negative_threshold(scores: Iterable[float], max_false_rate: float) -> float:
    """The lowest threshold (score >= t fires) at which at most ``max_false_rate`` of these negative
    items fire: calibration when the split holds no positives (clarify on the tuning split)."""
    ordered = sorted(scores, reverse=True)
    if not ordered:
        raise ValueError("calibration needs at least one item")
    allowed = int(max_false_rate * len(ordered))  # items that may fire
    if allowed >= len(ordered):
        return ordered[-1]
    # fire strictly above the (allowed+1)-th highest score
    return float(ordered[allowed]) + 1e-6


def signal_of(result: dict[str, Any]) -> str:
    """Which signal decided a clarification: ``rule``, ``pronoun``, ``passages`` or ``model`` (its
    evidence's prefix)."""
    return str(result.get("evidence") or "").partition(":")[0] or "unknown"


def unclear_probability(result: dict[str, Any]) -> float | None:
    evidence = str(result.get("evidence") or "")
    if evidence.startswith("model: p_unclear="):
        return float(evidence.removeprefix("model: p_unclear="))
    return 0.0 if evidence in ("no determiner or pronoun", "no unresolved reference") else None


def relation_scores(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Class distribution per MTRAG ``Multi-Turn`` label; agreement = "new topic" (4) on ``N/A`` turns."""
    distribution: dict[str, Counter] = defaultdict(Counter)
    for result in results:
        distribution[str(result.get("multi_turn"))][str(result.get("relation_class"))] += 1
        distribution["all"][str(result.get("relation_class"))] += 1
    stand_alone = [r for r in results if r.get("multi_turn") == "N/A"]
    seconds = [r["seconds"] for r in results if r.get("seconds") is not None]
    return {
        "turns": len(results),
        "distribution": {label: dict(sorted(c.items())) for label, c in sorted(distribution.items())},
        "stand_alone_turns": len(stand_alone),
        "stand_alone_agreement": _rate(
            sum(r.get("relation_class") == 4 for r in stand_alone), len(stand_alone)
        ),
        "mean_seconds": sum(seconds) / len(seconds) if seconds else None,
    }


def best_threshold(
    scores: Iterable[float], labels: Iterable[bool], *, max_positive_loss: float
) -> tuple[float, float]:
    """The threshold (score >= t means "yes") with the best balanced accuracy among those that keep
    at least ``1 - max_positive_loss`` of the positives; returns (threshold, balanced accuracy)."""
    pairs = sorted(zip(scores, labels, strict=True))
    n_pos = sum(1 for _, y in pairs if y)
    n_neg = len(pairs) - n_pos
    if not n_pos or not n_neg:
        raise ValueError("calibration needs both positive and negative items")
    best = (pairs[0][0], 0.5)
    negatives_below = positives_below = 0
    for i, (score, label) in enumerate(pairs):
        if i == 0 or score != pairs[i - 1][0]:
            recall = 1 - positives_below / n_pos
            specificity = negatives_below / n_neg
            if 1 - recall <= max_positive_loss and (recall + specificity) / 2 > best[1]:
                best = (score, (recall + specificity) / 2)
        if label:
            positives_below += 1
        else:
            negatives_below += 1
    return best
