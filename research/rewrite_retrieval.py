"""Does a global rewrite prompt find what the turn needs? Retrieval with each variant's rewrites.

The global rewrite (``nodes.rewrite.rewrite_question``: the rewrite model, then the retry model when
its rewrite is no use) is run on follow-up turns with each prompt variant, and the graph's retrieval
runs on what it wrote: hybrid search with the user's turn and the rewrite (``multi_query_search``,
depth 20), then the rerank fusion's top 5. Two data sets:

    python -m research.rewrite_retrieval mtrag --index INDEX_DIR [--per-domain 40] -o OUT.jsonl
    python -m research.rewrite_retrieval real-documents runs/rd-tuning-fuse/tasks.jsonl \\
        --index ~/.cache/mtrag-graph/real-documents/index-tuning -o OUT.jsonl

``mtrag``: a seeded sample of answerable follow-up turns per domain of ``tasks/mtrag_reference.jsonl``
over an index of the mini corpora, scored by Recall@5 and nDCG@5 against the retrieval qrels; the
organisers' rewrite and the last turn alone are scored beside them as bounds. ``real-documents``: the
answerable follow-ups of a task file of the set (tune on the tuning split only); a hit is a top-5
passage that holds the turn's key facts or sits at its gold page or section.

Variants: ``rules after`` (the rules after the conversation and question: the default), ``rules in
system`` (the rules at the end of the system text, where llama.cpp keeps them computed between
questions, nothing after the question) and ``rules in system, cue after`` (the same, then "Rewritten
question:"). Each item's
rewrites and scores go to ``OUT.jsonl`` as they are made; a rerun resumes from it.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from benchmarks.real_documents.data import load_set, turn_of
from benchmarks.real_documents.score import passage_holds
from mtrag_graph import settings
from mtrag_graph.context import Context
from mtrag_graph.nodes.rerank import rerank_passages
from mtrag_graph.nodes.rewrite import global_rewrite_turns, rewrite_question
from mtrag_graph.prompts import rewrite
from mtrag_graph.prompts.build import GLOBAL_REWRITE_PROMPT
from mtrag_graph.retrieval.metrics import load_qrels, normalise_qid
from mtrag_graph.retrieval.registry import index_for
from mtrag_graph.retrieval.search import as_passages, multi_query_search
from mtrag_graph.tasks import domain_of
from research.rerank_fusion import DEPTH, DOMAINS, order_scores

CONVERSATION_AND_QUESTION = "Conversation:\n{conversation}\n\nLast user question: {question}"
RULES_IN_SYSTEM = f"{rewrite.SYSTEM}\n\nYour task: {rewrite.GLOBAL_REWRITE_RULES}"
# each variant's system text and instruction (the global rewrite's ``prompt``)
VARIANTS: dict[str, tuple[str, str]] = {
    "rules after": GLOBAL_REWRITE_PROMPT,  # the default
    "rules in system": (RULES_IN_SYSTEM, CONVERSATION_AND_QUESTION),
    "rules in system, cue after": (RULES_IN_SYSTEM, f"{CONVERSATION_AND_QUESTION}\n\nRewritten question:"),
}


def kept(index: Any, question: str, rewritten: str) -> list[dict[str, Any]]:
    """The five passages the graph keeps when it retrieves with ``question`` and ``rewritten``: the
    rerank fusion of the search order and the reranker's (``rerank_passages`` as the rerank node calls it)."""
    passages = as_passages(
        index, multi_query_search(index, [question, rewritten], top_k=DEPTH, mode="hybrid")
    )
    return rerank_passages(rewritten, passages, reranker="embedding", embedder=settings.embedder(), top_k=5,
                           retrieval_weight=1.0)  # fmt: skip


