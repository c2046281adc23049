"""The clarify decision on the tuning data in both settings, model-free.

`mtrag-graph decisions --only clarify` gives every item its reference passages (the Task B setting);
the tuning split has no retrieved passages. Here the Task C setting has a model-free stand-in: BM25's
top 5 over an index (the query is the previous user turn and the question, no rewrite model), the same
for every class. For the tuning split's turns and the twin set (`mtrag-graph clarify-twins`), the share
clarified per class and the signal that decided.

    python -m research.clarify_standin --data $MTRAG_DATA --twins runs/clarify-twins.jsonl --index indexes/mini
        [--retrieval hybrid] [--without SIGNAL] [--with SIGNAL]

``--retrieval hybrid`` gives the stand-in the graph's own search: hybrid top 20 for the turn and for
the previous user turn + the turn, reranked by the embedder's cosine, top 5 (the rewrite model's
standalone question is the one thing missing)."""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from mtrag_graph.context import Context
from mtrag_graph.judging.underspecified import SIGNALS, is_underspecified
from mtrag_graph.models import get_embedder
from mtrag_graph.retrieval.index import PassageIndex
from mtrag_graph.retrieval.registry import index_for
from mtrag_graph.retrieval.search import multi_query_search
from mtrag_graph.tasks import answerability_of, domain_of, parse_task

TOP_K = 5


def rows(data: Path, twins: Path) -> list[tuple[str, dict]]:
    """(class, raw task) for the tuning split's turns and the twins (TWIN-U underspecified, TWIN-A not)."""
    out = []
    for path, is_twin in ((data / "tasks" / "mtrag_reference.jsonl", False), (twins, True)):
        for line in path.read_text().splitlines():
            raw = json.loads(line)
            label = str(answerability_of(raw))
            if is_twin:
                label = "TWIN-U" if raw["task_id"].startswith("twin-under") else "TWIN-A"
                label += f" {raw['twin'].get('form', 'name')}"
            out.append((label, raw))
    return out


def reranked(
    index: PassageIndex, queries: list[str], query: str, context: Context
) -> list[tuple[int, float]]:
    """As retrieve + rerank do (no rewrite model: ``query`` stands in for the standalone question): the
    hybrid top ``context.retrieval_top_k`` for each query, merged, then the top ``context.top_k`` by
    cosine under the index's embedder, read from its stored passage vectors (a flat FAISS index, the
    default kind: an IVF one cannot give them back)."""
    hits = multi_query_search(index, queries, top_k=context.retrieval_top_k, mode="hybrid")
    vector = get_embedder(index.embedder_spec).embed([query])[0]
    scored = [(i, float(index.dense.reconstruct(int(i)) @ vector)) for i, _ in hits]
    return sorted(scored, key=lambda hit: -hit[1])[: context.top_k]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--twins", type=Path, required=True)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument(
        "--retrieval", choices=("bm25", "hybrid"), default="bm25",
        help="the Task C stand-in's passages: BM25 top 5, or the graph's hybrid search (top 20 for the "
        "turn and for the query) reranked by the embedder's cosine, top 5",
    )  # fmt: skip
    parser.add_argument("--without", action="append", default=[], choices=SIGNALS, help="switch a signal off")
    parser.add_argument(
        "--with", dest="with_", action="append", default=[], choices=SIGNALS, help="switch one on"
    )
    args = parser.parse_args(argv)
    on = [*Context().clarify_signals, *args.with_]
    context = Context(clarify_signals=tuple(s for s in SIGNALS if s in on and s not in args.without))
    indexes: dict[str, Any] = {}  # a domain's index, built-in or Milvus
    for setting in ("B", f"C ({args.retrieval} stand-in)"):
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        signals: Counter = Counter()
        for label, raw in rows(args.data, args.twins):
            task = parse_task(raw)
            history = [turn.model_dump() for turn in task.history]
            if setting == "B":
                given = task.passages
                passages = (
                    None
                    if given is None
                    else [{k: p[k] for k in ("document_id", "title", "text")} for p in given]
                )
            else:
                domain = domain_of(task.collection) or "unknown"
                index = indexes.setdefault(domain, index_for(str(args.index), domain))
                users = [t["text"] for t in history if t["speaker"] == "user"]
                query = " ".join([*users[-1:], task.question])
                if args.retrieval == "bm25":
                    hits = index.bm25_ranking(query, TOP_K)
                else:
                    hits = reranked(index, [task.question, query], query, context)
                passages = [
                    {
                        "document_id": index.ids[i],
                        "title": index.titles[i],
                        "text": index.texts[i],
                        "score": s,
                    }
                    for i, s in hits
                ]
            decision, evidence = is_underspecified(
                history, task.question, passages, context, retrieved=setting != "B"
            )
            counts[label][1] += 1
            if decision:
                counts[label][0] += 1
                signals[evidence[-1].split(":")[0]] += 1
        print(f"\n{setting}\n| class | clarified |\n|---|---|")
        for label, (asked, n) in sorted(counts.items()):
            print(f"| {label} | {asked}/{n} ({asked / n:.1%}) |")
        print(f"signals: {dict(signals)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
