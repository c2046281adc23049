"""The clarify decision over every source at hand, saved, and two saved decisions compared: what a change
to ``judging/underspecified.py`` moves, by source, class and passages given or not.

    python -m research.clarify_diff snapshot -o runs/clarify-before.jsonl --data $MTRAG_DATA
        [--generated runs/clarify-generated.jsonl]                 # at the code before the change
    python -m research.clarify_diff snapshot -o runs/clarify-after.jsonl ...   # after it
    python -m research.clarify_diff compare runs/clarify-before.jsonl runs/clarify-after.jsonl [--show]

Sources: the MTRAG-UN tuning slice (chosen on) and dev slice (read once), each turn as the benchmark gives
it (reference passages, or none); MTRAG's reference tasks twice, with their passages and with them left out
(a stress test of the rules for turns without passages: in the pipeline these turns have passages);
``--generated``, ``python -m research.clarify_data``'s set (split and form from its ``clarify_item``).
The default ``Context()`` decides; no language-model call (the no-passage model reads MiniLM cosines).
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


def tasks(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def items(data: Path, generated: Path | None) -> Iterator[tuple[str, dict[str, Any], bool]]:
    """(source, task, passages left out) for every turn of every source."""
    for name in ("mtragun_tuning", "mtragun_dev"):
        for task in tasks(data / "tasks" / f"{name}.jsonl"):
            yield name, task, False
    for task in list(tasks(data / "tasks" / "mtrag_reference.jsonl")):
        yield "mtrag_reference", task, False
        if task.get("contexts"):  # a turn given none is decided the same way in both
            yield "mtrag_reference (passages left out)", task, True
    for task in tasks(generated) if generated else ():
        item = task.get("clarify_item") or {}
        yield f"generated {item.get('split', '?')}", task, False


def label_of(task: dict[str, Any]) -> str:
    return (task.get("answerability") or task.get("Answerability") or ["?"])[0]


def snapshot(data: Path, generated: Path | None, out: Path) -> int:
    context = Context()
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        for source, task, left_out in items(data, generated):
            passages = [] if left_out else (task.get("contexts") or [])
            history = [{"speaker": t["speaker"], "text": t["text"]} for t in task["input"][:-1]]
            question = task["input"][-1]["text"]
            asked, evidence = is_underspecified(history, question, passages, context)
            row = {"source": source, "task_id": task["task_id"], "label": label_of(task),
                   "passages": bool(passages), "question": question, "asked": asked, "evidence": evidence[0]}  # fmt: skip
            fh.write(json.dumps(row) + "\n")
            n += 1
    print(f"{n} decisions -> {out}")
    return 0


def compare(before: Path, after: Path, show: bool) -> int:
    old = {(r["source"], r["task_id"]): r for r in map(json.loads, before.read_text().splitlines())}
    new = {(r["source"], r["task_id"]): r for r in map(json.loads, after.read_text().splitlines())}
    if old.keys() != new.keys():
        raise SystemExit(f"compare: the two snapshots hold different turns ({len(old)} against {len(new)})")
    counts: Counter[tuple[str, str, str, str]] = Counter()
    for key, row in new.items():
        group = (row["source"], row["label"], "with passages" if row["passages"] else "without passages")
        counts[(*group, "n")] += 1
        counts[(*group, "before")] += old[key]["asked"]
        counts[(*group, "after")] += row["asked"]
        if show and old[key]["asked"] != row["asked"]:
            print(f"{row['source']} {row['label']} {row['task_id']}: {row['question'][:100]!r}\n"
                  f"    before: {old[key]['evidence'][:110]}\n    after:  {row['evidence'][:110]}")  # fmt: skip
    print("| source | class | passages | turns | asked before | asked after |")
    print("|---|---|---|---|---|---|")
    for group in sorted({k[:3] for k in counts}):
        n, b, a = (counts[(*group, f)] for f in ("n", "before", "after"))
        mark = "" if a == b else " **"
        print(f"| {' | '.join(group)} | {n} | {b} | {a}{mark} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    snap = sub.add_parser("snapshot", help="decide every turn, save the decisions")
    snap.add_argument("--data", type=Path, default=settings.data_dir_given(), help="MTRAG_DATA")
    snap.add_argument("--generated", type=Path, help="python -m research.clarify_data's output")
    snap.add_argument("-o", "--out", type=Path, required=True)
    cmp_ = sub.add_parser("compare", help="two snapshots side by side")
    cmp_.add_argument("before", type=Path)
    cmp_.add_argument("after", type=Path)
    cmp_.add_argument("--show", action="store_true", help="print every turn whose decision changed")
    args = parser.parse_args(argv)
    if args.command == "compare":
        return compare(args.before, args.after, args.show)
    if args.data is None:
        parser.error("give --data or set MTRAG_DATA")
    return snapshot(args.data, args.generated, args.out)


if __name__ == "__main__":
    sys.exit(main())
