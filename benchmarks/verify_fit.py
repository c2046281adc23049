"""Choose ``verify_threshold`` on a tuning-split run that recorded the retried answers' check.

The run answers tuning-split turns with retrieved passages (``answer --retrieve``), UNANSWERABLE ones
among them, with ``verify_retried_answers`` on and ``verify_threshold`` 0: every answer that only the
decline retry wrote carries the model's yes-probability (``route.grounding.verify.p_yes``) and none is
dropped. For each threshold the table gives, per class, the share of tasks that end declined: for
UNANSWERABLE turns that is the goal, for ANSWERABLE/PARTIAL turns a positive lost. The rule, fixed
before the table is read: the highest threshold whose extra positives lost (over threshold 0) are at
most ``--max-extra-loss`` of the positives.

    python benchmarks/verify_fit.py runs/tunec.jsonl
    (or a run that verify_offline.py annotated)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.trust_variants import verified

IDK = "I don't know."  # any text: only the route's abstained flag is read

THRESHOLDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
POSITIVES = ("ANSWERABLE", "PARTIAL")


def declined(record: dict, threshold: float) -> bool:
    """Does the task end declined when the run is left as ``verify_threshold=threshold`` leaves it?"""
    return bool((verified(record, threshold, IDK)["route"] or {}).get("abstained"))


def table(rows: list[dict]) -> list[dict]:
    positives = [r for r in rows if r["answerability"][0] in POSITIVES]
    negatives = [r for r in rows if r["answerability"][0] == "UNANSWERABLE"]
    out = []
    for t in THRESHOLDS:
        out.append({
            "threshold": t,
            "unanswerable_declined": sum(declined(r, t) for r in negatives) / max(len(negatives), 1),
            "positives_lost": sum(declined(r, t) for r in positives) / max(len(positives), 1),
            "n_unanswerable": len(negatives), "n_positives": len(positives),
        })  # fmt: skip
    return out


def choose(rows: list[dict], max_extra_loss: float) -> float:
    base = rows[0]["positives_lost"]
    allowed = [r["threshold"] for r in rows if r["positives_lost"] - base <= max_extra_loss + 1e-9]
    return max(allowed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--max-extra-loss", type=float, default=0.05)
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.run.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("status") == "ok"]
    retried = [r for r in rows if ((r.get("route") or {}).get("grounding") or {}).get("verify")]
    print(f"{len(rows)} tasks, {len(retried)} answers written by the decline retry and checked\n")
    print("| class | task | p_yes | answer |\n|---|---|---|---|")
    for r in retried:
        verify = r["route"]["grounding"]["verify"]
        answer = " ".join(str(verify.get("answer", "")).split())[:90]
        print(f"| {r['answerability'][0]} | {r['task_id'][-12:]} | {verify.get('p_yes')} | {answer} |")
    results = table(rows)
    print("\n| verify_threshold | UNANSWERABLE declined | ANSWERABLE+PARTIAL lost |\n|---|---|---|")
    for r in results:
        print(f"| {r['threshold']:g} | {r['unanswerable_declined']:.1%} (n={r['n_unanswerable']}) "
              f"| {r['positives_lost']:.1%} (n={r['n_positives']}) |")  # fmt: skip
    chosen = choose(results, args.max_extra_loss)
    print(f"\nchosen (at most {args.max_extra_loss:.0%} more positives lost than at 0): {chosen:g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
