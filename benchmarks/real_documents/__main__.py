"""The real-documents evaluation: fetch, index, answer and score one split, and print the table.

    python -m benchmarks.real_documents --split tuning [--limit N] [-o DIR] [--cache DIR]
    python -m benchmarks.real_documents --split tuning --check       # the set against the fetched text
    python -m benchmarks.real_documents --split tuning --score-only  # the table of what is answered so far

1. The split's documents are fetched from Debian's archive into the cache (``--cache``, else
   ``MTRAG_REAL_DOCUMENTS_CACHE``, else ``~/.cache/mtrag-graph/real-documents``) and checked against the
   manifest's SHA-256 (``benchmarks/data/real_documents/manifest.json``).
2. They are indexed with the project's own indexer (``mtrag_graph.ingest``, what ``mtrag-graph index``
   runs; incremental) into ``CACHE/index-SPLIT``.
3. Each turn of each conversation is a task (its history, then its question: ``DIR/tasks.jsonl``),
   answered by the default pipeline over that index, streamed, as ``mtrag-graph answer --retrieve
   --index`` does (``DIR/predictions.jsonl``, one line per task as it finishes: a stopped run resumes).
4. Each prediction is scored (``score.py``: right, cited passage holds the fact, I don't know, asked
   back, invented, passage with the fact kept; seconds) into ``DIR/verdicts.jsonl``; the table is
   printed and written into ``benchmarks/results/documents.md`` (its section for the split).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.real_documents.data import SPLITS, QuestionSet, SetError, load_set, split_tasks, turn_of
from benchmarks.real_documents.fetch import FetchError, cache_dir, fetch_split
from benchmarks.real_documents.score import Verdict, facts_found, score_record, table
from mtrag_graph import settings
from mtrag_graph.commands._options import add_model_options, context_from_args
from mtrag_graph.ingest.build import ingest
from mtrag_graph.ingest.chunk import CHUNK_OVERLAP, CHUNK_TOKENS, chunk_sections
from mtrag_graph.ingest.extract import read_document
from mtrag_graph.runtime.batch import answer_tasks
from mtrag_graph.tasks import read_jsonl

RESULTS = Path(__file__).resolve().parent.parent / "results" / "documents.md"


def index_dir(
    cache: Path, split: str, chunk_tokens: int = CHUNK_TOKENS, overlap: int = CHUNK_OVERLAP
) -> Path:
    """Where a split's index lives: ``CACHE/index-SPLIT``; another chunking gets an index of its own
    (``index-SPLIT-c256-o50``), so the default one is not rebuilt back and forth."""
    if (chunk_tokens, overlap) == (CHUNK_TOKENS, CHUNK_OVERLAP):
        return cache / f"index-{split}"
    return cache / f"index-{split}-c{chunk_tokens}-o{overlap}"


def index_passages(index: Path) -> dict[str, dict[str, Any]]:
    """The index's passages by id (their source, page and section), for scoring the kept ones."""
    passages: dict[str, dict[str, Any]] = {}
    path = index / "passages.jsonl"
    if path.exists():
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                item = json.loads(line)
                passages[str(item.get("_id") or item.get("document_id"))] = item
    return passages


def check_set(questions: QuestionSet, split: str, folder: Path) -> list[str]:
    """Problems of the split's answerable turns: a key fact not found in the text the indexer reads at
    the turn's gold page or section (or anywhere in its file when no heading matches)."""
    problems = []
    texts: dict[tuple[str, str], list[tuple[int | None, str | None, str]]] = {}
    for conversation in questions.split_conversations(split):
        for number, turn in enumerate(conversation.turns, start=1):
            if turn.where is None:
                continue
            key = (conversation.document, turn.where.file)
            if key not in texts:
                document = read_document(folder / conversation.document / turn.where.file)
                texts[key] = [
                    (chunk.page, chunk.heading, chunk.text)
                    for chunk in chunk_sections(document.sections, CHUNK_TOKENS, CHUNK_OVERLAP)
                ]
            chunks = texts[key]
            if turn.where.page is not None:
                place = [t for page, _, t in chunks if page == turn.where.page]
            else:
                place = [t for _, heading, t in chunks if heading and turn.where.section and
                         heading.strip("¶# ").lower() == turn.where.section.strip("¶# ").lower()]  # fmt: skip
            text = "\n".join(place or [t for _, _, t in chunks])
            missing = [fact for fact in turn.key_facts if not facts_found(text, [fact])]
            if missing:
                where = f"p. {turn.where.page}" if turn.where.page else (turn.where.section or "")
                scope = "" if place else " (no passage at that place: whole file searched)"
                problems.append(
                    f"{conversation.conversation_id}<::>{number}: {turn.where.file} {where}{scope}: "
                    f"key facts not found: {missing}"
                )
    return problems


