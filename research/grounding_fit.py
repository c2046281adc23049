"""Choose the grounding check's threshold on the tuning split, without a model.

For a seeded sample of the split's ANSWERABLE and PARTIAL turns, the reference answer (written by
the benchmark's annotators) is checked sentence by sentence (``judging.grounding.sentence_support``)
twice:

- against its own reference passages: it should stand (an abstention here is a positive lost);
- against the top passages our retrieval returns for the turn with its reference passages removed:
  on-topic passages that do not hold it, the case where the graph used to invent an answer. It should
  fall (an abstention here is a fabrication caught).

For each content-word support threshold the table gives both rates, and the rule picks the highest
threshold that turns at most ``--max-loss`` of the positives into "I don't know" and cuts a sentence
from at most ``--max-dropped`` of them (a cut sentence of a right answer costs completeness).

    python -m research.grounding_fit --data $MTRAG_DATA --index indexes/mini --limit 100 -o runs/grounding-fit.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mtrag_graph.judging.grounding import sentence_support
from mtrag_graph.measure.decisions.retrieval import index_retriever
from mtrag_graph.measure.decisions.sets import ANSWERED, load_split
from mtrag_graph.prompts.build import format_conversation
from mtrag_graph.tasks import answerability_of, parse_task

THRESHOLDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def abstains(support: list, threshold: float) -> bool:
    """No sentence with content would stand at ``threshold``: the check turns the answer into "I don't know"."""
    claims = [s for s in support if s.claim]
    return bool(claims) and not any(not s.unsupported_facts and s.score >= threshold for s in claims)


def drops_any(support: list, threshold: float) -> bool:
    return any(s.claim and (s.unsupported_facts or s.score < threshold) for s in support)


def sample_tasks(tasks: list[dict[str, Any]], seed: int, limit: int) -> list[dict[str, Any]]:
    """The seeded sample of answered turns with a reference answer, in file order."""
    answered = [t for t in tasks if answerability_of(t) in ANSWERED and t.get("targets")]
    return [
        answered[i]
        for i in sorted(random.Random(seed).sample(range(len(answered)), min(limit, len(answered))))
    ]


def support_rows(
    sample: list[dict[str, Any]], retrieve: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None
) -> list[dict[str, Any]]:
    """Per turn, the reference answer's sentence support against its own passages ("positive") and, with a
    retriever, against the top 5 retrieved passages that are not its own ("negative")."""
    rows: list[dict[str, Any]] = []
    for number, raw in enumerate(sample, start=1):
        task = parse_task(raw)
        reference = task.targets[0]
        given = [p["text"] for p in task.passages or []]
        given_ids = {p["document_id"] for p in task.passages or []}
        others = (
            [p["text"] for p in retrieve(raw) if p.get("document_id") not in given_ids][:5]
            if retrieve
            else []
        )
        said = format_conversation([t.model_dump() for t in task.history])
        rows.append(
            {
                "task_id": task.task_id,
                "positive": sentence_support(reference, given, said, question=task.question),
                "negative": sentence_support(reference, others, said, question=task.question)
                if others
                else None,
            }
        )
        if number % 25 == 0:
            print(f"{number}/{len(sample)}", file=sys.stderr, flush=True)
    return rows


def threshold_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per threshold: positives turned into IDK, positives with a sentence cut, hard negatives caught."""
    positives = [r["positive"] for r in rows]
    negatives = [r["negative"] for r in rows if r["negative"] is not None]
    return [
        {
            "threshold": threshold,
            "positives": len(positives),
            "positives_lost": sum(abstains(s, threshold) for s in positives) / len(positives),
            "positives_with_a_sentence_dropped": sum(drops_any(s, threshold) for s in positives)
            / len(positives),
            "negatives": len(negatives),
            "negatives_caught": sum(abstains(s, threshold) for s in negatives) / len(negatives)
            if negatives
            else None,
        }
        for threshold in THRESHOLDS
    ]


def choose(table: list[dict[str, Any]], max_loss: float, max_dropped: float) -> dict[str, Any] | None:
    """The rule: the highest threshold within both budgets on the positives (negatives are only reported)."""
    allowed = [
        row
        for row in table
        if row["positives_lost"] <= max_loss and row["positives_with_a_sentence_dropped"] <= max_dropped
    ]
    return max(allowed, key=lambda row: row["threshold"]) if allowed else None


def caught(row: dict[str, Any]) -> str:
    return "-" if row["negatives_caught"] is None else f"{100 * row['negatives_caught']:.1f}%"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument(
        "--index", help="an index of the corpus: without it, no hard negatives (the choice is the same)"
    )
    parser.add_argument("--split", default="tuning")
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-loss", type=float, default=0.03, help="share of positives turned into IDK")
    parser.add_argument(
        "--max-dropped", type=float, default=0.25, help="share of positives that lose at least one sentence"
    )
    parser.add_argument("-o", "--output")
    args = parser.parse_args(argv)

    sample = sample_tasks(load_split(args.data, args.split), args.seed, args.limit)
    rows = support_rows(sample, index_retriever(args.index, top_k=12) if args.index else None)
    table = threshold_table(rows)
    chosen = choose(table, args.max_loss, args.max_dropped)
    facts_flagged = sum(any(s.unsupported_facts for s in r["positive"]) for r in rows) / len(rows)
    print("| min support | positives | lost | with a sentence dropped | hard negatives | caught |")
    print("|---|---|---|---|---|---|")
    for row in table:
        print(
            f"| {row['threshold']:.1f} | {row['positives']} | {100 * row['positives_lost']:.1f}% "
            f"| {100 * row['positives_with_a_sentence_dropped']:.1f}% | {row['negatives']} "
            f"| {caught(row)} |"
        )
    print(
        f"\nreference answers with a number or name their passages and conversation lack: {100 * facts_flagged:.1f}%"
    )
    print(f"chosen (highest threshold losing at most {100 * args.max_loss:.0f}% of positives and cutting a "
          f"sentence from at most {100 * args.max_dropped:.0f}%): "
          f"{chosen['threshold'] if chosen else None}")  # fmt: skip
    if args.output:
        Path(args.output).write_text(
            json.dumps(
                {
                    "split": args.split,
                    "seed": args.seed,
                    "limit": args.limit,
                    "table": table,
                    "chosen": chosen,
                    "reference_answers_with_unsupported_facts": facts_flagged,
                },
                indent=1,
            )  # fmt: skip
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
