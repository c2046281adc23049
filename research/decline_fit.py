"""Which recorded signals separate an invented answer from a right one, read from runs (no model call).

Every answer of a run that reached the samples check (``route.grounding.samples``: retrieved passages)
carries the answering model's first-token decline probability (``p_decline``), and every gated answer
the gate's evidence (its score and features). This reads the runs' tasks labelled UNANSWERABLE against
those labelled ANSWERABLE or PARTIAL, and for each candidate rule counts how many of each it declines:
the decline probability alone at thresholds, and the decline probability together with the gate's
score (declined only when the passages also look weak).

    python -m research.decline_fit runs/t-ua-C.jsonl [--rows]
    python -m research.decline_fit runs/t-ua-C.jsonl runs/devC-G.jsonl --totals [--thresholds 0.01 0.03 0.05]

``--totals`` reads each run whole, as a bar on declines does: per threshold, the UNANSWERABLE turns and
the ANSWERABLE + PARTIAL turns that would end declined (a turn declined already stays declined, an
asked-back turn stays asked, an answer whose recorded probability is at least the threshold is
declined). It replays only the decline rule on the recorded answers (a lower threshold in a live run
would also reach turns whose probability was never computed); the default threshold's row is the run
as recorded.

A rule is chosen on the tuning runs (MTRAG reference conversations, issue 47) and read once on the
MTRAG-UN dev slice (``runs/devC-now.jsonl``) as the report.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path

from mtrag_graph.tasks import answerability_of

THRESHOLDS = (0.05, 0.08, 0.1, 0.15, 0.2, 0.3)
GATE_SCORES = (0.5, 0.55, 0.6, 0.65, 0.7, 1.01)
TOTALS_THRESHOLDS = [
    0.005,
    0.01,
    0.02,
    0.03,
    0.04,
    0.05,
]  # below the default 0.05: what a stricter rule costs


def features(row: dict) -> dict | None:
    """The signals a run recorded for ``row``'s answer; None when it never reached the samples check."""
    route = row.get("route") or {}
    samples = (route.get("grounding") or {}).get("samples") or {}
    if samples.get("p_decline") is None:
        return None
    evidence = route.get("gate_evidence") or {}
    label = answerability_of(row)
    return {
        "task_id": row["task_id"],
        "label": "U" if label == "UNANSWERABLE" else "P" if label in ("ANSWERABLE", "PARTIAL") else "-",
        "p": float(samples["p_decline"]),
        "gate": float(evidence.get("score", 1.0)),
        "cos_max": float((evidence.get("features") or {}).get("cos_max", 1.0)),
        "turn": int(str(row.get("turn") or row["task_id"].split("<::>")[-1])),
        "retried": bool(route.get("decline_retried")),
        "reason": route.get("abstain_reason"),
    }


def load(paths: Iterable[Path]) -> list[dict]:
    rows: list[dict] = []
    for path in paths:
        with path.open() as f:
            rows.extend(json.loads(line) for line in f if line.strip())
    return rows


def _declines(signals: dict, threshold: float, gate: float) -> bool:
    return signals["p"] >= threshold and signals["gate"] < gate


def table(signals: list[dict]) -> list[str]:
    """Rows: rule, UNANSWERABLE declined of those reaching the check, positives declined."""
    units = [s for s in signals if s["label"] == "U"]
    positives = [s for s in signals if s["label"] == "P"]
    lines = [f"reaching the check: {len(units)} UNANSWERABLE, {len(positives)} ANSWERABLE+PARTIAL",
             "| rule | UNANSWERABLE declined | positives declined | balance |", "|---|---|---|---|"]  # fmt: skip
    for threshold in THRESHOLDS:
        for gate in GATE_SCORES:
            u = sum(_declines(s, threshold, gate) for s in units)
            p = sum(_declines(s, threshold, gate) for s in positives)
            balance = u / max(len(units), 1) - p / max(len(positives), 1)
            rule = f"p >= {threshold}" + (f", gate < {gate}" if gate <= 1 else "")
            lines.append(f"| {rule} | {u} | {p} | {balance:+.3f} |")
    return lines


def declined_at(row: dict, threshold: float) -> bool:
    """The turn ends declined with the decline probability's threshold at ``threshold``."""
    route = row.get("route") or {}
    if route.get("abstained"):
        return True
    if (route.get("clarification") or {}).get("asked"):
        return False
    signals = features(row)
    return signals is not None and signals["p"] >= threshold


def totals(rows: list[dict], thresholds: Iterable[float]) -> list[dict]:
    """Per threshold: UNANSWERABLE declined and ANSWERABLE + PARTIAL declined, of how many, over whole runs."""
    labels = [answerability_of(r) or "" for r in rows]
    unanswerable = [r for r, label in zip(rows, labels, strict=True) if label == "UNANSWERABLE"]
    positive = [r for r, label in zip(rows, labels, strict=True) if label in ("ANSWERABLE", "PARTIAL")]
    return [
        {
            "threshold": threshold,
            "unanswerable_declined": sum(declined_at(r, threshold) for r in unanswerable),
            "unanswerable": len(unanswerable),
            "positive_declined": sum(declined_at(r, threshold) for r in positive),
            "positive": len(positive),
        }
        for threshold in thresholds
    ]


def render_totals(name: str, found: list[dict]) -> str:
    lines = [
        f"{name}:",
        "",
        "| threshold | UNANSWERABLE declined | ANSWERABLE + PARTIAL declined |",
        "|---|---|---|",
    ]
    for row in found:
        share = row["unanswerable_declined"] / max(row["unanswerable"], 1)
        lines.append(
            f"| {row['threshold']:g} | {row['unanswerable_declined']}/{row['unanswerable']} ({share:.0%}) |"
            f" {row['positive_declined']}/{row['positive']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--rows", action="store_true", help="print every task's signals")
    parser.add_argument("--totals", action="store_true", help="each run's declines per threshold, whole")
    parser.add_argument("--thresholds", nargs="+", type=float, default=TOTALS_THRESHOLDS)
    args = parser.parse_args(argv)
    if args.totals:
        for path in args.runs:
            print(render_totals(path.name, totals(load([path]), args.thresholds)) + "\n")
        return 0
    signals = [s for s in map(features, load(args.runs)) if s is not None and s["label"] != "-"]
    if args.rows:
        for s in sorted(signals, key=lambda s: (s["label"], s["p"])):
            print(json.dumps(s))
    print("\n".join(table(signals)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
