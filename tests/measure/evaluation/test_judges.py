"""The judges over a scripted fake model, and the on-disk verdict cache."""

from __future__ import annotations

import multiprocessing

import pytest

from mtrag_graph.measure.evaluation.judges import Judge, JudgeSettings, VerdictCache
from mtrag_graph.models.fake import ScriptedChatModel


def _judge(responses, cache=None) -> tuple[Judge, ScriptedChatModel]:
    model = ScriptedChatModel(responses=responses)
    return Judge(model, cache=cache), model


def test_idk_declines_answers_partial_map_to_1_0_half():
    for reply, value in (("declines", 1.0), ("answers", 0.0), ("partial", 0.5)):
        judge, _ = _judge([reply])
        assert judge.idk("q?", "r")["value"] == value


def test_idk_is_asked_with_constrained_choices():
    judge, model = _judge(["answers"])
    judge.idk("q?", "r")
    assert model.calls[0]["options"]["choices"] == ["declines", "answers", "partial"]


def test_clarify_yes_is_1():
    judge, _ = _judge(["yes"])
    assert judge.clarify("which one?", "Do you mean A or B?")["value"] == 1.0


def test_a_response_without_a_question_mark_is_not_a_clarification_and_costs_no_call():
    judge, model = _judge(["yes"])
    assert judge.clarify("which one?", "The Lite plan is free.")["value"] == 0.0
    assert model.calls == []


def test_unparseable_verdict_after_retries_is_none():
    judge, _ = _judge(["maybe", "perhaps", "dunno"])
    assert judge.idk("q?", "r")["value"] is None


def test_rb_llm_scores_the_rating_over_ten():
    judge, _ = _judge(["Rating: [[9]]"])
    assert judge.rb_llm(["doc"], [("user", "hi")], "q?", "ref", "resp")["score"] == pytest.approx(0.9)


def test_rb_llm_gibberish_scores_one_half():
    judge, _ = _judge(["The answer is great"])
    result = judge.rb_llm(["doc"], [], "q?", "ref", "resp")
    assert (result["score"], result["parsed"]) == (0.5, False)


def test_rl_f_is_supported_statements_over_statements():
    judge, _ = _judge(["1. A.\n2. B.\n3. C.\n4. D.", "yes", "no", "yes", "yes"])
    result = judge.rl_f(["passage"], "q?", "A. B. C. D.")
    assert result["score"] == pytest.approx(0.75)


def test_rl_f_without_passages_is_zero_and_asks_no_verdicts():
    judge, model = _judge(["1. A.\n2. B."])
    assert judge.rl_f([], "q?", "A. B.")["score"] == 0.0
    assert len(model.calls) == 1


def test_rl_f_falls_back_to_sentences_when_the_judge_lists_none():
    judge, _ = _judge(["", "yes", "no"])
    result = judge.rl_f(["passage"], "q?", "First claim. Second claim.")
    assert result["statements"] == ["First claim.", "Second claim."]


def test_rl_f_verdict_prompts_share_the_documents_prefix_with_rb_llm():
    judge, model = _judge(["Rating: [[5]]", "1. A.", "yes"])
    judge.rb_llm(["the passage"], [], "q?", "ref", "A.")
    judge.rl_f(["the passage"], "q?", "A.")
    rating_prompt, verdict_prompt = (
        model.calls[0]["messages"][1].content,
        model.calls[2]["messages"][1].content,
    )
    prefix = "Documents:\n[1] the passage\n\n"
    assert rating_prompt.startswith(prefix) and verdict_prompt.startswith(prefix)


def test_cached_verdict_needs_no_model_call(tmp_path):
    cache = VerdictCache(tmp_path / "v.sqlite")
    judge, _ = _judge(["declines"], cache)
    judge.idk("q?", "r")
    again, model = _judge(["answers"], VerdictCache(tmp_path / "v.sqlite"))
    result = again.idk("q?", "r")
    assert (result["value"], result["cached"], len(model.calls)) == (1.0, True, 0)


def test_cache_key_depends_on_judge_and_inputs():
    keys = {
        VerdictCache.key("judge-a", "idk", {"question": "q", "response": "r"}),
        VerdictCache.key("judge-b", "idk", {"question": "q", "response": "r"}),
        VerdictCache.key("judge-a", "idk", {"question": "q", "response": "r2"}),
    }
    assert len(keys) == 3


def _write_many(path: str, worker: int) -> None:
    cache = VerdictCache(path)
    for i in range(50):
        cache.put(f"{worker}-{i}", {"value": i})


def test_two_processes_writing_at_once_keep_every_verdict(tmp_path):
    path = str(tmp_path / "v.sqlite")
    VerdictCache(path)
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_many, args=(path, w)) for w in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    cache = VerdictCache(path)
    assert all(cache.get(f"{w}-{i}") == {"value": i} for w in range(2) for i in range(50))


def test_sentence_statements_need_no_model_call_to_split():
    model = ScriptedChatModel(responses=["yes", "no"])
    judge = Judge(model, settings=JudgeSettings(statements_from="sentences"))
    assert judge.rl_f(["passage"], "q?", "One. Two.")["score"] == 0.5
    assert len(model.calls) == 2
