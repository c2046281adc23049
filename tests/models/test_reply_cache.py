"""The disk cache of model replies (MTRAG_LLM_CACHE): keys, persistence, bookkeeping, the factory switch."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from mtrag_graph.models import factory
from mtrag_graph.models.calls import CallLog, invoke_text
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.models.reply_cache import ReplyCache


def _ask(text):
    return [HumanMessage(content=text)]


def test_an_identical_call_is_answered_from_the_cache_and_marked(tmp_path):
    model = ScriptedChatModel(responses=["first", "second", "third"], cache=ReplyCache(tmp_path / "r.sqlite"))
    assert model.invoke(_ask("q1")).content == "first"
    again = model.invoke(_ask("q1"))
    assert again.content == "first" and again.response_metadata["cached"] is True
    assert model.invoke(_ask("q2")).content == "second"  # another prompt: the model is called
    assert model.invoke(_ask("q1"), max_tokens=3).content == "third"  # other options: another key


def test_the_cache_file_outlives_the_process_that_wrote_it(tmp_path):
    path = tmp_path / "r.sqlite"
    ScriptedChatModel(responses=["kept"], cache=ReplyCache(path)).invoke(_ask("q"))
    fresh = ScriptedChatModel(responses=["not called"], cache=ReplyCache(path))
    assert fresh.invoke(_ask("q")).content == "kept"
    assert len(ReplyCache(path)) == 1


def test_bookkeeping_counts_no_model_work_for_a_cached_reply(tmp_path):
    model = ScriptedChatModel(responses=["one", "two"], cache=ReplyCache(tmp_path / "r.sqlite"))
    log = CallLog("generate")
    invoke_text(model, _ask("q"), log)
    invoke_text(model, _ask("q"), log)
    fresh, cached = log.records
    assert not fresh.get("cached") and cached["cached"] is True
    assert cached["prompt_tokens_processed"] == 0 and cached["completion_tokens"] == 0


def test_the_factory_attaches_the_cache_named_by_the_environment(tmp_path, monkeypatch):
    spec = "scripted:from the factory"
    monkeypatch.setenv("MTRAG_LLM_CACHE", str(tmp_path / "factory.sqlite"))
    monkeypatch.delitem(factory._MODELS, spec, raising=False)
    try:
        model = factory.get_chat_model(spec)
        assert isinstance(model.cache, ReplyCache) and model.cache.path == tmp_path / "factory.sqlite"
        model.invoke(_ask("q"))
        assert len(model.cache) == 1
    finally:
        factory._MODELS.pop(spec, None)
