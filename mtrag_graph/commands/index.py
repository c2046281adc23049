"""``mtrag-graph index CORPUS.jsonl... -o INDEX_DIR``: build dense + BM25 passage indexes."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "index",
        help="index passage corpora (dense FAISS + BM25)",
        description="Index passage corpora ({_id, title, text} JSON lines). One corpus goes to INDEX_DIR; "
        "several go to INDEX_DIR/<file stem>/ (name them after their domain: clapnq, cloud, fiqa, govt).",
    )
    parser.add_argument("corpora", nargs="+", metavar="CORPUS.jsonl")
    parser.add_argument("-o", "--output", required=True, metavar="INDEX_DIR")
    parser.add_argument("--embedder", default=None, help="embedder spec (default: MTRAG_EMBEDDER or minilm)")
    parser.add_argument(
        "--faiss",
        default="flat",
        choices=["flat", "hnsw", "ivf"],
        help="exact (flat) or approximate dense index",
    )
    parser.add_argument("--per-file", action="store_true", help="a sub-index per file even for one corpus")
    parser.add_argument("--force", action="store_true", help="rebuild even when the corpus is unchanged")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mtrag_graph import settings
    from mtrag_graph.retrieval.index import build_indexes

    embedder = args.embedder or settings.embedder()
    reports = build_indexes(
        args.corpora,
        args.output,
        embedder=embedder,
        faiss_kind=args.faiss,
        force=args.force,
        per_file=args.per_file,
    )
    for report in reports:
        for error in report.errors:
            print(f"{report.path}: skipped corpus {error}", file=sys.stderr)
        if report.built:
            print(
                f"{report.path}: {report.passages} passages in {report.seconds:.1f}s "
                f"({report.passages_per_second:.1f} passages/s), {len(report.errors)} lines skipped"
            )
        else:
            print(f"{report.path}: unchanged corpus, {report.passages} passages (skipped; --force rebuilds)")
    return 0
