"""Answerable tuning turns moved onto another same-domain conversation's passages, as a task file.

The set a gate or decline rule must turn away when the passages a user gives do not hold the answer
(``measure.decisions.sets._other_conversation_items``: the same draw as the decision benchmark's
``other_conversation`` items for the same ``--seed``). Each task keeps its conversation and question and
gets the donor turn's ``contexts``; ``moved_from`` names the donor task, and ``answerability`` becomes
``UNANSWERABLE`` so that ``mtrag-graph evaluate`` scores a decline as right.

    python -m research.moved_tasks --data $MTRAG_DATA --count 55 --seed 1 -o runs/moved-tuning.jsonl
    mtrag-graph answer runs/moved-tuning.jsonl -o runs/moved-tuning-out.jsonl
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

from mtrag_graph.measure.decisions.sets import ANSWERED, _base, _other_conversation_items, load_split
from mtrag_graph.tasks import answerability_of


def moved_tasks(raw_tasks: list[dict], count: int, seed: int) -> list[dict]:
    """``count`` answerable turns with a donor's passages (fewer where a domain has one conversation)."""
    by_id = {raw["task_id"]: raw for raw in raw_tasks}
    positives = [_base(raw) for raw in raw_tasks if answerability_of(raw) in ANSWERED and raw.get("contexts")]
    moved = []
    for item in _other_conversation_items(positives, count, seed):
        task = copy.deepcopy(by_id[item["task_id"]])
        task["contexts"] = copy.deepcopy(by_id[item["donor_task_id"]]["contexts"])
        task["moved_from"] = item["donor_task_id"]
        task["answerability"] = ["UNANSWERABLE"]
        moved.append(task)
    return moved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the MTRAG data folder (MTRAG_DATA)")
    parser.add_argument("--count", type=int, default=55)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    tasks = moved_tasks(load_split(args.data, "tuning"), args.count, args.seed)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with args.output.open("w", encoding="utf-8") as f:
        for task in tasks:
            f.write(json.dumps(task) + "\n")
    print(f"{len(tasks)} moved tasks -> {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
