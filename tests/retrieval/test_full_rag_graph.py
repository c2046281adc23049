"""Full-RAG mode through the graph: a task without contexts retrieves from its collection's index."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.judging import clarify_options
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
    state = build_graph(output="state").invoke({"task": TASK}, context=context)
    assert state["kept_passages"][0]["document_id"] == "p-cloudant"
    assert state["answer"] == "Cloudant is a JSON document database."
    prompt = str(context.generate_model.calls[0]["messages"][-1].content)
    assert "Cloudant is a JSON document database on IBM Cloud." in prompt


def test_missing_index_ends_in_a_recorded_error():
    state = build_graph(output="state").invoke({"task": TASK}, context=fake_context(index_dir=None))
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
    state = build_graph(output="state").invoke({"task": TASK}, context=context)
    assert state["kept_passages"][0]["document_id"] == "p-cloudant"
    assert state["abstain_reason"] is None, state
    assert "json" in state["answer"].lower() or "document" in state["answer"].lower()


@pytest.fixture
def every_option_is_sensible(monkeypatch):
    """The fake context's hashed words are no semantic space: the clarify option check keeps every option
    here (it is tested with a scripted embedder in tests/nodes/test_clarify_options.py)."""
    monkeypatch.setattr(clarify_options, "OPTION_MIN_SIMILARITY", -1.0)


@pytest.mark.usefixtures("every_option_is_sensible")
def test_clarify_in_full_rag_sees_the_retrieved_passages(tiny_index: Path):
    # "this team": nothing names one (a first turn's pointer: the orphan signal); the question names the
    # things the kept passages speak of
    task = {**TASK, "input": [{"speaker": "user", "text": "Where does this team play its NFL games?"}]}
    context = fake_context(index_dir=str(tiny_index), clarify=True, top_k=3)
    state = build_graph(output="state").invoke({"task": task}, context=context)
    assert state["clarification"]["asked"] is True
    assert state["clarification"]["evidence"].startswith("orphan: 'this team'")
    assert "Arizona Cardinals" in state["answer"]  # the question names what was retrieved
    assert context.gate_model.calls == [] and context.generate_model.calls == []


def test_clarify_in_full_rag_ignores_the_tasks_own_passages(tiny_index: Path):
    # with --retrieve the task's reference passages are never shown: they must not decide either
    given = [{"document_id": f"d{i}", "title": t, "text": t} for i, t in enumerate(["Team A", "Team B"])]
    task = {
        **TASK,
        "contexts": given,
        "input": [{"speaker": "user", "text": "What kind of database is this one?"}],
    }
    context = fake_context(
        index_dir=str(tiny_index), clarify=True, top_k=1, generate=["Cloudant is a JSON document database."]
    )
    state = build_graph(output="state").invoke({"task": task, "retrieve": True}, context=context)
    assert state["clarification"] == {"asked": False}
    assert state["kept_passages"][0]["document_id"] == "p-cloudant"
    assert state["answer"] == "Cloudant is a JSON document database."


@pytest.mark.usefixtures("every_option_is_sensible")
def test_in_chat_the_reply_to_a_full_rag_clarification_retrieves_again(tiny_index: Path):
    graph = build_graph(checkpointer=InMemorySaver(), output="state")
    task = {**TASK, "input": [{"speaker": "user", "text": "Where does this team play its NFL games?"}]}
    context = fake_context(index_dir=str(tiny_index), clarify=True, clarify_interrupt=True, top_k=3,
                           rewrite=["Where does this team play its NFL games?", "Where do the Cardinals play?"],
                           generate=["The Cardinals play home games in Glendale."])  # fmt: skip
    config = {"configurable": {"thread_id": "rag-clarify"}}
    paused = graph.invoke({"task": task}, config, context=context)
    assert "Arizona Cardinals" in paused["__interrupt__"][0].value["clarifying_question"]
    state = graph.invoke(Command(resume="the Cardinals"), config, context=context)
    assert state["question"].endswith("(the Cardinals)")
    assert state["answer"] == "The Cardinals play home games in Glendale."
    assert len(context.generate_model.calls) == 1  # asked once, answered once, not clarified again


def test_retrieved_passages_alone_are_kept_by_the_fusion_and_scored_in_windows_when_asked(
    tiny_index: Path, monkeypatch
):
    import mtrag_graph.nodes.rerank as rerank_node  # noqa: PLC0415 - the module whose call is watched

    weights, windows, real = [], [], rerank_node.rerank_passages

    def watched(*args, **kwargs):
        weights.append(kwargs["retrieval_weight"])
        windows.append(kwargs["window_words"])
        return real(*args, **kwargs)

    monkeypatch.setattr(rerank_node, "rerank_passages", watched)
    context = fake_context(
        index_dir=str(tiny_index), generate=["Cloudant is a JSON document database."], rerank_window_words=160
    )
    build_graph(output="state").invoke({"task": TASK}, context=context)
    given = {**TASK, "contexts": [{"document_id": "a", "text": "Cloudant is a database."}]}
    build_graph(output="state").invoke(
        {"task": given}, context=fake_context(generate=["It is."], rerank_window_words=160)
    )
    assert weights == [context.rerank_retrieval_weight, 0.0] and context.rerank_retrieval_weight > 0
    assert windows == [160, 0]
