"""How often the clarify decision fires, by answerability class, on the MTRAG-UN dev slice.

Runs only the clarify node's yes/no judgement (not the whole graph) over the UNDERSPECIFIED,
ANSWERABLE and PARTIAL tasks and prints the clarification rate per class: high on UNDERSPECIFIED,
low (false clarifications) on ANSWERABLE/PARTIAL is what we want.

    python -m research.clarify_rates --model qwen2.5-coder-1.5b   (from the repository root)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter

from mtrag_graph import settings
from mtrag_graph.context import Context
from mtrag_graph.judging.underspecified import is_underspecified
from mtrag_graph.tasks import parse_task, read_jsonl

CLASSES = ("UNDERSPECIFIED", "ANSWERABLE", "PARTIAL")
DEFAULT_TASKS = settings.data_dir()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=str(DEFAULT_TASKS / "tasks" / "mtragun_dev.jsonl"))
    parser.add_argument("--model", default=settings.LARGE_MODEL, help="clarify model spec")
    parser.add_argument("--limit", type=int, help="at most N tasks per class")
    parser.add_argument("--output", help="write each task's decision here (JSON lines)")
    args = parser.parse_args(argv)

    context = Context(clarify_model=args.model)
    asked: Counter = Counter()
    total: Counter = Counter()
    seconds: list[float] = []
    out = open(args.output, "w") if args.output else None
    for line, raw, error in read_jsonl(args.tasks):
        if error is not None:
            continue
        task = parse_task(raw, line)
        label = task.answerability
        if label not in CLASSES or (args.limit and total[label] >= args.limit):
            continue
        history = [turn.model_dump() for turn in task.history]
        passages = None if task.passages is None else [dict(p) for p in task.passages]
        started = time.perf_counter()
        decision, raws = is_underspecified(history, task.question, passages, context)
        seconds.append(time.perf_counter() - started)
        total[label] += 1
        asked[label] += bool(decision)
        shown = "-" if decision is None else "ask" if decision else "no"
        print(f"{label:<15} {shown:<4} {seconds[-1]:5.1f}s  {task.question[:70]}", file=sys.stderr)
        if out:
            out.write(json.dumps({"task_id": task.task_id, "answerability": label, "decision": decision,
                                  "raw": raws[-1]}) + "\n")  # fmt: skip
    if out:
        out.close()
    print(f"clarify model: {args.model}   tasks: {args.tasks}")
    print(f"{'class':<15} {'tasks':>5} {'clarified':>9} {'rate':>6}")
    for label in CLASSES:
        if total[label]:
            print(f"{label:<15} {total[label]:>5} {asked[label]:>9} {asked[label] / total[label]:>6.1%}")
    if seconds:
        print(f"seconds per decision: mean {sum(seconds) / len(seconds):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
