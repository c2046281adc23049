"""Is the passage the answer needs still there after reranking? Search alone, reranker alone, their fusion.

No model call besides the embedder. Two data sets, the same three orders of the same candidates
(``multi_query_search`` / ``search`` with hybrid fusion, then ``nodes.rerank.rerank_passages``):

    python -m research.rerank_fusion real-documents runs/real-documents-tuning --index INDEX_DIR
    python -m research.rerank_fusion mtrag --index INDEX_DIR [--per-domain 60] [--data DIR]

``real-documents``: each answerable turn of a real-documents run (what ``python -m
benchmarks.real_documents`` wrote), searched with the queries the graph used (the user's turn and the
run's recorded rewrite) over the split's index (``~/.cache/mtrag-graph/real-documents/index-SPLIT``);
a hit is a passage that holds the turn's key facts or sits at its gold page or section. Tune on the
tuning split's run only. ``mtrag``: the organisers' rewritten queries of MTRAG's retrieval tasks
(a seeded sample per domain) over an index of the mini corpora (``mtrag-graph index
corpora/mini/*.jsonl``), scored by Recall@5 and nDCG@5 against the qrels.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.real_documents.data import load_set, turn_of
from benchmarks.real_documents.score import passage_holds
from mtrag_graph import settings
from mtrag_graph.context import Context
from mtrag_graph.nodes.rerank import rerank_passages
from mtrag_graph.retrieval.metrics import load_qrels, normalise_qid, score_queries
from mtrag_graph.retrieval.registry import index_for
from mtrag_graph.retrieval.search import as_passages, multi_query_search

ORDERS = ("search", "reranker", "fusion")
DEPTH = 20  # the graph's retrieval_top_k
DOMAINS = ("clapnq", "cloud", "fiqa", "govt")


def three_orders(
    question: str, passages: Sequence[Mapping[str, Any]], window_words: int = 0
) -> dict[str, list[dict[str, Any]]]:
    """The candidates in search order, by the reranker alone, and by their fusion (the graph's default),
    the reranker scoring a passage by its best window of ``window_words`` words (0: whole)."""
    embedder, n = settings.embedder(), len(passages)

    def rerank(weight: float) -> list[dict[str, Any]]:
        return rerank_passages(
            question, passages, reranker="embedding", embedder=embedder, top_k=n,
            retrieval_weight=weight, window_words=window_words,
        )  # fmt: skip

    return {"search": [dict(p) for p in passages], "reranker": rerank(0.0), "fusion": rerank(1.0)}


def real_documents(run: Path, index_dir: str, window_words: int) -> None:
    questions, index = load_set(), index_for(index_dir, None)
    found: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    counts: collections.Counter[str] = collections.Counter()
    with open(run / "predictions.jsonl", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            _, number, turn = turn_of(questions, record["task_id"])
            if not turn.answerable:
                continue
            route, question = record.get("route") or {}, record["input"][-1]["text"]
            rewrite = route.get("standalone_question") or route.get("global_rewrite") or question
            hits = multi_query_search(index, [question, rewrite], top_k=DEPTH, mode="hybrid")
            kind = "follow-ups" if number > 1 else "first turns"
            counts[kind] += 1
            for name, order in three_orders(rewrite, as_passages(index, hits), window_words).items():
                found[kind][name] += any(passage_holds(p, turn) for p in order[:5])
    print("| turns | questions | " + " | ".join(f"top 5 holds the fact: {name}" for name in ORDERS) + " |")
    print("|---|---|" + "---|" * len(ORDERS))
    for kind, n in counts.items():
        print(f"| {kind} | {n} | " + " | ".join(str(found[kind][name]) for name in ORDERS) + " |")


def order_scores(orders: dict[str, list[str]], relevant: dict[str, int]) -> dict[str, tuple[float, float]]:
    """Recall@5 and nDCG@5 of each order of passage ids against one query's qrels (``retrieval.metrics``,
    what ``mtrag-graph eval-retrieval`` scores with)."""
    run = {name: {doc: -float(rank) for rank, doc in enumerate(ids)} for name, ids in orders.items()}
    scored = score_queries(run, dict.fromkeys(orders, relevant), ks=(5,))
    return {name: (scored[name]["Recall@5"], scored[name]["nDCG@5"]) for name in orders}


def mtrag(data: Path, index_dir: str, per_domain: int, seed: int, window_words: int) -> None:
    rng = random.Random(seed)
    scores: dict[tuple[str, str], list[tuple[float, float]]] = collections.defaultdict(list)
    for domain in DOMAINS:
        index, folder = index_for(index_dir, domain), data / "retrieval" / "mtrag" / domain
        qrels = load_qrels(folder / "qrels.tsv")
        queries = [
            json.loads(line) for line in (folder / "rewrite.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        queries = [q for q in queries if any(qrels.get(normalise_qid(q["_id"]), {}).values())]
        for query in rng.sample(queries, min(per_domain, len(queries))):
            text = query["text"].replace("|user|:", "").strip()
            passages = as_passages(index, multi_query_search(index, [text], top_k=DEPTH, mode="hybrid"))
            orders = {
                name: [p["document_id"] for p in order]
                for name, order in three_orders(text, passages, window_words).items()
            }
            for name, row in order_scores(orders, qrels[normalise_qid(query["_id"])]).items():
                scores[(domain, name)].append(row)
                scores[("all", name)].append(row)
    print("| domain | queries | " + " | ".join(f"{name} R@5 / nDCG@5" for name in ORDERS) + " |")
    print("|---|---|" + "---|" * len(ORDERS))
    for domain in (*DOMAINS, "all"):
        cells = []
        for name in ORDERS:
            rows = scores[(domain, name)]
            cells.append(
                f"{sum(r for r, _ in rows) / len(rows):.3f} / {sum(n for _, n in rows) / len(rows):.3f}"
            )
        print(f"| {domain} | {len(scores[(domain, 'search')])} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set", choices=["real-documents", "mtrag"])
    parser.add_argument("run", nargs="?", type=Path, help="real-documents: the run folder")
    parser.add_argument("--index", required=True)
    parser.add_argument("--data", type=Path, default=settings.data_dir_given(), help="mtrag: MTRAG_DATA")
    parser.add_argument("--per-domain", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--window-words", type=int, default=Context().rerank_window_words,
        help="the reranker's window in words (rerank_window_words, 0 by default: passages whole; 160 fits MiniLM)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.set == "real-documents":
        if args.run is None:
            parser.error("real-documents needs the run folder")
        real_documents(args.run, args.index, args.window_words)
    else:
        if args.data is None:
            parser.error("mtrag needs --data or MTRAG_DATA")
        mtrag(Path(args.data), args.index, args.per_domain, args.seed, args.window_words)
    return 0


if __name__ == "__main__":
    sys.exit(main())
