"""The clarify decision measured: on the generated held-out split, on the real-documents set's answerable
turns, and (once, at the end) on the MTRAG-UN dev slice in both settings. Model-free, no answer written.

    python -m research.clarify_report generated --data $MTRAG_DATA [--seed 0]
    python -m research.clarify_report real-documents
    python -m research.clarify_report dev --data $MTRAG_DATA --index indexes/mini -o runs/clarify-dev.jsonl

Each compares the default decision (``Context()``: the model-free signals, and the no-passage model for
a turn without passages that no signal asks about) with the signals alone. ``dev``: Task B is the task's reference passages (none for some turns),
Task C the stand-in of ``research.clarify_standin --retrieval hybrid`` (the graph's hybrid search and
embedding rerank, top 5, for the turn and the previous user turn + the turn; no rewrite model).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.judging.underspecified import is_underspecified
from mtrag_graph.measure.decisions.sets import load_split
from mtrag_graph.models.calls import CallLog, recording
from mtrag_graph.tasks import answerability_of, domain_of, parse_task
from research.clarify_data import generated_set
from research.clarify_fit import turn_of

Turn = tuple[list[dict[str, str]], str, list[dict[str, Any]] | None]
DECISIONS = {
    # the model-free signals alone: a turn without passages is asked only by a signal
    "signals": Context(clarify_no_passages=None),
    # the default: the signals, then the no-passage model (judging/clarify_no_passages.py) without passages
    "no-passages": Context(),
}


def _table(counts: dict[str, dict[str, list[int]]]) -> str:
    rows = sorted({row for by_row in counts.values() for row in by_row})
    names = list(counts)
    lines = ["| class | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for row in rows:
        cells = []
        for name in names:
            asked, total = counts[name].get(row, [0, 0])
            cells.append(f"{asked}/{total} ({asked / total:.1%})" if total else "-")
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def measure(
    rows: Sequence[tuple[str, Turn, dict[str, Any]]],
    *,
    retrieved: bool = False,
    record: Callable[[dict[str, Any]], None] | None = None,
    decisions: Sequence[str] = tuple(DECISIONS),
) -> tuple[dict[str, dict[str, list[int]]], dict[str, list[float]]]:
    """Asked / total by row label for each decision, and each decision's seconds per turn (and its
    model calls, in ``calls``)."""
    chosen = {name: DECISIONS[name] for name in decisions}
    counts: dict[str, dict[str, list[int]]] = {name: defaultdict(lambda: [0, 0]) for name in chosen}
    seconds: dict[str, list[float]] = {name: [] for name in chosen}
    for label, (history, question, passages), raw in rows:
        for name, context in chosen.items():
            started = time.perf_counter()
            with recording(CallLog("clarify")) as log:
                decision, evidence = is_underspecified(
                    history, question, passages, context, retrieved=retrieved
                )
            seconds[name].append(time.perf_counter() - started)
            calls[name] = calls.get(name, 0) + len(log.records)
            counts[name][label][0] += bool(decision)
            counts[name][label][1] += 1
            if record is not None:
                record({**raw, "decision": name, "asked": bool(decision), "evidence": evidence[-1]})
    return counts, seconds


calls: dict[str, int] = {}  # language-model and embedding calls per decision, as CallLog records them


def _cost(seconds: dict[str, list[float]]) -> str:
    parts = []
    for name, values in seconds.items():
        ordered = sorted(values)
        parts.append(
            f"{name}: median {ordered[len(ordered) // 2] * 1000:.1f} ms, max {ordered[-1] * 1000:.0f} ms,"
            f" total {sum(ordered):.1f} s over {len(ordered)} turns, {calls.get(name, 0)} model calls"
        )
    return "; ".join(parts)


def generated(args: argparse.Namespace) -> None:
    items = [
        i
        for i in generated_set(load_split(args.data, "tuning"), seed=args.seed)
        if i["clarify_item"]["split"] == "held-out"
    ]
    rows: list[tuple[str, Turn, dict[str, Any]]] = []
    for item in items:
        meta = item["clarify_item"]
        label = "UNDERSPECIFIED" if meta["underspecified"] else str(answerability_of(item))
        form = "natural" if meta["form"] == "natural" else "twins"
        rows.append(
            (f"{label} {form} {'passages' if meta['passages'] else 'no passages'}", turn_of(item), {})
        )
    counts, seconds = measure(rows, decisions=args.decisions)
    print(
        f"## generated held-out split (seed {args.seed}): {len(items)} items\n\n{_table(counts)}\n\n{_cost(seconds)}"
    )


def real_documents(args: argparse.Namespace) -> None:
    from benchmarks.real_documents.data import load_set

    question_set = load_set()
    rows: list[tuple[str, Turn, dict[str, Any]]] = []
    for split in args.splits:
        for conversation in question_set.split_conversations(split):
            history: list[dict[str, str]] = []
            for turn in conversation.turns:
                if turn.answerable:
                    rows.append(
                        (f"{split} answerable, no passages", (list(history), turn.question, None), {})
                    )
                history += [
                    {"speaker": "user", "text": turn.question},
                    {"speaker": "agent", "text": turn.answer},
                ]
    counts, seconds = measure(rows, decisions=args.decisions)
    print(
        f"## real-documents set: answerable turns, decided without passages\n\n{_table(counts)}\n\n{_cost(seconds)}"
    )


def dev(args: argparse.Namespace) -> None:
    from mtrag_graph.retrieval.registry import index_for
    from research.clarify_standin import reranked

    tasks = load_split(args.data, "report")
    out = open(args.output, "w", encoding="utf-8") if args.output else None

    def record(row: dict[str, Any]) -> None:
        if out is not None:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")

    context = Context()
    indexes: dict[str, Any] = {}
    for setting in args.settings:
        rows = []
        for raw in tasks:
            task = parse_task(raw)
            label = str(task.answerability)
            history = [t.model_dump() for t in task.history]
            if setting == "B":
                passages = (
                    None
                    if not task.passages
                    else [{k: p[k] for k in ("document_id", "title", "text")} for p in task.passages]
                )
            else:
                domain = domain_of(task.collection) or "unknown"
                index = indexes.setdefault(domain, index_for(str(args.index), domain))
                users = [t["text"] for t in history if t["speaker"] == "user"]
                query = " ".join([*users[-1:], task.question])
                hits = reranked(index, [task.question, query], query, context)
                passages = [
                    {"document_id": index.ids[i], "title": index.titles[i], "text": index.texts[i]}
                    for i, _ in hits
                ]
            if label == "UNDERSPECIFIED":
                label += " (passages)" if task.passages else " (no passages)"
            elif label in ("ANSWERABLE", "PARTIAL"):
                label = "ANSWERABLE+PARTIAL"
            rows.append(
                (
                    label,
                    (history, task.question, passages),
                    {"task_id": task.task_id, "setting": setting, "label": label, "question": task.question},
                )
            )
        counts, seconds = measure(rows, retrieved=setting == "C", record=record, decisions=args.decisions)
        print(f"## dev slice, Task {setting}\n\n{_table(counts)}\n\n{_cost(seconds)}\n")
    if out is not None:
        out.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m research.clarify_report", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("what", choices=("generated", "real-documents", "dev"))
    parser.add_argument("--data", type=Path, default=os.environ.get("MTRAG_DATA"), help="benchmark data")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--index", type=Path, help="dev: the index of the mini corpora (Task C stand-in)")
    parser.add_argument("-o", "--output", help="dev: every decision, JSON lines")
    parser.add_argument(
        "--decisions",
        nargs="+",
        choices=tuple(DECISIONS),
        default=("signals", "no-passages"),
        help="which to measure",
    )
    parser.add_argument(
        "--settings", nargs="+", choices=("B", "C"), default=("B", "C"), help="dev: the settings"
    )
    parser.add_argument(
        "--splits",
        nargs="+",
        choices=("tuning", "report"),
        default=("tuning", "report"),
        help="real-documents: the splits",
    )
    args = parser.parse_args(argv)
    if args.what != "real-documents" and not args.data:
        print("error: pass --data or set MTRAG_DATA", file=sys.stderr)
        return 2
    if args.what == "dev" and "C" in args.settings and not args.index:
        print(
            "error: dev needs --index (mtrag-graph index $MTRAG_DATA/corpora/mini/*.jsonl -o indexes/mini)",
            file=sys.stderr,
        )
        return 2
    {"generated": generated, "real-documents": real_documents, "dev": dev}[args.what](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
