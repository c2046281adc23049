"""Fit the verdict's combiner (``judging.combiner``) on MTRAG's reference conversations, no model call.

Rows: every answerable or partial MTRAG reference task with passages gives two,

- the people's reference answer on its own passages: **keep** (label 0);
- the same answer on the passages of a task from another conversation of the same domain (the next one
  in conversation order): **decline** (label 1), the answer a strong writer gives from what it knows
  when the passages do not hold it.

The signals are ``judging.verdict.draft_signals``, computed as the graph computes them (the conversation
before the turn, the turn, the passages). Conversations are split by a hash of their id: four fifths to
fit, one fifth held out (both MTRAG reference data: tuning; the MTRAG-UN dev slice is never read here).
A standardised logistic regression (L2, Newton's method); the threshold keeps ``KEEP_TARGET`` of the
people's answers of the fitting part. Printed: the held-out AUC, the people's answers declined, the moved
answers declined, beside the hand rule it replaces (decline only when no claim is backed).

    python -m research.verdict_fit --tasks ../shared/data/mtrag/tasks/mtrag_reference.jsonl \\
        -o mtrag_graph/data/verdict_combiner.json
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

FEATURES = (
    "supported_share",
    "support_min",
    "support_mean",
    "missing_facts",
    "anchored_min",
    "anchored_mean",
)
HELD_OUT_FIFTH = 0  # conversations whose hash is this modulo 5 are held out
RIDGE = 1.0


def domain_of(task: Mapping[str, Any]) -> str:
    collection = str(task.get("Collection") or "").lower()
    for domain in ("clapnq", "cloud", "fiqa", "govt"):
        if domain in collection or (domain == "cloud" and "ibmcloud" in collection):
            return domain
    return collection or "?"


def held_out(conversation_id: str) -> bool:
    return int(hashlib.sha256(conversation_id.encode()).hexdigest(), 16) % 5 == HELD_OUT_FIFTH


def state_of(task: Mapping[str, Any], contexts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    turns = list(task["input"])
    return {"history": turns[:-1], "question": str(turns[-1]["text"]), "kept_passages": list(contexts)}


def rows_of(tasks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The labelled rows (signals, label, split) of the eligible tasks."""
    from benchmarks.reference_writer import eligible, reference_of
    from mtrag_graph.context import Context
    from mtrag_graph.judging.verdict import draft_signals

    context = Context()
    usable = [t for t in tasks if eligible(t)]
    by_domain: dict[str, list[Mapping[str, Any]]] = {}
    for task in usable:
        by_domain.setdefault(domain_of(task), []).append(task)
    rows = []
    for domain, group in by_domain.items():
        group = sorted(group, key=lambda t: (str(t["conversation_id"]), int(t.get("turn") or 0)))
        conversations = sorted({str(t["conversation_id"]) for t in group})
        first_task: dict[str, Mapping[str, Any]] = {}
        for task in group:
            first_task.setdefault(str(task["conversation_id"]), task)
        for task in group:
            conversation = str(task["conversation_id"])
            other = conversations[(conversations.index(conversation) + 1) % len(conversations)]
            if other == conversation:
                continue
            answer = reference_of(task)
            split = "held-out" if held_out(conversation) else "fit"
            for label, contexts in ((0, task["contexts"]), (1, first_task[other]["contexts"])):
                signals = draft_signals(answer, state_of(task, contexts), context)
                rows.append({"task_id": task["task_id"], "domain": domain, "split": split, "label": label,
                             "signals": signals})  # fmt: skip
    return rows


def fit(x: np.ndarray, y: np.ndarray, iterations: int = 100) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression (the bias not penalised), Newton's method."""
    design = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(design.shape[1])
    penalty = RIDGE * np.eye(len(w))
    penalty[-1, -1] = 0.0
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-(design @ w)))
        gradient = design.T @ (p - y) + penalty @ w
        hessian = (design * (p * (1 - p))[:, None]).T @ design + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return w[:-1], float(w[-1])


def auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    positives = [s for s, y in zip(scores, labels, strict=True) if y == 1]
    negatives = [s for s, y in zip(scores, labels, strict=True) if y == 0]
    if not positives or not negatives:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def matrix(rows: Sequence[Mapping[str, Any]]) -> np.ndarray:
    return np.array([[float(r["signals"][f]) for f in FEATURES] for r in rows], dtype=float)


def rates(rows: Sequence[Mapping[str, Any]], declined: Sequence[bool]) -> dict[str, str]:
    own = [d for r, d in zip(rows, declined, strict=True) if r["label"] == 0]
    moved = [d for r, d in zip(rows, declined, strict=True) if r["label"] == 1]
    return {
        "people's answers declined": f"{sum(own)} of {len(own)} ({100 * sum(own) / max(len(own), 1):.1f}%)",
        "moved answers declined": f"{sum(moved)} of {len(moved)} ({100 * sum(moved) / max(len(moved), 1):.1f}%)",
    }


def main(argv: list[str] | None = None) -> int:
    from mtrag_graph.judging.combiner import KEEP_TARGET, Combiner
    from mtrag_graph.tasks import read_jsonl

    parser = argparse.ArgumentParser(
        prog="python -m research.verdict_fit", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--tasks", required=True, help="tasks/mtrag_reference.jsonl")
    parser.add_argument("-o", "--output", required=True, help="the combiner's JSON file")
    parser.add_argument("--rows", default=None, help="also write the labelled rows (JSON lines) here")
    args = parser.parse_args(argv)
    try:
        tasks = [raw for _, raw, error in read_jsonl(args.tasks) if error is None and isinstance(raw, dict)]
    except OSError as error:
        print(f"error: {args.tasks}: {error}", file=sys.stderr)
        return 2
    rows = rows_of(tasks)
    if args.rows:
        Path(args.rows).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    fitting = [r for r in rows if r["split"] == "fit"]
    checking = [r for r in rows if r["split"] == "held-out"]
    x = matrix(fitting)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    coef, intercept = fit((x - mean) / scale, np.array([r["label"] for r in fitting], dtype=float))
    combiner = Combiner(tuple(FEATURES), tuple(mean.round(6)), tuple(scale.round(6)), tuple(coef.round(6)),
                        round(intercept, 6), 1.0, {})  # fmt: skip
    own_scores = sorted(combiner.probability(r["signals"]) for r in fitting if r["label"] == 0)
    threshold = own_scores[min(len(own_scores) - 1, int(np.ceil(KEEP_TARGET * len(own_scores))))]
    combiner = Combiner(combiner.features, combiner.mean, combiner.scale, combiner.coef, combiner.intercept,
                        round(float(threshold), 6), {})  # fmt: skip
    report: dict[str, Any] = {}
    for name, part in (("fit", fitting), ("held-out", checking)):
        scores = [combiner.probability(r["signals"]) for r in part]
        declined = [s >= combiner.threshold for s in scores]
        hand = [r["signals"]["supported_share"] == 0.0 for r in part]
        report[name] = {
            "rows": len(part),
            "auc": round(auc(scores, [r["label"] for r in part]), 4),
            "combiner": rates(part, declined),
            "hand rule (no claim backed)": rates(part, hand),
        }
    data = Path(args.tasks).read_bytes()
    card = {
        "trained": datetime.date.today().isoformat(),
        "command": "python -m research.verdict_fit --tasks tasks/mtrag_reference.jsonl -o " + args.output,
        "data": f"{Path(args.tasks).name} sha256 {hashlib.sha256(data).hexdigest()[:16]}: people's answers on "
        "their own passages (keep) and on another conversation's passages of the same domain (decline)",
        "split": "conversations by sha256(id) % 5: 0 held out, the rest fitted",
        "keep_target": KEEP_TARGET,
        "report": report,
    }
    combiner = Combiner(combiner.features, combiner.mean, combiner.scale, combiner.coef, combiner.intercept,
                        combiner.threshold, card)  # fmt: skip
    Path(args.output).write_text(json.dumps(combiner.as_dict(), indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    print(f"weights: {dict(zip(FEATURES, combiner.coef, strict=True))}; threshold {combiner.threshold}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
