"""Ingestion speed: passages embedded per second on this machine (a script that prints a table).

Embeds passages of the MTRAG mini corpora (the benchmark's ~512-token passages, titles included, as
``mtrag-graph index`` does) with the bundled MiniLM: in file order or sorted by length (the indexer's
way: batches pad less), with torch on 1 thread or on every core. Then indexes a folder of generated
documents (Markdown, text) end to end and reports its passages per second, reading and chunking included.

    python -m benchmarks.ingest_speed [--data DIR] [--passages 512]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import torch

from mtrag_graph import settings
from mtrag_graph.ingest.build import ingest
from mtrag_graph.models.embeddings import get_embedder
from mtrag_graph.retrieval.corpus import read_corpus
from mtrag_graph.retrieval.index import embed_by_length

REPO = Path(__file__).resolve().parents[1]


def texts_of(data: Path, count: int) -> list[str]:
    texts: list[str] = []
    for domain in ("clapnq", "cloud", "fiqa", "govt"):
        texts += read_corpus(data / "corpora/mini" / f"{domain}.jsonl").indexed_texts()[: count // 4]
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(settings.REPO.parent / "shared/data/mtrag"))
    parser.add_argument("--passages", type=int, default=512)
    args = parser.parse_args()
    texts = texts_of(Path(args.data), args.passages)
    cores = os.cpu_count() or 1
    print(f"{len(texts)} passages of the mini corpora, MiniLM, {cores} cores\n")
    print("| batches | torch threads | passages/s |")
    print("|---|---|---|")
    for threads in (1, cores):
        torch.set_num_threads(threads)
        for name in ("file order", "sorted by length"):
            embedder = get_embedder(settings.DEFAULT_EMBEDDER)
            embedder._cache.clear()  # every run embeds every text
            started = time.perf_counter()
            if name == "file order":
                embedder.embed(texts)
            else:
                embed_by_length(embedder, texts)
            print(f"| {name} | {threads} | {len(texts) / (time.perf_counter() - started):.1f} |", flush=True)
    torch.set_num_threads(cores)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        for i, text in enumerate(texts):
            (folder / f"doc{i:04}.md").write_text(f"# Document {i}\n\n{text}\n", encoding="utf-8")
        get_embedder(settings.DEFAULT_EMBEDDER)._cache.clear()
        report = ingest([folder], Path(tmp) / "index", show_progress=False)
        print(
            f"\nindex {len(texts)} Markdown files end to end: {report.passages_total} passages in "
            f"{report.seconds:.1f}s ({report.passages_total / report.seconds:.1f} passages/s; "
            f"embedding alone {report.passages_per_second:.1f} passages/s)"
        )


if __name__ == "__main__":
    main()
