"""The clarify decision over turns **with passages**, before and after the ``several`` signal and the
``orphan`` signal with passages (issue 76, 2026-12-03): how many turns of each kind each asks back.

    python -m research.clarify_several --data $MTRAG_DATA [--generated runs/clarify-generated.jsonl]
        [--runs runs/devC-emb.jsonl ...] [--show]

**Before**: ``Context.clarify_signals`` without ``several`` and ``orphan`` (``orphan`` decided only turns
without passages before, so over turns with passages that is the shipped decision of 2026-12-02).
**After**: the default. Only turns with passages are scored: for a turn without passages nothing changed.
No model call: the decision over turns with passages is model-free.

Sources, each a task file (one JSON task a line): the MTRAG-UN tuning slice (chosen on) and dev slice
(read once), with their reference passages; MTRAG's reference tasks (``tasks/mtrag_reference.jsonl``: 777
answerable and partial turns, the false-alarm check); ``--generated``, the generated set of
``python -m research.clarify_data`` (its ``clarify_item`` gives split and form: the held-out split was not
chosen on); ``--runs``, answer runs with retrieved passages (``mtrag-graph answer --retrieve``: the stored
``contexts`` are the kept passages the clarify node saw), replayed as retrieved passages.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mtrag_graph import settings
from mtrag_graph.context import Context
from mtrag_graph.judging.underspecified import is_underspecified

NEW = ("several", "orphan")


def before_context() -> Context:
    """The default without the signals this change added or widened."""
    return Context(clarify_signals=tuple(s for s in Context().clarify_signals if s not in NEW))


def turns(path: Path) -> Iterator[dict[str, Any]]:
    """Each task with passages: its group (split, form), label, conversation, question and passages."""
    for line in path.read_text(encoding="utf-8").splitlines():
        task = json.loads(line)
        passages = task.get("contexts") or []
        if not passages:
            continue
        label = (task.get("answerability") or task.get("Answerability") or ["?"])[0]
        item = task.get("clarify_item") or {}
        yield {
            "group": f"{item['split']} {item['form']}" if item else "all",
            "label": label,
            "task_id": task["task_id"],
            "history": [{"speaker": t["speaker"], "text": t["text"]} for t in task["input"][:-1]],
            "question": task["input"][-1]["text"],
            "passages": passages,
        }


def compare(path: Path, retrieved: bool, show: bool) -> list[tuple[str, str, int, int, int]]:
    """Per group and label: turns, asked before, asked after; ``show`` prints every turn that changed."""
    before, after = before_context(), Context()
    counts: Counter[tuple[str, str, str]] = Counter()
    for turn in turns(path):
        args = (turn["history"], turn["question"], turn["passages"])
        old, _ = is_underspecified(*args, before, retrieved=retrieved)
        new, evidence = is_underspecified(*args, after, retrieved=retrieved)
        key = (turn["group"], turn["label"])
        counts[(*key, "n")] += 1
        counts[(*key, "before")] += old
        counts[(*key, "after")] += new
        if show and old != new:
            print(f"{path.name} {turn['label']} {turn['task_id']}: {turn['question'][:100]} | {evidence[0]}")
    keys = sorted({(g, label) for g, label, _ in counts})
    return [(g, label, counts[(g, label, "n")], counts[(g, label, "before")], counts[(g, label, "after")])
            for g, label in keys]  # fmt: skip


def table(rows: list[tuple[str, str, str, int, int, int]]) -> str:
    lines = ["| source | group | label | turns with passages | asked before | asked after |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    lines += [f"| {s} | {g} | {label} | {n} | {b} | {a} |" for s, g, label, n, b, a in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=settings.data_dir_given(), help="MTRAG_DATA")
    parser.add_argument("--generated", type=Path, help="python -m research.clarify_data's output")
    parser.add_argument(
        "--runs", type=Path, nargs="*", default=[], help="answer runs with retrieved passages"
    )
    parser.add_argument("--show", action="store_true", help="print every turn whose decision changed")
    args = parser.parse_args(argv)
    if args.data is None:
        parser.error("give --data or set MTRAG_DATA")
    sources = [(args.data / "tasks" / f"{name}.jsonl", False) for name in
               ("mtragun_tuning", "mtragun_dev", "mtrag_reference")]  # fmt: skip
    sources += [(args.generated, False)] if args.generated else []
    sources += [(run, True) for run in args.runs]
    rows = []
    for path, retrieved in sources:
        name = f"{path.name} (retrieved)" if retrieved else path.name
        rows += [(name, *row) for row in compare(path, retrieved, args.show)]
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
