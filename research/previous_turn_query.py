"""Does searching a follow-up with the user's turn before it find its passages? Read off recorded runs.

The retrieve node searches with the user's turn and the graph's rewrite, and with
``Context.retrieve_with_previous_turn`` (off) also with the user's turn before and this turn as one text.
This replays the retrieval of every answerable follow-up of a recorded run, from the run's own rewrite
(``route.standalone_question``), both ways: hybrid search (depth ``retrieval_top_k``), then the rerank
fusion's ``top_k`` (the node's ``rerank_passages``). No model call but the embedder:

    python -m research.previous_turn_query mtrag runs/devC-now.jsonl --index indexes/mini
    python -m research.previous_turn_query real-documents runs/rd-tuning-K \\
        --index ~/.cache/mtrag-graph/real-documents/index-tuning
    python -m research.previous_turn_query mtrag-reference $MTRAG_DATA --index indexes/mini

``mtrag``: a recorded ``mtrag-graph answer --retrieve`` file; a hit is a passage among the task's
``reference_contexts`` (ANSWERABLE and PARTIAL turns). ``real-documents``: a run folder of
``benchmarks.real_documents`` (predictions and verdicts); a hit is a passage holding the turn's key
facts or at its gold page or section (``score.passage_holds``). It also counts the follow-ups whose
replayed kept passages (without the turn before) differ from the recorded ones: 0 when the run was
made at this retrieval's code.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.real_documents.data import load_set, turn_of
from benchmarks.real_documents.score import passage_holds
from mtrag_graph.context import Context
from mtrag_graph.nodes.rerank import configured_rerank
from mtrag_graph.nodes.retrieve import search_hits, with_previous_turn
from mtrag_graph.retrieval.registry import index_for
from mtrag_graph.retrieval.search import as_passages
from research.rerank_fusion import order_scores
from research.rewrite_retrieval import mtrag_items as reference_items

WAYS = ("turn and rewrite", "and the turn before")


def kept_ids(
    index: Any, queries: Sequence[str | None], question: str, context: Context
) -> tuple[list[str], list[dict[str, Any]]]:
    """The passages the retrieve and rerank nodes keep for ``queries``, as the graph runs them."""
    kept = configured_rerank(
        question, as_passages(index, search_hits(index, list(queries), context)), context, True
    )
    return [str(p["document_id"]) for p in kept], kept


def mtrag_items(path: Path) -> Iterator[tuple[dict[str, Any], Callable[[Mapping[str, Any]], bool]]]:
    for line in path.open(encoding="utf-8"):
        task = json.loads(line)
        gold = {c["document_id"] for c in task.get("reference_contexts") or []}
        if (task.get("answerability") or [""])[0] in ("ANSWERABLE", "PARTIAL") and gold:
            yield task, _in_gold(gold)


def _in_gold(gold: set[str]) -> Callable[[Mapping[str, Any]], bool]:
    return lambda passage: passage["document_id"] in gold


def _holding(turn: Any) -> Callable[[Mapping[str, Any]], bool]:
    return lambda passage: passage_holds(passage, turn)


def document_items(folder: Path) -> Iterator[tuple[dict[str, Any], Callable[[Mapping[str, Any]], bool]]]:
    questions = load_set()
    verdicts = {json.loads(line)["task_id"]: json.loads(line) for line in (folder / "verdicts.jsonl").open()}
    for line in (folder / "predictions.jsonl").open(encoding="utf-8"):
        task = json.loads(line)
        if verdicts[task["task_id"]]["answerable"]:
            turn = turn_of(questions, task["task_id"])[2]
            yield task, _holding(turn)


def replay(
    items: Iterator[tuple[dict[str, Any], Callable]], index_dir: str, context: Context
) -> dict[str, Any]:
    """Per way: follow-ups, a hit among the kept passages, among the top 3, reciprocal rank; and how
    many follow-ups keep other passages or the same in another order."""
    totals = {way: {"follow-ups": 0, "kept": 0, "top 3": 0, "rr": 0.0} for way in WAYS}
    changed = differs_from_recorded = 0
    for task, hit in items:
        turns, question = task["input"][:-1], task["input"][-1]["text"]
        third = with_previous_turn(question, turns)
        route = task.get("route") or {}
        if third is None or not route.get("kept_passages"):
            continue
        rewrite = route.get("standalone_question") or route.get("global_rewrite")
        index = index_for(index_dir, task.get("Collection"))
        ranked = {}
        for way, queries in zip(WAYS, ([question, rewrite], [question, rewrite, third]), strict=True):
            ids, kept = kept_ids(index, queries, rewrite or question, context)
            ranked[way] = ids
            hits = [hit(p) for p in kept]
            row = totals[way]
            row["follow-ups"] += 1
            row["kept"] += any(hits)
            row["top 3"] += any(hits[:3])
            row["rr"] += next((1 / (rank + 1) for rank, h in enumerate(hits) if h), 0.0)
        changed += ranked[WAYS[0]] != ranked[WAYS[1]]
        differs_from_recorded += ranked[WAYS[0]] != [p["document_id"] for p in route["kept_passages"]]
    return {"ways": totals, "changed": changed, "differs_from_recorded": differs_from_recorded}


def reference_replay(data: Path, index_dir: str, context: Context) -> dict[str, dict[str, float]]:
    """Mean Recall@5 and nDCG@5 per (rewrite, way) over MTRAG's follow-ups with qrels."""
    sums: dict[str, list[float]] = {}
    for item in reference_items(data, per_domain=10**6, seed=0):
        task = item["task"]
        question = task["input"][-1]["text"]
        third = with_previous_turn(question, task["input"][:-1])
        index = index_for(index_dir, item["domain"])
        for rewrite_name, rewrite in (
            ("organisers' rewrite", item["official"] or question),
            ("the turn itself", question),
        ):
            for way, queries in zip(WAYS, ([question, rewrite], [question, rewrite, third]), strict=True):
                ids, _ = kept_ids(index, queries, rewrite, context)
                recall, ndcg = order_scores({"kept": ids}, item["relevant"])["kept"]
                row = sums.setdefault(f"{rewrite_name} | {way}", [0.0, 0.0, 0.0])
                row[0] += 1
                row[1] += recall
                row[2] += ndcg
    return {name: {"follow-ups": n, "Recall@5": r / n, "nDCG@5": g / n} for name, (n, r, g) in sums.items()}


