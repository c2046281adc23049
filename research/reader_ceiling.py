"""How far the bundled reader can go: what recorded runs say about issue 47's bars, without a model call.

Two reads of runs already answered:

- ``documents RUN...``: real-documents run folders of one split (``benchmarks.real_documents``, each with
  ``verdicts.jsonl``), answered by different variants of the pipeline (prompts, budgets, orders, checks).
  A task counts as reachable when **any** run answered it right: the best a perfect pick among those
  variants could score. First turns and follow-ups apart, and the tasks no run got right.
- ``frontier PREDICTIONS...``: MTRAG-style prediction files (``mtrag-graph answer``) whose routes carry the
  decline probability (``grounding.samples.p_decline``). For each threshold, the UNANSWERABLE turns and
  the ANSWERABLE + PARTIAL turns that would end declined: the turns declined already stay declined, an
  asked-back turn stays asked, an answer whose recorded probability is at least the threshold is
  declined. It replays only the decline rule on the recorded answers (a lower threshold in a live run
  would also reach turns whose probability was never computed); the default threshold's row is the
  run as recorded.

    python -m research.reader_ceiling documents runs/rd-fresh-*/
    python -m research.reader_ceiling frontier runs/devC-G.jsonl --thresholds 0.01 0.03 0.05
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mtrag_graph.tasks import answerability_of

POSITIVE = ("ANSWERABLE", "PARTIAL")


def read_lines(path: Path) -> list[dict[str, Any]] | None:
    """The JSON lines of ``path``; None (and why, on stderr) when it is missing."""
    if not path.is_file():
        print(f"error: {path}: no such file", file=sys.stderr)
        return None
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def reachable(runs: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """Per run and over all runs: answerable right, first turns and follow-ups, from each run's verdicts."""
    answerable: dict[str, bool] = {}  # task id -> follow-up
    right: dict[str, set[str]] = {}
    per_run: dict[str, dict[str, int]] = {}
    for name, verdicts in runs.items():
        counts = {"right": 0, "first": 0, "follow": 0}
        for verdict in verdicts:
            if not verdict.get("answerable"):
                continue
            task = str(verdict["task_id"])
            answerable[task] = bool(verdict.get("follow_up"))
            right.setdefault(task, set())
            if verdict.get("right"):
                right[task].add(name)
                counts["right"] += 1
                counts["follow" if answerable[task] else "first"] += 1
        per_run[name] = counts
    follow_ups = [t for t, follow in answerable.items() if follow]
    return {
        "answerable": len(answerable),
        "first_turns": len(answerable) - len(follow_ups),
        "follow_ups": len(follow_ups),
        "runs": per_run,
        "any": sum(bool(right[t]) for t in answerable),
        "any_first": sum(bool(right[t]) for t in answerable if not answerable[t]),
        "any_follow": sum(bool(right[t]) for t in follow_ups),
        "never": sorted(t for t in answerable if not right[t]),
    }


def render_reachable(found: Mapping[str, Any]) -> str:
    total, first, follow = found["answerable"], found["first_turns"], found["follow_ups"]
    lines = [
        f"| run | right of {total} | first turns of {first} | follow-ups of {follow} |",
        "|---|---|---|---|",
    ]
    for name, counts in found["runs"].items():
        lines.append(f"| {name} | {counts['right']} | {counts['first']} | {counts['follow']} |")
    lines.append(
        f"| **any run** | **{found['any']} ({found['any'] / max(total, 1):.0%})** | {found['any_first']} |"
        f" {found['any_follow']} ({found['any_follow'] / max(follow, 1):.0%}) |"
    )
    lines.append("")
    lines.append(f"Right in no run ({len(found['never'])}): {', '.join(found['never']) or 'none'}")
    return "\n".join(lines)


def p_decline(record: Mapping[str, Any]) -> float | None:
    samples = ((record.get("route") or {}).get("grounding") or {}).get("samples") or {}
    value = samples.get("p_decline")
    return float(value) if isinstance(value, (int, float)) else None


def declined_at(record: Mapping[str, Any], threshold: float) -> bool:
    """The turn ends declined with the decline probability's threshold at ``threshold``."""
    route = record.get("route") or {}
    if route.get("abstained"):
        return True
    if (route.get("clarification") or {}).get("asked"):
        return False
    probability = p_decline(record)
    return probability is not None and probability >= threshold


def frontier(records: Sequence[dict[str, Any]], thresholds: Sequence[float]) -> list[dict[str, Any]]:
    """Per threshold: UNANSWERABLE declined and ANSWERABLE + PARTIAL declined, of how many."""
    labels = [answerability_of(r) or "" for r in records]
    unanswerable = [r for r, label in zip(records, labels, strict=True) if label == "UNANSWERABLE"]
    positive = [r for r, label in zip(records, labels, strict=True) if label in POSITIVE]
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


def render_frontier(name: str, rows: Sequence[Mapping[str, Any]]) -> str:
    lines = [
        f"{name}:",
        "",
        "| threshold | UNANSWERABLE declined | ANSWERABLE + PARTIAL declined |",
        "|---|---|---|",
    ]
    for row in rows:
        share = row["unanswerable_declined"] / max(row["unanswerable"], 1)
        lines.append(
            f"| {row['threshold']:g} | {row['unanswerable_declined']}/{row['unanswerable']} ({share:.0%}) |"
            f" {row['positive_declined']}/{row['positive']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    documents = commands.add_parser("documents", help="right answers reachable over real-documents runs")
    documents.add_argument("runs", nargs="+", type=Path, help="run folders of one split (verdicts.jsonl)")
    sweep = commands.add_parser("frontier", help="the decline probability's threshold replayed")
    sweep.add_argument("predictions", nargs="+", type=Path, help="mtrag-graph answer output files")
    sweep.add_argument("--thresholds", nargs="+", type=float, default=[0.005, 0.01, 0.02, 0.03, 0.04, 0.05])
    args = parser.parse_args(argv)
    if args.command == "documents":
        runs: dict[str, list[dict[str, Any]]] = {}
        for run in args.runs:
            verdicts = read_lines(run / "verdicts.jsonl")
            if verdicts is None:
                return 2
            runs[run.name or str(run)] = verdicts
        print(render_reachable(reachable(runs)))
        return 0
    for path in args.predictions:
        records = read_lines(path)
        if records is None:
            return 2
        print(render_frontier(path.name, frontier(records, args.thresholds)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
