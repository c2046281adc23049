"""Full-RAG mode through the graph: a task without contexts retrieves from its collection's index."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.retrieval.index import build_index
from mtrag_graph.testing import fake_context
from tests.retrieval.conftest import write_corpus

TASK = {
    "task_id": "rag<::>1",
    "Collection": "mt-rag-ibmcloud-elser-512-100-20240502",
    "input": [{"speaker": "user", "text": "What kind of database is Cloudant?"}],
}


def test_task_without_contexts_is_answered_from_retrieved_passages(tiny_index: Path):
    context = fake_context(index_dir=str(tiny_index), generate=["Cloudant is a JSON document database."])
    state = build_graph().invoke({"task": TASK}, context=context)
    assert state["kept_passages"][0]["document_id"] == "p-cloudant"
    assert state["answer"] == "Cloudant is a JSON document database."
    prompt = str(context.generate_model.calls[0]["messages"][-1].content)
    assert "Cloudant is a JSON document database on IBM Cloud." in prompt


def test_missing_index_ends_in_a_recorded_error():
    state = build_graph().invoke({"task": TASK}, context=fake_context(index_dir=None))
    assert state["abstain_reason"] == "error" and state["error"]["node"] == "retrieve"


@pytest.mark.slow
def test_real_embedder_index_and_real_model_answer_end_to_end(tmp_path: Path):
    corpus = write_corpus(tmp_path / "cloud.jsonl")
    build_index(corpus, tmp_path / "index" / "cloud", embedder="minilm", show_progress=False)
    small = "qwen2.5-coder-0.5b"
    context = Context(
        index_dir=str(tmp_path / "index"), rewrite_model=small, classify_model=small, gate_model=small,
        generate_model=small, top_k=2,
    )  # fmt: skip
    state = build_graph().invoke({"task": TASK}, context=context)
    assert state["kept_passages"][0]["document_id"] == "p-cloudant"
    assert state["abstain_reason"] is None, state
    assert "json" in state["answer"].lower() or "document" in state["answer"].lower()
