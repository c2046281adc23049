"""Fixtures of the retrieval tests: a fast fake embedder, tiny corpora (the data folder: tests/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mtrag_graph.retrieval.index import build_index

FAKE_EMBEDDER = "hashing:256"


@pytest.fixture
def fake_embedder() -> str:
    """A fast deterministic embedder without a model (words hashed into 256 buckets)."""
    return FAKE_EMBEDDER


PASSAGES = [
    {
        "_id": "p-cardinals",
        "title": "Arizona Cardinals",
        "text": "The Cardinals play home games in Glendale.",
    },
    {"_id": "p-london", "title": "NFL London", "text": "Some NFL games are played at Twickenham in London."},
    {"_id": "p-cloudant", "title": "Cloudant", "text": "Cloudant is a JSON document database on IBM Cloud."},
    {"_id": "p-mortgage", "title": "", "text": "A mortgage is a loan secured by a house."},
    {"_id": "p-passport", "title": "Passports", "text": "Apply for a passport at a post office."},
]


def write_corpus(path: Path, rows: list[dict] | None = None, extra_lines: list[str] = ()) -> Path:
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows if rows is not None else PASSAGES:
            handle.write(json.dumps(row) + "\n")
        for line in extra_lines:
            handle.write(line + "\n")
    return path


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "cloud.jsonl")


@pytest.fixture
def tiny_index(tmp_path: Path, corpus_file: Path, fake_embedder: str) -> Path:
    build_index(corpus_file, tmp_path / "index", embedder=fake_embedder, show_progress=False)
    return tmp_path / "index"
