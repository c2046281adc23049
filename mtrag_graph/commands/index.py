"""``mtrag-graph index PATH... -o INDEX_DIR``: index documents and passage corpora (dense + BM25).

Folders (recursively) and files: Markdown, text, HTML, PDF and Word documents are cut into passages
(``mtrag_graph/ingest``); JSON lines of ``{_id, title, text}`` are passages as they are. Re-running on a
changed folder embeds only added or changed files and removes the passages of deleted ones.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "index",
        help="index documents and passage corpora (dense + BM25; FAISS or Milvus)",
        description="Index folders and files: .md, .txt, .html, .pdf, .docx (cut into passages of about "
        "--chunk-tokens tokens) and {_id, title, text} JSON lines (passages as they are). Only added or changed "
        "files are embedded again; passages of deleted files are removed; an interrupted run resumes. "
        "Several JSON-lines corpora alone go to INDEX_DIR/<file stem>/ (one sub-index per domain: clapnq, "
        "cloud, fiqa, govt).",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument("-o", "--output", required=True, metavar="INDEX_DIR")
    parser.add_argument("--embedder", default=None, help="embedder spec (default: MTRAG_EMBEDDER or minilm)")
    parser.add_argument(
        "--backend",
        default="faiss",
        choices=["faiss", "milvus"],
        help="faiss + bm25s in the folder (default), or a Milvus collection (Milvus Lite in the folder, or "
        "the server at MTRAG_MILVUS_URI)",
    )
    parser.add_argument(
        "--faiss",
        default="flat",
        choices=["flat", "hnsw", "ivf"],
        help="exact (flat) or approximate dense index (also the Milvus index type)",
    )
    parser.add_argument("--chunk-tokens", type=int, default=None, help="passage length in tokens (512)")
    parser.add_argument("--chunk-overlap", type=int, default=None, help="tokens shared by neighbours (100)")
    parser.add_argument("--per-file", action="store_true", help="a sub-index per corpus file even for one")
    parser.add_argument("--force", action="store_true", help="rebuild even when the corpus is unchanged")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from mtrag_graph import settings

    embedder = args.embedder or settings.embedder()
    paths = [Path(p) for p in args.paths]
    corpora_only = all(p.is_file() and p.suffix.lower() == ".jsonl" for p in paths)
    if corpora_only and args.backend == "faiss" and args.chunk_tokens is None and args.chunk_overlap is None:
        return _corpora(args, embedder)
    return _documents(args, embedder, paths, per_file=corpora_only and (len(paths) > 1 or args.per_file))


def _corpora(args: argparse.Namespace, embedder: str) -> int:
    """Benchmark corpora: one FAISS + BM25 index per file, skipped when the file is unchanged."""
    from mtrag_graph.retrieval.index import build_indexes

    reports = build_indexes(
        args.paths,
        args.output,
        embedder=embedder,
        faiss_kind=args.faiss,
        force=args.force,
        per_file=args.per_file,
        show_progress=not args.quiet,
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


def _documents(args: argparse.Namespace, embedder: str, paths: list[Path], *, per_file: bool) -> int:
    import shutil

    from mtrag_graph.ingest.build import ingest
    from mtrag_graph.ingest.chunk import CHUNK_OVERLAP, CHUNK_TOKENS

    out = Path(args.output)
    jobs = [([p], out / p.stem) for p in paths] if per_file else [(paths, out)]
    if args.force:
        for _, target in jobs:
            shutil.rmtree(target, ignore_errors=True)
    failed = False
    for job_paths, target in jobs:
        try:
            report = ingest(
                job_paths,
                target,
                embedder=embedder,
                backend=args.backend,
                chunk_tokens=args.chunk_tokens or CHUNK_TOKENS,
                overlap=CHUNK_OVERLAP if args.chunk_overlap is None else args.chunk_overlap,
                faiss_kind=args.faiss,
                show_progress=not args.quiet,
                on_skip=lambda item: print(f"{item.name}: {item.reason} (skipped)", file=sys.stderr),
            )
        except ValueError as error:
            print(f"error: {error}", file=sys.stderr)
            failed = True
            continue
        print(report.summary())
    return 1 if failed else 0