def table(result: Mapping[str, Any], top_k: int) -> str:
    lines = [
        f"| queries | follow-ups | a hit kept (top {top_k}) | a hit in the top 3 | MRR@{top_k} |",
        "|---|---|---|---|---|",
    ]
    for way, row in result["ways"].items():
        n = row["follow-ups"] or 1
        lines.append(
            f"| {way} | {row['follow-ups']} | {row['kept']} | {row['top 3']} | {row['rr'] / n:.3f} |"
        )
    lines.append(f"\nfollow-ups whose kept passages change: {result['changed']}; "
                 f"replayed without the turn before but unlike the recorded run: {result['differs_from_recorded']}")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=("mtrag", "real-documents", "mtrag-reference"))
    parser.add_argument(
        "run", type=Path,
        help="a recorded answers file (mtrag), a run folder (real-documents) or the data folder (mtrag-reference)",
    )  # fmt: skip
    parser.add_argument("--index", required=True, help="the index folder the run retrieved from")
    args = parser.parse_args(argv)
    context = Context()
    if args.kind == "mtrag-reference":
        print("| rewrite | queries | follow-ups | Recall@5 | nDCG@5 |\n|---|---|---|---|---|")
        for name, row in reference_replay(args.run, args.index, context).items():
            print(f"| {name} | {row['follow-ups']:.0f} | {row['Recall@5']:.3f} | {row['nDCG@5']:.3f} |")
        return 0
    items = mtrag_items(args.run) if args.kind == "mtrag" else document_items(args.run)
    print(table(replay(items, args.index, context), context.top_k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
