"""A cited passage's text and origin, from a passages file or an index folder."""

from __future__ import annotations

import json

from mtrag_graph.serve.sources import SourceCatalog, read_source_rows


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
    (tmp_path / "cloud").mkdir()
    rows = [
        {"_id": "guide.pdf#page=2&chunk=5", "title": "Guide", "text": "x", "source": "guide.pdf", "page": 2},
        {"_id": "c1", "title": "T", "text": "y"},
    ]
    (tmp_path / "cloud" / "passages.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    catalog = SourceCatalog(index_dir=tmp_path)
    document = catalog.get("guide.pdf#page=2&chunk=5")
    assert document is not None and (document["source"], document["page"]) == ("guide.pdf", 2)
    assert "file" not in document
    passage = catalog.get("c1")
    assert passage is not None and passage["file"] == "cloud" and passage["text"] == "y"
    assert catalog.get("missing") is None
