"""Presets load as Context overrides; the bench aggregates routes into its table."""

from __future__ import annotations

import json

import pytest

import mtrag_graph.measure.bench as bench
from mtrag_graph.context import Context
from mtrag_graph.measure.bench import peak_memory_mb, preset_stats, render, run_bench, start_preset_counters
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.models.llama import ChatLlamaCpp
from mtrag_graph.presets import CANDIDATES, load_preset, preset_names
from mtrag_graph.testing import make_task


def test_every_shipped_preset_builds_a_context():
    for name in preset_names():
        assert load_preset(name)["description"]
        Context.from_preset(name)


def test_candidate_presets_are_listed_by_the_same_function():
    assert "ensemble-local" in preset_names(CANDIDATES)


def test_preset_settings_apply_and_overrides_win():
    context = Context.from_preset("fiveting", top_k=2)
    assert context.use_gate is False and context.rewrite_question is False and context.top_k == 2


def test_unknown_preset_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown preset 'nope'"):
        load_preset("nope")


def record(seconds, calls, processed, unique, model_seconds, abstain=None):
    return {
        "status": "ok",
        "route": {
            "seconds": seconds, "model_calls": calls, "prompt_tokens": 100, "prompt_tokens_processed": processed,
            "prompt_tokens_unique": unique, "completion_tokens": 10, "model_seconds": model_seconds,
            "abstain_reason": abstain,
        },
    }  # fmt: skip


def test_preset_stats_aggregates_time_tokens_and_overhead():
    stats = preset_stats(
        [
            record(10.0, 4, 60, 50, {"generate": 6.0, "rerank": 3.0}),
            record(20.0, 6, 80, 50, {"generate": 18.0, "rerank": 1.0}, abstain="gate_no"),
            {"status": "failed"},
        ]
    )
    assert stats["tasks"] == 2 and stats["failed"] == 1
    assert stats["seconds_mean"] == 15.0
    assert stats["model_seconds_per_node"] == {"generate": 12.0, "rerank": 2.0}
    assert stats["processed_over_unique"] == pytest.approx(70 / 50)
    assert stats["overhead_share"] == pytest.approx(2.0 / 30.0)
    assert stats["abstentions"] == 1


def bench_two_presets(tmp_path):
    """``run_bench`` of ncl and fiveting over one task, every model a scripted fake."""
    tasks = tmp_path / "tasks.jsonl"
    passage = "Bees dance the waggle dance. The dance shows the way to the flowers."
    tasks.write_text(json.dumps(make_task(["How do bees dance?"], [passage])) + "\n")
    fake = ScriptedChatModel(responses=["yes", "Bees dance the waggle dance."])
    overrides = {"rewrite_model": fake, "classify_model": fake, "gate_model": fake, "generate_model": fake,
                 "reranker": "lexical", "embedder": "hashing:64"}  # fmt: skip
    return run_bench(tasks, ["ncl", "fiveting"], tmp_path / "out", limit=1, overrides=overrides)


def test_run_bench_writes_predictions_per_preset_and_a_json_report(tmp_path):
    results = bench_two_presets(tmp_path)
    assert set(results) == {"ncl", "fiveting"}
    assert (tmp_path / "out" / "ncl.jsonl").exists() and (tmp_path / "out" / "bench.json").exists()
    assert "| ncl | 1 |" in render(results)