def score_run(
    questions: QuestionSet, predictions: Path, passages: Mapping[str, Mapping[str, Any]], task_ids: set[str]
) -> tuple[list[Verdict], list[str]]:
    verdicts, failed = [], []
    if not predictions.exists():
        return verdicts, failed
    for _, record, error in read_jsonl(predictions):
        if error or not isinstance(record, dict) or record.get("task_id") not in task_ids:
            continue
        if record.get("status") != "ok":
            failed.append(f"{record.get('task_id')}: {(record.get('error') or {}).get('message')}")
            continue
        _, number, turn = turn_of(questions, str(record["task_id"]))
        verdicts.append(score_record(record, turn, number > 1, passages))
    return verdicts, failed


def write_results(path: Path, split: str, body: str) -> None:
    """Put ``body`` between the split's markers in the results page (added at its end if absent)."""
    start, end = (
        f"<!-- {split} split: written by python -m benchmarks.real_documents -->",
        f"<!-- end {split} -->",
    )
    text = path.read_text(encoding="utf-8") if path.exists() else "# Real documents\n"
    block = f"{start}\n{body}\n{end}"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.real_documents", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--split", required=True, choices=SPLITS)
    parser.add_argument("--limit", type=int, default=None, help="answer only the first N tasks of the split")
    parser.add_argument("-o", "--output", default=None, help="run folder (default runs/real-documents-SPLIT)")
    parser.add_argument(
        "--cache", default=None, help="documents and index (default ~/.cache/mtrag-graph/real-documents)"
    )
    parser.add_argument(
        "--check", action="store_true", help="check the key facts against the fetched text, then stop"
    )
    parser.add_argument(
        "--score-only", action="store_true", help="score what is answered so far; answer nothing"
    )
    parser.add_argument("--results", default=str(RESULTS), help="the results page the table is written into")
    parser.add_argument("--preset", default=None, help="a preset instead of the default pipeline")
    parser.add_argument(
        "--chunk-tokens",
        type=int,
        default=CHUNK_TOKENS,
        help=f"the indexer's passage length ({CHUNK_TOKENS})",
    )
    parser.add_argument(
        "--chunk-overlap", type=int, default=CHUNK_OVERLAP, help=f"the indexer's overlap ({CHUNK_OVERLAP})"
    )
    add_model_options(parser)  # every setting flag of `mtrag-graph answer` (--evidence-tokens ...)
    args = parser.parse_args(argv)
    command = "python -m benchmarks.real_documents " + shlex.join(
        [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--score-only"]
    )

    try:
        questions = load_set()
    except SetError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    documents = questions.split_documents(args.split)
    cache = cache_dir(args.cache)
    try:
        folder = fetch_split(documents, cache)
    except FetchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.check:
        problems = check_set(questions, args.split, folder)
        print("\n".join(problems) or f"{args.split}: every key fact found at its place")
        return 1 if problems else 0

    index = index_dir(cache, args.split, args.chunk_tokens, args.chunk_overlap)
    out = Path(args.output or f"runs/real-documents-{args.split}")
    out.mkdir(parents=True, exist_ok=True)
    tasks = split_tasks(questions, args.split)[: args.limit]
    tasks_path = out / "tasks.jsonl"
    tasks_path.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in tasks), encoding="utf-8")
    predictions = out / "predictions.jsonl"
    if not args.score_only:
        report = ingest(
            [folder], index, embedder=settings.embedder(), show_progress=False,
            chunk_tokens=args.chunk_tokens, overlap=args.chunk_overlap,
        )  # fmt: skip
        print(report.summary(), file=sys.stderr)
        context = context_from_args(args, index_dir=str(index))
        summary = answer_tasks(tasks_path, predictions, context, retrieve=True, stream=True)
        print(summary.render(), file=sys.stderr)

    verdicts, failed = score_run(questions, predictions, index_passages(index), {t["task_id"] for t in tasks})
    with open(out / "verdicts.jsonl", "w", encoding="utf-8") as handle:
        for verdict in verdicts:
            handle.write(json.dumps(dataclasses.asdict(verdict), ensure_ascii=False) + "\n")
    body = (
        f"`{command}` ({len(verdicts)} of {len(tasks)} tasks answered"
        + (f", {len(failed)} failed" if failed else "")
        + f"; documents: {', '.join(d.name for d in documents)})\n\n"
        + table(verdicts)
    )
    print(body)
    for line in failed:
        print(f"failed: {line}", file=sys.stderr)
    write_results(Path(args.results), args.split, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
