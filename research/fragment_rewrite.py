"""Elliptic follow-ups ("What about bicycles?", "How about mediation?") on MTRAG's tuning split: what the
graph makes of them before it answers.

Every ANSWERABLE or PARTIAL follow-up of ``tasks/mtrag_reference.jsonl`` whose last turn is a fragment
(``text.ellipsis.is_fragment``) is run through the real graph up to the reranked passages
(``build_graph(stop_after="rerank")``, passages retrieved from ``--index`` as in Task C). For each: the
standalone question, whether it adds a content word to what the user wrote (a fragment given back as it
was asks nothing the passages can answer), the relation class, how many turns the history kept, and
whether a kept passage is one of the task's reference passages (a hit).

    python -m research.fragment_rewrite --data $MTRAG_DATA --index indexes/mini -o runs/fragments.jsonl \
        [--context '{"rewrite_retry_on": "doubts"}']

A rerun resumes from its file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.runtime.jsonl_out import open_resumable
from mtrag_graph.tasks import answerability_of
from mtrag_graph.text import content_words
from mtrag_graph.text.ellipsis import is_fragment


def fragment_tasks(rows: list[dict]) -> list[dict]:
    """The answerable follow-ups whose last turn is an elliptic fragment."""
    return [
        row
        for row in rows
        if len(row.get("input") or []) > 1
        and answerability_of(row) in ("ANSWERABLE", "PARTIAL")
        and is_fragment(row["input"][-1]["text"])
    ]


def outcome(task: dict, state: dict[str, Any]) -> dict[str, Any]:
    """What the graph made of ``task`` up to its reranked passages."""
    question = task["input"][-1]["text"]
    standalone = state.get("standalone_question") or question
    reference = {c.get("document_id") for c in task.get("contexts") or []}
    kept = {p["document_id"] for p in state.get("kept_passages") or []}
    return {
        "task_id": task["task_id"],
        "question": question,
        "standalone": standalone,
        "adds": sorted(content_words(standalone) - content_words(question)),
        "relation_class": state.get("relation_class"),
        "history_turns": len(state.get("selected_history") or []),
        "hit": bool(reference & kept),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the MTRAG data folder (MTRAG_DATA)")
    parser.add_argument("--index", required=True, help="an index of the mini corpora (mtrag-graph index)")
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument(
        "--context", default="{}", help='settings to change, as JSON: \'{"rewrite_retry_on": "doubts"}\''
    )
    args = parser.parse_args(argv)
    with (args.data / "tasks" / "mtrag_reference.jsonl").open() as f:
        tasks = fragment_tasks([json.loads(line) for line in f if line.strip()])
    writer, done = open_resumable(args.output, lambda record: record.get("task_id"))
    graph = build_graph(stop_after="rerank", output="state")
    context = Context(index_dir=args.index, **json.loads(args.context))
    with writer:
        for task in tasks:
            if task["task_id"] in done:
                continue
            state = graph.invoke({"task": task, "retrieve": True}, context=context)
            done[task["task_id"]] = record = outcome(task, state)
            writer.write(record)
    rows = [done[t["task_id"]] for t in tasks if t["task_id"] in done]
    adds = sum(bool(r["adds"]) for r in rows)
    print(f"{len(rows)} fragments: rewrite adds a content word {adds}, reference passage kept "
          f"{sum(r['hit'] for r in rows)}, new topic {sum(r['relation_class'] == 4 for r in rows)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
