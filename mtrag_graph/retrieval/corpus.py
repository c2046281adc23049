"""Passage corpora in the benchmark's format (one ``{"_id", "title", "text", "url"}`` object a line), and
how a passage's words are analysed for BM25 (both backends: the same tokens)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import Stemmer

from mtrag_graph.tasks import DOMAINS, read_jsonl

BM25_STOPWORDS = "en"
BM25_STEMMER = "english"

# The benchmark's collection name for each domain (the ``Collection`` field of tasks and runs).
COLLECTIONS = {
    "clapnq": "mt-rag-clapnq-elser-512-100-20240503",
    "cloud": "mt-rag-ibmcloud-elser-512-100-20240502",
    "fiqa": "mt-rag-fiqa-beir-elser-512-100-20240501",
    "govt": "mt-rag-govt-elser-512-100-20240611",
}


@dataclass
class Corpus:
    ids: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # "line N: why", one per skipped line

    def __len__(self) -> int:
        return len(self.ids)

    def indexed_texts(self) -> list[str]:
        """What is indexed for each passage: its title, then its text."""
        return [passage_text(t, x) for t, x in zip(self.titles, self.texts, strict=True)]


def passage_text(title: str, text: str) -> str:
    """What a passage is embedded and scored as: its title, then its text."""
    return f"{title}\n{text}" if title else text


def read_corpus(path: str | Path) -> Corpus:
    """Read a corpus; a corrupt line (bad JSON, no id or text, repeated id) is recorded and skipped."""
    corpus = Corpus()
    seen: set[str] = set()
    for line, row, error in read_jsonl(path):
        if error is None:
            error = _passage_error(row, seen)
        if error is not None or not isinstance(row, dict):
            corpus.errors.append(f"line {line}: {error}")
            continue
        doc_id = str(row.get("_id", row.get("document_id")))
        title = row.get("title")
        seen.add(doc_id)
        corpus.ids.append(doc_id)
        corpus.titles.append(title.strip() if isinstance(title, str) else "")
        corpus.texts.append(row["text"].strip())
    return corpus


def _passage_error(row: Any, seen: set[str]) -> str | None:
    if not isinstance(row, dict):
        return f"expected a JSON object, got {type(row).__name__}"
    doc_id, text = row.get("_id", row.get("document_id")), row.get("text")
    if not isinstance(doc_id, str | int) or not str(doc_id).strip():
        return "missing '_id'"
    if not isinstance(text, str) or not text.strip():
        return f"passage {doc_id}: missing or empty 'text'"
    if str(doc_id) in seen:
        return f"passage {doc_id}: repeated '_id' (the first one is kept)"
    return None


def file_checksum(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def domain_of_path(path: str | Path) -> str | None:
    """The domain a file belongs to, from its name or folders (``cloud_qrels.tsv``, ``govt/qrels.tsv``)."""
    for part in reversed(Path(path).parts):
        for token in re.split(r"[_\-.]", part.lower()):
            if token in DOMAINS:
                return DOMAINS[token]
    return None


def bm25_tokenize(texts: list[str]) -> list[list[str]]:
    import bm25s  # noqa: PLC0415 - heavy (faiss, bm25s, scipy): loaded by full-RAG runs only

    return bm25s.tokenize(
        texts,
        stopwords=BM25_STOPWORDS,
        stemmer=Stemmer.Stemmer(BM25_STEMMER),
        return_ids=False,
        show_progress=False,
    )