def mtrag_items(data: Path, per_domain: int, seed: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    by_domain: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    with open(data / "tasks" / "mtrag_reference.jsonl", encoding="utf-8") as handle:
        for line in handle:
            task = json.loads(line)
            if len(task["input"]) > 1:
                by_domain[str(domain_of(task["Collection"]))].append(task)
    for domain in DOMAINS:
        folder = data / "retrieval" / "mtrag" / domain
        qrels = load_qrels(folder / "qrels.tsv")
        official = {}
        for line in (folder / "rewrite.jsonl").read_text(encoding="utf-8").splitlines():
            query = json.loads(line)
            official[normalise_qid(query["_id"])] = query["text"].replace("|user|:", "").strip()
        tasks = [t for t in by_domain[domain] if any(qrels.get(normalise_qid(t["task_id"]), {}).values())]
        for task in rng.sample(tasks, min(per_domain, len(tasks))):
            qid = normalise_qid(task["task_id"])
            yield {"task": task, "domain": domain, "relevant": qrels[qid], "official": official.get(qid)}


def score_mtrag(index_dir: str) -> Callable[[dict[str, Any], str], dict[str, Any]]:
    def score(item: dict[str, Any], rewritten: str) -> dict[str, Any]:
        index = index_for(index_dir, item["domain"])
        ids = [p["document_id"] for p in kept(index, item["task"]["input"][-1]["text"], rewritten)]
        recall, ndcg = order_scores({"kept": ids}, item["relevant"])["kept"]
        return {"Recall@5": recall, "nDCG@5": ndcg}

    return score


def real_document_items(tasks: Path) -> Iterator[dict[str, Any]]:
    questions = load_set()
    with open(tasks, encoding="utf-8") as handle:
        for line in handle:
            task = json.loads(line)
            _, number, turn = turn_of(questions, task["task_id"])
            if number > 1 and turn.answerable:
                yield {"task": task, "domain": "real-documents", "turn": turn}


def score_real_documents(index_dir: str) -> Callable[[dict[str, Any], str], dict[str, Any]]:
    index = index_for(index_dir, None)

    def score(item: dict[str, Any], rewritten: str) -> dict[str, Any]:
        passages = kept(index, item["task"]["input"][-1]["text"], rewritten)
        return {"holds": float(any(passage_holds(p, item["turn"]) for p in passages))}

    return score


def run(
    items: list[dict[str, Any]], score: Callable[[dict[str, Any], str], dict[str, Any]], out: Path
) -> None:
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            done[(row["variant"], row["task_id"])] = row
    with open(out, "a", encoding="utf-8") as handle:
        context = Context()
        for name, prompt in VARIANTS.items():
            for item in items:
                task = item["task"]
                if (name, task["task_id"]) in done:
                    continue
                history, question = task["input"][:-1], task["input"][-1]["text"]
                rewritten, fallbacks = rewrite_question(question, global_rewrite_turns(question, history),
                                                        context, prompt)  # fmt: skip
                row = {"variant": name, "task_id": task["task_id"], "domain": item["domain"],
                       "question": question, "rewrite": rewritten, "fallbacks": [f["used"] for f in fallbacks],
                       **score(item, rewritten)}  # fmt: skip
                done[(name, task["task_id"])] = row
                handle.write(json.dumps(row) + "\n")
                handle.flush()
    bounds = {"last turn only": lambda item: item["task"]["input"][-1]["text"]}
    if any(item.get("official") for item in items):
        bounds["organisers' rewrite"] = lambda item: item.get("official") or item["task"]["input"][-1]["text"]
    rows: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for name in VARIANTS:
        rows[name] = [done[(name, item["task"]["task_id"])] for item in items]
    for name, text_of in bounds.items():
        rows[name] = [{"domain": item["domain"], **score(item, text_of(item))} for item in items]
    table(rows)


def table(rows: dict[str, list[dict[str, Any]]]) -> None:
    metrics = [key for key in next(iter(rows.values()))[0] if key in ("Recall@5", "nDCG@5", "holds")]
    domains = sorted({row["domain"] for group in rows.values() for row in group})
    print(
        "| rewrite | "
        + " | ".join(f"{d}: {m}" for d in [*domains, "all"] for m in metrics)
        + " | rewritten again by the retry model |"
    )
    print("|---|" + "---|" * (len(metrics) * (len(domains) + 1) + 1))
    for name, group in rows.items():
        cells = []
        for domain in [*domains, "all"]:
            chosen = [r for r in group if domain in ("all", r["domain"])]
            cells += [f"{sum(r[m] for r in chosen) / len(chosen):.3f}" for m in metrics]
        retried = (
            sum("rewrite retry model" in r.get("fallbacks", ()) for r in group) if name in VARIANTS else "-"
        )
        print(f"| {name} (n={len(group)}) | " + " | ".join(cells) + f" | {retried} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set", choices=["mtrag", "real-documents"])
    parser.add_argument("tasks", nargs="?", type=Path, help="real-documents: a task file of the set")
    parser.add_argument("--index", required=True)
    parser.add_argument(
        "--data", type=Path, default=settings.data_dir(), help="mtrag: the MTRAG data (MTRAG_DATA)"
    )
    parser.add_argument("--per-domain", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", type=Path, required=True, help="per-item results (resumed)")
    args = parser.parse_args(argv)
    if args.set == "real-documents":
        if args.tasks is None:
            parser.error("real-documents needs a task file")
        run(list(real_document_items(args.tasks)), score_real_documents(args.index), args.output)
    else:
        run(
            list(mtrag_items(Path(args.data), args.per_domain, args.seed)),
            score_mtrag(args.index),
            args.output,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
