"""How often the draft's own check (``judging.verdict.check_draft``) finds a problem in answers people wrote.

Every detector of a bad draft (restates the question, no quantity, repeats the previous answer, opens
with a pointer to nothing, ...) is a rule: a people's answer it fires on is asked again and then
declined (``failed_retry``), and a strong writer's answer like it would be too. No model is called:
each reference answer is checked as the draft of its own turn, with its conversation and its reference
passages.

    python -m research.detector_audit --data $MTRAG_DATA [--split tuning|report] [--documents] [--examples 3]

``tuning``: MTRAG's reference tasks and the MTRAG-UN tuning slice (answerable and partial turns);
``report``: the MTRAG-UN dev slice (read once). ``--documents`` adds the real-documents tuning split's
reference answers (no passages), checked as drafts over retrieved passages, as the product writes them.
"""

from __future__ import annotations

import argparse
import collections
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.judging.verdict import check_draft
from mtrag_graph.measure.decisions.sets import ANSWERED, load_tasks
from mtrag_graph.prompts.build import DECLINED_DESPITE_EVIDENCE
from mtrag_graph.state import RetryReason
from mtrag_graph.tasks import answerability_of, parse_task

SETS = {
    "tuning": ("tasks/mtrag_reference.jsonl", "tasks/mtragun_tuning.jsonl"),
    "report": ("tasks/mtragun_dev.jsonl",),
}


def draft_state(raw: dict[str, Any]) -> dict[str, Any] | None:
    """The state ``check_draft`` reads, the task's reference answer as the draft (None: no reference)."""
    task = parse_task(raw)
    targets = raw.get("targets") or []
    reference = str(targets[0].get("text") or "").strip() if targets else ""
    if not reference:
        return None
    return {
        "draft": reference,
        "draft_finish_reason": "stop",
        "question": task.question,
        "history": [turn.model_dump() for turn in task.history],
        "kept_passages": [dict(p) for p in task.passages or []],
        "gate": "yes",
        "retries": 0,
    }


def problems_of(states: Iterable[dict[str, Any]], context: Context) -> list[tuple[dict[str, Any], list[str]]]:
    """Each state with the problems ``check_draft`` finds in its draft (a decline by the draft: "declines")."""
    found = []
    for state in states:
        checked = check_draft(state, context)
        problems = list(checked.get("answer_problems") or [])
        if checked.get("declined") or checked.get("retry_reason") == RetryReason.DECLINED:
            problems = ["declines", *(p for p in problems if p != DECLINED_DESPITE_EVIDENCE)]
        found.append((state, problems))
    return found


def table(name: str, found: list[tuple[dict[str, Any], list[str]]], examples: int) -> list[str]:
    counts = collections.Counter(p for _, problems in found for p in set(problems))
    flagged = sum(bool(problems) for _, problems in found)
    lines = [f"### {name}: {flagged} of {len(found)} people's answers found at fault", "",
             "| problem | answers |", "|---|---|"]  # fmt: skip
    lines += [f"| {problem} | {count} |" for problem, count in counts.most_common()]
    if examples:
        lines.append("")
        for problem, _ in counts.most_common():
            shown = [s for s, problems in found if problem in problems][:examples]
            for state in shown:
                lines.append(f"- {problem}: Q {state['question'][:90]!r} A {state['draft'][:140]!r}")
    return [*lines, ""]


def answered_states(raws: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The draft states of the answerable and partial tasks that have a reference answer."""
    return [s for raw in raws if answerability_of(raw) in ANSWERED and (s := draft_state(raw)) is not None]


def mtrag_states(path: Path) -> list[dict[str, Any]]:
    return answered_states(load_tasks(path))


def document_states() -> list[dict[str, Any]]:
    from benchmarks.real_documents.data import load_set, split_tasks

    # over a user's documents the product retrieves the passages, and the draft check reads that setting
    return [{**state, "retrieve": True} for state in answered_states(split_tasks(load_set(), "tuning"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the MTRAG data folder (MTRAG_DATA)")
    parser.add_argument("--split", choices=sorted(SETS), default="tuning")
    parser.add_argument("--documents", action="store_true", help="add the real-documents tuning split")
    parser.add_argument("--examples", type=int, default=3, help="answers shown for each problem")
    args = parser.parse_args(argv)
    context = Context()
    lines: list[str] = []
    for relative in SETS[args.split]:
        path = args.data / relative
        if not path.is_file():
            print(f"detector_audit: {path}: no such file", file=sys.stderr)
            return 2
        lines += table(relative, problems_of(mtrag_states(path), context), args.examples)
    if args.documents:
        lines += table("real documents, tuning split", problems_of(document_states(), context), args.examples)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
