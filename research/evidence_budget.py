"""Choose the evidence budget (``Context.evidence_tokens``) on the tuning split, without a model call.

The answering prompts see, of the kept passages, only the sentences that bear on the question
(``mtrag_graph.prompts.excerpts``). The question a budget must answer: how much of what the reference
answer says do the excerpts still hold, against the whole passages? For one answerable or partial turn
per conversation of the tuning split (``tasks/mtrag_reference.jsonl``, reference passages), with the
organisers' standalone rewrite as the question (the graph uses its own rewrite), each budget gives:

- prompt tokens of the passages (characters / 4), mean;
- kept: the share of the reference answer's content stems that the whole passages hold and the excerpts
  still hold (1.0 = nothing the answer draws on was cut), mean, and the share of turns keeping 90% or more.

The rule, fixed before looking: the smallest budget whose mean "kept" is at least 0.95 with the MiniLM
embedder. The lexical-only scorer (no embedder) is shown beside it.

    python -m research.evidence_budget --data $MTRAG_DATA -o research/data/evidence_budget.json
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from mtrag_graph.models import get_embedder
from mtrag_graph.prompts.excerpts import estimate_tokens, excerpts, score_sentences
from mtrag_graph.tasks import answerability_of
from mtrag_graph.text import content_stems

BUDGETS = (150, 250, 300, 400, 600, 800)
RULE_KEPT = 0.95


def _rewrites(data: Path) -> dict[str, str]:
    found = {}
    for path in (data / "retrieval" / "mtrag").glob("*/rewrite.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            found[row["_id"]] = row["text"].removeprefix("|user|:").strip()
    return found


def sample(data: Path, seed: int) -> list[dict[str, Any]]:
    """One answerable or partial turn with passages per conversation, seeded."""
    by_conversation: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in (data / "tasks" / "mtrag_reference.jsonl").read_text(encoding="utf-8").splitlines():
        task = json.loads(line)
        if (
            answerability_of(task) in ("ANSWERABLE", "PARTIAL")
            and task.get("contexts")
            and task.get("targets")
        ):
            by_conversation[task["conversation_id"]].append(task)
    rng = random.Random(seed)
    return [rng.choice(turns) for _, turns in sorted(by_conversation.items())]


def kept_share(reference: str, passages: list[str], excerpts: list[str]) -> float | None:
    wanted = set(content_stems(reference)) & set().union(*(set(content_stems(p)) for p in passages))
    if not wanted:
        return None
    held = set().union(*(set(content_stems(e)) for e in excerpts))
    return len(wanted & held) / len(wanted)


def measure(tasks: list[dict[str, Any]], rewrites: dict[str, str], embed: Any) -> dict[str, Any]:
    prepared = []
    for task in tasks:
        question = rewrites.get(task["task_id"]) or task["input"][-1]["text"]
        passages = [{"title": c.get("title", ""), "text": c["text"]} for c in task["contexts"]]
        prepared.append((task, [p["text"] for p in passages], score_sentences(question, passages, embed)))
    rows: dict[str, Any] = {}
    for budget in (*BUDGETS, 0):
        tokens, kept = [], []
        for task, texts, scored in prepared:
            cut = excerpts(texts, scored, budget) if budget else texts
            tokens.append(sum(estimate_tokens(e) for e in cut))
            share = kept_share(task["targets"][0]["text"], texts, cut)
            if share is not None:
                kept.append(share)
        rows[str(budget or "whole")] = {
            "tokens_mean": round(statistics.mean(tokens), 1),
            "kept_mean": round(statistics.mean(kept), 4),
            "kept_90_share": round(sum(k >= 0.9 for k in kept) / len(kept), 4),
            "turns": len(kept),
        }
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args(argv)
    tasks = sample(args.data, args.seed)
    rewrites = _rewrites(args.data)
    embedder = get_embedder("minilm")
    results = {"turns": len(tasks), "seed": args.seed, "rule": f"smallest budget with kept_mean >= {RULE_KEPT}",
               "embedding": measure(tasks, rewrites, embedder.embed), "lexical": measure(tasks, rewrites, None)}  # fmt: skip
    chosen = [b for b in BUDGETS if results["embedding"][str(b)]["kept_mean"] >= RULE_KEPT]
    results["chosen"] = chosen[0] if chosen else None
    print(f"{len(tasks)} tuning turns (one per conversation, seed {args.seed})")
    print("| budget | scorer | passage tokens | kept (mean) | turns keeping >= 90% |")
    print("|---|---|---|---|---|")
    for scorer in ("embedding", "lexical"):
        for budget, row in results[scorer].items():
            print(
                f"| {budget} | {scorer} | {row['tokens_mean']:.0f} | {row['kept_mean']:.3f} | {row['kept_90_share']:.1%} |"
            )
    print(f"chosen by the rule: {results['chosen']}")
    if args.output:
        args.output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
