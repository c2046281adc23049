"""A seeded sample of the tuning split for end-to-end choices: one turn per conversation.

End-to-end comparisons (a candidate set, a preset) are chosen on the tuning split
(`tasks/mtrag_reference.jsonl`, docs/decisions.md) and reported once on the dev slice. Running every
tuning task takes hours on a CPU, so a choice is made on a sample: one turn with one of ``--labels``
(default ANSWERABLE or PARTIAL) from each of ``--conversations`` conversations (turns of one
conversation share passages and are not independent draws), chosen with ``--seed``.

    python -m research.tuning_sample --data $MTRAG_DATA --conversations 24 --seed 20 -o runs/tune24.jsonl

The full-RAG setting (answer --retrieve) of the tuning split, with its UNANSWERABLE turns (which carry
no passages in the file, so retrieval gives them on-topic ones):

    python -m research.tuning_sample --data $MTRAG_DATA --labels UNANSWERABLE --conversations 20 --seed 1 -o runs/u.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

from mtrag_graph.tasks import answerability_of

ANSWERED = ("ANSWERABLE", "PARTIAL")


def sample(rows: list[dict], conversations: int, seed: int, labels: tuple[str, ...] = ANSWERED) -> list[dict]:
    """One turn labelled one of ``labels`` from each of ``conversations`` conversations, the same for the same seed."""
    by_conversation: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        if answerability_of(row) in labels:
            by_conversation[str(row.get("conversation_id") or row["task_id"].split("<::>")[0])].append(row)
    rng = random.Random(seed)
    chosen = rng.sample(sorted(by_conversation), min(conversations, len(by_conversation)))
    return [rng.choice(sorted(by_conversation[c], key=lambda r: r["task_id"])) for c in chosen]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the MTRAG data folder (MTRAG_DATA)")
    parser.add_argument("--conversations", type=int, default=24)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument(
        "--labels", nargs="+", default=list(ANSWERED), help="answerability labels to draw from"
    )
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    with (args.data / "tasks" / "mtrag_reference.jsonl").open() as f:
        rows = [json.loads(line) for line in f if line.strip()]
    picked = sample(rows, args.conversations, args.seed, tuple(args.labels))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with args.output.open("w") as f:
        for row in picked:
            f.write(json.dumps(row) + "\n")
    labels = [answerability_of(r) for r in picked]
    print(
        f"{len(picked)} tasks from {len(picked)} conversations: "
        + ", ".join(f"{k} {labels.count(k)}" for k in args.labels)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
