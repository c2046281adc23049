"""Rerankers on the same candidates (a script, not a test): none, embedding, cross-encoder, listwise.

    python -m benchmarks.rerankers mtrag --index INDEX_DIR --split tuning|report [--data DIR]
        [--rerankers none,embedding,cross-encoder,listwise] [--listwise-per-domain 10] [--sample-only]
    python -m benchmarks.rerankers real-documents RUN --index INDEX_DIR [--rerankers ...]

``mtrag``: the organisers' rewritten queries of MTRAG's retrieval tasks whose conversation falls in
``--split`` of ``research.reranker_fit.split_of`` (the cross-encoder is trained on ``train``; choose on
``tuning``, read ``report`` once), each query's hybrid top 20 over an index of ``corpora/mini``
(``mtrag-graph index corpora/mini/*.jsonl -o INDEX_DIR``), reordered by each reranker as the rerank
node orders retrieved passages (``nodes.rerank.rerank_passages``: fused with the search's order, weight
``rerank_retrieval_weight``; ``alone``: weight 0). nDCG@5, Recall@5 and Recall@10 against the qrels,
by domain, with a paired bootstrap 95% interval of each reranker's nDCG@5 against ``embedding`` (the
default). The listwise reranker asks the bundled 1.5B once a query, so it runs on a seeded sample of
``--listwise-per-domain`` queries a domain, the others reported on the same sample beside it.

``real-documents``: each answerable turn of a real-documents run (``python -m benchmarks.real_documents``)
searched with the graph's queries (the user's turn and the run's recorded rewrite) over that split's
index; MRR of the first passage holding the turn's key facts (``passage_holds``) among the 20.

Seconds a query: the reranker's scoring of the 20 candidates alone (the search excluded), one query at
a time. Run it on an otherwise idle machine for the times to count.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.real_documents.data import load_set, turn_of
from benchmarks.real_documents.score import passage_holds
from mtrag_graph import settings
from mtrag_graph.context import Context
from mtrag_graph.nodes.rerank import fused_order, rerank_passages
from mtrag_graph.retrieval.metrics import score_queries
from mtrag_graph.retrieval.registry import index_for
from mtrag_graph.retrieval.search import as_passages, multi_query_search
from research.reranker_fit import DEPTH, DOMAINS, load_queries

RERANKERS = ("none", "embedding", "cross-encoder", "listwise")
FUSED_WEIGHT = Context().rerank_retrieval_weight


def orders_for(
    question: str,
    passages: Sequence[Mapping[str, Any]],
    rerankers: Sequence[str],
    seconds: dict[str, list[float]],
) -> dict[str, list[str]]:
    """Each reranker's order of the candidates' ids (fused and alone), its scoring time recorded."""
    ids = [str(p["document_id"]) for p in passages]
    out: dict[str, list[str]] = {}
    for name in rerankers:
        if name == "none":
            out[name] = ids
            continue
        started = time.perf_counter()
        alone = rerank_passages(
            question, passages, reranker=name, embedder=settings.embedder(), top_k=len(passages)
        )
        seconds[name].append(time.perf_counter() - started)
        alone_ids = [str(p["document_id"]) for p in alone]
        out[f"{name} alone"] = alone_ids
        # the node's fusion of the two orders, from the scores just computed (no second model call)
        at = {doc: i for i, doc in enumerate(ids)}
        fused = fused_order([at[doc] for doc in alone_ids], FUSED_WEIGHT) if FUSED_WEIGHT > 0 else None
        out[name] = [ids[i] for i in fused] if fused is not None else alone_ids
    return out


def metrics(order: Sequence[str], relevant: Mapping[str, int]) -> dict[str, float]:
    run = {"q": {doc: -float(rank) for rank, doc in enumerate(order)}}
    scored = score_queries(run, {"q": dict(relevant)}, ks=(5, 10))["q"]
    return {"nDCG@5": scored["nDCG@5"], "R@5": scored["Recall@5"], "R@10": scored["Recall@10"]}


def bootstrap(diffs: Sequence[float], seed: int = 0, rounds: int = 2000) -> tuple[float, float]:
    values = np.asarray(diffs, dtype=float)
    if not len(values):
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), (rounds, len(values)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def against_default(values: Mapping[str, Sequence[float]], metric: str) -> list[str]:
    """One line per column: its mean paired difference from ``embedding`` (the default) on ``metric``,
    with the bootstrap 95% interval; none when ``embedding`` was not measured."""
    base = values.get("embedding")
    if base is None:
        return []
    lines = []
    for column, got in values.items():
        if column == "embedding":
            continue
        diffs = [a - b for a, b in zip(got, base, strict=True)]
        low, high = bootstrap(diffs)
        lines.append(
            f"- {column} against embedding, {metric}: {np.mean(diffs):+.3f} (95% interval {low:+.3f} to {high:+.3f})"
        )
    return lines


def mtrag_table(args: argparse.Namespace) -> str:
    queries = [q for q in load_queries(Path(args.data)) if q["split"] == args.split]
    rerankers = [r for r in args.rerankers if r != "listwise"]
    groups = [] if args.sample_only else [("all queries", queries, rerankers)]
    if "listwise" in args.rerankers:
        rng = random.Random(args.seed)
        sample = []
        for domain in DOMAINS:
            pool = [q for q in queries if q["domain"] == domain]
            sample.extend(rng.sample(pool, min(args.listwise_per_domain, len(pool))))
        groups.append(("listwise sample", sample, [*rerankers, "listwise"]))
    lines = []
    for title, chosen, names in groups:
        rows: dict[tuple[str, str], list[dict[str, float]]] = collections.defaultdict(list)
        seconds: dict[str, list[float]] = collections.defaultdict(list)
        indexes: dict[str, Any] = {}
        for query in chosen:
            domain = query["domain"]
            index = indexes.setdefault(domain, index_for(args.index, domain))
            passages = as_passages(
                index, multi_query_search(index, [query["text"]], top_k=DEPTH, mode="hybrid")
            )
            for name, order in orders_for(query["text"], passages, names, seconds).items():
                row = metrics(order, query["relevant"])
                rows[(domain, name)].append(row)
                rows[("all", name)].append(row)
            print(f"{title}: {len(rows[('all', 'none')])}/{len(chosen)}", file=sys.stderr, end="\r")
        columns = list(rows_names(names))
        lines.append(f"\n### {args.split} split, {title} ({len(chosen)} queries)\n")
        lines.append(
            "| domain | queries | " + " | ".join(f"{c}: nDCG@5 / R@5 / R@10" for c in columns) + " |"
        )
        lines.append("|---|---|" + "---|" * len(columns))
        for domain in (*DOMAINS, "all"):
            cells = []
            for column in columns:
                got = rows[(domain, column)]
                cells.append(
                    " / ".join(f"{np.mean([r[m] for r in got]):.3f}" for m in ("nDCG@5", "R@5", "R@10"))
                )
            lines.append(f"| {domain} | {len(rows[(domain, 'none')])} | " + " | ".join(cells) + " |")
        lines.append("")
        lines.extend(against_default({c: [r["nDCG@5"] for r in rows[("all", c)]] for c in columns}, "nDCG@5"))
        for name, values in seconds.items():
            lines.append(f"- {name}: {np.median(values):.3f} s a query to score {DEPTH} candidates (median; "
                         f"mean {np.mean(values):.3f})")  # fmt: skip
    return "\n".join(lines)


def rows_names(names: Sequence[str]) -> list[str]:
    out = []
    for name in names:
        out.append(name)
        if name != "none":
            out.append(f"{name} alone")
    return out


def real_documents_table(args: argparse.Namespace) -> str:
    questions, index = load_set(), index_for(args.index, None)
    reciprocal: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    seconds: dict[str, list[float]] = collections.defaultdict(list)
    with open(args.run / "predictions.jsonl", encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    for record in records:
        _, number, turn = turn_of(questions, record["task_id"])
        if not turn.answerable:
            continue
        route, question = record.get("route") or {}, record["input"][-1]["text"]
        rewrite = route.get("standalone_question") or route.get("global_rewrite") or question
        passages = as_passages(
            index, multi_query_search(index, [question, rewrite], top_k=DEPTH, mode="hybrid")
        )
        by_id = {str(p["document_id"]): p for p in passages}
        kind = "follow-ups" if number > 1 else "first turns"
        for name, order in orders_for(rewrite, passages, args.rerankers, seconds).items():
            rank = next((i for i, doc in enumerate(order) if passage_holds(by_id[doc], turn)), None)
            value = 0.0 if rank is None else 1.0 / (rank + 1)
            reciprocal[(kind, name)].append(value)
            reciprocal[("all", name)].append(value)
    columns = rows_names(args.rerankers)
    lines = [f"\n### real documents, {args.run.name}\n",
             "| turns | questions | " + " | ".join(f"{c}: MRR / fact in top 5" for c in columns) + " |",
             "|---|---|" + "---|" * len(columns)]  # fmt: skip
    for kind in ("first turns", "follow-ups", "all"):
        cells = []
        for column in columns:
            got = reciprocal[(kind, column)]
            cells.append(f"{np.mean(got):.3f} / {sum(v >= 0.2 for v in got)}")
        lines.append(f"| {kind} | {len(reciprocal[(kind, 'none')])} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.extend(against_default({c: reciprocal[("all", c)] for c in columns}, "MRR"))
    for name, values in seconds.items():
        lines.append(f"- {name}: {np.median(values):.3f} s a query (median)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set", choices=["mtrag", "real-documents"])
    parser.add_argument("run", nargs="?", type=Path, help="real-documents: the run folder")
    parser.add_argument("--index", required=True)
    parser.add_argument("--data", type=Path, default=settings.data_dir_given(), help="mtrag: MTRAG_DATA")
    parser.add_argument("--split", choices=["tuning", "report"], default="tuning")
    parser.add_argument(
        "--rerankers", type=lambda s: [r.strip() for r in s.split(",") if r.strip()],
        default=list(RERANKERS[:3]), help=f"comma-separated, of {', '.join(RERANKERS)} (default: the first three)",
    )  # fmt: skip
    parser.add_argument("--listwise-per-domain", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--sample-only",
        action="store_true",
        help="mtrag: only the listwise sample's table (every reranker on it)",
    )
    args = parser.parse_args(argv)
    unknown = [r for r in args.rerankers if r not in RERANKERS]
    if unknown:
        parser.error(f"unknown rerankers {unknown}: use {', '.join(RERANKERS)}")
    if "none" not in args.rerankers:
        args.rerankers.insert(0, "none")
    if args.set == "real-documents":
        if args.run is None:
            parser.error("real-documents needs the run folder")
        print(real_documents_table(args))
    else:
        if args.data is None:
            parser.error("mtrag needs --data or MTRAG_DATA")
        print(mtrag_table(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