def test_run_bench_at_a_concurrency_reports_tasks_per_second(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    rows = [
        make_task(["How do bees dance?"], ["Bees dance the waggle dance."], f"b<::>{i}") for i in range(6)
    ]
    tasks.write_text("".join(json.dumps(r) + "\n" for r in rows))
    fake = ScriptedChatModel(
        responder=lambda messages, options: (
            "yes" if options.get("choices") else "Bees dance the waggle dance. The dance shows the way."
        )
    )
    overrides = {"rewrite_model": fake, "classify_model": fake, "gate_model": fake, "generate_model": fake,
                 "reranker": "lexical", "embedder": "hashing:64"}  # fmt: skip
    results = run_bench(tasks, ["ncl"], tmp_path / "out", limit=6, overrides=overrides, concurrency=3)
    stats = results["ncl"]
    assert stats["tasks"] == 6 and stats["concurrency"] == 3 and stats["tasks_per_second"] > 0
    assert len((tmp_path / "out" / "ncl.jsonl").read_text().splitlines()) == 6
    assert f"| 3 | {stats['tasks_per_second']:.2f} |" in render(results)


def test_first_token_stats_cover_the_tasks_whose_answer_streamed():
    records = [record(s, 4, 60, 50, {}) for s in (10.0, 20.0, 30.0)]
    for r, first in zip(records, (2.0, 4.0, None), strict=True):
        if first is not None:
            r["route"]["first_token_seconds"] = first
    stats = preset_stats(records)
    assert stats["first_token_tasks"] == 2
    assert (stats["first_token_p50"], stats["first_token_p95"]) == (2.0, 4.0)


def bench_one_streamed_task(tmp_path, **settings):
    """``run_bench`` over one task whose two-sentence answer streams (scripted models); without answer
    samples unless ``settings`` say (with them nothing is shown before they agree)."""
    tasks = tmp_path / "tasks.jsonl"
    passage = "Bees dance the waggle dance. The dance shows the way to the flowers."
    tasks.write_text(json.dumps(make_task(["How do bees dance?"], [passage])) + "\n")
    fake = ScriptedChatModel(
        responder=lambda messages, options: (
            "yes" if options.get("choices") else "Bees dance the waggle dance. The dance shows the way."
        )
    )
    overrides = {"rewrite_model": fake, "classify_model": fake, "gate_model": fake, "generate_model": fake,
                 "reranker": "lexical", "embedder": "hashing:64", "gate_classifier": None,
                 **settings}  # fmt: skip
    return run_bench(tasks, ["ncl"], tmp_path / "out", limit=1, overrides=overrides)


def test_run_bench_reports_the_first_answer_token_beside_time_per_task(tmp_path):
    results = bench_one_streamed_task(tmp_path)
    stats = results["ncl"]
    assert stats["first_token_tasks"] == 1 and stats["shown_delay_p50"] >= 0
    # the first sentence is shown once the second starts and the checks passed it: before the end
    assert 0 < stats["first_token_p50"] <= stats["first_shown_p50"] <= stats["seconds_p50"]
    assert stats["early_shown_tasks"] == 1 and stats["retracted_tasks"] == 0
    assert "| ncl |" in render(results).split("Time to the first draft token")[1]
    assert "| 1 of 1 | 0 |" in render(results)


def test_with_retrieved_passages_nothing_is_shown_before_the_decline_probability_is_read(tmp_path):
    stats = bench_one_streamed_task(tmp_path, sample_decline_threshold=0.05)["ncl"]
    assert stats["first_shown_p50"] <= stats["seconds_p50"]


def test_peak_memory_is_reset_between_presets():
    assert start_preset_counters(Context())  # Linux: the peak resident set can be reset
    block = bytearray(200 * 1024 * 1024)  # touched: 200 MB resident
    during = peak_memory_mb(since_reset=True)
    del block
    start_preset_counters(Context())
    after = peak_memory_mb(since_reset=True)
    assert during - after > 150


def test_each_preset_counts_unique_tokens_afresh(monkeypatch):
    model = ChatLlamaCpp(model_path="/nonexistent.gguf")  # never loaded: only its prompt history is used
    model._recent = [[1, 2, 3]]
    monkeypatch.setattr(bench, "get_chat_model", lambda spec: model)
    bench.start_preset_counters(Context())
    assert model._recent == []


def test_run_bench_reports_each_presets_own_peak_memory(tmp_path, monkeypatch):
    peaks = iter([900.0, 300.0])
    monkeypatch.setattr(bench, "peak_memory_mb", lambda since_reset: next(peaks))
    results = bench_two_presets(tmp_path)
    assert [results[p]["peak_memory_mb"] for p in ("ncl", "fiveting")] == [900.0, 300.0]
    assert results["fiveting"]["peak_memory_scope"] == "preset"
    assert "peak RSS MB" in render(results) and "| 300 |" in render(results)


def test_a_peak_that_could_not_be_reset_is_labelled_as_the_process_peak():
    stats = {"tasks": 1, "seconds_mean": 1.0, "seconds_p50": 1.0, "seconds_p95": 1.0,
             "model_calls_per_task": 1.0, "prompt_tokens_submitted": 1, "prompt_tokens_processed": 1,
             "prompt_tokens_unique": 1, "processed_over_unique": 1.0, "generated_tokens": 1,
             "overhead_share": 0.1, "abstentions": 0, "peak_memory_mb": 512.0,
             "peak_memory_scope": "process so far"}  # fmt: skip
    assert "| 512 (process so far) |" in render({"ncl": stats})


def test_bench_lists_the_calls_made_before_the_first_shown_text(tmp_path):
    results = bench_one_streamed_task(tmp_path)
    before = results["ncl"]["calls_before_shown"]
    # the reranker's and the draft's calls started before the first sentence was shown (the gate is the
    # model-free classifier: no call)
    assert before["rerank"]["calls"] >= 1 and before["generate"]["calls"] == 1
    assert "answerability_gate" not in before
    assert "| ncl | generate | 1.00 |" in render(results)
    rows = (tmp_path / "out" / "ncl-calls.md").read_text()
    assert "rerank:" in rows and "generate:" in rows


def test_calls_started_after_the_first_shown_text_are_not_counted():
    route = {"first_shown_seconds": 5.0, "calls": [
        {"node": "generate", "start": 1.0, "seconds": 4.5, "prompt_tokens": 500, "prompt_tokens_processed": 400,
         "completion_tokens": 30},
        {"node": "generate", "start": 6.0, "seconds": 2.0, "prompt_tokens": 560, "prompt_tokens_processed": 60,
         "completion_tokens": 20},
    ]}  # fmt: skip
    assert bench.calls_before_shown(route) == route["calls"][:1]
    per_node = bench.calls_by_node([{"status": "ok", "route": route}])
    assert per_node["generate"] == {
        "calls": 1,
        "processed": 400,
        "reused": 100,
        "completion": 30,
        "seconds": 4.5,
    }


def test_a_call_that_starts_in_the_millisecond_its_text_is_shown_counts_before_it():
    # times are rounded to the millisecond; a fast (scripted) draft can be shown in the one it started in
    route = {"first_shown_seconds": 0.004, "calls": [
        {"node": "rerank", "start": 0.001, "seconds": 0.001},
        {"node": "generate", "start": 0.004, "seconds": 0.002},
        {"node": "accept_answer", "start": 0.005, "seconds": 0.001},
    ]}  # fmt: skip
    assert [c["node"] for c in bench.calls_before_shown(route)] == ["rerank", "generate"]
