"""``mtrag-graph eval-retrieval RUN.jsonl --qrels QRELS.tsv...``: nDCG@k and Recall@k of a run."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval-retrieval",
        help="score a retrieval run (nDCG@k, Recall@k per domain)",
        description="Score a run in the benchmark's retrieval format against binary qrels. A query's "
        "domain comes from its qrels file name or folder (e.g. cloud_qrels.tsv, govt/qrels.tsv; "
        "ibmcloud counts as cloud), else from the run's Collection. Queries without qrels are ignored.",
    )
    parser.add_argument("run_file", metavar="RUN.jsonl")
    parser.add_argument("--qrels", action="append", required=True, metavar="QRELS.tsv", help="repeatable")
    parser.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from mtrag_graph.retrieval.metrics import evaluate_files, format_table

    table = evaluate_files(args.run_file, args.qrels)
    if not table:
        print("no query of the run has qrels")
        return 1
    print(format_table(table))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(table, handle, indent=2)
    return 0
