"""Turns that stay on the topic and leave open which of several things the last answer named: a
hand-written tuning set, and the model-free test the clarify node runs on them (signal ``rivals``).

    python -m research.clarify_rivals --data $MTRAG_DATA [--dev]

The set (``research/data/clarify_rivals.jsonl``, written for issue 50 by reading MTRAG reference
conversations of the tuning split, never the dev slice): each row names a reference task whose last
agent turn lists several things of one kind ("The types of charges are Fixed, Metered, Tiered, and
Reserved."), an underspecified follow-up that points at one of them by its kind ("How is this type of
charge calculated?") and its answerable twin naming one ("How is a tiered charge calculated?"); the
conversation is the task's own, up to that agent turn; no passages (the benchmark gives none for such
turns). The test: ``judging.underspecified.rival_reference`` ("this/that/these/those <noun>", "this type
of <noun>", whose plural the last agent turn says). Printed: how often the decision before it (the
no-passage model) and the test ask on the set, the test on every natural MTRAG reference turn of the
tuning split (by class), and with ``--dev`` on the MTRAG-UN dev slice's turns without passages (not held
out for this test: its idea came from reading those turns in issue 50's fourth round).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from mtrag_graph.judging.underspecified import rival_reference

SET = Path(__file__).resolve().parent / "data" / "clarify_rivals.jsonl"


def main(argv: list[str] | None = None) -> int:
    from mtrag_graph.context import Context
    from mtrag_graph.judging.underspecified import SIGNALS, is_underspecified
    from mtrag_graph.measure.decisions.sets import load_split
    from research.clarify_fit import turn_of

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--dev", action="store_true")
    args = parser.parse_args(argv)
    tuning = load_split(args.data, "tuning")
    by_id = {t["task_id"]: t for t in tuning}
    rows = [json.loads(line) for line in SET.read_text().splitlines() if line.strip()]
    context = Context(clarify_signals=tuple(s for s in SIGNALS if s != "rivals"))
    print(
        f"## the hand-written set ({len(rows)} pairs)\n\n| | the decision before (no-passage model) | rival_reference |\n|---|---|---|"
    )
    for kind in ("underspecified", "answerable"):
        shipped = test = 0
        for row in rows:
            history = by_id[row["source"]]["input"][:-1]
            shipped += bool(is_underspecified(history, row[kind], None, context)[0])
            test += rival_reference(history, row[kind]) is not None
        print(f"| {kind} | {shipped}/{len(rows)} | {test}/{len(rows)} |")
    counts: Counter[str] = Counter()
    fired: Counter[str] = Counter()
    examples: list[str] = []
    for task in tuning:
        history, question, _ = turn_of(task)
        label = str((task.get("answerability") or ["?"])[0])
        counts[label] += 1
        noun = rival_reference(history, question)
        if noun:
            fired[label] += 1
            examples.append(f"{label}: {question[:90]} ({noun})")
    print("\n## natural MTRAG reference turns (the tuning split)\n\n| class | fired |\n|---|---|")
    for label in sorted(counts):
        print(f"| {label} | {fired[label]}/{counts[label]} |")
    print("\n" + "\n".join(f"- {e}" for e in examples))
    if args.dev:
        print(
            "\n## MTRAG-UN dev, turns without passages (not held out for this test)\n\n| class | fired |\n|---|---|"
        )
        counts, fired = Counter(), Counter()
        for task in load_split(args.data, "report"):
            history, question, passages = turn_of(task)
            if passages:
                continue
            label = str((task.get("answerability") or ["?"])[0])
            counts[label] += 1
            fired[label] += rival_reference(history, question) is not None
        for label in sorted(counts):
            print(f"| {label} | {fired[label]}/{counts[label]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
