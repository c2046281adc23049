"""Does the rewrite model's failure to resolve a reference tell an underspecified turn without passages?

A later turn without passages is, in MTRAG's reference setting, UNANSWERABLE, CONVERSATIONAL or
UNDERSPECIFIED; the graph declines it without rewriting it. Here each such turn is rewritten as the
graph rewrites a follow-up (``nodes.rewrite.rewrite_question`` from ``global_rewrite_turns``: the
rewrite model, then the retry model when that one's rewrite is no use) and ``rewrite_doubts`` says what
the final rewrite still lacks. The signal: the rewrite still points back, or adds nothing to a question
that points back (the model found nothing in the conversation to put in place of "it" / "this case").

    python -m research.clarify_rewrite_signal generated --per-class 40 -o runs/clarify-rewrite-gen.jsonl
    python -m research.clarify_rewrite_signal dev --data $MTRAG_DATA -o runs/clarify-rewrite-dev.jsonl

``generated``: the generated set's tuning split (``runs/clarify-generated.jsonl``, research.clarify_data),
later turns without passages: underspecified twins, their answerable twins, and the natural turns that
come without passages (UNANSWERABLE, CONVERSATIONAL), a seeded sample of ``--per-class`` each (the
natural ones all). ``dev``: the MTRAG-UN dev slice's later turns without passages, once (the report).
First turns are left out: the graph has nothing to rewrite them from. One to two model calls a turn.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.measure.decisions.sets import load_split
from mtrag_graph.nodes.rewrite import global_rewrite_turns, rewrite_doubts, rewrite_question
from research.clarify_fit import turn_of

SIGNAL = ("still points back", "adds nothing")  # the doubts that say the reference stayed unresolved


def generated_rows(path: Path, per_class: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """(label, item) for the tuning split's later turns without passages."""
    by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        item = json.loads(line)
        meta = item.get("clarify_item") or {}
        if meta.get("split") != "tuning" or meta.get("passages") or meta.get("form") == "documents":
            continue
        history, _, _ = turn_of(item)
        if not history:
            continue
        if meta.get("form") == "natural":
            label = "natural without passages"
        else:
            label = "underspecified twin" if meta.get("underspecified") else "answerable twin"
        by_label[label].append(item)
    rng = random.Random(seed)
    rows: list[tuple[str, dict[str, Any]]] = []
    for label, items in sorted(by_label.items()):
        chosen = items if label.startswith("natural") else rng.sample(items, min(per_class, len(items)))
        rows.extend((label, item) for item in chosen)
    return rows


def dev_rows(data: str) -> list[tuple[str, dict[str, Any]]]:
    rows = []
    for raw in load_split(data, "report"):
        history, _, passages = turn_of(raw)
        if passages or not history:
            continue
        label = str((raw.get("answerability") or raw.get("Answerability") or ["?"])[0])
        rows.append((label, raw))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("set", choices=("generated", "dev"))
    parser.add_argument("--generated", type=Path, default=Path("runs/clarify-generated.jsonl"))
    parser.add_argument("--data", default=None, help="MTRAG data folder (dev)")
    parser.add_argument("--per-class", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.set == "generated":
        rows = generated_rows(args.generated, args.per_class, args.seed)
    else:
        if not args.data:
            parser.error("dev needs --data")
        rows = dev_rows(args.data)
    context = Context()
    fired: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    seconds = []
    with args.output.open("w", encoding="utf-8") as out:
        for label, item in rows:
            history, question, _ = turn_of(item)
            started = time.perf_counter()
            rewritten, fallbacks = rewrite_question(
                question, global_rewrite_turns(question, history), context
            )
            seconds.append(time.perf_counter() - started)
            doubts = rewrite_doubts(rewritten if not fallbacks or rewritten != question else None, question)
            signal = any(d in SIGNAL for d in doubts)
            fired[label][0] += signal
            fired[label][1] += 1
            out.write(json.dumps({"task_id": item["task_id"], "label": label, "question": question,
                                  "rewrite": rewritten, "doubts": doubts, "signal": signal,
                                  "retried": bool(fallbacks)}, ensure_ascii=False) + "\n")  # fmt: skip
            out.flush()
    print("| turns | signal fired |\n|---|---|")
    for label, (hits, total) in sorted(fired.items()):
        print(f"| {label} | {hits}/{total} ({hits / total:.0%}) |")
    ordered = sorted(seconds)
    if ordered:
        print(
            f"\nrewrite: median {ordered[len(ordered) // 2]:.1f} s, max {ordered[-1]:.1f} s, {len(ordered)} turns"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
