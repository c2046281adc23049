"""``mtrag-graph retrieve QUERIES.jsonl --index INDEX_DIR -o RUN.jsonl``: Task A retrieval runs."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "retrieve",
        help="retrieve passages for BEIR-style queries (Task A run file)",
        description="Retrieve passages for {_id, text} queries and write the benchmark's retrieval format "
        '({"task_id", "Collection", "contexts": [{"document_id", "score", "title", "text"}]}). The index '
        "is INDEX_DIR itself, or INDEX_DIR/<domain> with the domain from a row's Collection, --domain, "
        "or the query file's path.",
    )
    parser.add_argument("queries", metavar="QUERIES.jsonl")
    parser.add_argument("--index", required=True, metavar="INDEX_DIR")
    parser.add_argument("-o", "--output", required=True, metavar="RUN.jsonl")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--mode", default="hybrid", choices=["hybrid", "bm25", "dense"])
    parser.add_argument("--domain", default=None, help="domain or collection of all queries")
    parser.add_argument("--bm25-weight", type=float, default=1.0)
    parser.add_argument("--dense-weight", type=float, default=1.0)
    parser.add_argument("--rrf-k", type=int, default=60)
    parser.add_argument("--no-text", action="store_true", help="write only document_id and score")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from tqdm import tqdm

    from mtrag_graph.models.embeddings import get_embedder
    from mtrag_graph.passages import as_context
    from mtrag_graph.retrieval.backend import IndexNotFound
    from mtrag_graph.retrieval.corpus import COLLECTIONS, domain_of_path
    from mtrag_graph.retrieval.registry import index_for
    from mtrag_graph.retrieval.search import as_passages, clean_query, search
    from mtrag_graph.tasks import domain_of, read_jsonl

    default_collection = args.domain or domain_of_path(args.queries)
    queries = []
    for line, row, error in read_jsonl(args.queries):
        if error is None and not isinstance(row, dict):
            error = "expected a JSON object"
        if error is not None or not isinstance(row, dict):
            print(f"{args.queries}: line {line}: {error} (skipped)", file=sys.stderr)
            continue
        qid, text = row.get("_id", row.get("task_id")), row.get("text")
        if qid is None or not isinstance(text, str):
            print(f"{args.queries}: line {line}: needs _id and text (skipped)", file=sys.stderr)
            continue
        collection = row.get("Collection") or row.get("collection") or default_collection
        queries.append((str(qid), clean_query(text), collection))
    try:
        indexes = {c: index_for(args.index, c) for c in {c for _, _, c in queries}}
    except IndexNotFound as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.mode != "bm25":  # embed all queries in batches first; the searches then hit the cache
        for index in {id(i): i for i in indexes.values()}.values():
            get_embedder(index.embedder_spec).embed(
                [q for _, q, c in queries if indexes[c] is index], show_progress=True
            )
    options = {"bm25_weight": args.bm25_weight, "dense_weight": args.dense_weight, "rrf_k": args.rrf_k}
    with open(args.output, "w", encoding="utf-8") as out:
        for qid, text, collection in tqdm(queries, desc="retrieving", unit="query"):
            index = indexes[collection]
            hits = search(index, text, top_k=args.top, mode=args.mode, **options) if text else []
            # the benchmark's contexts: id, title, text and score (or id and score)
            contexts = [as_context(p) for p in as_passages(index, hits)]
            if args.no_text:
                contexts = [{"document_id": c["document_id"], "score": c["score"]} for c in contexts]
            domain = domain_of(collection) or index.domain
            name = COLLECTIONS.get(domain or "", collection or index.path.name)
            out.write(
                json.dumps({"task_id": qid, "Collection": name, "contexts": contexts}, ensure_ascii=False)
            )
            out.write("\n")
    print(f"{args.output}: {len(queries)} queries, top {args.top}, mode {args.mode}")
    return 0
