"""The Milvus backend on the real embedded engine (Milvus Lite): the built-in backend's behaviour."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from fastapi.testclient import TestClient

from mtrag_graph.context import Context
from mtrag_graph.ingest.build import ingest
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.nodes.retrieve import retrieve
from mtrag_graph.retrieval.milvus import MilvusIndex
from mtrag_graph.retrieval.registry import load_index
from mtrag_graph.retrieval.search import as_passages, multi_query_search, search
from mtrag_graph.serve.app import ServeConfig, create_app
from mtrag_graph.testing import fake_context
from tests.ingest.conftest import make_folder
from tests.serve.client import events

EMBEDDER = "hashing:256"
QUERIES = ["mortgage loan", "Cloudant JSON database", "games in London", "passport post office", "zzzqx"]


@pytest.fixture
def both(tmp_path: Path, corpus_file: Path) -> tuple:
    for backend in ("faiss", "milvus"):
        ingest([corpus_file], tmp_path / backend, embedder=EMBEDDER, backend=backend, show_progress=False)
    return load_index(tmp_path / "faiss"), load_index(tmp_path / "milvus")


def _ids(index, hits) -> list[str]:
    return [p["document_id"] for p in as_passages(index, hits)]


def test_the_index_folder_says_it_is_a_milvus_index(both):
    assert isinstance(both[1], MilvusIndex) and len(both[1]) == 5


@pytest.mark.parametrize("mode", ["bm25", "dense", "hybrid"])
def test_each_mode_ranks_as_the_builtin_backend(both, mode: str):
    builtin, milvus = both
    for query in QUERIES:
        expected = _ids(builtin, search(builtin, query, top_k=3, mode=mode))
        got = _ids(milvus, search(milvus, query, top_k=3, mode=mode))
        assert got[:1] == expected[:1], (query, got, expected)
        assert set(got) == set(expected) or mode != "bm25", (query, got, expected)


def test_weighted_fusion_and_dual_query_merge(both):
    builtin, milvus = both
    queries = ["mortgage loan", "passport post office"]
    options = {"top_k": 4, "mode": "hybrid", "bm25_weight": 1.0, "dense_weight": 0.3}
    assert (
        _ids(milvus, multi_query_search(milvus, queries, **options))[:2]
        == _ids(builtin, multi_query_search(builtin, queries, **options))[:2]
    )


def test_passages_come_back_with_titles_texts_and_scores(both):
    milvus = both[1]
    top = as_passages(milvus, search(milvus, "Cloudant JSON database", top_k=1))[0]
    assert (top["document_id"], top["title"], top["score"] > 0) == ("p-cloudant", "Cloudant", True)
    assert "JSON document database" in top["text"]


def test_a_passage_s_text_and_origin_come_back_alike_through_either_backend(both):
    builtin, milvus = both
    for query in QUERIES[:4]:
        expected = as_passages(builtin, search(builtin, query, top_k=2, mode="bm25"))
        got = as_passages(milvus, search(milvus, query, top_k=2, mode="bm25"))
        assert [without_score(p) for p in got] == [without_score(p) for p in expected]
    cloudant = as_passages(milvus, search(milvus, "Cloudant JSON database", top_k=1))[0]
    assert cloudant["file"] == "cloud.jsonl"  # the file it was indexed from (an index row's source)


def without_score(passage: dict) -> dict:
    return {k: v for k, v in passage.items() if k != "score"}


def test_a_milvus_backed_served_chat_shows_the_cited_passage_s_text(both, tmp_path: Path):
    answer = "Cloudant is a JSON document database on IBM Cloud."
    context = fake_context(
        index_dir=str(tmp_path / "milvus"),
        grounding="facts",
        generate_model=ScriptedChatModel(responses=[answer]),
    )
    config = ServeConfig(
        checkpointer=str(tmp_path / "chat.sqlite"),
        passages=None,
    )
    with TestClient(create_app(config, context), raise_server_exceptions=False) as client:
        thread_id = client.post("/api/threads", json={}).json()["thread_id"]
        done = events(client, thread_id, "Which database stores JSON documents on IBM Cloud?", after=0)[-1]
    assert done[0] == "done" and done[1]["answer"] == answer and done[1]["parts"][0]["cites"] == [1]
    source = done[1]["sources"][0]
    assert (source["document_id"], source["title"], source["text"]) == ("p-cloudant", "Cloudant", answer)
    assert source["file"] == "cloud.jsonl"  # the file it was indexed from, carried in the reply


def test_the_retrieve_node_uses_a_milvus_index(both, tmp_path: Path):
    runtime = SimpleNamespace(context=Context(index_dir=str(tmp_path / "milvus"), retrieval_top_k=3))
    update = retrieve({"task": {"task_id": "t::1"}, "question": "Cloudant JSON database"}, runtime)
    assert update["passages"][0]["document_id"] == "p-cloudant"


def test_documents_update_in_place_changed_and_deleted_files(tmp_path: Path):
    folder = make_folder(tmp_path / "docs")
    out = tmp_path / "milvus"
    ingest([folder], out, embedder=EMBEDDER, backend="milvus", show_progress=False)
    (folder / "hours.html").unlink()
    (folder / "install.md").write_text("# Install\n\nUse the zzinstaller tool.\n", encoding="utf-8")
    report = ingest([folder], out, embedder=EMBEDDER, backend="milvus", show_progress=False)
    assert report.changed_files == ["install.md"] and report.files_removed == 1
    index = load_index(out)
    found = as_passages(index, search(index, "Lindholm office hours", top_k=10, mode="bm25"))
    assert not [p for p in found if p["file"] == "hours.html"]
    top = as_passages(index, search(index, "zzinstaller", top_k=1, mode="bm25"))[0]
    assert (top["file"], top["section"]) == ("install.md", "Install")
    ferry = as_passages(index, search(index, "ferry Quillon Island", top_k=1, mode="bm25"))[0]
    assert (ferry["file"], ferry["page"]) == ("guide.pdf", 2)
    count = index.client.query(index.collection, filter="", output_fields=["count(*)"])[0]["count(*)"]
    assert count == report.passages_total


def test_a_query_of_stopwords_only_still_gets_dense_hits(both):
    milvus = both[1]
    assert search(milvus, "the of and", mode="bm25") == []
    assert len(search(milvus, "the of and", top_k=3, mode="hybrid")) == 3
