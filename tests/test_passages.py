"""One passage shape from the reader to the citation: every stored format read into it, its origin kept."""

from __future__ import annotations

import json

from mtrag_graph.ingest.build import ingest
from mtrag_graph.passages import as_context, passage, read_passages, source_label
from mtrag_graph.retrieval.index import build_index
from mtrag_graph.retrieval.registry import load_index
from mtrag_graph.retrieval.search import as_passages, search
from mtrag_graph.tasks import parse_task
from tests.ingest.conftest import make_pdf


def test_a_passages_file_keeps_each_passage_s_origin_as_its_line_gives_it(tmp_path):
    path = tmp_path / "p.jsonl"
    rows = [
        {"_id": "a", "title": "A", "text": "x", "url": "https://a.example", "page": 3},
        {"document_id": "b", "text": "y"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    found = {p["document_id"]: p for p in read_passages(path)}
    assert found["a"] == {
        "document_id": "a",
        "title": "A",
        "text": "x",
        "url": "https://a.example",
        "page": 3,
    }
    assert found["b"] == {"document_id": "b", "title": "", "text": "y"}
    assert source_label(found["b"]) == "(untitled) (b)"


def test_an_index_row_s_source_is_read_as_its_url_or_its_file():
    assert passage({"_id": "w", "text": "t", "source": "https://w.example/a"})["url"] == "https://w.example/a"
    document = passage(
        {"_id": "g#page=2&chunk=1", "text": "t", "source": "g.pdf", "page": 2, "file": "g.pdf"}
    )
    assert (document["file"], document["page"], "source" in document) == ("g.pdf", 2, False)


def test_a_task_s_contexts_become_passages_and_go_back_to_the_benchmark_s_shape():
    raw = {"task_id": "t", "input": [{"speaker": "user", "text": "Q?"}],
           "contexts": [{"document_id": "d1", "title": "T", "text": "x", "url": "https://u"}, {"text": "y"}]}  # fmt: skip
    given = parse_task(raw).passages
    assert given == [{"document_id": "d1", "title": "T", "text": "x", "url": "https://u"},
                     {"document_id": "passage-1", "title": "", "text": "y"}]  # fmt: skip
    assert as_context({**given[0], "score": 0.5}) == {
        "document_id": "d1",
        "title": "T",
        "text": "x",
        "score": 0.5,
    }


def test_retrieved_passages_carry_their_file_and_page_or_nothing_for_a_corpus(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    make_pdf(docs / "guide.pdf")
    ingest([docs], tmp_path / "guides", embedder="hashing:64", show_progress=False)
    guides = load_index(tmp_path / "guides")
    found = as_passages(guides, search(guides, "ferry to Quillon Island", top_k=1, mode="bm25"))[0]
    assert (found["file"], found["page"], "source" in found) == ("guide.pdf", 2, False)
    assert source_label(found) == "guide.pdf, p. 2"
    corpus = tmp_path / "cloud.jsonl"
    corpus.write_text(json.dumps({"_id": "c1", "title": "T", "text": "Cloudant stores JSON."}) + "\n")
    build_index(corpus, tmp_path / "cloud", embedder="hashing:64", show_progress=False)
    cloud = load_index(tmp_path / "cloud")
    (hit,) = as_passages(cloud, search(cloud, "Cloudant JSON", top_k=1, mode="bm25"))
    assert {k: v for k, v in hit.items() if k != "score"} == {"document_id": "c1", "title": "T",
                                                              "text": "Cloudant stores JSON."}  # fmt: skip
