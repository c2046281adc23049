from __future__ import annotations

import json

import pytest

from mtrag_graph.cli import main
from mtrag_graph.measure.decisions import run, sets
from mtrag_graph.models.fake import ScriptedChatModel
from mtrag_graph.testing import fake_context
from tests.measure.decisions.conftest import fake_retriever


@pytest.fixture
def gate_set(tasks):
    return sets.gate_items(tasks, fake_retriever)


def test_gate_yes_then_a_generator_decline_is_recorded_as_declined(gate_set):
    context = fake_context(
        gate=["yes"], generate=["I don't know the answer based on the provided documents."]
    )
    outcome = run.decide_gate(gate_set[0], context)
    assert outcome["gate"] == "yes" and outcome["declined"] is True
    assert outcome["abstain_reason"] == "verdict" and outcome["declined_why"] == "draft_declined"


def test_a_decline_after_a_gate_yes_is_retried_as_in_the_graph(gate_set):
    idk = "I don't know the answer based on the provided documents."
    context = fake_context(
        gate=["yes"],
        generate=[idk, "Bees perform a round dance when flowers are near."],
        first_draft="may_decline",
    )
    outcome = run.decide_gate(gate_set[0], context)
    assert outcome["declined"] is False and outcome["retries"] == 1
    assert "hold at least part of the answer" in str(context.generate_model.calls[1]["messages"][-1].content)


def test_gate_yes_and_an_answer_is_not_declined(gate_set):
    context = fake_context(gate=["yes"], generate=["Bees perform a round dance when flowers are near."])
    outcome = run.decide_gate(gate_set[0], context)
    assert outcome["declined"] is False and outcome["answer"].startswith("Bees perform")


def test_gate_no_skips_generation_unless_asked(gate_set):
    context = fake_context(gate=["no"], generate=["Bees perform a round dance when flowers are near."])
    assert run.decide_gate(gate_set[0], context)["declined"] is None
    assert run.decide_gate(gate_set[0], context, generate="always")["declined"] is False


def test_an_answer_the_passages_do_not_back_is_declined_by_the_grounding_check(gate_set):
    context = fake_context(
        gate=["yes"], generate=["Bees perform the round dance since 1921 in Ohio."], grounding="facts"
    )
    outcome = run.decide_gate(gate_set[0], context)
    assert (
        outcome["declined"] is True
        and outcome["abstain_reason"] == "verdict"
        and outcome["declined_why"] == "unsupported"
    )
    assert outcome["unsupported_facts"] == []  # the answer given is the "I don't know"
    assert outcome["unsupported_facts_before_grounding"] == ["1921", "ohio"]


def test_gate_without_log_probabilities_reports_the_parsed_choice_as_certain(gate_set):
    outcome = run.decide_gate(gate_set[0], fake_context(gate=["no"]))
    assert outcome["gate"] == "no" and outcome["p_yes"] == 0.0


def test_run_decision_resumes_from_its_cache(tmp_path, gate_set):
    gate = ScriptedChatModel(responses=["yes"])
    context = fake_context(gate_model=gate, generate=["A long enough answer from the passage."])
    path = tmp_path / "results.jsonl"
    first = run.run_decision("gate", gate_set[:2], context, path)
    calls = len(gate.calls)
    again = run.run_decision("gate", gate_set[:3], context, path)
    assert [r["item_id"] for r in again] == [i["item_id"] for i in gate_set[:3]]
    assert again[:2] == first
    assert len(gate.calls) == calls + 1  # only the new item was run
    assert len(path.read_text().splitlines()) == 3


def test_fingerprint_changes_with_a_prompt(tmp_path):
    context = fake_context()
    other = fake_context(gate_instruction="Question: {question}\nAnswerable? yes or no.")
    assert run.fingerprint(context) != run.fingerprint(other)


def test_relation_decision_maps_the_two_judgements_to_a_class(tasks):
    item = sets.relation_items(tasks)[0]
    outcome = run.decide_relation(item, fake_context(related_to_question=["no"], related_to_answer=["no"]))
    assert outcome["relation_class"] == 4


def test_decisions_command_writes_table_and_json(data_folder, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["decisions", "--data", str(data_folder), "--split", "report", "--only", "clarify", "relation",
                 "-o", str(out), "--large-model", "scripted:yes", "--label", "fake"])  # fmt: skip
    assert code == 0
    report = json.loads((out / "report-fake.json").read_text())
    assert report["split"] == "report"
    assert report["reports"]["clarify"]["underspecified"] == 1
    assert report["reports"]["relation"]["turns"] == 4
    assert "## clarify" in (out / "report-fake.md").read_text()
    assert (out / "sets" / "report-clarify.jsonl").exists()


def test_decisions_command_asks_for_an_index_for_unanswerable_turns(data_folder, tmp_path):
    with pytest.raises(ValueError, match="--index"):
        main(["decisions", "--data", str(data_folder), "--only", "gate", "-o", str(tmp_path / "o"),
              "--large-model", "scripted:yes"])  # fmt: skip


def test_a_decision_fingerprint_ignores_settings_the_decision_does_not_read():
    context = fake_context()
    other = fake_context(top_k=9, clarify_interrupt=True)
    assert run.fingerprint(context, "gate") == run.fingerprint(other, "gate")
    assert run.fingerprint(context, "clarify") != run.fingerprint(other, "clarify")


def test_set_null_reaches_the_context(data_folder, tmp_path, monkeypatch):
    seen = {}

    def fake_run_benchmark(**kwargs):
        seen.update(kwargs)
        return ""

    monkeypatch.setattr("mtrag_graph.measure.decisions.bench.run_benchmark", fake_run_benchmark)
    assert main(["decisions", "--data", str(data_folder), "-o", str(tmp_path), "--set", "gate_classifier=null",
                 "--set", "clarify_interrupt=false"]) == 0  # fmt: skip
    assert seen["context"].gate_classifier is None and seen["context"].clarify_interrupt is False
