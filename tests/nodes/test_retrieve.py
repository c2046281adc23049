"""The retrieve node: the passages of the collection's index, searched with the question and its rewrite."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

from mtrag_graph.context import Context
from mtrag_graph.nodes.retrieve import retrieve, with_previous_turn
from mtrag_graph.retrieval.backend import IndexNotFound

TASK = {"task_id": "t::1", "Collection": "mt-rag-ibmcloud-elser-512-100-20240502"}


def _runtime(index_dir: Path | None) -> SimpleNamespace:
    return SimpleNamespace(
        context=Context(index_dir=str(index_dir) if index_dir else None, retrieval_top_k=3)
    )


def test_node_returns_passages_with_ids_titles_texts_and_scores(tiny_index: Path):
    update = retrieve({"task": TASK, "question": "Cloudant JSON database"}, _runtime(tiny_index))
    first = update["passages"][0]
    assert first["document_id"] == "p-cloudant" and first["title"] == "Cloudant" and first["score"] > 0
    assert len(update["passages"]) == 3


def test_node_searches_with_the_rewrite_too(tiny_index: Path):
    state = {"task": TASK, "question": "and the mortgage one?", "standalone_question": "passport post office"}
    ids = [p["document_id"] for p in retrieve(state, _runtime(tiny_index))["passages"]]
    assert "p-mortgage" in ids and "p-passport" in ids


def test_node_picks_the_collection_index_from_a_folder_of_indexes(tmp_path: Path, tiny_index: Path):
    (tmp_path / "indexes").mkdir()
    tiny_index.rename(tmp_path / "indexes" / "cloud")
    update = retrieve({"task": TASK, "question": "Cloudant"}, _runtime(tmp_path / "indexes"))
    assert update["passages"][0]["document_id"] == "p-cloudant"


def test_node_without_an_index_dir_records_how_to_set_one():
    update = retrieve({"task": TASK, "question": "q"}, _runtime(None))
    assert update["abstain_reason"] == "error"
    assert (
        IndexNotFound.__name__ in update["error"]["message"]
        and "MTRAG_INDEX_DIR" in update["error"]["message"]
    )


def test_a_follow_up_is_also_searched_with_the_user_turn_before_it(tiny_index: Path):
    history = [{"speaker": "user", "text": "Where do I apply for a passport?"},
               {"speaker": "agent", "text": "At the office."}]  # fmt: skip
    state = {"task": TASK, "question": "what fee is charged?", "history": history}
    context = Context(index_dir=str(tiny_index), retrieval_top_k=2, retrieve_with_previous_turn=True)
    ids = [p["document_id"] for p in retrieve(state, SimpleNamespace(context=context))["passages"]]
    assert "p-passport" in ids
    off = dataclasses.replace(context, retrieve_with_previous_turn=False)
    assert "p-passport" not in [
        p["document_id"] for p in retrieve(state, SimpleNamespace(context=off))["passages"]
    ]


def test_the_previous_turn_query_is_the_user_turn_before_and_this_one():
    history = [
        {"speaker": "user", "text": "Which algorithm does fit use?"},
        {"speaker": "agent", "text": "LM."},
    ]
    assert (
        with_previous_turn("And its start value?", history)
        == "Which algorithm does fit use? And its start value?"
    )
    assert with_previous_turn("First question?", []) is None
