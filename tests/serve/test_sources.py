"""A cited passage's text and origin, from a passages file or an index folder."""

from __future__ import annotations

import json
from pathlib import Path

from mtrag_graph.ingest.build import ingest
from mtrag_graph.retrieval.index import build_index
from mtrag_graph.serve.sources import SourceCatalog, read_source_rows
from tests.ingest.conftest import make_pdf


def test_a_passages_file_keeps_each_passages_url_page_and_file(tmp_path):
    path = tmp_path / "p.jsonl"
    rows = [
        {"_id": "a", "title": "A", "text": "x", "url": "https://a.example", "page": 3},
        {"document_id": "b", "text": "y"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    found = {r["document_id"]: r for r in read_source_rows(path)}
    assert found["a"] == {
        "document_id": "a",
        "title": "A",
        "text": "x",
        "url": "https://a.example",
        "page": 3,
    }
    assert found["b"]["file"] == "p.jsonl" and found["b"]["title"] == ""


def test_an_index_folder_gives_a_document_passages_source_and_page(tmp_path):
    """Through each index's backend: a documents index (source, page) and a corpus index (its folder)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    make_pdf(docs / "guide.pdf")
    ingest([docs], tmp_path / "indexes" / "guides", embedder="hashing:64", show_progress=False)
    corpus = tmp_path / "cloud.jsonl"
    corpus.write_text(
        json.dumps({"_id": "c1", "title": "T", "text": "Cloudant stores JSON."}) + "\n", encoding="utf-8"
    )
    build_index(corpus, tmp_path / "indexes" / "cloud", embedder="hashing:64", show_progress=False)
    catalog = SourceCatalog(index_dir=tmp_path / "indexes")
    page_two = next(p["_id"] for p in _passages(tmp_path / "indexes" / "guides") if p.get("page") == 2)
    document = catalog.get(page_two)
    assert document is not None and (document["source"], document["page"]) == ("guide.pdf", 2)
    assert "ferry to Quillon Island" in document["text"] and "file" not in document
    passage = catalog.get("c1")
    assert passage is not None and passage["file"] == "cloud" and passage["text"] == "Cloudant stores JSON."
    assert catalog.get("missing") is None


def _passages(index: Path) -> list[dict]:
    with open(index / "passages.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]
