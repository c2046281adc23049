"""Fixtures of the retrieval tests: the benchmark data folder, a fast fake embedder, tiny corpora."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from mtrag_graph.models import embeddings
from tests.conftest import data_dir

REPO = Path(__file__).resolve().parents[2]
FAKE_EMBEDDER = "test-hashing"


@pytest.fixture(scope="session")
def mtrag_data() -> Path:
    path = data_dir()
    if not (path / "corpora").is_dir():
        pytest.fail(f"benchmark data not found at {path}: set MTRAG_DATA to the shared/data/mtrag folder")
    return path


def _hashing_encode(texts: list[str], dim: int = 256) -> np.ndarray:
    """Bag of words hashed into ``dim`` buckets: texts sharing words are similar."""
    matrix = np.zeros((len(texts), dim), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            matrix[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % dim] += 1.0
    matrix[:, 0] += 1e-3  # no all-zero rows
    return matrix


@pytest.fixture
def fake_embedder(monkeypatch: pytest.MonkeyPatch) -> str:
    """Registers a fast deterministic embedder under the spec ``test-hashing`` and returns the spec."""
    monkeypatch.setitem(
        embeddings._EMBEDDERS, FAKE_EMBEDDER, embeddings.Embedder(FAKE_EMBEDDER, _hashing_encode)
    )
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
    from mtrag_graph.retrieval.index import build_index

    build_index(corpus_file, tmp_path / "index", embedder=fake_embedder, show_progress=False)
    return tmp_path / "index"
