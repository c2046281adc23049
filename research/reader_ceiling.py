"""How far the bundled reader can go: what recorded runs say about issue 47's bars, without a model call.

Two reads of runs already answered (the decline probability's threshold replayed over whole runs is
``research.decline_fit --totals``):

- ``documents RUN...``: real-documents run folders of one split (``benchmarks.real_documents``, each with
  ``verdicts.jsonl``), answered by different variants of the pipeline (prompts, budgets, orders, checks).
  A task counts as reachable when **any** run answered it right: the best a perfect pick among those
  variants could score. First turns and follow-ups apart, and the tasks no run got right.
- ``defaults RUN...``: real-documents run folders; for each question that says "default", the kept
  passages' sentence with "default" closest to the question (MiniLM cosine), and whether it holds every
  key fact: could quoting it answer the questions the reader got wrong?

    python -m research.reader_ceiling documents runs/rd-fresh-*/
    python -m research.reader_ceiling defaults runs/rd-tuning-G runs/rd-fresh-G

``defaults`` loads MiniLM; no language-model call anywhere. (A third read, ``quotes``, scored the yes/no
quote-only answers with the trained verifier, which left the product: AUC 0.49.)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.real_documents.data import load_set, turn_of
from benchmarks.real_documents.score import facts_found
from mtrag_graph.context import Context
from mtrag_graph.judging.yes_no import candidate_sentences
from mtrag_graph.models import get_embedder
from research.decline_samples import read_run

ALL_SENTENCES = 10**6  # candidate_sentences' k: every sentence, ranked
DEFAULT = re.compile(r"\bdefault", re.IGNORECASE)


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


def _question(record: Mapping[str, Any]) -> str:
    route = record.get("route") or {}
    return str(route.get("standalone_question") or record["input"][-1]["text"])


def default_rows(run: Path, embed: Any) -> list[dict[str, Any]] | None:
    """Per answerable question of the run that says "default": the closest "default" sentence of its kept
    passages, whether it holds every key fact, and whether the run's answer was right."""
    loaded = read_run(run)
    if loaded is None:
        return None
    records, verdicts = loaded
    right = {str(v["task_id"]): bool(v.get("right")) for v in verdicts}
    questions = load_set()
    rows = []
    for record in records.values():
        question = _question(record)
        if not (DEFAULT.search(question) or DEFAULT.search(record["input"][-1]["text"])):
            continue
        _, _, turn = turn_of(questions, record["task_id"])
        if not turn.answerable:
            continue
        passages = record.get("contexts") or []
        ranked = candidate_sentences(question, passages, embed, k=ALL_SENTENCES)  # as the yes/no quote ranks
        best = next((sentence for _, sentence, _ in ranked if DEFAULT.search(sentence)), "")
        rows.append({"task_id": record["task_id"], "right": right.get(str(record["task_id"]), False),
                     "quote_holds_facts": bool(best) and facts_found(best, turn.key_facts) == len(turn.key_facts),
                     "question": question, "quote": best})  # fmt: skip
    return rows


def render_defaults(rows: Sequence[Mapping[str, Any]]) -> str:
    lines = ["| task | answer right | quote holds the facts | question |", "|---|---|---|---|"]
    for row in rows:
        lines.append(
            f"| {row['task_id']} | {'yes' if row['right'] else 'no'} |"
            f" {'yes' if row['quote_holds_facts'] else 'no'} | {row['question'][:70]} |"
        )
    for right in (True, False):
        mine = [r for r in rows if r["right"] is right]
        held = sum(r["quote_holds_facts"] for r in mine)
        lines.append(
            f"\n{'right' if right else 'missed'} answers: the quote holds the facts for {held} of {len(mine)}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    documents = commands.add_parser("documents", help="right answers reachable over real-documents runs")
    documents.add_argument("runs", nargs="+", type=Path, help="run folders of one split (verdicts.jsonl)")
    defaults = commands.add_parser("defaults", help="the closest 'default' sentence of each default question")
    defaults.add_argument("runs", nargs="+", type=Path, help="real-documents run folders")
    args = parser.parse_args(argv)
    if args.command == "defaults":
        embed = get_embedder(Context().embedder).embed
        found_rows: list[dict[str, Any]] = []
        for run in args.runs:
            found = default_rows(run, embed)
            if found is None:
                return 2
            found_rows += found
        print(render_defaults(found_rows))
        return 0
    runs: dict[str, list[dict[str, Any]]] = {}
    for run in args.runs:
        verdicts = read_lines(run / "verdicts.jsonl")
        if verdicts is None:
            return 2
        runs[run.name or str(run)] = verdicts
    print(render_reachable(reachable(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
