from __future__ import annotations

import json
from pathlib import Path

import pytest

from mtrag_graph.models.embeddings import get_embedder
from mtrag_graph.retrieval.backend import IndexNotFound
from mtrag_graph.retrieval.corpus import file_checksum
from mtrag_graph.retrieval.index import build_index, build_indexes
from mtrag_graph.retrieval.registry import index_path_for, load_index
from tests.retrieval.conftest import PASSAGES, write_corpus


def test_round_trip_keeps_passages_in_order(tiny_index: Path):
    index = load_index(tiny_index)
    assert index.ids == [p["_id"] for p in PASSAGES]
    assert index.titles[0] == "Arizona Cardinals"
    assert index.texts[3] == "A mortgage is a loan secured by a house."
    assert index.dense.ntotal == len(PASSAGES)


def test_manifest_records_embedder_dimension_count_and_checksum(tiny_index: Path, corpus_file: Path):
    manifest = json.loads((tiny_index / "manifest.json").read_text())
    assert manifest["embedder"] == "hashing:256"
    assert manifest["dim"] == 256
    assert manifest["passages"] == len(PASSAGES)
    assert manifest["corpus_sha256"] == file_checksum(corpus_file)
    assert manifest["faiss"]["kind"] == "flat"


def test_corrupt_lines_are_reported_and_skipped(tmp_path: Path, fake_embedder: str):
    corpus = write_corpus(
        tmp_path / "c.jsonl", extra_lines=['{"_id": "x", "text": ', '{"_id": "p-cloudant", "text": "dup"}']
    )
    report = build_index(corpus, tmp_path / "index", embedder=fake_embedder, show_progress=False)
    assert report.passages == len(PASSAGES)
    assert [e.split(":")[0] for e in report.errors] == ["line 6", "line 7"]
    assert "repeated" in report.errors[1]


def test_unchanged_corpus_is_not_reindexed(tmp_path: Path, corpus_file: Path, fake_embedder: str):
    build_index(corpus_file, tmp_path / "index", embedder=fake_embedder, show_progress=False)
    again = build_index(corpus_file, tmp_path / "index", embedder=fake_embedder, show_progress=False)
    assert not again.built


def test_changed_corpus_is_reindexed(tmp_path: Path, corpus_file: Path, fake_embedder: str):
    build_index(corpus_file, tmp_path / "index", embedder=fake_embedder, show_progress=False)
    write_corpus(corpus_file, PASSAGES[:2])
    again = build_index(corpus_file, tmp_path / "index", embedder=fake_embedder, show_progress=False)
    assert again.built and load_index(tmp_path / "index").ids == ["p-cardinals", "p-london"]


def test_failed_rebuild_keeps_the_previous_index_and_no_temporary_folder(
    tmp_path: Path, corpus_file: Path, fake_embedder: str, monkeypatch: pytest.MonkeyPatch
):
    import bm25s  # noqa: PLC0415 - heavy (bm25s): patched in this test alone

    build_index(corpus_file, tmp_path / "index", embedder=fake_embedder, show_progress=False)
    before = (tmp_path / "index" / "manifest.json").read_text()

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(bm25s.BM25, "save", crash)
    with pytest.raises(OSError, match="disk full"):
        build_index(corpus_file, tmp_path / "index", embedder=fake_embedder, show_progress=False, force=True)
    assert (tmp_path / "index" / "manifest.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cloud.jsonl", "index"]


def test_failed_first_build_leaves_no_index(
    tmp_path: Path, corpus_file: Path, fake_embedder: str, monkeypatch: pytest.MonkeyPatch
):
    import faiss  # noqa: PLC0415 - heavy (faiss): patched in this test alone

    monkeypatch.setattr(faiss, "write_index", lambda *a: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError):
        build_index(corpus_file, tmp_path / "index", embedder=fake_embedder, show_progress=False)
    with pytest.raises(IndexNotFound):
        load_index(tmp_path / "index")


def test_several_corpora_get_a_sub_index_per_file_stem(tmp_path: Path, fake_embedder: str):
    corpora = [
        write_corpus(tmp_path / f"{d}.jsonl", PASSAGES[i : i + 2]) for i, d in enumerate(["cloud", "fiqa"])
    ]
    build_indexes(corpora, tmp_path / "indexes", embedder=fake_embedder, show_progress=False)
    assert (tmp_path / "indexes" / "cloud" / "manifest.json").exists()
    assert (tmp_path / "indexes" / "fiqa" / "manifest.json").exists()


def test_a_collection_name_picks_its_domain_index(tmp_path: Path, fake_embedder: str):
    corpora = [write_corpus(tmp_path / f"{d}.jsonl") for d in ["cloud", "fiqa"]]
    build_indexes(corpora, tmp_path / "indexes", embedder=fake_embedder, show_progress=False)
    path = index_path_for(tmp_path / "indexes", "mt-rag-ibmcloud-elser-512-100-20240502")
    assert path == tmp_path / "indexes" / "cloud"


def test_a_missing_domain_index_is_named_in_the_error(tmp_path: Path, tiny_index: Path):
    (tmp_path / "indexes").mkdir()
    with pytest.raises(IndexNotFound, match="govt"):
        index_path_for(tmp_path / "indexes", "mt-rag-govt-elser-512-100-20240611")


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_approximate_dense_indexes_round_trip(
    tmp_path: Path, corpus_file: Path, fake_embedder: str, kind: str
):
    build_index(corpus_file, tmp_path / kind, embedder=fake_embedder, faiss_kind=kind, show_progress=False)
    index = load_index(tmp_path / kind)
    assert index.manifest["faiss"]["kind"] == kind
    assert index.dense.ntotal == len(PASSAGES)


def test_sparse_weights_are_stored_and_searched_when_the_embedder_has_them(tmp_path: Path, corpus_file: Path):
    spec = "hashing:256+sparse"
    build_index(corpus_file, tmp_path / "index", embedder=spec, show_progress=False)
    index = load_index(tmp_path / "index")
    hits = index.sparse_ranking(get_embedder(spec).embed_sparse(["mortgage loan"])[0], depth=3)
    assert index.manifest["sparse"] and index.ids[hits[0][0]] == "p-mortgage"
