"""benchmarks/reference_writer: the outcome of a reference answer sent through the pipeline."""

from __future__ import annotations

import json

import pytest

from benchmarks import reference_writer as rw
from mtrag_graph.graph import build_graph
from mtrag_graph.retrieval.index import build_index
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


def test_a_question_back_where_people_asked_back_too_is_counted_apart():
    asked = "Can you be more specific about which novel you are looking for?"
    assert rw.outcome_of(asked, "Which novel do you mean: Dune or Emma?", "clarifying_question") == (
        "asked_back_as_people"
    )
    ending = "Dune is a novel. Would you like to know more?"  # an offer at the end is no question back
    assert rw.outcome_of(ending, "Which novel do you mean?", "clarifying_question") == "asked_back"
    table = rw.table(
        [{"outcome": "asked_back_as_people", "changes": {}}, {"outcome": "whole", "changes": {}}]
    )
    assert "| asked_back_as_people | 1 | 50.0% |" in table and "| asked_back | 0 | 0.0% |" in table


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


def test_with_retrieve_tasks_without_passages_run_on_the_index_passages(tmp_path):
    corpus = tmp_path / "docs.jsonl"
    rows = [{"_id": "p-bees", "title": "Bees", "text": "Bees perform a waggle dance to show where flowers are."},
            {"_id": "p-tea", "title": "Tea", "text": "Tea is a drink made from leaves."}]  # fmt: skip
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    build_index(corpus, tmp_path / "index", embedder="hashing:256", show_progress=False)
    task = {"task_id": "bees-1<::>1", "answerability": ["ANSWERABLE"],
            "input": [{"speaker": "user", "text": "How do bees show where flowers are?"}],
            "targets": [{"text": "Bees perform a waggle dance to show where flowers are."}]}  # fmt: skip
    assert rw.sample_tasks([task], None) == []  # no reference passages: not run without --retrieve
    assert rw.sample_tasks([task], None, retrieve=True) == [task]
    base = fake_context(grounding="facts", index_dir=str(tmp_path / "index"), top_k=1, generate=["never"])
    record = rw.run_task(build_graph(output="state"), task, base, retrieve=True)
    assert record["outcome"] == "whole" and not base.generate_model.calls


def test_retrieve_without_an_index_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        rw.main([str(tmp_path / "tasks.jsonl"), "-o", str(tmp_path / "run"), "--retrieve"])
    assert "--retrieve needs --index" in capsys.readouterr().err
