"""Where a real-documents run's answerable misses come from: retrieval, the evidence excerpt, or the reading.

For every answerable turn of a run (what ``python -m benchmarks.real_documents`` wrote), its verdict
(``verdicts.jsonl``) is put in one of these rows, in this order:

- right: the key facts, no abstention, no question back;
- not kept: no kept passage holds every key fact (retrieval, reranking or the rewrite);
- cut from the excerpt: the kept passages hold them, but the excerpt the answering prompt read
  (``prompts.excerpts``, recomputed with the run's own standalone question and kept passages, at the
  default budget) does not;
- shown, declined: the excerpt held every key fact and the answer said "I don't know" (or asked back);
- shown, answered wrong: the excerpt held every key fact and the answer did not give them.

The last two rows are what the answering model did with the facts in front of it. No model call; the
embedder scores the excerpt's sentences as the graph does.

    python -m research.answer_misses runs/real-documents-tuning [runs/real-documents-report ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.real_documents.data import load_set, turn_of
from benchmarks.real_documents.score import facts_found
from mtrag_graph.context import Context
from mtrag_graph.models import get_embedder
from mtrag_graph.prompts.build import question_for_answering
from mtrag_graph.prompts.excerpts import select_evidence

ROWS = ("right", "not kept", "cut from the excerpt", "shown, declined", "shown, answered wrong")


def outcome(
    verdict: dict[str, Any], record: dict[str, Any], facts: Sequence[Sequence[str]], budget: int, embed: Any
) -> str:
    """The row of one answerable turn (``ROWS``)."""
    if verdict.get("right"):
        return "right"
    if not verdict.get("retrieved"):
        return "not kept"
    passages = record.get("contexts") or []
    route = record.get("route") or {}
    question = question_for_answering({**route, "question": record["input"][-1]["text"]})
    shown = "\n".join(select_evidence(question, passages, budget, embed))
    if facts_found(shown, facts) < len(facts):
        return "cut from the excerpt"
    return "shown, declined" if verdict.get("idk") or verdict.get("asked_back") else "shown, answered wrong"


def attribute(run: Path, budget: int, embed: Any) -> dict[str, list[tuple[str, bool]]]:
    """Row -> [(task id, follow-up?)] for the run's answerable turns."""
    questions = load_set()
    records = {}
    for line in (run / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        records[record["task_id"]] = record
    rows: dict[str, list[tuple[str, bool]]] = {row: [] for row in ROWS}
    for line in (run / "verdicts.jsonl").read_text(encoding="utf-8").splitlines():
        verdict = json.loads(line)
        if not verdict.get("answerable"):
            continue
        _, _, turn = turn_of(questions, verdict["task_id"])
        row = outcome(verdict, records[verdict["task_id"]], turn.key_facts, budget, embed)
        rows[row].append((verdict["task_id"], bool(verdict.get("follow_up"))))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", type=Path, nargs="+", help="real-documents run folders")
    parser.add_argument("--budget", type=int, default=Context().evidence_tokens, help="the evidence budget")
    args = parser.parse_args(argv)
    for run in args.runs:
        if not (run / "verdicts.jsonl").is_file():
            print(f"error: {run}: no verdicts.jsonl (run benchmarks.real_documents first)", file=sys.stderr)
            return 2
    embed = get_embedder(Context().embedder).embed
    results = {run: attribute(run, args.budget, embed) for run in args.runs}
    print("| answerable turns | " + " | ".join(f"{run.name} (first / follow-up)" for run in args.runs) + " |")
    print("|---|" + "---|" * len(args.runs))
    for row in ROWS:
        cells = []
        for run in args.runs:
            kinds = Counter(follow for _, follow in results[run][row])
            cells.append(f"{len(results[run][row])} ({kinds[False]} / {kinds[True]})")
        print(f"| {row} | " + " | ".join(cells) + " |")
    for run in args.runs:
        for row in ROWS[1:]:
            if results[run][row]:
                print(f"{run.name}, {row}: " + ", ".join(task for task, _ in results[run][row]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
