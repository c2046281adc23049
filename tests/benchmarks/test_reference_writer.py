"""benchmarks/reference_writer: the outcome of a reference answer sent through the pipeline."""

from __future__ import annotations

import json

import pytest

from benchmarks import reference_writer as rw
from mtrag_graph.graph import build_graph
from mtrag_graph.testing import fake_context, make_task

REFERENCE = "Yes, I have. Depending on your household income, you may qualify for discounted water services."


@pytest.mark.parametrize(
    ("reply", "kind", "outcome"),
    [
        (REFERENCE, "answer", "whole"),
        (f"{REFERENCE}  ", "answer", "whole"),
        (f"{REFERENCE} The document says: \u201cDiscounts depend on income.\u201d", "answer", "whole+quote"),
        (
            "Depending on your household income, you may qualify for discounted water services.",
            "answer",
            "cut",
        ),
        (
            "No. The document says: \u201cDepending on your household income ...\u201d",
            "answer",
            "turned_over",
        ),
        ("Water is a utility.", "answer", "rewritten"),
        ("I don't know the answer based on the provided documents.", "abstention", "declined"),
        ("Which one do you mean: HKD or VIX?", "clarifying_question", "asked_back"),
    ],
)
def test_each_reply_gets_one_outcome(reply, kind, outcome):
    assert rw.outcome_of(REFERENCE, reply, kind) == outcome


def test_only_answerable_tasks_with_passages_and_a_reference_are_run_and_the_sample_is_stable():
    def task(i, label="ANSWERABLE", contexts=True):
        return {"task_id": f"c{i}<::>1", "answerability": [label], "targets": [{"text": "An answer."}],
                "contexts": [{"document_id": "d", "text": "t"}] if contexts else []}  # fmt: skip

    tasks = [task(i) for i in range(10)] + [task(10, "UNANSWERABLE"), task(11, contexts=False)]
    assert len(rw.sample_tasks(tasks, None)) == 10
    assert rw.sample_tasks(tasks, 4) == rw.sample_tasks(list(reversed(tasks)), 4)[::-1]


def test_the_writer_is_the_reference_and_the_other_models_are_the_contexts():
    passages = ["Bees perform a waggle dance to show where flowers are."]
    task = make_task(["How do bees show where flowers are?"], passages)
    task["targets"] = [{"speaker": "agent", "text": "Bees perform a waggle dance to show where flowers are."}]
    task["answerability"] = ["ANSWERABLE"]
    base = fake_context(grounding="facts", generate=["never the writer"])
    record = rw.run_task(build_graph(output="state"), task, base)
    assert record["outcome"] == "whole" and record["reply"] == task["targets"][0]["text"]
    assert not base.generate_model.calls  # the writer was replaced; nothing asked the scripted one


def test_the_table_counts_outcomes_and_declines_by_reason(tmp_path):
    records = [{"outcome": "whole", "changes": {}, "seconds": 1.0},
               {"outcome": "declined", "changes": {"abstain_reason": "verdict"}, "seconds": 2.0}]  # fmt: skip
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    table = rw.table(rw.read_records(path))
    assert "| **whole or whole+quote** | **1 of 2** | **50.0%** |" in table
    assert "Declined by reason: verdict 1" in table
